#include "verifier/simulate.hpp"

#include "limits/deadline.hpp"
#include "verifier/dataflow_walk.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace pp {

TimeScale time_scale_for(const Costs& costs) { return time_scale_for(std::span<const Costs>(&costs, 1)); }

Ticks slot_duration(const Slot& slot, const Placement& placement, const Costs& costs, const TimeScale& scale) {
    const Op& first = slot.ops[0];
    const int first_block = placement.block_of(first.pipeline, first.stage);
    if (!slot.is_pair()) return scale.to_ticks(costs.duration(first.kind, first_block));
    const Op& second = slot.ops[1];
    return scale.to_ticks(
        costs.pair_duration(first, first_block, second, placement.block_of(second.pipeline, second.stage)));
}

TimeScale time_scale_for(std::span<const Costs> layers) {
    TimeScale scale;
    for (const Costs& costs : layers)
        for (const auto& value : costs.all_values()) scale.include(value);
    return scale;
}

SegmentCosts::SegmentCosts(const Schedule& schedule, const Costs& costs) : given_(&costs) {
    if (schedule.segments <= 1) return;
    // Equal shares: one layer at 1/k serves every segment (the table stays blocks x 4, whatever k is).
    const int layers = schedule.segment_cost_shares.empty() ? 1 : schedule.segments;
    for (int j = 0; j < layers; ++j) scaled_.push_back(scaled_op_costs(costs, schedule.segment_cost_share(j)));
}

SlotDurations::SlotDurations(const Placement& placement, const Costs& costs, const TimeScale& scale)
    : SlotDurations(placement, std::span<const Costs>(&costs, 1), scale) {}

SlotDurations::SlotDurations(const Placement& placement, std::span<const Costs> per_segment, const TimeScale& scale)
    : placement_(placement), blocks_(std::max(placement.blocks(), 1)), segments_(static_cast<int>(per_segment.size())) {
    single_.resize(static_cast<size_t>(blocks_) * 4 * segments_);
    pair_.resize(static_cast<size_t>(blocks_) * 2 * segments_);
    for (int j = 0; j < segments_; ++j) {
        const Costs& costs = per_segment[j];
        for (int b = 0; b < blocks_; ++b) {
            for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W, OpKind::B})
                single_[(j * blocks_ + b) * 4 + static_cast<int>(kind)] = scale.to_ticks(costs.duration(kind, b));
            const OpCosts& c = costs.of_block(b);
            const int pairs = j * blocks_ * 2;
            if (c.FB) pair_[pairs + pair_index(b, OpKind::B)] = scale.to_ticks(*c.FB);
            if (const auto& fi = c.FI ? c.FI : c.FB) pair_[pairs + pair_index(b, OpKind::I)] = scale.to_ticks(*fi);
        }
    }
}

namespace {

// The rule of SlotDurations for one slot; single(block, kind, segment) gives an op's duration, given_pair(block,
// backward, segment) a pair's given cost or nullptr. An op's segment is its unit number mod `segments`; a pair's
// given cost is its forward's segment's.
template <class T, class Single, class GivenPair>
T slot_duration_by_rule(const Placement& placement, int segments, const Slot& slot, Single single, GivenPair given_pair) {
    const auto segment_of = [segments](const Op& op) { return segments == 1 ? 0 : op.microbatch % segments; };
    const Op& first = slot.ops[0];
    const int block = placement.block_of(first.pipeline, first.stage);
    const T& own = single(block, first.kind, segment_of(first));
    if (!slot.is_pair()) return own;
    const Op& second = slot.ops[1];
    if (const T* given = given_pair(block, second.kind, segment_of(first))) return *given;
    return own + single(placement.block_of(second.pipeline, second.stage), second.kind, segment_of(second));
}

// Slot durations from a table per (segment, block, kind), in T = std::int64_t or Ticks, laid out as SlotDurations.
template <class T>
struct DurationLookup {
    const Placement* placement = nullptr;
    int blocks = 1, segments = 1;
    std::vector<T> single;  // [(segment * blocks + block) * 4 + kind]
    std::vector<T> pair;    // [segment * blocks * 2 + SlotDurations::pair_index(block, backward)], when has_pair
    std::vector<char> has_pair;
    T operator()(const Slot& slot) const {
        return slot_duration_by_rule<T>(
            *placement, segments, slot,
            [&](int block, OpKind kind, int segment) -> const T& {
                return single[(segment * blocks + block) * 4 + static_cast<int>(kind)];
            },
            [&](int block, OpKind backward, int segment) {
                const int index = segment * blocks * 2 + SlotDurations::pair_index(block, backward);
                return has_pair[index] ? &pair[index] : nullptr;
            });
    }
};

DurationLookup<Ticks> exact_lookup(const SlotDurations& table) {
    DurationLookup<Ticks> lookup{&table.placement(), table.blocks(), table.segments(), {}, {}, {}};
    for (int j = 0; j < table.segments(); ++j)
        for (int b = 0; b < table.blocks(); ++b) {
            for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W, OpKind::B}) lookup.single.push_back(table.single(b, kind, j));
            for (OpKind backward : {OpKind::B, OpKind::I}) {  // pair_index order: B, then I
                lookup.pair.push_back(table.pair(b, backward, j).value_or(Ticks(0)));
                lookup.has_pair.push_back(table.pair(b, backward, j).has_value());
            }
        }
    return lookup;
}

// Only non-negative inline durations: then the sum of them bounds every partial sum, and inline values are
// below 2^62, so the sum of two (a pair) cannot overflow.
std::optional<DurationLookup<std::int64_t>> machine_lookup(const SlotDurations& table) {
    DurationLookup<std::int64_t> lookup{&table.placement(), table.blocks(), table.segments(), {}, {}, {}};
    for (int j = 0; j < table.segments(); ++j)
        for (int b = 0; b < table.blocks(); ++b) {
            for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W, OpKind::B}) {
                const Ticks& d = table.single(b, kind, j);
                if (!d.is_inline() || d < 0) return std::nullopt;
                lookup.single.push_back(d.to_int64());
            }
            for (OpKind backward : {OpKind::B, OpKind::I}) {  // pair_index order: B, then I
                const auto& given = table.pair(b, backward, j);
                if (given && (!given->is_inline() || *given < 0)) return std::nullopt;
                lookup.pair.push_back(given ? given->to_int64() : 0);
                lookup.has_pair.push_back(given.has_value());
            }
        }
    return lookup;
}

// The sum of all slot durations, or nullopt when it passes 2^63.
std::optional<std::int64_t> machine_total(const Schedule& schedule, const DurationLookup<std::int64_t>& lookup) {
    std::int64_t total = 0;
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots)
            if (__builtin_add_overflow(total, lookup(slot), &total)) return std::nullopt;
    return total;
}

// At least that sum, from the table alone: the slots times the longest slot any table entry gives (a pair
// costs its given FB / FI or the sum of two ops); nullopt past 2^63.
std::optional<std::int64_t> machine_total_bound(const Schedule& schedule, const DurationLookup<std::int64_t>& lookup) {
    std::int64_t single = 0, pair = 0;
    for (std::int64_t d : lookup.single) single = std::max(single, d);
    for (std::int64_t d : lookup.pair) pair = std::max(pair, d);
    std::int64_t longest = 0, total = 0;
    if (__builtin_add_overflow(single, single, &longest)) return std::nullopt;  // both are below 2^62
    longest = std::max(longest, pair);
    if (__builtin_mul_overflow(longest, static_cast<std::int64_t>(schedule.slot_count()), &total)) return std::nullopt;
    return total;
}

bool fits_machine_total(const Schedule& schedule, const DurationLookup<std::int64_t>& lookup, const Ticks& comm, size_t edges) {
    const auto total = machine_total(schedule, lookup);
    return total && fits_machine_ticks(*total, comm, edges);
}

template <class T>
std::vector<T> durations_of(const Schedule& schedule, const DurationLookup<T>& lookup) {
    std::vector<T> out;
    out.reserve(schedule.slot_count());
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) out.push_back(lookup(slot));
    return out;
}

}  // namespace

Ticks SlotDurations::operator()(const Slot& slot) const {
    return slot_duration_by_rule<Ticks>(
        placement_, segments_, slot, [&](int block, OpKind kind, int segment) -> const Ticks& { return single(block, kind, segment); },
        [&](int block, OpKind backward, int segment) {
            const auto& given = pair(block, backward, segment);
            return given ? &*given : nullptr;
        });
}

bool SlotDurations::machine_durations(const Schedule& schedule, std::vector<std::int64_t>& out) const {
    const auto lookup = machine_lookup(*this);
    if (!lookup) return false;
    out = durations_of(schedule, *lookup);
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

// A slot starts at the latest arrival among its predecessors (0 without any); its critical-path predecessor
// is the one arriving then, the lowest slot number among equal arrivals: the critical path does not depend on
// the order in which slots are timed, so the graph's Kahn order and the dataflow walk give the same one.
template <class T>
struct LatestArrival {
    T start{0};
    std::uint32_t from = dataflow::kNoSlot;
    void offer(const T& arrival, std::uint32_t slot) {
        if (from == dataflow::kNoSlot || arrival > start || (arrival == start && slot < from)) from = slot, start = arrival;
    }
};

// Start, end and critical-path predecessor of every slot, in T = std::int64_t (when fits_machine_ticks holds,
// so no sum can overflow) or T = Ticks (exact at any size), offered their arrivals as LatestArrival is.
template <class T>
struct SlotClockTimes {
    explicit SlotClockTimes(std::uint32_t n) : start(n, T(0)), end(n, T(0)), best_pred(n, dataflow::kNoSlot) {}
    std::vector<T> start, end;
    std::vector<std::uint32_t> best_pred;

    void offer(std::uint32_t slot, const T& arrival, std::uint32_t from) {
        LatestArrival<T> latest{start[slot], best_pred[slot]};
        latest.offer(arrival, from);
        start[slot] = latest.start, best_pred[slot] = latest.from;
    }
};

// The slot that ends last (the lowest such slot), the makespan, and each rank's figures from its busy time,
// first start and last end; Totals over ranks are always Ticks.
template <class T>
void summarise(const std::vector<std::uint32_t>& rank_begin, const std::vector<T>& end, const std::vector<T>& busy,
               const std::vector<T>& first_start, Simulation& sim, std::uint32_t& last_slot) {
    const auto n = static_cast<std::uint32_t>(end.size());
    const size_t ranks = rank_begin.size() - 1;
    sim.ranks.resize(ranks);
    last_slot = 0;
    T makespan(0);
    for (std::uint32_t s = 0; s < n; ++s)
        if (end[s] > makespan) makespan = end[s], last_slot = s;
    sim.makespan = Ticks(makespan);
    Ticks total_idle = 0;
    for (size_t r = 0; r < ranks; ++r) {
        RankTiming& t = sim.ranks[r];
        const std::uint32_t first = rank_begin[r], stop = rank_begin[r + 1];
        t.busy = Ticks(busy[r]);
        if (first < stop) t.first_start = Ticks(first_start[r]), t.last_end = Ticks(end[stop - 1]);
        t.idle = sim.makespan - t.busy;
        sim.bubble = std::max(sim.bubble, t.idle);
        total_idle += t.idle;
    }
    if (sim.makespan > 0) sim.bubble_fraction = Rational(total_idle, sim.makespan * Ticks(ranks));
}

// The per-rank figures and the critical path from the slot times.
template <class T>
void finish_timing(const std::vector<std::uint32_t>& rank_begin, const std::vector<T>& duration, SlotClockTimes<T>&& times,
                   Simulation& sim) {
    const size_t ranks = rank_begin.size() - 1;
    std::vector<T> busy(ranks, T(0)), first_start(ranks, T(0));
    for (size_t r = 0; r < ranks; ++r) {
        for (std::uint32_t s = rank_begin[r]; s < rank_begin[r + 1]; ++s) busy[r] += duration[s];
        if (rank_begin[r] < rank_begin[r + 1]) first_start[r] = times.start[rank_begin[r]];
    }
    std::uint32_t last_slot = 0;
    summarise(rank_begin, times.end, busy, first_start, sim, last_slot);
    if (!times.end.empty()) {
        for (std::uint32_t s = last_slot; s != dataflow::kNoSlot; s = times.best_pred[s]) sim.critical_path.push_back(s);
        std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    }
    // Released before the conversions below, which hold a second copy of start and end for a moment.
    std::vector<std::uint32_t>().swap(times.best_pred);
    sim.start = as_ticks(std::move(times.start));
    sim.end = as_ticks(std::move(times.end));
    record_path_times(sim);
}

// The longest path over the graph's edges, in Kahn's order.
template <class T>
void time_dataflow(const ScheduleGraph& graph, const std::vector<T>& duration, const T& comm, Simulation& sim) {
    const std::uint32_t n = graph.slot_count();
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u))
            ++indegree[target_of(graph.graph, e)];

    SlotClockTimes<T> times(n);
    std::vector<std::uint32_t> ready;
    ready.reserve(n);
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) ready.push_back(s);
    const T no_latency(0);
    // Kahn's order: a slot is final once all its predecessors are.
    for (size_t head = 0; head < ready.size(); ++head) {
        limits::poll("timing a schedule");
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
    finish_timing(graph.rank_begin, duration, std::move(times), sim);
}

// The same longest path, timed by the dataflow walk (dataflow_walk.hpp) without building the graph: each slot
// after its rank predecessor and the producers of what it waits for. Per cell, the slot that ran its F and
// its backward.
class Producers {
public:
    explicit Producers(std::size_t cells) : forward_(cells, dataflow::kNoSlot), backward_(cells, dataflow::kNoSlot) {}
    std::uint32_t of(const dataflow::Wait& wait) const { return (wait.forward ? forward_ : backward_)[wait.cell]; }
    void ran(std::size_t cell, bool forward, std::uint32_t slot) { (forward ? forward_ : backward_)[cell] = slot; }

private:
    std::vector<std::uint32_t> forward_, backward_;
};

template <class T>
class WalkClock {
public:
    WalkClock(std::uint32_t slots, std::size_t cells, const std::vector<T>& duration, const T& comm)
        : times(slots), duration_(duration), comm_(comm), producers_(cells) {}
    SlotClockTimes<T> times;

    void run(const Slot& /*slot*/, int /*rank*/, std::uint32_t id, std::uint32_t previous, const dataflow::Wait* waits,
             int count) {
        limits::poll("timing a schedule");
        if (previous != dataflow::kNoSlot) times.offer(id, times.end[previous], previous);
        for (int k = 0; k < count; ++k) {
            const std::uint32_t from = producers_.of(waits[k]);
            times.offer(id, waits[k].cross_rank ? times.end[from] + comm_ : times.end[from], from);
        }
        times.end[id] = times.start[id] + duration_[id];
    }
    void ran(std::size_t cell, bool forward, std::uint32_t slot) { producers_.ran(cell, forward, slot); }

private:
    const std::vector<T>& duration_;
    T comm_;
    Producers producers_;
};

// The walk's timing keeping only what the summary needs: each slot's end (what its dependents read) and, per
// rank, busy time and first start. Durations are looked up per slot, and the critical path is recovered
// afterwards by offering each slot on it its arrivals again.
template <class T>
class SummaryClock {
public:
    SummaryClock(std::uint32_t slots, std::size_t cells, size_t ranks, const DurationLookup<T>& duration, const T& comm)
        : end(slots, T(0)), busy(ranks, T(0)), first_start(ranks, T(0)), duration_(duration), comm_(comm), producers_(cells) {}
    std::vector<T> end, busy, first_start;

    // When a slot starts: the latest of the arrivals from its rank predecessor and what it waits for.
    LatestArrival<T> arrival(std::uint32_t previous, const dataflow::Wait* waits, int count) const {
        LatestArrival<T> latest;
        if (previous != dataflow::kNoSlot) latest.offer(end[previous], previous);
        for (int k = 0; k < count; ++k) {
            const std::uint32_t from = producers_.of(waits[k]);
            latest.offer(waits[k].cross_rank ? end[from] + comm_ : end[from], from);
        }
        return latest;
    }
    void run(const Slot& slot, int rank, std::uint32_t id, std::uint32_t previous, const dataflow::Wait* waits, int count) {
        const T start = arrival(previous, waits, count).start;
        const T d = duration_(slot);
        end[id] = start + d;
        busy[rank] += d;
        if (previous == dataflow::kNoSlot) first_start[rank] = start;
    }
    void ran(std::size_t cell, bool forward, std::uint32_t slot) { producers_.ran(cell, forward, slot); }

private:
    const DurationLookup<T>& duration_;
    T comm_;
    Producers producers_;
};

template <class T>
void finish_summary(const Schedule& schedule, const dataflow::Walk& walk, SummaryClock<T>& clock, Simulation& sim) {
    const auto& first = walk.first_slots();
    std::uint32_t last_slot = 0;
    summarise(first, clock.end, clock.busy, clock.first_start, sim, last_slot);
    if (clock.end.empty()) return;
    dataflow::Waits waits{};
    for (std::uint32_t s = last_slot; s != dataflow::kNoSlot;) {
        const auto rank = static_cast<std::uint32_t>(std::upper_bound(first.begin(), first.end(), s) - first.begin() - 1);
        const Slot& slot = schedule.ranks[rank][s - first[rank]];
        const int count = walk.waits_of(slot, static_cast<int>(rank), waits);
        const LatestArrival<T> latest = clock.arrival(s > first[rank] ? s - 1 : dataflow::kNoSlot, waits.data(), count);
        sim.critical_path.push_back(s);
        sim.path_start.emplace_back(latest.start);
        sim.path_end.emplace_back(clock.end[s]);
        s = latest.from;
    }
    std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    std::reverse(sim.path_start.begin(), sim.path_start.end());
    std::reverse(sim.path_end.begin(), sim.path_end.end());
}

template <class T>
bool time_by_walk(const Schedule& schedule, const DurationLookup<T>& lookup, const T& comm, SlotTimes kept, Simulation& sim) {
    dataflow::Walk walk(schedule);
    const auto slots = static_cast<std::uint32_t>(schedule.slot_count());
    if (kept == SlotTimes::SummaryOnly) {
        SummaryClock<T> clock(slots, walk.cell_count(), schedule.ranks.size(), lookup, comm);
        if (!walk.run(clock)) return false;
        finish_summary(schedule, walk, clock, sim);
        sim.ops = walk.ops_run();
        return true;
    }
    const std::vector<T> duration = durations_of(schedule, lookup);
    WalkClock<T> clock(slots, walk.cell_count(), duration, comm);
    if (!walk.run(clock)) return false;
    finish_timing(walk.first_slots(), duration, std::move(clock.times), sim);
    sim.ops = walk.ops_run();
    return true;
}

// At least the dependency edges of a schedule that passes the walk: at most one into each of a slot's two
// ops and one rank-order edge after it. A bound is enough: it only decides whether the 64-bit path is safe.
size_t clean_edge_bound(const Schedule& schedule) { return 3 * schedule.slot_count(); }

// Times the schedule with `timer(lookup, comm)`, in machine integers when every duration is inline and the
// bound of fits_machine_ticks holds for `edges`, else exactly in Ticks. False when the timer declines.
template <class Timer>
bool time_schedule(const Schedule& schedule, const Costs& costs, size_t edges, Simulation& sim, Timer&& timer) {
    const SegmentCosts per_segment(schedule, costs);
    sim.scale = time_scale_for(per_segment.layers());
    const Ticks comm = sim.scale.to_ticks(costs.comm);
    const SlotDurations table(schedule.placement, per_segment.layers(), sim.scale);
    if (comm.is_inline() && comm >= 0)
        if (const auto machine = machine_lookup(table)) {
            // The longest slot times the slots bounds the total; only when that bound does not fit is the
            // total itself summed (a pass over the schedule).
            const auto total = machine_total_bound(schedule, *machine);
            if ((total && fits_machine_ticks(*total, comm, edges)) || fits_machine_total(schedule, *machine, comm, edges))
                return timer(*machine, comm.to_int64());
        }
    return timer(exact_lookup(table), comm);
}

void add_peaks(const Schedule& schedule, const ActivationModel& activations, Simulation& sim) {
    const auto peaks = peak_activations(schedule, activations);
    for (size_t r = 0; r < sim.ranks.size(); ++r) sim.ranks[r].peak_activations = peaks[r];
}

}  // namespace

void record_path_times(Simulation& sim) {
    sim.path_start.clear(), sim.path_end.clear();
    for (std::uint32_t s : sim.critical_path) sim.path_start.push_back(sim.start[s]), sim.path_end.push_back(sim.end[s]);
}

Simulation simulate(const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                    const ActivationModel& activations) {
    Simulation sim;
    time_schedule(schedule, costs, boost::num_edges(graph.graph), sim, [&](const auto& lookup, const auto& comm) {
        time_dataflow(graph, durations_of(schedule, lookup), comm, sim);
        return true;
    });
    sim.ops = schedule.op_count();
    add_peaks(schedule, activations, sim);
    return sim;
}

std::optional<Simulation> time_if_clean(const Schedule& schedule, const Costs& costs, SlotTimes kept) {
    Simulation sim;
    const bool walked = time_schedule(schedule, costs, clean_edge_bound(schedule), sim, [&](const auto& lookup, const auto& comm) {
        return time_by_walk(schedule, lookup, comm, kept, sim);
    });
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
