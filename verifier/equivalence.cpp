#include "verifier/equivalence.hpp"

#include <fmt/format.h>

namespace pp {
namespace {

// A renaming of the second schedule's ranks and stages onto the first's.
struct Renaming {
    bool reversed = false;
    int rank(int r, int P) const { return reversed ? P - 1 - r : r; }
    int stage(int s, int S) const { return reversed ? S - 1 - s : s; }
};

std::optional<EquivalenceDifference> placement_difference(const Placement& a, const Placement& b, Renaming map) {
    auto differ = [](std::string what) {
        EquivalenceDifference d;
        d.slot_index = -1;
        d.what = std::move(what);
        return d;
    };
    if (a.ranks != b.ranks) return differ(fmt::format("{} ranks against {}", a.ranks, b.ranks));
    if (a.pipeline_count() != b.pipeline_count())
        return differ(fmt::format("{} pipeline(s) against {}", a.pipeline_count(), b.pipeline_count()));
    for (int p = 0; p < a.pipeline_count(); ++p) {
        const Pipeline &x = a.pipelines[p], &y = b.pipelines[p];
        if (x.microbatches != y.microbatches)
            return differ(fmt::format("pipeline {}: {} micro-batches against {}", p, x.microbatches, y.microbatches));
        if (x.stages() != y.stages()) return differ(fmt::format("pipeline {}: {} stages against {}", p, x.stages(), y.stages()));
        for (int s = 0; s < x.stages(); ++s) {
            const int on_second = y.stage_rank[map.stage(s, y.stages())];
            if (map.rank(on_second, a.ranks) != x.stage_rank[s])
                return differ(fmt::format("pipeline {}: stage {} is on rank {} in the first, on rank {} in the second{}", p,
                                          s, x.stage_rank[s], map.rank(on_second, a.ranks),
                                          map.reversed ? " (ranks and stages reversed)" : ""));
        }
    }
    return std::nullopt;
}

Slot renamed(Slot slot, const Placement& second, Renaming map) {
    for (int i = 0; i < slot.count; ++i) {
        Op& op = slot.ops[i];
        op.stage = static_cast<StageIndex>(map.stage(op.stage, second.pipelines[op.pipeline].stages()));
    }
    return slot;
}

bool same_ops(const Slot& x, const Slot& y) {
    if (x.count != y.count) return false;
    for (int i = 0; i < x.count; ++i)
        if (!(x.ops[i] == y.ops[i])) return false;
    return true;
}

std::optional<EquivalenceDifference> order_difference(const Schedule& a, const Schedule& b, Renaming map, long long& ops) {
    ops = 0;
    const int P = a.placement.ranks;
    for (int r = 0; r < P; ++r) {
        const auto& x = a.ranks[r];
        const auto& y = b.ranks[map.rank(r, P)];
        for (size_t k = 0; k < std::max(x.size(), y.size()); ++k) {
            const bool in_x = k < x.size(), in_y = k < y.size();
            const Slot theirs = in_y ? renamed(y[k], b.placement, map) : Slot{};
            if (in_x && in_y && same_ops(x[k], theirs)) {
                ops += x[k].count;
                continue;
            }
            EquivalenceDifference d;
            d.rank = r;
            d.slot_index = static_cast<long long>(k);
            if (in_x) d.first_slot = format_slot(x[k]), d.first_loc = x[k].loc;
            if (in_y) d.second_slot = format_slot(theirs), d.second_loc = y[k].loc;
            d.what = !in_x   ? fmt::format("rank {} ends after {} slots in the first, the second goes on with {}", r, k, d.second_slot)
                     : !in_y ? fmt::format("rank {} ends after {} slots in the second, the first goes on with {}", r, k, d.first_slot)
                             : fmt::format("rank {}, slot {}: {} in the first, {} in the second", r, k, d.first_slot, d.second_slot);
            return d;
        }
    }
    return std::nullopt;
}

std::optional<EquivalenceDifference> difference(const Schedule& a, const Schedule& b, Renaming map, long long& ops) {
    if (a.segments != b.segments) {
        EquivalenceDifference d;
        d.slot_index = -1;
        d.what = fmt::format("{} sequence segment(s) per micro-batch against {}", a.segments, b.segments);
        return d;
    }
    if (auto d = placement_difference(a.placement, b.placement, map)) return d;
    return order_difference(a, b, map, ops);
}

}  // namespace

Equivalence compare_orders(const Schedule& first, const Schedule& second) {
    Equivalence out;
    long long ops = 0;
    auto plain = difference(first, second, Renaming{false}, ops);
    if (!plain) {
        out.equivalent = true;
        out.renaming = "none";
        out.ops = ops;
        return out;
    }
    if (!difference(first, second, Renaming{true}, ops)) {
        out.equivalent = true;
        out.renaming = "ranks and stages reversed";
        out.ops = ops;
        return out;
    }
    out.difference = std::move(plain);
    return out;
}

}  // namespace pp
