#include "solver/pinned_completion.hpp"

#include "solver/subset_relaxation.hpp"

#include <algorithm>

namespace pp {

Windows pinned_windows(const Instance& inst, const Windows& windows, const std::vector<bool>& pin,
                       const std::vector<Ticks>& start) {
    Windows w = windows;
    w.empty_task = -1;
    for (size_t t = 0; t < inst.size(); ++t)
        if (pin[t]) w.est[t] = std::max(w.est[t], start[t]), w.lst[t] = std::min(w.lst[t], start[t]);
    for (int t : inst.topo_order)
        for (int e : inst.out_edges[t]) {
            const PrecedenceEdge& edge = inst.edges[e];
            w.est[edge.to] = std::max(w.est[edge.to], w.est[t] + min_duration(inst, t) + edge.lag);
        }
    for (auto it = inst.topo_order.rbegin(); it != inst.topo_order.rend(); ++it)
        for (int e : inst.out_edges[*it]) {
            const PrecedenceEdge& edge = inst.edges[e];
            w.lst[*it] = std::min(w.lst[*it], w.lst[edge.to] - min_duration(inst, *it) - edge.lag);
        }
    for (size_t t = 0; t < inst.size(); ++t)
        if (w.lst[t] < w.est[t]) {
            w.empty_task = static_cast<int>(t);
            break;
        }
    return w;
}

CompletionOutcome complete_from_relaxation(const Instance& inst, const Windows& windows,
                                           const std::vector<RankBudget>& budgets, int rank, int neighbour,
                                           const Z3Query& query, double relaxation_share) {
    CompletionOutcome out;
    out.rank = rank, out.neighbour = neighbour;
    out.completion.answer = Z3Answer::Skipped;
    std::vector<int> ranks{rank};
    if (neighbour >= 0 && neighbour != rank) ranks.push_back(neighbour);
    const TaskSubproblem sub = task_subproblem(inst, tasks_of_ranks(inst, ranks));
    out.relaxation_tasks = sub.inst.size();
    // Every op of the kept ranks is kept, so their budgets hold in the subproblem as they are.
    std::vector<RankBudget> kept(budgets.size());
    for (int r : ranks)
        if (r < static_cast<int>(budgets.size())) kept[r] = budgets[r];
    Z3Query q = query;
    q.budgets = &kept;
    const auto now = Clock::now();
    if (query.deadline > now)
        q.deadline = now + std::chrono::duration_cast<Clock::duration>((query.deadline - now) * relaxation_share);
    out.relaxation = solve_task_subproblem(sub, windows, q);
    if (out.relaxation.answer != Z3Answer::Sat) return out;
    std::vector<bool> pin(inst.size(), false);
    std::vector<Ticks> start(inst.size(), 0);
    for (size_t k = 0; k < sub.original.size(); ++k)
        if (sub.inst.tasks[k].rank == rank) pin[sub.original[k]] = true, start[sub.original[k]] = out.relaxation.start[k];
    const Windows w = pinned_windows(inst, windows, pin, start);
    Z3Query full = query;
    full.keep_smt2 = false;
    full.budgets = &budgets;
    out.completion = solve_disjunctive_in(inst, w, full);
    out.completion.engine = "pinned-completion";
    return out;
}

}  // namespace pp
