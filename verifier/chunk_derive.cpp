#include "verifier/chunk_derive.hpp"

#include <fmt/format.h>

namespace pp {

Costs ChunkTable::costs() const {
    Costs c;
    c.base.F = of(SlotKind::F).timeline.duration;
    c.base.I = of(SlotKind::I).timeline.duration;
    c.base.W = of(SlotKind::W).timeline.duration;
    c.base.B = of(SlotKind::B).timeline.duration;
    c.base.FB = of(SlotKind::PairFB).timeline.duration;
    c.base.FI = of(SlotKind::PairFI).timeline.duration;
    c.comm = chunk.pp.value_or(Rational(0));
    return c;
}

SlotKindTiming best_by_exhaustive_search(const SlotDag& dag, const Rational& slowdown, const BestSearchOptions& options) {
    BestOrder best = best_order_exhaustive(dag, slowdown, options);
    if (!best.complete)
        throw ChunkBestUndecided(fmt::format("pattern best: the exhaustive search of the {} slot ({} components) ran out of its "
                                             "budget of {} nodes",
                                             slot_kind_name(dag.kind), dag.node_count(), options.node_budget));
    SlotKindTiming t;
    t.kind = dag.kind;
    t.dag = dag;
    t.order = std::move(best.order);
    t.timeline = std::move(best.timeline);
    t.method = fmt::format("best: {} ({} nodes, complete)", best.method, best.nodes);
    t.optimal = true;
    t.lower_bound = t.timeline.duration;
    t.search_nodes = best.nodes;
    return t;
}

SlotKindTiming time_slot_kind(SlotKind kind, const ChunkCosts& chunk, const PatternSpec& pattern, const BestSolver& best) {
    SlotDag dag = build_slot_dag(kind, chunk);
    if (pattern.kind == PatternKind::Best) {
        SlotKindTiming t = best ? best(dag, chunk.slowdown) : best_by_exhaustive_search(dag, chunk.slowdown);
        t.kind = kind;
        return t;
    }
    SlotKindTiming t;
    t.kind = kind;
    t.order = pattern.kind == PatternKind::Custom ? custom_order(pattern, chunk, dag) : pattern_order(pattern.kind, dag);
    t.timeline = time_slot(dag, t.order, chunk.slowdown);
    t.dag = std::move(dag);
    t.method = "pattern " + pattern.name();
    return t;
}

ChunkTable derive_chunk_table(const ChunkCosts& chunk, const PatternSpec& pattern, const BestSolver& best) {
    ChunkTable table;
    table.chunk = chunk;
    table.pattern = pattern;
    if (pattern.kind == PatternKind::Custom) check_custom_pattern(pattern, chunk);
    for (int k = 0; k < kSlotKinds; ++k) table.kinds[static_cast<size_t>(k)] = time_slot_kind(static_cast<SlotKind>(k), chunk, pattern, best);
    return table;
}

std::optional<Rational> ChunkExposure::hidden_share(size_t rank) const {
    if (network[rank] == Rational(0)) return std::nullopt;
    return Rational(1) - exposed[rank] / network[rank];
}

Rational ChunkExposure::total_exposed() const {
    Rational total{0};
    for (const auto& v : exposed) total += v;
    return total;
}

Rational ChunkExposure::total_network() const {
    Rational total{0};
    for (const auto& v : network) total += v;
    return total;
}

ChunkExposure exposure_per_rank(const Schedule& schedule, const ChunkTable& table) {
    ChunkExposure out;
    const size_t ranks = schedule.ranks.size();
    out.exposed.assign(ranks, Rational(0));
    out.network.assign(ranks, Rational(0));
    for (size_t r = 0; r < ranks; ++r) {
        // Count slots per kind first: one multiplication per kind instead of one rational addition per slot.
        std::array<std::int64_t, kSlotKinds> count{};
        for (const Slot& slot : schedule.ranks[r]) ++count[static_cast<size_t>(slot_kind_of(slot))];
        for (int k = 0; k < kSlotKinds; ++k) {
            const auto& t = table.kinds[static_cast<size_t>(k)].timeline;
            out.exposed[r] += t.exposed_comm * Rational(count[static_cast<size_t>(k)]);
            out.network[r] += t.network_time * Rational(count[static_cast<size_t>(k)]);
        }
    }
    return out;
}

}  // namespace pp
