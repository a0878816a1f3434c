#include "verifier/simulate.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

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

SlotDurations::SlotDurations(const Placement& placement, const Costs& costs, const TimeScale& scale)
    : placement_(placement) {
    const int blocks = std::max(placement.blocks(), 1);
    single_.resize(static_cast<size_t>(blocks) * 4);
    pair_.resize(blocks);
    for (int b = 0; b < blocks; ++b) {
        for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W, OpKind::B})
            single_[b * 4 + static_cast<int>(kind)] = scale.to_ticks(costs.duration(kind, b));
        if (costs.of_block(b).FB) pair_[b] = scale.to_ticks(*costs.of_block(b).FB);
    }
}

Ticks SlotDurations::operator()(const Slot& slot) const {
    // Same rule as Costs::pair_duration: a pair costs FB of its forward's block, else the sum of its ops.
    const Op& first = slot.ops[0];
    const int block = placement_.block_of(first.pipeline, first.stage);
    const Ticks& own = single_[block * 4 + static_cast<int>(first.kind)];
    if (!slot.is_pair()) return own;
    if (pair_[block]) return *pair_[block];
    const Op& second = slot.ops[1];
    return own + single_[placement_.block_of(second.pipeline, second.stage) * 4 + static_cast<int>(second.kind)];
}

bool SlotDurations::machine_durations(const Schedule& schedule, std::vector<std::int64_t>& out) const {
    // Slots in ScheduleGraph numbering are the ranks' slots one rank after another.
    // Only non-negative inline durations: then a sum of them bounds every partial sum.
    std::vector<std::int64_t> single(single_.size());
    for (size_t k = 0; k < single_.size(); ++k) {
        if (!single_[k].is_inline() || single_[k] < 0) return false;
        single[k] = single_[k].to_int64();
    }
    std::vector<std::int64_t> pair(pair_.size(), -1);  // -1: no FB for this block
    for (size_t b = 0; b < pair_.size(); ++b) {
        if (pair_[b] && (!pair_[b]->is_inline() || *pair_[b] < 0)) return false;
        if (pair_[b]) pair[b] = pair_[b]->to_int64();
    }
    out.clear();
    out.reserve(schedule.slot_count());
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) {
            const Op& first = slot.ops[0];
            const int block = placement_.block_of(first.pipeline, first.stage);
            std::int64_t d = single[block * 4 + static_cast<int>(first.kind)];
            if (slot.is_pair()) {
                const Op& second = slot.ops[1];
                // Inline values are below 2^62, so the sum of two cannot overflow.
                d = pair[block] >= 0 ? pair[block] : d + single[placement_.block_of(second.pipeline, second.stage) * 4 + static_cast<int>(second.kind)];
            }
            out.push_back(d);
        }
    return true;
}

std::vector<Ticks> SlotDurations::of_graph(const Schedule& schedule, const ScheduleGraph& graph) const {
    std::vector<Ticks> duration;
    duration.reserve(graph.slot_count());
    for (std::uint32_t s = 0; s < graph.slot_count(); ++s) duration.push_back((*this)(graph.slot(schedule, s)));
    return duration;
}

bool fits_machine_ticks(const Ticks& total_duration, const Ticks& comm, size_t edges) {
    return total_duration + comm * Ticks(edges) <= Integer::kInlineMax;
}

namespace {

// Every value of a machine-integer run is a path length, so within the bound of fits_machine_ticks.
template <class T>
std::vector<Ticks> as_ticks(std::vector<T>&& values) {
    if constexpr (std::is_same_v<T, Ticks>) return std::move(values);
    else return Integer::from_inline_values(values);
}

// The longest path and the per-rank figures, in T = std::int64_t (when fits_machine_ticks holds, so no
// sum can overflow) or T = Ticks (exact at any size). Totals over ranks are always Ticks.
template <class T>
void time_dataflow(const Schedule& schedule, const ScheduleGraph& graph, const std::vector<T>& duration, const T& comm,
                   Simulation& sim) {
    const std::uint32_t n = graph.slot_count();
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u))
            ++indegree[target_of(graph.graph, e)];

    std::vector<T> start(n, T(0)), end(n, T(0));
    constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();  // slot ids are below it
    std::vector<std::uint32_t> best_pred(n, kNone);
    std::vector<std::uint32_t> ready;
    ready.reserve(n);
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) ready.push_back(s);
    const T no_latency(0);
    // Kahn's order: a slot is final once all its predecessors are.
    for (size_t head = 0; head < ready.size(); ++head) {
        const std::uint32_t u = ready[head];
        end[u] = start[u] + duration[u];
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            const EdgeInfo& info = graph.graph[e];
            const T arrival = end[u] + (info.cross_rank ? comm : no_latency);
            if (best_pred[v] == kNone || arrival > start[v]) best_pred[v] = u, start[v] = arrival;
            if (--indegree[v] == 0) ready.push_back(v);
        }
    }
    if (ready.size() != n)
        throw SimulationError("the schedule deadlocks: " + std::to_string(n - ready.size()) +
                              " slots can never start (run verify for the cycle)");

    const size_t ranks = schedule.ranks.size();
    sim.ranks.resize(ranks);
    std::uint32_t last_slot = 0;
    T makespan(0);
    for (std::uint32_t s = 0; s < n; ++s)
        if (end[s] > makespan) makespan = end[s], last_slot = s;
    sim.makespan = Ticks(makespan);
    Ticks total_idle = 0;
    for (size_t r = 0; r < ranks; ++r) {
        RankTiming& t = sim.ranks[r];
        const std::uint32_t first = graph.rank_begin[r], stop = graph.rank_begin[r + 1];
        T busy(0);
        for (std::uint32_t s = first; s < stop; ++s) busy += duration[s];
        t.busy = Ticks(busy);
        if (first < stop) t.first_start = Ticks(start[first]), t.last_end = Ticks(end[stop - 1]);
        t.idle = sim.makespan - t.busy;
        sim.bubble = std::max(sim.bubble, t.idle);
        total_idle += t.idle;
    }
    if (sim.makespan > 0) sim.bubble_fraction = Rational(total_idle, sim.makespan * Ticks(ranks));
    if (n > 0) {
        for (std::uint32_t s = last_slot; s != kNone; s = best_pred[s]) sim.critical_path.push_back(s);
        std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    }
    // Released before the conversions below, which hold a second copy of start and end for a moment.
    std::vector<std::uint32_t>().swap(indegree);
    std::vector<std::uint32_t>().swap(ready);
    std::vector<std::uint32_t>().swap(best_pred);
    sim.start = as_ticks(std::move(start));
    sim.end = as_ticks(std::move(end));
}

}  // namespace

Simulation simulate(const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                    const ActivationModel& activations) {
    Simulation sim;
    sim.scale = time_scale_for(costs);
    const Ticks comm = sim.scale.to_ticks(costs.comm);
    const SlotDurations table(schedule.placement, costs, sim.scale);

    // The machine-integer path when every duration is inline and the bound of fits_machine_ticks holds.
    std::vector<std::int64_t> machine;
    bool fits = comm.is_inline() && comm >= 0 && table.machine_durations(schedule, machine);
    if (fits) {
        std::int64_t total = 0;
        for (std::int64_t d : machine) fits = fits && !__builtin_add_overflow(total, d, &total);
        fits = fits && fits_machine_ticks(total, comm, boost::num_edges(graph.graph));
    }
    if (fits) {
        time_dataflow<std::int64_t>(schedule, graph, machine, comm.to_int64(), sim);
    } else {
        machine = {};
        time_dataflow<Ticks>(schedule, graph, table.of_graph(schedule, graph), comm, sim);
    }
    const auto peaks = peak_activations(schedule, activations);
    for (size_t r = 0; r < sim.ranks.size(); ++r) sim.ranks[r].peak_activations = peaks[r];
    return sim;
}

Simulation simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations) {
    return simulate(schedule, build_schedule_graph(schedule), costs, activations);
}

}  // namespace pp
