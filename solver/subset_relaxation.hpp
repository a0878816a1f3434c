#pragma once
// A lower bound from any subset of the tasks solved exactly (issue 13): the generalisation of the
// one-rank relaxation (rank_relaxation.hpp) to several ranks, or to the ops of some micro-batches only.
//
// For a bound T, every schedule with objective <= T starts each task i inside its window [est, lst]
// (windows_for_bound). Keep a set K of tasks, with
//   windows   the full problem's windows at T,
//   delays    start(j) >= start(i) + delay(i, j) for i, j in K, where delay(i, j) is the longest path
//             from the start of i to the start of j over precedence edges (dependencies, FIFO, memory)
//             whose inner tasks are all outside K, each inner task at its least duration (a path through
//             tasks of K is a sum of such delays),
//   one at a time on each rank among the kept tasks of that rank,
//   the memory cap on each rank among the kept activations (both F and W kept): on a rank whose cap
//             needs a cardinality constraint in the full model, at each kept F at most cap - 1 other
//             kept activations are live; elsewhere the memory edges are precedence edges and enter the
//             delays.
// Restricting a schedule of the full problem with objective <= T to K satisfies all of these: windows
// and delays hold for every schedule, the kept tasks of a rank still never overlap, and the live
// activations counted are a subset of the live ones. So when Z3 shows the subset problem infeasible, no
// schedule of the full problem has objective <= T. Not for instances with pairs (as rank_relaxation).
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"
#include "solver/z3_encoding.hpp"

#include <vector>

namespace pp {

struct TaskSubproblem {
    Instance inst;               // the kept tasks, same ranks, no pairs
    std::vector<int> original;   // sub task -> task of the full instance
};

// keep[t]: task t of the full instance is kept.
TaskSubproblem task_subproblem(const Instance& inst, const std::vector<bool>& keep);

// Convenience selections: the tasks of the given ranks; the tasks of the given ranks whose micro-batch
// is at least `first_microbatch`.
std::vector<bool> tasks_of_ranks(const Instance& inst, const std::vector<int>& ranks, int first_microbatch = 0);

// Is there a schedule of the kept tasks within the full problem's windows at `query.bound`? Unsat proves
// that no schedule of the full problem has objective <= query.bound.
Z3Outcome solve_task_subproblem(const TaskSubproblem& sub, const Windows& full_windows, const Z3Query& query);

}  // namespace pp
