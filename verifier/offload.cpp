#include "verifier/offload.hpp"

#include "model/dag.hpp"
#include "model/size_budget.hpp"
#include "verifier/simulate.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>

namespace pp {
namespace {

using Move = OffloadNetwork::Move;
using Arc = OffloadNetwork::Arc;
using Event = OffloadNetwork::Event;

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

// The stashes that may move: the forward's slot, the backward (I or B) of the same stage and micro-batch, and the
// slot `lookahead` places before it, which must come after the forward.
std::vector<Move> plan_moves(const Schedule& schedule, const ScheduleGraph& g, const ActivationModel& sizes,
                             const OffloadPolicy& policy, std::vector<RankOffload>& ranks) {
    const auto chunk = chunk_numbers(schedule.placement);
    int most = 0;
    for (const auto& stages : chunk)
        for (int c : stages) most = std::max(most, c + 1);
    for (int c : policy.chunks)
        if (c < 0 || c >= most)
            throw OffloadError(fmt::format("offload chunk {} does not exist: a rank holds {} chunk(s), numbered from 0", c, most));
    std::vector<bool> allowed;  // by OpIndex id: the forwards policy.only names
    if (policy.only) {
        allowed.assign(g.index.size(), false);
        for (const Op& op : *policy.only)
            if (g.index.in_range(op)) allowed[g.index.id(op)] = true;
    }
    auto selected = [&](const Op& op) {
        if (policy.only && !allowed[g.index.id(op)]) return false;
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
            if (b < 0 || policy.fraction == Rational(0) || stash_size(sizes, op) == Rational(0) || !selected(op) ||
                g.position(static_cast<std::uint32_t>(b)) <= g.position(slot) + static_cast<std::uint32_t>(policy.lookahead)) {
                ++ranks[rank].kept;
                continue;
            }
            ++ranks[rank].offloaded;
            moves.push_back({op, static_cast<int>(rank), slot, static_cast<std::uint32_t>(b),
                             static_cast<std::uint32_t>(b) - policy.lookahead, policy.fraction * stash_size(sizes, op)});
        }
    }
    return moves;
}

// The transfers of each stream in the order the slots release them: at slot q, the reload q's start releases,
// then the offload of q's forward.
std::vector<std::vector<std::uint32_t>> order_streams(const OffloadNetwork& net, bool duplex, int rank_count) {
    std::vector<std::int64_t> reload_at(net.slots, -1), offload_at(net.slots, -1);
    for (size_t k = 0; k < net.moves.size(); ++k) {
        reload_at[net.moves[k].trigger_slot] = static_cast<std::int64_t>(k);
        offload_at[net.moves[k].forward_slot] = static_cast<std::int64_t>(k);
    }
    std::vector<std::vector<std::uint32_t>> streams(static_cast<size_t>(rank_count) * (duplex ? 2 : 1));
    for (std::uint32_t slot = 0; slot < net.slots; ++slot) {
        const size_t rank = static_cast<size_t>(net.slot_rank[slot]);
        if (reload_at[slot] >= 0) streams[duplex ? 2 * rank + 1 : rank].push_back(net.reload_node(reload_at[slot]));
        if (offload_at[slot] >= 0) streams[duplex ? 2 * rank : rank].push_back(net.offload_node(offload_at[slot]));
    }
    return streams;
}

void add_arcs(const ScheduleGraph& g, const Costs& costs, OffloadNetwork& net) {
    net.preds.assign(net.nodes(), {});
    const Ticks comm = net.scale.to_ticks(costs.comm);
    for (std::uint32_t u = 0; u < net.slots; ++u)
        for (const auto& e : out_edges_of(g.graph, u))
            net.preds[target_of(g.graph, e)].push_back({u, false, g.graph[e].cross_rank ? comm : Ticks(0), -1});
    for (size_t k = 0; k < net.moves.size(); ++k) {
        const int move = static_cast<int>(k);
        const std::uint32_t off = net.offload_node(k), back = net.reload_node(k);
        net.preds[off].push_back({net.moves[k].forward_slot, false, 0, move});
        net.preds[back].push_back({off, false, 0, move});
        net.preds[back].push_back({net.moves[k].trigger_slot, true, 0, move});
        net.preds[net.moves[k].backward_slot].push_back({back, false, 0, move});
    }
    for (const auto& stream : net.streams)
        for (size_t i = 1; i < stream.size(); ++i) net.preds[stream[i]].push_back({stream[i - 1], false, 0, -1});
}

void add_events(const Schedule& schedule, const ScheduleGraph& g, const ActivationModel& sizes, OffloadNetwork& net) {
    constexpr std::uint64_t kRelease = 0, kAllocate = ~std::uint64_t{0};
    auto in_order = [](std::uint32_t slot, bool at_start) { return 1 + 2 * std::uint64_t{slot} + (at_start ? 0 : 1); };
    net.events.assign(static_cast<size_t>(schedule.rank_count()), {});
    for (std::uint32_t u = 0; u < net.slots; ++u) {
        auto& events = net.events[g.rank_of(u)];
        for (const Op& op : g.slot(schedule, u)) {
            const Rational size = stash_size(sizes, op);
            const Rational at_i = sizes.input_grad_free * sizes.scale_of(op.pipeline, op.stage);
            switch (op.kind) {
                case OpKind::F: events.push_back({u, true, size, -1, false, in_order(u, true)}); break;
                case OpKind::I: events.push_back({u, false, -at_i, -1, false, in_order(u, false)}); break;
                case OpKind::W: events.push_back({u, false, at_i - size, -1, false, in_order(u, false)}); break;
                case OpKind::B: events.push_back({u, false, -size, -1, false, in_order(u, false)}); break;
            }
        }
    }
    for (size_t k = 0; k < net.moves.size(); ++k) {
        const int move = static_cast<int>(k);
        const Rational& a = net.moves[k].amount;
        auto& events = net.events[static_cast<size_t>(net.moves[k].rank)];
        events.push_back({net.offload_node(k), false, -a, move, false, kRelease});
        events.push_back({net.reload_node(k), true, a, move, false, kAllocate});
        events.push_back({net.offload_node(k), true, a, move, true, kAllocate});
        events.push_back({net.reload_node(k), false, -a, move, true, kRelease});
    }
}

struct MemoryPoint {
    Ticks time;
    std::uint64_t tie;
    Rational delta;
};

Rational peak_of(std::vector<MemoryPoint>& points) {
    std::sort(points.begin(), points.end(), [](const MemoryPoint& a, const MemoryPoint& b) {
        if (a.time != b.time) return a.time < b.time;
        return a.tie < b.tie;
    });
    Rational live(0), peak(0);
    for (const MemoryPoint& e : points) {
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

OffloadNetwork offload_network(const Schedule& schedule, const Costs& costs, const ActivationModel& given_sizes,
                               const OffloadPolicy& policy) {
    check_policy(policy);
    // The timing keeps about 500 bytes per slot with its transfers (arcs, successors, times, events; 2 GB measured
    // at 4.16 million slots).
    if (const size_t slots = schedule.slot_count(); slots > kMaxOffloadSlots)
        throw SizeLimitError(fmt::format("{} slots: offload timing takes at most {} (about 500 bytes each)", slots,
                                         kMaxOffloadSlots));
    // A segment's backward reads the keys and values of the micro-batch's earlier segments on its stage, so their
    // stashes would have to stay (or come back) with it: not modelled.
    if (schedule.segments > 1)
        throw OffloadError("offload does not model sequence segments yet (a segment's backward reads the stashes of the "
                           "earlier segments of its micro-batch)");
    const ActivationModel sizes = sizes_per_unit(schedule, given_sizes);
    const ScheduleGraph g = build_schedule_graph(schedule);

    OffloadNetwork net;
    net.slots = g.slot_count();
    net.ranks.resize(static_cast<size_t>(schedule.rank_count()));
    net.slot_rank.resize(net.slots);
    for (std::uint32_t u = 0; u < net.slots; ++u) net.slot_rank[u] = static_cast<int>(g.rank_of(u));
    net.moves = plan_moves(schedule, g, sizes, policy, net.ranks);
    net.streams = order_streams(net, policy.duplex, schedule.rank_count());

    const SegmentCosts layers(schedule, costs);
    net.scale = time_scale_for(layers.layers());
    for (const Move& m : net.moves) {
        net.scale.include(m.amount * policy.offload_time);
        net.scale.include(m.amount * policy.reload_time);
    }
    net.duration = SlotDurations(schedule.placement, layers.layers(), net.scale).of_slots(schedule);
    net.duration.resize(net.slots + 2 * net.moves.size());
    for (size_t k = 0; k < net.moves.size(); ++k) {
        net.duration[net.offload_node(k)] = net.scale.to_ticks(net.moves[k].amount * policy.offload_time);
        net.duration[net.reload_node(k)] = net.scale.to_ticks(net.moves[k].amount * policy.reload_time);
    }
    add_arcs(g, costs, net);
    add_events(schedule, g, sizes, net);
    return net;
}

OffloadTiming time_with_offload(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                                const OffloadPolicy& policy) {
    const OffloadNetwork net = offload_network(schedule, costs, sizes, policy);
    return time_network(net, std::vector<bool>(net.moves.size(), true));
}

OffloadTiming time_network(const OffloadNetwork& net, const std::vector<bool>& made) {
    const size_t nodes = net.nodes();
    auto active = [&](int move) { return move < 0 || made[static_cast<size_t>(move)]; };
    auto transfer_made = [&](std::uint32_t node) { return node < net.slots || made[(node - net.slots) / 2]; };
    OffloadTiming out;
    out.scale = net.scale;
    out.ranks = net.ranks;
    for (size_t k = 0; k < net.moves.size(); ++k)
        if (!made[k]) {
            --out.ranks[static_cast<size_t>(net.moves[k].rank)].offloaded;
            ++out.ranks[static_cast<size_t>(net.moves[k].rank)].kept;
        }

    // Longest path in topological order (Kahn); a node left unvisited sits on a cycle. A move not made takes no
    // time and its arcs do not count: its transfers only pass their stream's time on.
    std::vector<std::vector<std::uint32_t>> succs(nodes);
    std::vector<std::uint32_t> waiting(nodes, 0);
    for (std::uint32_t v = 0; v < nodes; ++v)
        for (const Arc& a : net.preds[v]) {
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
        for (const Arc& a : net.preds[v])
            if (active(a.move)) at = std::max(at, (a.from_start ? out.start[a.from] : out.end[a.from]) + a.delay);
        out.start[v] = at;
        out.end[v] = transfer_made(v) ? at + net.duration[v] : at;
        out.makespan = std::max(out.makespan, out.end[v]);
        for (std::uint32_t w : succs[v])
            if (--waiting[w] == 0) ready.push_back(w);
    }
    if (visited != nodes)
        throw OffloadError("the schedule's order cannot run (a dependency cycle); run `pipeproof verify` on it");

    for (size_t r = 0; r < out.ranks.size(); ++r) {
        std::vector<MemoryPoint> device, host;
        for (const Event& e : net.events[r])
            if (active(e.move))
                (e.host ? host : device).push_back({e.at_start ? out.start[e.node] : out.end[e.node], e.tie, e.delta});
        out.ranks[r].device_peak = peak_of(device);
        out.ranks[r].host_peak = peak_of(host);
    }
    for (size_t k = 0; k < net.moves.size(); ++k)
        if (made[k])
            out.ranks[static_cast<size_t>(net.moves[k].rank)].link_busy +=
                net.duration[net.offload_node(k)] + net.duration[net.reload_node(k)];

    for (size_t s = 0; s < net.streams.size(); ++s)
        for (std::uint32_t node : net.streams[s]) {
            const size_t k = (node - net.slots) / 2;
            if (!made[k]) continue;
            const bool to_host = (node - net.slots) % 2 == 0;
            out.transfers.push_back({net.moves[k].rank, net.moves[k].forward, to_host, net.moves[k].amount, out.start[node],
                                     out.end[node]});
        }
    out.start.resize(net.slots);
    out.end.resize(net.slots);
    return out;
}

}  // namespace pp
