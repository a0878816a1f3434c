#pragma once
// Relaxation-guided completion (issue 13): an attempt to reach the proven bound T by the schedule side.
//
// At the V map's bound (P=5, M=10, cap 10, ZB 1.5B costs) rank P-1 has no idle to spare, so its ops are
// all but fixed by their order, and a schedule of the whole problem is a schedule of that rank plus
// ranks that fit around it. The local search stopped F - I + 2comm above the bound there; this found the
// bound (2026-12-02):
//  1. the subset relaxation (subset_relaxation.hpp) of the bottleneck rank r and a neighbour at T, with
//     the idle-budget cuts (rank_budget.hpp). Unsat PROVES that no schedule meets T (it is a relaxation).
//  2. Sat: pin the ops of r at the starts of that solution (window [s, s]), propagate the windows over
//     the precedence edges (longest paths both ways), and let Z3 place every other op inside them (full
//     problem, with the cuts). Sat: a schedule with objective <= T, re-verified by the caller.
//  3. Otherwise keep only the ORDER of r's ops from that solution (a chain of edges on r) and let Z3 place
//     every op, r's included (full problem, with the cuts). At P=5 one relaxation solution's times did not
//     extend (unsat in 0.15 s) where another's did: the order leaves the times of the other ranks room.
// Unsat or unknown in steps 2 and 3 prove nothing about T: pinning is a restriction, not a relaxation.
#include "solver/lower_bound.hpp"
#include "solver/rank_budget.hpp"
#include "solver/search_instance.hpp"
#include "solver/z3_encoding.hpp"

#include <vector>

namespace pp {

struct CompletionOutcome {
    int rank = -1, neighbour = -1;
    size_t relaxation_tasks = 0;
    Z3Outcome relaxation;   // Unsat: T is proven infeasible
    Z3Answer pinned = Z3Answer::Skipped;  // step 2
    Z3Outcome completion;   // the last step tried (2 or 3); Sat: start of every task of the full instance
};

// The instance with the tasks of `order` (all on one rank) chained in that order by edges of lag 0: a
// restriction of the problem (every schedule of it is one of the problem). Throws std::logic_error when
// the order contradicts the precedence edges.
Instance with_rank_order(const Instance& inst, const std::vector<int>& order);

// Windows narrowed to est = lst = start[t] for the tasks with pin[t], then closed under the precedence
// edges: est(to) >= est(from) + d(from) + lag and lst(from) <= lst(to) - d(from) - lag. empty_task is set
// when a window becomes empty.
Windows pinned_windows(const Instance& inst, const Windows& windows, const std::vector<bool>& pin,
                       const std::vector<Ticks>& start);

// query.bound = T (quantised), query.deadline covers both steps; the relaxation gets `relaxation_share`
// of the time left. Makespan only, no pairs (the caller checks).
CompletionOutcome complete_from_relaxation(const Instance& inst, const Windows& windows,
                                           const std::vector<RankBudget>& budgets, int rank, int neighbour,
                                           const Z3Query& query, double relaxation_share);

}  // namespace pp
