#include "model/dag.hpp"

#include "model/size_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

namespace pp {

std::optional<Op> dependency_predecessor(const ScheduleGraph& g, const Op& op, const Placement& placement) {
    auto if_present = [&](Op pred) { return g.present(pred) ? std::optional<Op>(pred) : std::nullopt; };
    const int last = placement.pipelines[op.pipeline].stages() - 1;
    switch (op.kind) {
        case OpKind::F:
            if (op.stage == 0) return std::nullopt;
            return if_present({OpKind::F, op.pipeline, op.stage - 1, op.microbatch});
        case OpKind::I:
        case OpKind::B:
            if (op.stage == last) return if_present({OpKind::F, op.pipeline, op.stage, op.microbatch});
            if (auto full = if_present({OpKind::B, op.pipeline, op.stage + 1, op.microbatch})) return full;
            return if_present({OpKind::I, op.pipeline, op.stage + 1, op.microbatch});
        case OpKind::W:
            return if_present({OpKind::I, op.pipeline, op.stage, op.microbatch});
    }
    return std::nullopt;
}

DependencyLink dependency_link(const Schedule& schedule, const ScheduleGraph& g, std::uint32_t target,
                               const EdgeInfo& info) {
    const Op to = g.slot(schedule, target).ops[info.target_op];
    return {*dependency_predecessor(g, to, schedule.placement), to};
}

namespace {

// The present ops whose dependency predecessor is `op`: the inverse of dependency_predecessor, so that a
// slot's out-edges can be listed from the slot itself. At most three (an I: two backwards below, its W).
int dependents(const ScheduleGraph& g, const Op& op, const Placement& placement, std::array<Op, 3>& out) {
    int n = 0;
    auto add = [&](OpKind kind, int stage) {
        const Op next{kind, op.pipeline, stage, op.microbatch};
        if (g.present(next)) out[n++] = next;
    };
    const int last = placement.pipelines[op.pipeline].stages() - 1;
    switch (op.kind) {
        case OpKind::F:
            if (op.stage < last) add(OpKind::F, op.stage + 1);
            else add(OpKind::I, last), add(OpKind::B, last);
            break;
        case OpKind::I:
            // The backward below waits for the full backward of this stage when there is one.
            if (op.stage > 0 && !g.present({OpKind::B, op.pipeline, op.stage, op.microbatch}))
                add(OpKind::I, op.stage - 1), add(OpKind::B, op.stage - 1);
            add(OpKind::W, op.stage);
            break;
        case OpKind::B:
            if (op.stage > 0) add(OpKind::I, op.stage - 1), add(OpKind::B, op.stage - 1);
            break;
        case OpKind::W:
            break;
    }
    return n;
}

struct OutEdge {
    std::uint32_t target;
    EdgeInfo info;
};

// Slot u's dependency out-edges, ordered by target slot and op within it.
int dependency_edges(const Schedule& schedule, const ScheduleGraph& g, std::uint32_t u, std::array<OutEdge, 12>& out) {
    int n = 0;
    std::array<Op, 3> next{};
    for (const Op& op : g.slot(schedule, u)) {
        if (!g.index.in_range(op) || g.slot_of_op[g.index.id(op)] != static_cast<std::int32_t>(u)) continue;
        const int count = dependents(g, op, schedule.placement, next);
        for (int k = 0; k < count; ++k) {
            const auto v = static_cast<std::uint32_t>(g.slot_of(next[k]));
            const Slot& target = g.slot(schedule, v);
            for (std::uint8_t j = 0; j < target.count; ++j)
                if (target.ops[j] == next[k])
                    out[n++] = {v, {EdgeKind::Dependency, g.slot_rank[u] != g.slot_rank[v], j}};
        }
    }
    std::sort(out.begin(), out.begin() + n, [](const OutEdge& a, const OutEdge& b) {
        return a.target != b.target ? a.target < b.target : a.info.target_op < b.info.target_op;
    });
    return n;
}

void number_slots(const Schedule& schedule, ScheduleGraph& g) {
    const size_t slots = schedule.slot_count();
    if (slots >= std::numeric_limits<std::uint32_t>::max())
        throw SizeLimitError(fmt::format("{} slots: the schedule graph numbers slots in 32 bits", slots));
    g.slot_of_op.assign(g.index.size(), -1);
    const int ranks = static_cast<int>(schedule.ranks.size());
    g.rank_begin.reserve(ranks + 1);
    g.slot_rank.reserve(slots);
    std::uint32_t next = 0;
    for (int r = 0; r < ranks; ++r) {
        g.rank_begin.push_back(next);
        for (size_t k = 0; k < schedule.ranks[r].size(); ++k, ++next) {
            g.slot_rank.push_back(static_cast<std::uint32_t>(r));
            for (const Op& op : schedule.ranks[r][k]) {
                if (!g.index.in_range(op)) continue;
                auto& where = g.slot_of_op[g.index.id(op)];
                if (where < 0) where = static_cast<std::int32_t>(next);
            }
        }
    }
    g.rank_begin.push_back(next);
}

}  // namespace

ScheduleGraph build_schedule_graph(const Schedule& schedule) {
    ScheduleGraph g(schedule.placement);
    number_slots(schedule, g);
    // At most one rank-order edge per slot and one dependency edge per op; listed by source slot, so the
    // in-place construction below moves nothing and the edge lists are the final CSR arrays.
    const std::uint64_t bound = std::uint64_t{g.slot_count()} + schedule.op_count();
    if (bound >= std::numeric_limits<std::uint32_t>::max())
        throw SizeLimitError(fmt::format("{} slots and {} ops: the schedule graph numbers edges in 32 bits",
                                         g.slot_count(), schedule.op_count()));
    std::vector<std::uint32_t> sources, targets;
    std::vector<EdgeInfo> infos;
    sources.reserve(bound);
    targets.reserve(bound);
    infos.reserve(bound);
    std::array<OutEdge, 12> edges{};
    for (std::uint32_t u = 0; u < g.slot_count(); ++u) {
        if (u + 1 < g.rank_begin[g.slot_rank[u] + 1]) {
            sources.push_back(u);
            targets.push_back(u + 1);
            infos.push_back({EdgeKind::RankOrder, false, 0});
        }
        const int count = dependency_edges(schedule, g, u, edges);
        for (int k = 0; k < count; ++k) {
            sources.push_back(u);
            targets.push_back(edges[k].target);
            infos.push_back(edges[k].info);
        }
    }
    g.graph = SlotGraph(boost::construct_inplace_from_sources_and_targets, sources, targets, infos, g.slot_count());
    return g;
}

}  // namespace pp
