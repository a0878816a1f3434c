#pragma once
// A lower bound from one rank solved exactly (issue 13): the one-machine relaxation with release
// times, deadlines and precedence delays.
//
// For a bound T, every schedule with objective <= T starts each task i inside its window [est, lst]
// (windows_for_bound: longest paths and same-rank loads). Keep only the tasks of one rank r, with
//   windows   the full problem's windows at T,
//   delays    start(j) >= start(i) + delay(i, j) for i, j on r, where delay(i, j) is the longest path
//             from the start of i to the start of j whose inner ops all sit on other ranks (each inner
//             op counted at its least duration; a path through ops of r is the sum of such delays),
//   one at a time on r, and the memory cap on r (cardinality, or the memory edges among the delays).
// Every schedule of the full problem with objective <= T, restricted to r, satisfies all of these.
// So when Z3 shows the one-rank problem infeasible, no schedule has objective <= T. The rank-load bound
// is the preemptive relaxation of this problem without the delays; the exact one-rank problem adds
// non-preemption, the precedence delays inside the rank and the memory cap.
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"
#include "solver/z3_encoding.hpp"

#include <vector>

namespace pp {

struct RankSubproblem {
    Instance inst;               // one rank (rank 0 here), no pairs
    std::vector<int> original;   // sub task -> task of the full instance
};

// The tasks of `rank` with their delays (windows are given per query). Not for instances with pairs
// (a pair shortens the time two tasks occupy, so the one-rank problem without pairs is no relaxation).
RankSubproblem rank_subproblem(const Instance& inst, int rank);

// Is there a one-rank schedule within the full problem's windows at `full.bound`? Unsat proves that
// no schedule of the full problem has objective <= full.bound.
Z3Outcome solve_rank_subproblem(const RankSubproblem& sub, const Windows& full_windows, const Z3Query& query);

}  // namespace pp
