#pragma once
// `search --placement any` or a list of placements (cli/search_scope.cpp; solver/search_scope.hpp).
#include "formats/load.hpp"
#include "solver/search_scope.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pp::cli {

// The placements a --placement value names when it names several: "any" (all of every_placement_name()) or a
// comma-separated list; nullopt for one placement or a schedule file.
std::optional<std::vector<std::string>> placement_list(const std::string& text);

struct ScopeRequest {
    std::vector<std::string> placements;
    bool any = false;  // chosen by `any`: a placement the instance does not admit is skipped, not an error
    int ranks = 0, microbatches = 0;
    std::optional<std::string> costs, memory, output, proof_dir;
    std::optional<FileFormat> format;
    std::string objective = "makespan";
    bool symmetry_breaking = true, no_generators = false, json = false;
    nlohmann::json time_unit;  // "ms" or null
};

// Searches, prints (text or JSON) and returns the exit code: 0 with a schedule, 1 when every placement is
// infeasible under the cap, 3 without a schedule.
int run_search_scope(const ScopeRequest& request, SearchOptions options);

}  // namespace pp::cli
