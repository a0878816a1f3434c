// Each instance's dependency graph, its acyclicity and its exact dataflow timing: the checker's own, written from
// the model's definition (proofs/method.md, "Fixed throughout"; docs/model.md).
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace pp::check {
namespace {

std::uint64_t op_key(OpKind kind, int pipeline, int stage, long long microbatch) {
    return (((static_cast<std::uint64_t>(pipeline) << 16 | static_cast<std::uint64_t>(stage)) << 32 |
             static_cast<std::uint32_t>(microbatch))
            << 2) |
           static_cast<std::uint64_t>(kind == OpKind::B ? OpKind::I : kind);  // B and I carry the same gradient
}

}  // namespace

Graph build_graph(const Schedule& s, const std::string& step) {
    Graph g;
    std::unordered_map<std::uint64_t, std::uint32_t> slot_of;  // F, I-or-B, W of every op -> its slot
    std::unordered_map<std::uint64_t, bool> is_full;            // the backward is a B (no W follows)
    size_t slots = 0;
    for (const auto& rank : s.ranks) slots += rank.size();
    slot_of.reserve(2 * slots);
    is_full.reserve(slots);
    g.rank.reserve(slots);
    for (int r = 0; r < s.placement.ranks; ++r)
        for (const Slot& slot : s.ranks[r]) {
            const auto id = static_cast<std::uint32_t>(g.rank.size());
            g.rank.push_back(static_cast<std::uint32_t>(r));
            if (slot.count == 2 && !(slot.ops[0].kind == OpKind::F && is_backward(slot.ops[1].kind)))
                reject(step, fmt::format("rank {}: the pair {} is not one F and one backward", r, format_slot(slot)));
            for (const Op& op : slot) {
                if (op.pipeline >= s.placement.pipeline_count() || op.stage >= s.placement.pipelines[op.pipeline].stages())
                    reject(step, fmt::format("rank {}: {} names a stage the placement does not have", r, format_op(op)));
                if (s.placement.rank_of(op.pipeline, op.stage) != r)
                    reject(step, fmt::format("{} runs on rank {}, but its stage is on rank {}", format_op(op), r,
                                             s.placement.rank_of(op.pipeline, op.stage)));
                const auto key = op_key(op.kind, op.pipeline, op.stage, op.microbatch);
                if (!slot_of.emplace(key, id).second) reject(step, fmt::format("{} occurs twice", format_op(op)));
                if (op.kind == OpKind::B || op.kind == OpKind::I) is_full[key] = op.kind == OpKind::B;
            }
        }
    g.preds.assign(g.rank.size(), {});
    auto depend = [&](std::uint32_t v, OpKind kind, int pipeline, int stage, long long microbatch) {
        const auto it = slot_of.find(op_key(kind, pipeline, stage, microbatch));
        if (it == slot_of.end()) return;  // a missing op: coverage says so
        g.preds[v].push_back({it->second, g.rank[it->second] != g.rank[v], true});
    };
    std::uint32_t id = 0;
    for (int r = 0; r < s.placement.ranks; ++r)
        for (size_t k = 0; k < s.ranks[r].size(); ++k, ++id) {
            if (k > 0) g.preds[id].push_back({id - 1, false, false});
            for (const Op& op : s.ranks[r][k]) {
                const int last = s.placement.pipelines[op.pipeline].stages() - 1;
                switch (op.kind) {
                    case OpKind::F:
                        if (op.stage > 0) depend(id, OpKind::F, op.pipeline, op.stage - 1, op.microbatch);
                        break;
                    case OpKind::I:
                    case OpKind::B:
                        if (op.stage == last) depend(id, OpKind::F, op.pipeline, op.stage, op.microbatch);
                        else depend(id, OpKind::I, op.pipeline, op.stage + 1, op.microbatch);
                        break;
                    case OpKind::W: {
                        const auto key = op_key(OpKind::I, op.pipeline, op.stage, op.microbatch);
                        if (const auto full = is_full.find(key); full != is_full.end() && full->second)
                            reject(step, format_op(op) + " follows a full backward B, which already computed it");
                        depend(id, OpKind::I, op.pipeline, op.stage, op.microbatch);
                        break;
                    }
                }
            }
        }
    sort_topologically(g);
    return g;
}

// Kahn's algorithm: what is left over lies on or behind a cycle.
void sort_topologically(Graph& g) {
    g.topo.clear();
    std::vector<std::uint32_t> missing(g.rank.size(), 0);
    std::vector<std::vector<std::uint32_t>> succ(g.rank.size());
    for (std::uint32_t v = 0; v < g.rank.size(); ++v)
        for (const Pred& p : g.preds[v]) ++missing[v], succ[p.from].push_back(v);
    for (std::uint32_t v = 0; v < g.rank.size(); ++v)
        if (missing[v] == 0) g.topo.push_back(v);
    for (size_t k = 0; k < g.topo.size(); ++k)
        for (std::uint32_t w : succ[g.topo[k]])
            if (--missing[w] == 0) g.topo.push_back(w);
}

Rational slot_duration(const Slot& slot, const Placement& placement, const Costs& costs) {
    const Op& first = slot.ops[0];
    const int block = placement.block_of(first.pipeline, first.stage);
    if (slot.count == 1) return costs.duration(first.kind, block);
    const Op& second = slot.ops[1];
    return costs.pair_duration(first, block, second, placement.block_of(second.pipeline, second.stage));
}

std::vector<const Slot*> slots_of(const Schedule& s, std::vector<std::uint32_t>* rank_start) {
    std::vector<const Slot*> out;
    for (int r = 0; r < s.placement.ranks; ++r) {
        if (rank_start) rank_start->push_back(static_cast<std::uint32_t>(out.size()));
        for (const Slot& sl : s.ranks[r]) out.push_back(&sl);
    }
    return out;
}

Timing simulate(const Schedule& s, const Graph& g, const Costs& costs, const std::string& step) {
    if (!g.acyclic()) reject(step, "the instance deadlocks: its dependency graph has a cycle, so it has no timing");
    Timing t;
    t.end.assign(g.rank.size(), Rational(0));
    t.busy.assign(s.placement.ranks, Rational(0));
    const std::vector<const Slot*> slot = slots_of(s);
    for (std::uint32_t v : g.topo) {
        Rational start(0);
        for (const Pred& p : g.preds[v]) start = std::max(start, t.end[p.from] + (p.cross_rank ? costs.comm : Rational(0)));
        const Rational d = slot_duration(*slot[v], s.placement, costs);
        t.end[v] = start + d;
        t.busy[g.rank[v]] += d;
        t.makespan = std::max(t.makespan, t.end[v]);
    }
    for (const Rational& b : t.busy) t.bubble = std::max(t.bubble, t.makespan - b);
    return t;
}

}  // namespace pp::check
