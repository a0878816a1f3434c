#pragma once
// Analytic lower bounds for the search, each with a checkable certificate.
//
//  heads   head(i) = earliest start of task i: the longest path over the precedence edges (dependencies,
//          FIFO, memory), strengthened by same-rank ancestor load: every same-rank ancestor of i runs,
//          one at a time, between its own head and start(i), so for any threshold a,
//          start(i) >= a + (total duration of the same-rank ancestors whose head is >= a).
//  tails   tail(i) = least time between the end of i and the end of the schedule, symmetric.
//  bounds  critical path: head(i) + duration(i) + tail(i) for every i;
//          rank threshold (the preemptive one-machine bound): for a rank r and thresholds a, b, the set
//          S = {i on r : head(i) >= a, tail(i) >= b} runs one at a time, so makespan >= a + dur(S) + b.
//          For the span objective the tail is measured to the end of rank r itself and h_r is subtracted.
//  windows for a bound T: start(i) in [head(i), latest_end(i) - duration(i)], with latest_end from a
//          backward pass from the deadlines (T, or T + h_r for the span) and the same-rank descendant
//          load. An empty window proves that no schedule meets T.
// With overlapped pairs an F or I may share its time with a partner, so loads count min(d, FB/2) and
// edges min(d, FB); every bound stays valid.
#include "solver/search_instance.hpp"

#include <optional>
#include <cstdint>
#include <string>
#include <vector>

namespace pp {

struct TaskBounds {
    std::vector<Ticks> head, tail;
    // Why head(i) has its value: the edge from the predecessor on the longest path (-1: none), or, when
    // the same-rank load raised it, the threshold and the number of ancestors counted.
    std::vector<int> head_edge, tail_edge;
    std::vector<int> head_load_count, tail_load_count;
    std::vector<int> head_load_task, tail_load_task;  // the counted relative with the least head (tail)
    bool strengthened = false;
};

// The smallest time a task can occupy its rank, and the smallest time from its start to its end.
Ticks min_occupancy(const Instance& inst, int task);
Ticks min_duration(const Instance& inst, int task);

// For every task, its ancestors (or descendants) on its own rank over all precedence edges.
std::vector<std::vector<int>> same_rank_relatives(const Instance& inst, bool ancestors);

// strengthen = use same-rank ancestor/descendant loads. Their lists hold up to sum over ranks of n_r^2 / 2
// entries and take as long to sort: skipped above max_tasks tasks or when sum n_r^2 exceeds max_pairs
// (2^26: about 130 MB and a second; one rank of 30 000 tasks would need 2 GB and minutes).
TaskBounds compute_task_bounds(const Instance& inst, bool strengthen, size_t max_tasks = 32768,
                               std::uint64_t max_pairs = std::uint64_t{1} << 26);

struct LowerBound {
    Ticks value = 0;          // quantised units, on the objective
    std::string kind;         // "critical-path", "rank-load", "memory-floor", "z3-unsat", "none"
    int rank = -1;
    Ticks a = 0, load = 0, b = 0;  // rank-load: a + load + b (minus h_r for the span)
    int count = 0;                 // ops in the set
    int task = -1;                 // critical-path: the task on the path
    std::vector<std::string> head_chain, tail_chain;  // how a (or head) and b (or tail) come about
    std::string derivation;        // one paragraph, with the numbers
    std::vector<Ticks> per_rank;   // the rank-threshold bound of every rank (quantised)
};

// The best of the critical-path and rank-threshold bounds for the instance's objective.
LowerBound analytic_lower_bound(const Instance& inst, const TaskBounds& bounds);

// Closed forms for one pipeline with one stage per rank (loop map) and the same costs on every stage:
// each is a valid lower bound on the makespan, stated with its derivation, so that a certificate can say
// "= M(F+I+W) + (P-1)(F+comm)" instead of listing chains. Empty for other placements.
struct FormulaBound {
    std::string name;     // "M(F+I+W) + (P-1)(F+comm)"
    Ticks value = 0;      // quantised
    std::string derivation;
};
std::vector<FormulaBound> formula_bounds(const Instance& inst);

struct Windows {
    std::vector<Ticks> est, lst;  // start window per task
    int empty_task = -1;          // a task whose window is empty: the bound is infeasible
};
// Start windows for "objective <= bound". strengthen as for compute_task_bounds.
Windows windows_for_bound(const Instance& inst, const TaskBounds& bounds, Ticks bound, bool strengthen);
// The windows of `tasks` (ids of the full instance), numbered 0.. in that order, with the first empty one
// noted: what a relaxation on those tasks starts from.
Windows restricted_windows(const Windows& full, const std::vector<int>& tasks);

// Objective value of given per-task (start, end) times in quantised units: makespan, or the span
// max_r (last end on r - h_r).
Ticks objective_of(const Instance& inst, const std::vector<Ticks>& end);

}  // namespace pp
