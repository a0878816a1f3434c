#include "solver/subset_relaxation.hpp"

#include <algorithm>
#include <limits>

namespace pp {
namespace {

const Ticks kUnreached{std::numeric_limits<std::int64_t>::min() / 4};

// Longest paths from the start of `source` to the starts of kept tasks reached through tasks outside
// the set only (a kept task ends the walk: paths through it are sums of such delays).
void add_delays_from(const Instance& inst, const std::vector<bool>& keep, int source, const std::vector<int>& local,
                     std::vector<Ticks>& dist, Instance& sub) {
    std::vector<int> touched;
    dist[source] = 0;
    touched.push_back(source);
    for (size_t k = static_cast<size_t>(inst.topo_position[source]); k < inst.topo_order.size(); ++k) {
        const int t = inst.topo_order[k];
        if (dist[t] == kUnreached) continue;
        if (t != source && keep[t]) {
            const Ticks lag = dist[t] - inst.tasks[source].duration;
            const int from = local[source], to = local[t];
            const int id = static_cast<int>(sub.edges.size());
            sub.edges.push_back({from, to, lag, Why::Dependency});
            sub.out_edges[from].push_back(id);
            sub.in_edges[to].push_back(id);
            continue;
        }
        for (int e : inst.out_edges[t]) {
            const auto& edge = inst.edges[e];
            const Ticks value = dist[t] + min_duration(inst, t) + edge.lag;
            if (dist[edge.to] == kUnreached) touched.push_back(edge.to);
            dist[edge.to] = std::max(dist[edge.to], value);
        }
    }
    for (int t : touched) dist[t] = kUnreached;
}

}  // namespace

std::vector<bool> tasks_of_ranks(const Instance& inst, const std::vector<int>& ranks, int first_microbatch) {
    std::vector<bool> keep(inst.size(), false);
    for (int r : ranks)
        for (int t : inst.rank_tasks[r]) keep[t] = inst.tasks[t].op.microbatch >= first_microbatch;
    return keep;
}

TaskSubproblem task_subproblem(const Instance& inst, const std::vector<bool>& keep) {
    TaskSubproblem sub;
    Instance& s = sub.inst;
    s.problem = inst.problem;
    s.problem.objective = Objective::Makespan;  // the deadlines are in the windows
    s.problem.overlap.reset();
    s.scale = inst.scale;
    s.quantum = inst.quantum;
    s.comm = inst.comm;
    s.cap = inst.cap;
    s.weighted = inst.weighted;  // fewer stashes counted: still a relaxation
    s.ranks = inst.ranks;
    std::vector<int> local(inst.size(), -1);
    s.rank_tasks.assign(static_cast<size_t>(inst.ranks), {});
    for (int t : inst.topo_order) {
        if (!keep[t]) continue;
        local[t] = static_cast<int>(sub.original.size());
        sub.original.push_back(t);
        Task task = inst.tasks[t];
        task.activation = -1;
        s.tasks.push_back(task);
        s.rank_tasks[task.rank].push_back(local[t]);
    }
    for (const Activation& a : inst.activations) {
        if (!keep[a.forward] || !keep[a.weight] || !keep[a.input]) continue;
        const int id = static_cast<int>(s.activations.size());
        s.activations.push_back({local[a.forward], local[a.weight], a.rank, local[a.input]});
        s.tasks[local[a.forward]].activation = s.tasks[local[a.weight]].activation = id;
    }
    s.rank_needs_cardinality = inst.rank_needs_cardinality;
    s.earliest_rank_start.assign(static_cast<size_t>(inst.ranks), 0);
    s.out_edges.assign(s.tasks.size(), {});
    s.in_edges.assign(s.tasks.size(), {});
    std::vector<Ticks> dist(inst.size(), kUnreached);
    for (int t : sub.original) add_delays_from(inst, keep, t, local, dist, s);
    // Kept in the full instance's topological order, so that order is a topological order here.
    s.topo_order.resize(s.tasks.size());
    s.topo_position.resize(s.tasks.size());
    for (size_t k = 0; k < s.tasks.size(); ++k) s.topo_order[k] = static_cast<int>(k), s.topo_position[k] = static_cast<int>(k);
    for (const Task& t : s.tasks) s.horizon += t.duration;
    for (const PrecedenceEdge& e : s.edges) s.horizon += std::max<Ticks>(0, e.lag);
    return sub;
}

Z3Outcome solve_task_subproblem(const TaskSubproblem& sub, const Windows& full, const Z3Query& query) {
    Z3Outcome out = solve_disjunctive_in(sub.inst, restricted_windows(full, sub.original), query);
    out.engine = "subset-relaxation";
    return out;
}

}  // namespace pp
