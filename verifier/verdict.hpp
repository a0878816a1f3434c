#pragma once
// The one verdict every command gives a schedule: `verify` prints it, and `simulate`, `show`, `compare`,
// `report` (and `demo`) refuse to call a schedule fine when it is not. It is every check of verify.hpp
// (placement, completeness, order, deadlock, memory within the limit), plus for a compute_comms file its
// SEND/RECV program (comms.hpp) and, under the batched timing model, the blocking P2P program
// (batched.hpp) -- the same options giving the same violations, counted the same way, in every command.
#include "model/dag.hpp"
#include "model/schedule.hpp"
#include "verifier/batched.hpp"
#include "verifier/verify.hpp"

#include <cstddef>

namespace pp {

struct VerdictOptions {
    VerifyOptions verify;  // memory limit (the file's unless a command-line one replaces it), activations
    CommModel model = CommModel::Dataflow;
    BatchedOptions batched{};
};

// The batched P2P program is checked only when the schedule is otherwise valid (it is not defined for one
// that is not). Without a graph, verify() builds one only when the schedule has a violation to explain.
VerifyReport verdict(const Schedule& schedule, const VerdictOptions& options);
VerifyReport verdict(const Schedule& schedule, const ScheduleGraph& graph, const VerdictOptions& options);
// The verdict from verify()'s report (however it was made): adds the communication checks.
VerifyReport complete_verdict(const Schedule& schedule, VerifyReport verified, const VerdictOptions& options);

// Violations found, listed or not: what every command prints as "N violations".
std::size_t violation_count(const VerifyReport& report);

// True when every violation leaves the schedule runnable, so its timing still means something: only the
// memory limit is exceeded (it runs, on ranks with more memory). Any other violation -- an op missing, a
// wrong order, a deadlock, a SEND/RECV mismatch -- means the schedule cannot run as written: no timing.
bool only_memory_violations(const VerifyReport& report);

}  // namespace pp
