#include "verifier/simulate.hpp"

#include <algorithm>

namespace pp {

TimeScale time_scale_for(const Costs& costs) {
    TimeScale scale;
    for (const auto& value : costs.all_values()) scale.include(value);
    return scale;
}

Ticks slot_duration(const Slot& slot, const Placement& placement, const Costs& costs, const TimeScale& scale) {
    const Op& first = slot.ops[0];
    const int first_block = placement.block_of(first.pipeline, first.stage);
    if (!slot.is_pair()) return scale.to_ticks(costs.duration(first.kind, first_block));
    const Op& second = slot.ops[1];
    return scale.to_ticks(
        costs.pair_duration(first, first_block, second, placement.block_of(second.pipeline, second.stage)));
}

Simulation simulate(const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                    const ActivationModel& activations) {
    Simulation sim;
    sim.scale = time_scale_for(costs);
    const std::uint32_t n = graph.slot_count();
    const Ticks comm = sim.scale.to_ticks(costs.comm);
    std::vector<Ticks> duration(n);
    for (std::uint32_t s = 0; s < n; ++s)
        duration[s] = slot_duration(graph.slot(schedule, s), schedule.placement, costs, sim.scale);

    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u))
            ++indegree[target_of(graph.graph, e)];

    sim.start.assign(n, 0);
    sim.end.assign(n, 0);
    std::vector<std::int64_t> best_pred(n, -1);
    std::vector<std::uint32_t> ready;
    ready.reserve(n);
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) ready.push_back(s);
    // Kahn's order: a slot is final once all its predecessors are.
    for (size_t head = 0; head < ready.size(); ++head) {
        const std::uint32_t u = ready[head];
        sim.end[u] = sim.start[u] + duration[u];
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            const EdgeInfo& info = graph.graph[e];
            const Ticks arrival = sim.end[u] + (info.cross_rank ? comm : 0);
            if (best_pred[v] < 0 || arrival > sim.start[v]) best_pred[v] = u, sim.start[v] = arrival;
            if (--indegree[v] == 0) ready.push_back(v);
        }
    }
    if (ready.size() != n)
        throw SimulationError("the schedule deadlocks: " + std::to_string(n - ready.size()) +
                              " slots can never start (run verify for the cycle)");

    const size_t ranks = schedule.ranks.size();
    sim.ranks.resize(ranks);
    std::uint32_t last_slot = 0;
    for (std::uint32_t s = 0; s < n; ++s)
        if (sim.end[s] > sim.makespan) sim.makespan = sim.end[s], last_slot = s;
    for (size_t r = 0; r < ranks; ++r) {
        RankTiming& t = sim.ranks[r];
        const std::uint32_t first = graph.rank_begin[r], stop = graph.rank_begin[r + 1];
        for (std::uint32_t s = first; s < stop; ++s) t.busy += duration[s];
        if (first < stop) t.first_start = sim.start[first], t.last_end = sim.end[stop - 1];
        t.idle = sim.makespan - t.busy;
        sim.bubble = std::max(sim.bubble, t.idle);
    }
    const auto peaks = peak_activations(schedule, activations);
    Ticks total_idle = 0;
    for (size_t r = 0; r < ranks; ++r) sim.ranks[r].peak_activations = peaks[r], total_idle += sim.ranks[r].idle;
    if (sim.makespan > 0) sim.bubble_fraction = Rational(total_idle, sim.makespan * static_cast<Ticks>(ranks));

    if (n > 0) {
        for (std::int64_t s = last_slot; s >= 0; s = best_pred[s]) sim.critical_path.push_back(static_cast<std::uint32_t>(s));
        std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    }
    return sim;
}

Simulation simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations) {
    return simulate(schedule, build_schedule_graph(schedule), costs, activations);
}

}  // namespace pp
