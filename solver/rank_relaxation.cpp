#include "solver/rank_relaxation.hpp"

#include <algorithm>
#include <limits>

namespace pp {
namespace {

const Ticks kUnreached{std::numeric_limits<std::int64_t>::min() / 4};

// Longest paths from the start of `source` to the starts of the tasks of `rank` reached through ops of
// other ranks only (a task of the rank ends the walk: paths through it are sums of such delays).
void add_delays_from(const Instance& inst, int rank, int source, const std::vector<int>& local, std::vector<Ticks>& dist,
                     Instance& sub) {
    std::vector<int> touched;
    dist[source] = 0;
    touched.push_back(source);
    for (size_t k = static_cast<size_t>(inst.topo_position[source]); k < inst.topo_order.size(); ++k) {
        const int t = inst.topo_order[k];
        if (dist[t] == kUnreached) continue;
        if (t != source && inst.tasks[t].rank == rank) {
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

RankSubproblem rank_subproblem(const Instance& inst, int rank) {
    RankSubproblem sub;
    Instance& s = sub.inst;
    s.problem = inst.problem;
    s.problem.objective = Objective::Makespan;  // the deadlines are in the windows
    s.problem.overlap.reset();
    s.scale = inst.scale;
    s.quantum = inst.quantum;
    s.comm = inst.comm;
    s.cap = inst.cap;
    s.weighted = inst.weighted;
    s.ranks = 1;
    std::vector<int> local(inst.size(), -1);
    for (int t : inst.rank_tasks[rank]) {
        local[t] = static_cast<int>(sub.original.size());
        sub.original.push_back(t);
        Task task = inst.tasks[t];
        task.rank = 0;
        task.activation = -1;
        s.tasks.push_back(task);
    }
    s.rank_tasks.assign(1, {});
    for (size_t k = 0; k < s.tasks.size(); ++k) s.rank_tasks[0].push_back(static_cast<int>(k));
    for (const Activation& a : inst.activations) {
        if (a.rank != rank) continue;
        const int id = static_cast<int>(s.activations.size());
        s.activations.push_back({local[a.forward], local[a.weight], 0, local[a.input]});
        s.tasks[local[a.forward]].activation = s.tasks[local[a.weight]].activation = id;
    }
    s.rank_needs_cardinality = {inst.rank_needs_cardinality[rank]};
    s.earliest_rank_start = {0};
    s.out_edges.assign(s.tasks.size(), {});
    s.in_edges.assign(s.tasks.size(), {});
    std::vector<Ticks> dist(inst.size(), kUnreached);
    for (int t : sub.original) add_delays_from(inst, rank, t, local, dist, s);
    // Topological order: the full instance's, restricted.
    s.topo_order = s.rank_tasks[0];
    std::sort(s.topo_order.begin(), s.topo_order.end(),
              [&](int a, int b) { return inst.topo_position[sub.original[a]] < inst.topo_position[sub.original[b]]; });
    s.topo_position.assign(s.tasks.size(), 0);
    for (size_t k = 0; k < s.topo_order.size(); ++k) s.topo_position[s.topo_order[k]] = static_cast<int>(k);
    return sub;
}

Z3Outcome solve_rank_subproblem(const RankSubproblem& sub, const Windows& full, const Z3Query& query) {
    Z3Outcome out = solve_disjunctive_in(sub.inst, restricted_windows(full, sub.original), query);
    out.engine = "rank-relaxation";
    return out;
}

}  // namespace pp
