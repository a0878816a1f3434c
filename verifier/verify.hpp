#pragma once
// verifier/ — checks a given schedule and times it exactly: verify, simulate, memory, send/recv programs,
// batched timing, PyTorch's validator, compare. Uses model/; used by solver/, proofs/ and everything above.
//
// Structural and semantic checks of a schedule. Every violation names the rank, the position in that
// rank's list, the op and, when the schedule came from a file, its line:column (a missing op: the line of
// the rank that should run it); a misplaced op says what it was likely meant to be.
#include "model/costs.hpp"
#include "model/dag.hpp"
#include "model/schedule.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

enum class ViolationKind {
    OutOfRange,       // stage / micro-batch / pipeline not in the placement
    Duplicate,        // the same op twice
    Missing,          // a required op does not occur
    BothBackwards,    // (stage, micro-batch) has a full B and also an I or W
    WrongRank,        // op on a rank that does not hold its stage
    BadPair,          // an overlapped unit that is not one F plus one backward
    WWithoutI,        // W whose (stage, micro-batch) ran a full B, or no I at all
    WBeforeI,         // W ahead of its own I in the rank's order
    OrderContradicts, // rank order runs an op before one of its dependencies on the same rank
    Deadlock,         // cycle through dependency and rank-order edges across ranks
    MemoryLimit,      // activation peak above the limit
    CommMismatch,     // SEND/RECV sequences of a rank pair do not match (compute_comms files)
    CommDeadlock,     // rendezvous deadlock of SEND/RECV (compute_comms files)
    CommMissing,      // a compute whose input comes from another rank has no RECV before it
    SegmentOrder,     // a micro-batch's sequence segments out of order on their stage (Schedule::segments)
    HostMemoryLimit,  // offloaded stashes above the host memory (simulate --offload, verifier/offload.hpp)
};
const char* violation_name(ViolationKind kind);

struct Violation {
    ViolationKind kind{};
    int rank = -1;
    int position = -1;          // index in the rank's slot list (or action list for comm checks)
    std::optional<Op> op;
    SourceLoc loc{};
    std::string message;        // one readable sentence
    std::vector<std::string> witness;  // for deadlocks: the cycle, one step per entry
};

struct VerifyOptions {
    std::optional<Rational> memory_limit;  // per rank, in activation units (ActivationModel)
    ActivationModel activations{};
    size_t max_reports_per_kind = 20;      // the total count is still reported
};

struct VerifyReport {
    std::vector<Violation> violations;
    std::vector<size_t> suppressed;        // per ViolationKind index: violations not listed
    // Violations that follow from a misplaced op already reported (its order and deadlock consequences, the
    // op it was meant to be missing): counted here, not listed. Violations are sorted by file position.
    size_t follow_on = 0;
    std::vector<Rational> peak_activations;  // per rank (order-based; timing-independent)
    size_t ops = 0;                          // in the schedule
    bool ok() const { return violations.empty(); }
};

// A schedule the dataflow walk (dataflow_walk.hpp) finds clean is checked for memory only; the graph is
// built only to find and explain a violation.
VerifyReport verify(const Schedule& schedule, const VerifyOptions& options = {});
// verify() of a schedule the dataflow walk has already passed (dataflow::Walk, or a timing by time_if_clean),
// which counted its `ops`: the memory check alone.
VerifyReport verify_walked(const Schedule& schedule, const VerifyOptions& options, size_t ops);
// The same with the schedule's graph already built (build_schedule_graph), for callers that need the graph
// anyway: every check runs on the graph.
VerifyReport verify(const Schedule& schedule, const ScheduleGraph& graph, const VerifyOptions& options = {});

// The shortest cycle through the blocked part of a graph, as global slot ids in dependency order
// (each slot waits for the next, the last waits for the first); empty when the graph is acyclic.
// Dependency edges listed in `ignored` (same-rank reversals already reported) are not followed.
std::vector<std::uint32_t> shortest_cycle(const ScheduleGraph& g, const std::vector<bool>& ignored_edge);

}  // namespace pp
