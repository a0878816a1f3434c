#include "solver/pinned_completion.hpp"

#include "solver/subset_relaxation.hpp"

#include <algorithm>
#include <stdexcept>

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

Instance with_rank_order(const Instance& inst, const std::vector<int>& order) {
    Instance out = inst;
    for (size_t k = 1; k < order.size(); ++k) {
        const int id = static_cast<int>(out.edges.size());
        out.edges.push_back({order[k - 1], order[k], 0, Why::Fifo});
        out.out_edges[order[k - 1]].push_back(id);
        out.in_edges[order[k]].push_back(id);
    }
    std::vector<int> indegree(out.size(), 0);
    for (const PrecedenceEdge& e : out.edges) ++indegree[e.to];
    out.topo_order.clear();
    for (size_t t = 0; t < out.size(); ++t)
        if (indegree[t] == 0) out.topo_order.push_back(static_cast<int>(t));
    for (size_t head = 0; head < out.topo_order.size(); ++head)
        for (int e : out.out_edges[out.topo_order[head]])
            if (--indegree[out.edges[e].to] == 0) out.topo_order.push_back(out.edges[e].to);
    if (out.topo_order.size() != out.size()) throw std::logic_error("with_rank_order: the order contradicts a precedence");
    for (size_t k = 0; k < out.size(); ++k) out.topo_position[out.topo_order[k]] = static_cast<int>(k);
    return out;
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
    out.pinned = out.completion.answer;
    if (out.completion.answer == Z3Answer::Sat || Clock::now() >= query.deadline || query.stopped()) return out;
    // Step 3: the order of r only. The problem's windows stay valid for the restriction; its own (longest
    // paths and loads along the chain) are tighter.
    std::vector<int> order;
    for (int t : inst.rank_tasks[rank]) order.push_back(t);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return start[a] < start[b] || (start[a] == start[b] && a < b); });
    const Instance chained = with_rank_order(inst, order);
    const TaskBounds cb = compute_task_bounds(chained, true);
    Windows cw = windows_for_bound(chained, cb, query.bound, true);
    cw.empty_task = -1;
    for (size_t t = 0; t < inst.size(); ++t) {
        cw.est[t] = std::max(cw.est[t], windows.est[t]);
        cw.lst[t] = std::min(cw.lst[t], windows.lst[t]);
        if (cw.lst[t] < cw.est[t] && cw.empty_task < 0) cw.empty_task = static_cast<int>(t);
    }
    out.completion = solve_disjunctive_in(chained, cw, full);
    out.completion.engine = "order-completion";
    return out;
}

}  // namespace pp
