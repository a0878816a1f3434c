#pragma once
// What PyTorch itself would say about a schedule: torch.distributed.pipelining's _validate_schedule, check
// for check and message for message, so that a user can tell "PyTorch rejects this" from "pipeproof is
// stricter than PyTorch". PyTorch's check is weak on purpose of this comparison: it does not look at
// micro-batch ranges, duplicates (they collapse in its sets), cross-stage order or communication.
#include "model/schedule.hpp"

#include <optional>
#include <string>

namespace pp {

// nullopt when PyTorch accepts the schedule, else the first line of its AssertionError, e.g.
// "Rank 3, step 1: Running Full Backward for stage 3, microbatch 0 without first running Forward" or
// "Got 7 F microbatches for stage 2, expected 8". Steps are cell indices in the row, empty cells (`gaps`)
// included; for a schedule with an action list, indices in that list (comm actions count, and their stages
// take part in the stage-ownership check as in PyTorch). Throws std::invalid_argument for more than one
// pipeline.
std::optional<std::string> pytorch_validate_schedule(const Schedule& schedule);

}  // namespace pp
