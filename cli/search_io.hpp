#pragma once
// What `search` and `sweep` share (defined in cmd_search.cpp): the problem from command-line values and
// the JSON summary of one search.
#include "solver/search.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pp::cli {

nlohmann::json search_result_json(const SearchResult& r);
// The instance searched, in the vocabulary of every command (cli/vocabulary.hpp): ranks, microbatches, stages,
// pipelines, placement, memory_limit, objective and the costs searched at (in stage units).
void put_search_instance(nlohmann::json& out, const SearchProblem& problem);
SearchProblem search_problem_from(const std::string& placement, std::optional<int> ranks, std::optional<int> microbatches,
                                  const std::optional<std::string>& costs, const std::optional<std::string>& memory,
                                  const std::optional<std::string>& overlap, const std::string& objective,
                                  std::vector<WarmStart>* file_start, const std::vector<std::string>& stage_costs = {},
                                  std::optional<ChunkSpec>* file_chunks = nullptr);
// --units rank: the problem's costs and cap are those of a 1/P share of the model; each stage runs at its share
// P / blocks of them (a V stage at half) and holds that share of a 1/P stash, so durations are scaled by the
// share and the cap (in stage activations) divided by it. Returns the share.
Rational scale_to_rank_units(SearchProblem& problem);
// `search --emit-proof DIR`: certificate.json, schedule.txt, the SMT-LIB2 query and a README in DIR.
void write_search_proof(const SearchResult& r, const std::string& dir, const SearchProblem& problem);
// The search times every op with a positive duration: a zero or negative cost is a usage error naming it.
void require_positive_durations(const SearchProblem& problem);

}  // namespace pp::cli
