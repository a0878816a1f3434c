#pragma once
// A portfolio of list schedulers: the search's warm start and upper bound.
//
// Each rule is a non-delay list scheduler over the instance's precedence edges (so it keeps FIFO order
// per class and, on one-stage ranks, the memory cap): whenever a rank is free it starts the ready task
// of best priority. Priorities: an order of the kinds F, I, W, which stage first on ranks holding
// several, or the longest tail first. Memory admission control: an F may start only while its rank is
// below its cap (the memory limit, or a 1F1B-like staircase below it), and a new micro-batch may
// enter the pipeline only while fewer than `inflight_cap` are in flight. The portfolio always contains
// the rule with inflight_cap = floor(L / most stages of one pipeline on a rank): then every ready task is
// admissible whatever the others do, so that rule never deadlocks. A rule that does deadlock is dropped.
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct GreedyRule {
    int kind_priority[3] = {0, 1, 2};  // per kind F, I, W: lower runs first
    bool later_stage_first = true;     // ranks with several stages: prefer the stage nearer the end
    bool longest_tail_first = false;   // priority = tail (critical path to the end), kinds break ties
    int inflight_cap = 0;              // micro-batches in flight at once (0 = no limit)
    int staircase = -1;                // >= 0: rank r holds at most min(L, P - r + staircase) activations
    bool pair = false;                 // start an F and an I together whenever both are ready
    std::string name() const;
};

struct GreedySchedule {
    bool ok = false;
    std::vector<Ticks> start, end;
    std::vector<int> partner;  // paired task or -1
    Ticks objective = 0;       // quantised
    GreedyRule rule;
};

GreedySchedule run_greedy(const Instance& inst, const GreedyRule& rule, const std::vector<Ticks>& tail);
std::vector<GreedyRule> greedy_portfolio(const Instance& inst);

// Runs the whole portfolio (until the deadline, or until *stop once one schedule exists) and returns
// the best schedule found.
GreedySchedule best_greedy(const Instance& inst, const TaskBounds& bounds,
                           std::chrono::steady_clock::time_point deadline, int* rules_run = nullptr,
                           const std::atomic<bool>* stop = nullptr);

}  // namespace pp
