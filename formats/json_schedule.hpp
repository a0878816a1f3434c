#pragma once
// Machine-readable form of a schedule (documented in docs/formats.md):
// {"format": "pipeproof-schedule", "version": 1, "ranks": P,
//  "pipelines": [{"microbatches": M, "stage_ranks": [...], "stage_blocks": [...]}],
//  "costs": {"F": "1", "I": "1.5", ..., "comm": "0"}, "memory_limit": "4",
//  "schedule": [{"rank": 0, "ops": [{"kind": "F", "pipeline": 0, "stage": 0, "microbatch": 0},
//                                   {"overlap": [{...F...}, {...B...}]}, ...]}, ...]}
// Durations are strings holding exact rationals ("1.75", "7/4"); plain JSON numbers are accepted when
// they are whole.
#include "model/schedule.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace pp {

// Keys in the documented order (ordered_json), not alphabetically.
nlohmann::ordered_json op_to_json(const Op& op);
nlohmann::ordered_json schedule_to_json(const Schedule& schedule);
// Written op by op (memory does not grow with the text); the string form is for small schedules and tests.
void write_json(std::ostream& out, const Schedule& schedule);
std::string write_json(const Schedule& schedule);
// Throws InputError: syntax errors with line:column, structural errors with the JSON pointer of the value.
Schedule read_json(std::string_view text, const std::string& file_name);

}  // namespace pp
