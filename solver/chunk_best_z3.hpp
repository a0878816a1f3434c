#pragma once
// The `best` overlap pattern for any number of layers (issue 11), certified like `search` results: the
// exhaustive search of verifier/chunk_best.hpp first, and when it runs out of budget (without contention),
// Z3 on the disjunctive model of the slot:
//   Int start s_v >= 0 per component, in ticks (a common denominator of the costs);
//   s_v >= s_u + d_u for every data edge u -> v;
//   (s_u + d_u <= s_v) or (s_v + d_v <= s_u) for two components of one stream neither of which is an
//   ancestor of the other (an ancestor pair is already ordered by its data path);
//   s_v + d_v <= T for every v.
// The least feasible T is the `best` duration: a feasible assignment orders each stream, and the slot
// timer's earliest starts for those orders are no later, so they finish by T too; conversely the slot
// timer's starts for any orders are an assignment. Bisection between the lower bound (longest path, the
// busier stream's load) and the incumbent; every SAT answer is re-timed by the exact slot timer
// (verifier/slot_timing.hpp), which gives the value printed.
//
// Certificate: the SMT-LIB2 text of the query with T = value - 1 tick, which a stock `z3` answers unsat
// when the value is optimal -- also when the exhaustive search proved it, so every optimal `best` without
// contention can be re-checked the same way. With contention (slowdown > 0) start times are not linear in
// the order, so only the enumeration decides, within its budget.
#include "verifier/chunk_derive.hpp"

#include <string>

namespace pp {

struct ChunkBestOptions {
    std::uint64_t exhaustive_budget = 2'000'000;  // branch-and-bound nodes before Z3 takes over
    double time_limit_seconds = 60;              // for all Z3 calls of one slot kind
    bool force_z3 = false;                       // skip the exhaustive search (tests, cross-checks)
};

// "(declare-fun s_attn_f0 () Int) ... (assert ...) (check-sat)": the query "every component of this slot
// finishes by `bound` ticks", with ticks_per_unit stated in a comment.
std::string chunk_order_smt2(const SlotDag& dag, const TimeScale& scale, Ticks bound);

// The solver the CLI passes to derive_chunk_table.
BestSolver chunk_best_solver(const ChunkBestOptions& options = {});
SlotKindTiming best_order_certified(const SlotDag& dag, const Rational& slowdown, const ChunkBestOptions& options = {});

// Re-checks a certificate with Z3: true when the query is unsat.
bool smt2_is_unsat(const std::string& smt2);

}  // namespace pp
