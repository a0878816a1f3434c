#pragma once
// Search over several placements: the best schedule of any of them, and exactly what its OPTIMAL covers.
//
// One search per placement (solver/search.hpp), one after another, each given an equal share of the time
// still left (a placement settled early leaves its time to the next). Their costs and caps must be in one
// unit -- a rank's share of the model (--units rank) -- so that values compare across placements. Then:
//   best        = the least value any placement's search found (re-verified by its search);
//   lower bound = the least of the placements' proven lower bounds, a placement proven infeasible under the
//                 cap contributing none: no schedule of any placement searched is faster;
//   OPTIMAL     when best = lower bound: optimal over the placements searched, and only over them.
#include "solver/search.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pp {

// What `--placement any` searches, in this order: 1f1b, v, interleaved:2..4, dualpipe.
std::vector<std::string> every_placement_name();

struct PlacementSearch {
    std::string placement;                 // its name ("interleaved:2")
    std::optional<SearchProblem> problem;  // nullopt: not searched, `skipped` says why
    std::string skipped;
    SearchResult result;                   // when searched
    bool searched() const { return problem.has_value(); }
};

struct ScopeResult {
    std::vector<PlacementSearch> placements;  // every candidate, searched or skipped, in order
    SearchStatus status = SearchStatus::Unknown;
    int best = -1;                            // the placement holding the best schedule, -1: none
    std::optional<Rational> value;            // the best schedule's objective, in cost units
    std::optional<Rational> lower_bound;      // over every placement searched; nullopt when all are infeasible
    double seconds = 0;
    bool stopped = false;
    std::vector<std::string> searched_names() const;
};

// The candidates arrive with their problems built (or skipped with a reason); `warm_starts` gives each its
// schedules from the library. The options' time limit is for all of them together.
ScopeResult search_placements(std::vector<PlacementSearch> candidates, const SearchOptions& options,
                              const std::function<std::vector<WarmStart>(const Placement&)>& warm_starts);

// A placement's result in cost units: its value (nullopt without a schedule) and its lower bound (nullopt when
// proven infeasible).
std::optional<Rational> placement_value(const SearchResult& r);
std::optional<Rational> placement_lower_bound(const SearchResult& r);

}  // namespace pp
