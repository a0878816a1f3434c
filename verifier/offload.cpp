#include "verifier/offload.hpp"

#include "model/dag.hpp"
#include "model/size_budget.hpp"
#include "verifier/simulate.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>

namespace pp {
namespace {

// A stash whose part moves to the host: its forward's and backward's slots (global ids, positions on the rank).
struct Move {
    Op forward;
    std::uint32_t forward_slot = 0, backward_slot = 0;
    std::uint32_t trigger_slot = 0;  // the slot whose start releases the reload
    Rational amount;
};

// One predecessor constraint: this node starts no earlier than the start (or end) of `from` plus `delay`.
struct Arc {
    std::uint32_t from = 0;
    bool from_start = false;
    Ticks delay = 0;
};

void check_policy(const OffloadPolicy& p) {
    if (p.fraction < Rational(0) || p.fraction > Rational(1))
        throw OffloadError(fmt::format("offload fraction {} is not between 0 and 1", format_rational(p.fraction)));
    if (p.offload_time < Rational(0) || p.reload_time < Rational(0))
        throw OffloadError("host-link times must not be negative");
    if (p.lookahead < 1) throw OffloadError(fmt::format("reload lookahead {} is below 1 slot", p.lookahead));
    if (p.host_memory && *p.host_memory < Rational(0)) throw OffloadError("host memory must not be negative");
}

Rational stash_size(const ActivationModel& sizes, const Op& op) {
    return sizes.forward_alloc * sizes.scale_of(op.pipeline, op.stage);
}

// The stashes that move: the forward's slot, the backward (I or B) of the same stage and micro-batch, and the
// slot `lookahead` places before it, which must come after the forward.
// chunk[pipeline][stage]: the stage's number among its rank's stages, in pipeline-then-stage order.
std::vector<std::vector<int>> chunk_numbers(const Placement& placement) {
    std::vector<int> next(static_cast<size_t>(placement.ranks), 0);
    std::vector<std::vector<int>> chunk;
    for (const auto& pipeline : placement.pipelines) {
        chunk.emplace_back();
        for (int rank : pipeline.stage_rank) chunk.back().push_back(next[rank]++);
    }
    return chunk;
}

std::vector<Move> plan_moves(const Schedule& schedule, const ScheduleGraph& g, const ActivationModel& sizes,
                             const OffloadPolicy& policy, std::vector<RankOffload>& ranks) {
    const auto chunk = chunk_numbers(schedule.placement);
    int most = 0;
    for (const auto& stages : chunk)
        for (int c : stages) most = std::max(most, c + 1);
    for (int c : policy.chunks)
        if (c < 0 || c >= most)
            throw OffloadError(fmt::format("offload chunk {} does not exist: a rank holds {} chunk(s), numbered from 0", c, most));
    auto selected = [&](const Op& op) {
        return policy.chunks.empty() || std::find(policy.chunks.begin(), policy.chunks.end(), chunk[op.pipeline][op.stage]) !=
                                            policy.chunks.end();
    };
    std::vector<Move> moves;
    for (std::uint32_t slot = 0; slot < g.slot_count(); ++slot) {
        for (const Op& op : g.slot(schedule, slot)) {
            if (op.kind != OpKind::F) continue;
            Op backward = op;
            backward.kind = OpKind::I;
            if (!g.present(backward)) backward.kind = OpKind::B;
            const std::int32_t b = g.slot_of(backward);
            const std::uint32_t rank = g.rank_of(slot);
            if (b < 0 || policy.fraction == Rational(0) || !selected(op) ||
                g.position(static_cast<std::uint32_t>(b)) <= g.position(slot) + static_cast<std::uint32_t>(policy.lookahead)) {
                ++ranks[rank].kept;
                continue;
            }
            ++ranks[rank].offloaded;
            moves.push_back({op, slot, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b) - policy.lookahead,
                             policy.fraction * stash_size(sizes, op)});
        }
    }
    return moves;
}

// The transfers of each stream in the order the slots release them: at slot q, the reload q's start releases,
// then the offload of q's forward. Returns, per move, the node ids of its offload and reload.
struct TransferOrder {
    std::vector<std::uint32_t> offload_node, reload_node;  // per move
    std::vector<std::vector<std::uint32_t>> streams;       // node ids, in order
};

TransferOrder order_transfers(const ScheduleGraph& g, const std::vector<Move>& moves, bool duplex, int rank_count) {
    const std::uint32_t first = g.slot_count();
    TransferOrder order;
    order.offload_node.resize(moves.size());
    order.reload_node.resize(moves.size());
    std::vector<std::int64_t> reload_at(g.slot_count(), -1), offload_at(g.slot_count(), -1);
    for (size_t k = 0; k < moves.size(); ++k) {
        order.offload_node[k] = first + static_cast<std::uint32_t>(2 * k);
        order.reload_node[k] = first + static_cast<std::uint32_t>(2 * k + 1);
        reload_at[moves[k].trigger_slot] = static_cast<std::int64_t>(k);
        offload_at[moves[k].forward_slot] = static_cast<std::int64_t>(k);
    }
    order.streams.resize(static_cast<size_t>(rank_count) * (duplex ? 2 : 1));
    for (std::uint32_t slot = 0; slot < g.slot_count(); ++slot) {
        const size_t rank = g.rank_of(slot);
        if (reload_at[slot] >= 0)
            order.streams[duplex ? 2 * rank + 1 : rank].push_back(order.reload_node[reload_at[slot]]);
        if (offload_at[slot] >= 0) order.streams[duplex ? 2 * rank : rank].push_back(order.offload_node[offload_at[slot]]);
    }
    return order;
}

struct MemoryEvent {
    Ticks time;
    bool frees;
    Rational delta;
};

Rational peak_of(std::vector<MemoryEvent>& events) {
    std::sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
        if (a.time != b.time) return a.time < b.time;
        return a.frees && !b.frees;
    });
    Rational live(0), peak(0);
    for (const MemoryEvent& e : events) {
        live += e.delta;
        peak = std::max(peak, live);
    }
    return peak;
}

}  // namespace

Rational OffloadTiming::device_peak() const {
    Rational peak(0);
    for (const RankOffload& r : ranks) peak = std::max(peak, r.device_peak);
    return peak;
}

Rational OffloadTiming::host_peak() const {
    Rational peak(0);
    for (const RankOffload& r : ranks) peak = std::max(peak, r.host_peak);
    return peak;
}

OffloadTiming time_with_offload(const Schedule& schedule, const Costs& costs, const ActivationModel& given_sizes,
                                const OffloadPolicy& policy) {
    check_policy(policy);
    // The timing keeps about 200 bytes per slot and transfer (predecessor and successor lists, times, events).
    if (const size_t slots = schedule.slot_count(); slots > kMaxOffloadSlots)
        throw SizeLimitError(fmt::format("{} slots: offload timing takes at most {} (about 200 bytes each)", slots,
                                         kMaxOffloadSlots));
    const ActivationModel sizes = sizes_per_unit(schedule, given_sizes);
    const ScheduleGraph g = build_schedule_graph(schedule);
    const std::uint32_t slots = g.slot_count();

    OffloadTiming out;
    out.ranks.resize(static_cast<size_t>(schedule.rank_count()));
    const std::vector<Move> moves = plan_moves(schedule, g, sizes, policy, out.ranks);
    const TransferOrder streams = order_transfers(g, moves, policy.duplex, schedule.rank_count());

    const SegmentCosts layers(schedule, costs);
    out.scale = time_scale_for(layers.layers());
    for (const Move& m : moves) {
        out.scale.include(m.amount * policy.offload_time);
        out.scale.include(m.amount * policy.reload_time);
    }
    const size_t nodes = slots + 2 * moves.size();
    std::vector<Ticks> duration = SlotDurations(schedule.placement, layers.layers(), out.scale).of_slots(schedule);
    duration.resize(nodes);
    for (size_t k = 0; k < moves.size(); ++k) {
        duration[streams.offload_node[k]] = out.scale.to_ticks(moves[k].amount * policy.offload_time);
        duration[streams.reload_node[k]] = out.scale.to_ticks(moves[k].amount * policy.reload_time);
    }

    std::vector<std::vector<Arc>> preds(nodes);
    const Ticks comm = out.scale.to_ticks(costs.comm);
    for (std::uint32_t u = 0; u < slots; ++u)
        for (const auto& e : out_edges_of(g.graph, u))
            preds[target_of(g.graph, e)].push_back({u, false, g.graph[e].cross_rank ? comm : Ticks(0)});
    for (size_t k = 0; k < moves.size(); ++k) {
        const std::uint32_t off = streams.offload_node[k], back = streams.reload_node[k];
        preds[off].push_back({moves[k].forward_slot, false, 0});
        preds[back].push_back({off, false, 0});
        preds[back].push_back({moves[k].trigger_slot, true, 0});
        preds[moves[k].backward_slot].push_back({back, false, 0});
    }
    for (const auto& stream : streams.streams)
        for (size_t i = 1; i < stream.size(); ++i) preds[stream[i]].push_back({stream[i - 1], false, 0});

    // Longest path in topological order (Kahn); a node left unvisited sits on a cycle.
    std::vector<std::vector<std::uint32_t>> succs(nodes);
    std::vector<std::uint32_t> waiting(nodes, 0);
    for (std::uint32_t v = 0; v < nodes; ++v)
        for (const Arc& a : preds[v]) {
            succs[a.from].push_back(v);
            ++waiting[v];
        }
    out.start.assign(nodes, Ticks(0));
    out.end.assign(nodes, Ticks(0));
    std::deque<std::uint32_t> ready;
    for (std::uint32_t v = 0; v < nodes; ++v)
        if (waiting[v] == 0) ready.push_back(v);
    size_t visited = 0;
    while (!ready.empty()) {
        const std::uint32_t v = ready.front();
        ready.pop_front();
        ++visited;
        Ticks at(0);
        for (const Arc& a : preds[v]) at = std::max(at, (a.from_start ? out.start[a.from] : out.end[a.from]) + a.delay);
        out.start[v] = at;
        out.end[v] = at + duration[v];
        out.makespan = std::max(out.makespan, out.end[v]);
        for (std::uint32_t w : succs[v])
            if (--waiting[w] == 0) ready.push_back(w);
    }
    if (visited != nodes)
        throw OffloadError("the schedule's order cannot run (a dependency cycle); run `pipeproof verify` on it");

    // Memory over time, per rank.
    std::vector<std::vector<MemoryEvent>> device(out.ranks.size()), host(out.ranks.size());
    for (std::uint32_t u = 0; u < slots; ++u) {
        auto& events = device[g.rank_of(u)];
        for (const Op& op : g.slot(schedule, u)) {
            const Rational size = stash_size(sizes, op);
            const Rational at_i = sizes.input_grad_free * sizes.scale_of(op.pipeline, op.stage);
            switch (op.kind) {
                case OpKind::F: events.push_back({out.start[u], false, size}); break;
                case OpKind::I: events.push_back({out.end[u], true, -at_i}); break;
                case OpKind::W: events.push_back({out.end[u], true, at_i - size}); break;
                case OpKind::B: events.push_back({out.end[u], true, -size}); break;
            }
        }
    }
    for (size_t k = 0; k < moves.size(); ++k) {
        const std::uint32_t off = streams.offload_node[k], back = streams.reload_node[k];
        const size_t rank = g.rank_of(moves[k].forward_slot);
        const Rational& a = moves[k].amount;
        device[rank].push_back({out.end[off], true, -a});
        device[rank].push_back({out.start[back], false, a});
        host[rank].push_back({out.start[off], false, a});
        host[rank].push_back({out.end[back], true, -a});
        out.ranks[rank].link_busy += duration[off] + duration[back];
    }
    for (size_t r = 0; r < out.ranks.size(); ++r) {
        out.ranks[r].device_peak = peak_of(device[r]);
        out.ranks[r].host_peak = peak_of(host[r]);
    }

    for (size_t s = 0; s < streams.streams.size(); ++s)
        for (std::uint32_t node : streams.streams[s]) {
            const size_t k = (node - slots) / 2;
            const bool to_host = (node - slots) % 2 == 0;
            out.transfers.push_back({static_cast<int>(policy.duplex ? s / 2 : s), moves[k].forward, to_host,
                                     moves[k].amount, out.start[node], out.end[node]});
        }
    out.start.resize(slots);
    out.end.resize(slots);
    return out;
}

}  // namespace pp
