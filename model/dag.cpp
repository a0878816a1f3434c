#include "model/dag.hpp"

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

ScheduleGraph build_schedule_graph(const Schedule& schedule) {
    ScheduleGraph g(schedule.placement);
    g.slot_of_op.assign(g.index.size(), -1);
    const int ranks = static_cast<int>(schedule.ranks.size());
    const size_t slots = schedule.slot_count();
    g.rank_begin.reserve(ranks + 1);
    g.slot_rank.reserve(slots);
    g.slot_position.reserve(slots);
    std::uint32_t next = 0;
    for (int r = 0; r < ranks; ++r) {
        g.rank_begin.push_back(next);
        for (size_t k = 0; k < schedule.ranks[r].size(); ++k, ++next) {
            g.slot_rank.push_back(static_cast<std::uint32_t>(r));
            g.slot_position.push_back(static_cast<std::uint32_t>(k));
            for (const Op& op : schedule.ranks[r][k]) {
                if (!g.index.in_range(op)) continue;
                auto& where = g.slot_of_op[g.index.id(op)];
                if (where < 0) where = static_cast<std::int32_t>(next);
            }
        }
    }
    g.rank_begin.push_back(next);

    std::vector<std::pair<std::uint32_t, std::uint32_t>> ends;
    std::vector<EdgeInfo> infos;
    ends.reserve(next * 2);
    infos.reserve(next * 2);
    for (int r = 0; r < ranks; ++r)
        for (std::uint32_t s = g.rank_begin[r] + 1; s < g.rank_begin[r + 1]; ++s) {
            ends.emplace_back(s - 1, s);
            infos.push_back({EdgeKind::RankOrder, false, 0, 0});
        }
    for (std::uint32_t s = 0; s < next; ++s) {
        const Slot& slot = g.slot(schedule, s);
        for (const Op& op : slot) {
            if (!g.index.in_range(op) || g.slot_of_op[g.index.id(op)] != static_cast<std::int32_t>(s)) continue;
            if (const auto pred = dependency_predecessor(g, op, schedule.placement)) {
                auto from = static_cast<std::uint32_t>(g.slot_of(*pred));
                // Latency is paid where the tensors actually travel: between the ranks that run the ops.
                bool cross = g.slot_rank[from] != g.slot_rank[s];
                ends.emplace_back(from, s);
                infos.push_back({EdgeKind::Dependency, cross, static_cast<std::uint32_t>(g.index.id(*pred)),
                                 static_cast<std::uint32_t>(g.index.id(op))});
            }
        }
    }
    g.graph = SlotGraph(boost::edges_are_unsorted_multi_pass, ends.begin(), ends.end(), infos.begin(), next);
    return g;
}

}  // namespace pp
