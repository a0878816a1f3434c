#pragma once
// A peer for the search: the Zero Bubble paper's own ILP (Qi et al., "Zero Bubble Pipeline Parallelism",
// ICLR 2024), written as a CPLEX LP file and solved by Debian's CBC (`coinor-cbc`, the solver the authors
// used through PuLP), run as a separate process. Used by `pipeproof_bench search-grid --peer cbc` to put the
// paper's method beside ours on the same cells, and by tests/test_peer_zb_ilp.cpp.
//
// The formulation, as the paper states it (end-time variables E, binary ordering variables O between passes of
// one stage, memory through the ordering variables with M_F, M_B, M_W, min-max objective) and as the authors'
// code builds it (build_ilp in megatron/core/pipeline_parallel/auto_schedule.py of sail-sg's arxiv branch):
//   nodes     F, B (our I) and W of every (stage i, micro-batch j); parents F(i-1,j) -> F(i,j),
//             F(last,j) -> B(last,j), B(i+1,j) -> B(i,j), B(i,j) -> W(i,j), and the per-kind FIFO edge
//             X(i,j-1) -> X(i,j) the code adds (lossless for identical micro-batches: search_instance.hpp).
//   (2), (3)  E(child) >= E(parent) + T(child) + T_comm (T_comm only between stages).
//   (4)       for two passes a, b of one stage that the transitive closure leaves unordered, one binary
//             O(a->b) = 1 - O(b->a) and E(b) >= E(a) + T(b) - O(b->a) * inf, inf = (T_F+T_B+T_W+3 T_comm) p m.
//   (5)       at every pass k of stage i: M(k) + sum over passes a before k of M(a) (closure, or O(a->k)) <= M_limit.
//   (1)       the paper minimises the longest stage's span max_i E(W(i,m)) - E(F(i,1)) + T_F, with the code's
//             redundant "remaining work" rows res >= E(k) + (work of the stage after k) - start of the stage.
// Deviations, all deliberate, for a like-for-like comparison with `search` (whose grid objective is the makespan):
//   - objective: the makespan, res >= E(W(i,m)) on every stage; the remaining-work rows kept without the stage's
//     start (res >= E(k) + work after k), which is valid for the makespan too;
//   - memory: our model's sizes, M_F = F's allocation, M_B = -(what I releases), M_W = -(the rest): whole stashes
//     freed at W (1, 0, -1) by default, or the problem's activation sizes (the paper's own model: F allocates 1,
//     B releases 1 - M_W/M_B); the cap is the problem's memory limit in those units (the paper's M_limit);
//   - per-stage costs T(i, c) (the paper's T_(i,j,c) allows them; its code has one cost per kind);
//   - no warm start from the paper's heuristic (the code warm-started CBC with it; here CBC runs alone), one
//     thread, CBC's own optimality gap (the code stopped at an absolute gap of 0.5).
// The paper's setting only: one pipeline, one stage per rank (the 1f1b placement).
//
// The answer is checked by our verifier, not trusted: the start times CBC returns (E - T) become, per rank, an
// order of ops (sorted by start); that schedule is verified (memory cap included) and timed by the simulator,
// and the simulator's makespan is what the peer reports.
#include "model/rational.hpp"
#include "model/schedule.hpp"
#include "solver/search_instance.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pp::peer {

struct ZbIlpOptions {
    double time_limit = 60;           // CBC's wall-clock limit (timeMode elapsed); the process is killed 10 s after
    std::size_t max_binaries = 8000;  // larger models are skipped (the authors ran theirs only below 500 nodes)
    std::string cbc = "/usr/bin/cbc";
    bool keep_files = false;          // keep the temporary directory (model.lp, cbc.log, solution.txt)
};

// The LP text and what it holds. Variables: e<k> = end of op k (ops[k]), o<a>_<b> (a < b) = 1 when op a runs
// before op b on their stage, res = the objective.
struct ZbIlpModel {
    std::string lp;
    std::vector<Op> ops;
    std::vector<Rational> duration;  // per op, the problem's cost units
    std::size_t binaries = 0, rows = 0;
};

// Why the peer does not apply to this problem (placement, pairs), or nullopt.
std::optional<std::string> zb_ilp_not_applicable(const SearchProblem& problem);
// 3 m (m - 1) / 2 unordered pairs per stage with the FIFO edges: the binaries before the model is built.
std::size_t zb_ilp_binaries(const SearchProblem& problem);
// Throws std::invalid_argument when zb_ilp_not_applicable says why.
ZbIlpModel build_zb_ilp(const SearchProblem& problem);

struct ZbIlpResult {
    std::string status = "skipped";  // optimal, feasible (stopped with a solution), infeasible, unknown, skipped, error
    std::string note;                // why skipped, CBC's result line, a verifier problem
    std::size_t binaries = 0;
    double seconds = 0;              // CBC's process, wall clock
    std::optional<double> cbc_objective, cbc_bound;  // as CBC printed them (floating point)
    std::optional<Schedule> schedule;                // verified (memory cap included)
    std::optional<Rational> makespan;                // the simulator's, of that schedule
};

ZbIlpResult solve_zb_ilp(const SearchProblem& problem, const ZbIlpOptions& options);

}  // namespace pp::peer
