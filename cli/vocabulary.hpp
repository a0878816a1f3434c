#pragma once
// The one vocabulary of every command's JSON document (docs/json.md, schemas in docs/schema/): the same name and
// type for the same thing everywhere. An instance is described by
//   ranks          integer: the number of ranks (P)
//   microbatches   integer: micro-batches over all pipelines (M)
//   stages         integer: stages of one pipeline (P, 2P for the V map, V*P interleaved)
//   pipelines      integer: 1, or 2 for a bidirectional (DualPipe, Chimera) placement
//   placement      string: placement_name() -- "1f1b", "v", "interleaved:V", "dualpipe", "zigzag:V", "custom"
//   inferred       array of strings: which of ranks, stages, microbatches, placement the reader inferred
// and, where a command has them, memory_limit (number or null), units ("stage" or "rank", with units_detail),
// time_unit ("us", "ms", "s" or null), status (cli/json_status.hpp) and violations (verify's list).
// Per-rank values are arrays indexed by rank, or `per_rank`, an array of objects with a "rank" member.
#include "model/schedule.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pp::cli {

// {ranks, microbatches, stages, pipelines, placement, inferred} of a schedule.
nlohmann::json instance_json(const Schedule& schedule);
// The same members merged into `out`.
void put_instance(nlohmann::json& out, const Schedule& schedule);
// units: "stage" or "rank" (the first word of `detail`), units_detail: `detail`, the sentence the text output prints.
void put_units(nlohmann::json& out, const std::string& detail);
// memory_limit: the number (its exact text under "exact"), or null for no limit.
void put_memory_limit(nlohmann::json& out, const std::optional<Rational>& limit);
// "4 ranks, 8 micro-batches, 4 stages, placement 1f1b".
std::string shape_text(const Schedule& schedule);
// What the reader inferred, as a sentence naming each count and how to state it; "" when nothing was inferred.
std::string inferred_text(const Schedule& schedule);

}  // namespace pp::cli
