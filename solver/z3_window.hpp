#pragma once
// Exact re-solve of part of a schedule (issue 13, large M): keep most ops of a verified schedule at
// their times and let Z3 place the rest (the "free" ops) under "objective <= bound".
//
// Why: at P=16, M=1024 the whole problem has ~50 000 ops and no exact encoding fits, but the gap to
// the rank-load bound sits in the cool-down (the last few dozen micro-batches, where a list scheduler
// lets a W delay the input-gradient chain of the last micro-batch) or in the warm-up. With the middle
// fixed, the cool-down is a small disjunctive problem.
//
// The encoding is the disjunctive one (z3_disjunctive.cpp) restricted to the free ops: a start per
// free op inside its window for the bound (windows_for_bound) and between the fixed ops of its rank it
// ran between (so a cool-down op stays in the cool-down), every precedence edge (an edge between a fixed
// and a free op becomes a bound on the free op), one op at a time among the free ops of a rank, and on
// ranks whose memory cap is not carried by
// the memory edges a cardinality constraint at every F whose live count depends on a free op.
// A Sat answer is a complete schedule (fixed times + the model); it is re-verified by the caller. An
// Unsat answer only says that no schedule keeps the fixed ops where they are: it is no lower bound.
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"
#include "solver/z3_encoding.hpp"

#include <vector>

namespace pp {

// start: the current schedule's start of every task (quantised); free_task[t]: Z3 may move t.
// Sat: out.start holds every task's start. out.variables counts free ops + order variables.
Z3Outcome solve_window(const Instance& inst, const Windows& windows, const std::vector<Ticks>& start,
                       const std::vector<bool>& free_task, const Z3Query& query);

// The free set "every op that starts at or after `from`" (a cool-down window) or "before `until`"
// (a warm-up window); both are closed under the precedence edges, so the fixed ops stay feasible.
std::vector<bool> ops_from(const std::vector<Ticks>& start, Ticks from);
std::vector<bool> ops_before(const Instance& inst, const std::vector<Ticks>& start, Ticks until);

}  // namespace pp
