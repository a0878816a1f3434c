#include "solver/search_scope.hpp"

#include <algorithm>
#include <chrono>

namespace pp {

std::vector<std::string> every_placement_name() {
    return {"1f1b", "v", "interleaved:2", "interleaved:3", "interleaved:4", "dualpipe"};
}

std::vector<std::string> ScopeResult::searched_names() const {
    std::vector<std::string> names;
    for (const auto& p : placements)
        if (p.searched()) names.push_back(p.placement);
    return names;
}

std::optional<Rational> placement_value(const SearchResult& r) {
    if (!r.schedule) return std::nullopt;
    return r.units(r.value);
}

std::optional<Rational> placement_lower_bound(const SearchResult& r) {
    if (r.status == SearchStatus::Infeasible) return std::nullopt;
    return r.units(r.lower_bound);
}

namespace {

// The status of the whole: infeasible when every placement searched is; optimal when the best value meets the
// least lower bound; feasible with a schedule; unknown without one.
void combine(ScopeResult& out) {
    bool any_feasible_or_open = false;
    for (size_t k = 0; k < out.placements.size(); ++k) {
        const PlacementSearch& p = out.placements[k];
        if (!p.searched()) continue;
        if (const auto bound = placement_lower_bound(p.result)) {
            any_feasible_or_open = true;
            if (!out.lower_bound || *bound < *out.lower_bound) out.lower_bound = bound;
        }
        if (const auto value = placement_value(p.result); value && (!out.value || *value < *out.value)) {
            out.value = value;
            out.best = static_cast<int>(k);
        }
    }
    if (!any_feasible_or_open) out.status = out.searched_names().empty() ? SearchStatus::Unknown : SearchStatus::Infeasible;
    else if (!out.value) out.status = SearchStatus::Unknown;
    else out.status = *out.value <= *out.lower_bound ? SearchStatus::Optimal : SearchStatus::Feasible;
}

}  // namespace

ScopeResult search_placements(std::vector<PlacementSearch> candidates, const SearchOptions& options,
                              const std::function<std::vector<WarmStart>(const Placement&)>& warm_starts) {
    const Clock::time_point started = options.started.value_or(Clock::now());
    ScopeResult out;
    out.placements = std::move(candidates);
    size_t left = 0;
    for (const auto& p : out.placements) left += p.searched();
    for (auto& p : out.placements) {
        if (!p.searched()) continue;
        const bool stop_requested = options.stop && options.stop->load();
        const double remaining = options.time_limit - seconds_since(started);
        SearchOptions one = options;
        one.started = Clock::now();
        // Each gets an equal share of what is left; one that ran out still states its bounds (the search's own
        // phases before Z3 take milliseconds).
        one.time_limit = std::max(remaining / static_cast<double>(left), 0.05);
        if (stop_requested) one.time_limit = 0.05;
        one.warm_starts = warm_starts(p.problem->placement);
        p.result = search(*p.problem, one);
        out.stopped = out.stopped || p.result.stopped;
        --left;
    }
    out.seconds = seconds_since(started);
    combine(out);
    return out;
}

}  // namespace pp
