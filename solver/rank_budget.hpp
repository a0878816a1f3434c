#pragma once
// Idle budgets per rank as cuts for the disjunctive encoding (issue 13): the rank-load bound in
// "position" form, so that Z3 sees, for every op, how much idle its rank may still have before it.
//
// For a rank r let lo = the least head of its ops, load = their total duration, and, with a memory cap,
// warm = the warm-up idle and cool = the least cool-down idle of the memory-aware rank bound
// (lower_bound.cpp, cool_down_bound.hpp). For a bound T on the makespan, every schedule with makespan
// <= T satisfies, for every op i of r, with before(i) = the total duration of the ops of r that start
// before i:
//   start(i) - before(i) >= lo (+ warm when i is an I or a W)
//       the ops before i run one at a time in [lo, start(i)); an I or W starts at or after h (the least
//       head of an I or W of r), and in [lo, h) the rank idles at least warm (it runs only forwards
//       there, at most cap of them);
//   start(i) - before(i) <= T - load (- cool when i is an F)
//       i and every op after it run one at a time in [start(i), C] with C <= T; when i is an F it starts
//       no later than the rank's last forward f, and after end(f) the rank idles at least cool (the least
//       over the candidates for f, so whichever is last).
// Both are implied constraints (every schedule within T meets them), so adding them to an encoding or
// to a relaxation keeps it exact: sat and unsat answers mean what they meant without them. They let
// the solver prune orders whose rank would need more idle than the bound leaves (at the V map's bound
// rank P-1 has none to spare). Makespan only; not with overlapped pairs (an F and an I may share time).
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

#include <vector>

namespace pp {

struct RankBudget {
    bool applies = false;   // false: no cut for this rank
    Ticks lo = 0, warm = 0, cool = 0, load = 0;  // quantised
};

// One entry per rank of inst; all `applies == false` for the span objective or with pairs.
std::vector<RankBudget> rank_budgets(const Instance& inst, const TaskBounds& bounds);

// The least idle of rank r in [lo, T] that the budget forces: warm + cool (T - lo - load must cover it).
inline Ticks forced_idle(const RankBudget& b) { return b.warm + b.cool; }

}  // namespace pp
