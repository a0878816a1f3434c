// build_schedule_graph lists each slot's out-edges from the slot itself (its dependents); this checks it
// against the DAG's definition written out here independently -- every op's one predecessor, found by
// scanning -- on every family's schedules and on broken variants of them (swapped, duplicated, dropped,
// misplaced ops, overlapped pairs), including the order of each slot's out-edges.
#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "broken_schedules.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <tuple>
#include <vector>

using namespace pp;

namespace {

struct RefEdge {
    std::uint32_t from, to;
    bool dependency, cross;
    Op from_op, to_op;  // dependencies only
};

// The rules of model/dag.hpp, from scratch: F(s-1) -> F(s); F(last) -> I/B(last); the backward of s+1 (B
// if there is one, else I) -> I/B(s); I(s) -> W(s). Only first occurrences of in-range ops take part.
std::vector<RefEdge> reference_edges(const Schedule& s) {
    const OpIndex index(s.placement);
    std::map<std::tuple<int, int, int, int>, std::uint32_t> first;  // (kind, pipeline, stage, mb) -> slot
    std::vector<std::pair<int, int>> where;                         // slot -> (rank, position)
    auto key = [](const Op& op) { return std::tuple(static_cast<int>(op.kind), op.pipeline, op.stage, op.microbatch); };
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r)
        for (int k = 0; k < static_cast<int>(s.ranks[r].size()); ++k) {
            for (const Op& op : s.ranks[r][k])
                if (index.in_range(op)) first.try_emplace(key(op), static_cast<std::uint32_t>(where.size()));
            where.emplace_back(r, k);
        }
    auto slot_of = [&](OpKind kind, const Op& like, int stage) -> std::optional<std::uint32_t> {
        const auto it = first.find(std::tuple(static_cast<int>(kind), like.pipeline, stage, like.microbatch));
        return it == first.end() ? std::nullopt : std::optional(it->second);
    };
    std::vector<RefEdge> edges;
    for (std::uint32_t v = 0; v < where.size(); ++v) {
        const auto [r, k] = where[v];
        if (k > 0) edges.push_back({v - 1, v, false, false, {}, {}});
        for (const Op& op : s.ranks[r][k]) {
            if (!index.in_range(op) || first.at(key(op)) != v) continue;
            const int last = s.placement.pipelines[op.pipeline].stages() - 1;
            std::optional<std::uint32_t> u;
            OpKind pred_kind = OpKind::F;
            int pred_stage = op.stage;
            if (op.kind == OpKind::F) {
                if (op.stage > 0) pred_stage = op.stage - 1, u = slot_of(OpKind::F, op, pred_stage);
            } else if (op.kind == OpKind::W) {
                pred_kind = OpKind::I, u = slot_of(OpKind::I, op, op.stage);
            } else if (op.stage == last) {
                u = slot_of(OpKind::F, op, last);
            } else {
                pred_stage = op.stage + 1;
                pred_kind = OpKind::B, u = slot_of(OpKind::B, op, pred_stage);
                if (!u) pred_kind = OpKind::I, u = slot_of(OpKind::I, op, pred_stage);
            }
            if (!u) continue;
            const Op from{pred_kind, op.pipeline, pred_stage, op.microbatch};
            edges.push_back({*u, v, true, where[*u].first != r, from, op});
        }
    }
    // Out-edges of a slot: the rank-order edge first, then dependencies by target slot (and op within it).
    std::stable_sort(edges.begin(), edges.end(), [](const RefEdge& a, const RefEdge& b) {
        return std::tuple(a.from, a.dependency, a.to) < std::tuple(b.from, b.dependency, b.to);
    });
    return edges;
}

void check_graph(const Schedule& s) {
    const ScheduleGraph g = build_schedule_graph(s);
    const auto expected = reference_edges(s);
    REQUIRE(boost::num_edges(g.graph) == expected.size());
    size_t i = 0;
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const RefEdge& want = expected[i++];
            INFO("edge " << i - 1 << " from slot " << u);
            CHECK(want.from == u);
            CHECK(want.to == target_of(g.graph, e));
            const EdgeInfo& info = g.graph[e];
            CHECK(want.dependency == (info.kind == EdgeKind::Dependency));
            CHECK(want.cross == info.cross_rank);
            if (want.dependency) {
                const DependencyLink link = dependency_link(s, g, target_of(g.graph, e), info);
                CHECK(link.from == want.from_op);
                CHECK(link.to == want.to_op);
            }
        }
    CHECK(i == expected.size());
}

}  // namespace

TEST_CASE("schedule graph: each slot's out-edges equal the DAG's definition, on every family and broken variants",
          "[graph]") {
    std::mt19937 rng(20261201);
    int checked = 0;
    for (const ScheduleFamily& family : schedule_families()) {
        for (int P : {2, 4}) {
            Schedule base;
            try {
                base = family.generate({P, 2 * P, std::nullopt});
            } catch (const GenerateError&) {
                continue;  // not admissible at this size
            }
            INFO(family.name << " P=" << P);
            check_graph(base);
            Schedule s = base;
            for (int round = 0; round < 12; ++round) {
                s = test::mutated(round % 4 == 0 ? base : s, rng);
                check_graph(s);
                ++checked;
            }
        }
    }
    CHECK(checked >= 100);  // every family contributed at its sizes
}

TEST_CASE("schedule graph: a pair holding one op twice (no reader makes one) links like the op alone", "[graph]") {
    Schedule s = find_family("1f1b")->generate({2, 2, std::nullopt});
    for (Slot& slot : s.ranks[0])
        if (slot.ops[0] == Op{OpKind::F, 0, 0, 0}) slot = Slot::pair(slot.ops[0], slot.ops[0]);
    check_graph(s);
}
