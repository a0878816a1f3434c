#include "verifier/simulate.hpp"

#include "verifier/dataflow_walk.hpp"

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

std::vector<Ticks> SlotDurations::of_slots(const Schedule& schedule) const {
    std::vector<Ticks> duration;
    duration.reserve(schedule.slot_count());
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) duration.push_back((*this)(slot));
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

// Start, end and critical-path predecessor of every slot, in T = std::int64_t (when fits_machine_ticks holds,
// so no sum can overflow) or T = Ticks (exact at any size). A slot's predecessor is the one whose arrival
// sets its start, the lowest slot number among equal arrivals: the critical path does not depend on the
// order in which slots are timed, so the graph's Kahn order and the dataflow walk give the same one.
template <class T>
struct SlotTimes {
    explicit SlotTimes(std::uint32_t n) : start(n, T(0)), end(n, T(0)), best_pred(n, dataflow::kNoSlot) {}
    std::vector<T> start, end;
    std::vector<std::uint32_t> best_pred;

    void offer(std::uint32_t slot, const T& arrival, std::uint32_t from) {
        std::uint32_t& best = best_pred[slot];
        if (best == dataflow::kNoSlot || arrival > start[slot] || (arrival == start[slot] && from < best))
            best = from, start[slot] = arrival;
    }
};

// The per-rank figures and the critical path from the slot times; Totals over ranks are always Ticks.
template <class T>
void finish_timing(const Schedule& schedule, const std::vector<std::uint32_t>& rank_begin, const std::vector<T>& duration,
                   SlotTimes<T>&& times, Simulation& sim) {
    const auto n = static_cast<std::uint32_t>(times.end.size());
    const size_t ranks = schedule.ranks.size();
    sim.ranks.resize(ranks);
    std::uint32_t last_slot = 0;
    T makespan(0);
    for (std::uint32_t s = 0; s < n; ++s)
        if (times.end[s] > makespan) makespan = times.end[s], last_slot = s;
    sim.makespan = Ticks(makespan);
    Ticks total_idle = 0;
    for (size_t r = 0; r < ranks; ++r) {
        RankTiming& t = sim.ranks[r];
        const std::uint32_t first = rank_begin[r], stop = rank_begin[r + 1];
        T busy(0);
        for (std::uint32_t s = first; s < stop; ++s) busy += duration[s];
        t.busy = Ticks(busy);
        if (first < stop) t.first_start = Ticks(times.start[first]), t.last_end = Ticks(times.end[stop - 1]);
        t.idle = sim.makespan - t.busy;
        sim.bubble = std::max(sim.bubble, t.idle);
        total_idle += t.idle;
    }
    if (sim.makespan > 0) sim.bubble_fraction = Rational(total_idle, sim.makespan * Ticks(ranks));
    if (n > 0) {
        for (std::uint32_t s = last_slot; s != dataflow::kNoSlot; s = times.best_pred[s]) sim.critical_path.push_back(s);
        std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    }
    // Released before the conversions below, which hold a second copy of start and end for a moment.
    std::vector<std::uint32_t>().swap(times.best_pred);
    sim.start = as_ticks(std::move(times.start));
    sim.end = as_ticks(std::move(times.end));
}

// The longest path over the graph's edges, in Kahn's order.
template <class T>
void time_dataflow(const Schedule& schedule, const ScheduleGraph& graph, const std::vector<T>& duration, const T& comm,
                   Simulation& sim) {
    const std::uint32_t n = graph.slot_count();
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u))
            ++indegree[target_of(graph.graph, e)];

    SlotTimes<T> times(n);
    std::vector<std::uint32_t> ready;
    ready.reserve(n);
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) ready.push_back(s);
    const T no_latency(0);
    // Kahn's order: a slot is final once all its predecessors are.
    for (size_t head = 0; head < ready.size(); ++head) {
        const std::uint32_t u = ready[head];
        times.end[u] = times.start[u] + duration[u];
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            times.offer(v, times.end[u] + (graph.graph[e].cross_rank ? comm : no_latency), u);
            if (--indegree[v] == 0) ready.push_back(v);
        }
    }
    if (ready.size() != n)
        throw SimulationError("the schedule deadlocks: " + std::to_string(n - ready.size()) +
                              " slots can never start (run verify for the cycle)");
    std::vector<std::uint32_t>().swap(indegree);
    std::vector<std::uint32_t>().swap(ready);
    finish_timing(schedule, graph.rank_begin, duration, std::move(times), sim);
}

// The same longest path, timed by the dataflow walk (dataflow_walk.hpp) without building the graph: each slot
// after its rank predecessor and the producers of what it waits for. Per cell, the slot that ran its F and
// its backward.
template <class T>
class WalkClock {
public:
    WalkClock(std::uint32_t slots, std::size_t cells, const std::vector<T>& duration, const T& comm)
        : times(slots), duration_(duration), comm_(comm), forward_(cells, dataflow::kNoSlot), backward_(cells, dataflow::kNoSlot) {}
    SlotTimes<T> times;

    void run(std::uint32_t slot, std::uint32_t previous, const dataflow::Wait* waits, int count) {
        if (previous != dataflow::kNoSlot) times.offer(slot, times.end[previous], previous);
        for (int k = 0; k < count; ++k) {
            const std::uint32_t from = (waits[k].forward ? forward_ : backward_)[waits[k].cell];
            times.offer(slot, waits[k].cross_rank ? times.end[from] + comm_ : times.end[from], from);
        }
        times.end[slot] = times.start[slot] + duration_[slot];
    }
    void ran(std::size_t cell, bool forward, std::uint32_t slot) { (forward ? forward_ : backward_)[cell] = slot; }

private:
    const std::vector<T>& duration_;
    T comm_;
    std::vector<std::uint32_t> forward_, backward_;
};

template <class T>
bool time_by_walk(const Schedule& schedule, const std::vector<T>& duration, const T& comm, Simulation& sim) {
    dataflow::Walk walk(schedule);
    WalkClock<T> clock(static_cast<std::uint32_t>(duration.size()), walk.cell_count(), duration, comm);
    if (!walk.run(clock)) return false;
    finish_timing(schedule, walk.first_slots(), duration, std::move(clock.times), sim);
    return true;
}

// The dependency edges of a schedule that passes the walk: one into every op but an F of stage 0, and one
// rank-order edge after every slot but a rank's last (as build_schedule_graph makes them).
size_t clean_edge_count(const Schedule& schedule) {
    size_t edges = schedule.op_count();
    for (const auto& pipeline : schedule.placement.pipelines) edges -= static_cast<size_t>(pipeline.microbatches);
    for (const auto& slots : schedule.ranks) edges += slots.empty() ? 0 : slots.size() - 1;
    return edges;
}

// Times the schedule with `timer(durations, comm)`, in machine integers when every duration is inline and
// the bound of fits_machine_ticks holds for `edges`, else exactly in Ticks. False when the timer declines.
template <class Timer>
bool time_schedule(const Schedule& schedule, const Costs& costs, size_t edges, Simulation& sim, Timer&& timer) {
    sim.scale = time_scale_for(costs);
    const Ticks comm = sim.scale.to_ticks(costs.comm);
    const SlotDurations table(schedule.placement, costs, sim.scale);
    std::vector<std::int64_t> machine;
    bool fits = comm.is_inline() && comm >= 0 && table.machine_durations(schedule, machine);
    if (fits) {
        std::int64_t total = 0;
        for (std::int64_t d : machine) fits = fits && !__builtin_add_overflow(total, d, &total);
        fits = fits && fits_machine_ticks(total, comm, edges);
    }
    if (fits) return timer(machine, comm.to_int64());
    machine = {};
    return timer(table.of_slots(schedule), comm);
}

void add_peaks(const Schedule& schedule, const ActivationModel& activations, Simulation& sim) {
    const auto peaks = peak_activations(schedule, activations);
    for (size_t r = 0; r < sim.ranks.size(); ++r) sim.ranks[r].peak_activations = peaks[r];
}

}  // namespace

Simulation simulate(const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                    const ActivationModel& activations) {
    Simulation sim;
    time_schedule(schedule, costs, boost::num_edges(graph.graph), sim, [&](const auto& duration, const auto& comm) {
        time_dataflow(schedule, graph, duration, comm, sim);
        return true;
    });
    add_peaks(schedule, activations, sim);
    return sim;
}

std::optional<Simulation> time_if_clean(const Schedule& schedule, const Costs& costs) {
    Simulation sim;
    const bool walked = time_schedule(schedule, costs, clean_edge_count(schedule), sim,
                                      [&](const auto& duration, const auto& comm) { return time_by_walk(schedule, duration, comm, sim); });
    if (!walked) return std::nullopt;
    return sim;
}

Simulation simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations) {
    std::optional<Simulation> sim = time_if_clean(schedule, costs);
    if (!sim) return simulate(schedule, build_schedule_graph(schedule), costs, activations);  // times or explains
    add_peaks(schedule, activations, *sim);
    return std::move(*sim);
}

}  // namespace pp
