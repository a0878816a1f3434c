#pragma once
// Schedule files carry no communication order, but DualPipe's and DualPipeV's reference code has its own
// (verifier/batched.hpp). A file that holds exactly one of those orders gets it back, so that batched
// timing runs the file the way the reference would instead of deadlocking under the generic rule.
#include "model/schedule.hpp"

#include <optional>
#include <string>

namespace pp {

// When `schedule` has no program and its placement and per-rank order equal dualpipe(P, M) or
// dualpipev(P, M), attaches that generator's program and returns the family's name.
std::optional<std::string> attach_reference_comm_program(Schedule& schedule);

}  // namespace pp
