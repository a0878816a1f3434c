#include "model/dag.hpp"

#include "model/size_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
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
using OutEdges = std::array<OutEdge, 13>;  // a rank-order edge and up to 2 ops x 3 dependents x 2 matches

// Appends slot u's dependency out-edges at out[n..], ordered by target slot and op within it; the new count.
int add_dependency_edges(const Schedule& schedule, const ScheduleGraph& g, std::uint32_t u, OutEdges& out, int n) {
    const int first = n;
    std::array<Op, 3> next{};
    const Slot& slot = g.slot(schedule, u);
    for (const Op& op : slot) {
        if (!g.index.in_range(op) || g.slot_of_op[g.index.id(op)] != static_cast<std::int32_t>(u)) continue;
        if (&op != slot.begin() && op == slot.ops[0]) continue;  // a pair of one op twice links its dependents once
        const int count = dependents(g, op, schedule.placement, next);
        for (int k = 0; k < count; ++k) {
            const auto v = static_cast<std::uint32_t>(g.slot_of(next[k]));
            const Slot& target = g.slot(schedule, v);
            for (std::uint8_t j = 0; j < target.count; ++j)
                if (target.ops[j] == next[k])
                    out[n++] = {v, {EdgeKind::Dependency, g.slot_rank[u] != g.slot_rank[v], j}};
        }
    }
    std::sort(out.begin() + first, out.begin() + n, [](const OutEdge& a, const OutEdge& b) {
        return a.target != b.target ? a.target < b.target : a.info.target_op < b.info.target_op;
    });
    return n;
}

// The graph's edges in CSR order (by source slot: its rank-order edge, then its dependents), one at a time,
// for Boost's sorted-edges constructor: no edge list is stored beside the CSR arrays while they are built.
class EdgeStream {
public:
    EdgeStream(const Schedule& schedule, const ScheduleGraph& g) : schedule_(schedule), g_(g) { load(); }
    bool done() const { return u_ >= g_.slot_count(); }
    const std::pair<std::uint32_t, std::uint32_t>& edge() const { return edge_; }
    const EdgeInfo& info() const { return out_[k_].info; }
    void next() {
        if (++k_ < count_) return set();
        ++u_;
        load();
    }

private:
    void load() {  // the edges of the first slot from u_ on that has any
        for (; u_ < g_.slot_count(); ++u_) {
            count_ = 0;
            if (u_ + 1 < g_.rank_begin[g_.slot_rank[u_] + 1]) out_[count_++] = {u_ + 1, {EdgeKind::RankOrder, false, 0}};
            count_ = add_dependency_edges(schedule_, g_, u_, out_, count_);
            if (count_ > 0) {
                k_ = 0;
                return set();
            }
        }
    }
    void set() { edge_ = {u_, out_[k_].target}; }

    const Schedule& schedule_;
    const ScheduleGraph& g_;
    std::uint32_t u_ = 0;
    OutEdges out_{};
    int count_ = 0, k_ = 0;
    std::pair<std::uint32_t, std::uint32_t> edge_{};
};

// Input iterators over an EdgeStream: the edges, and their records in step (Boost reads *info before it
// advances both, and advancing the info iterator is a no-op).
struct EdgeCursor {
    using iterator_category = std::input_iterator_tag;
    using value_type = std::pair<std::uint32_t, std::uint32_t>;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;
    EdgeStream* stream = nullptr;  // nullptr: the end

    reference operator*() const { return stream->edge(); }
    pointer operator->() const { return &stream->edge(); }
    EdgeCursor& operator++() {
        stream->next();
        return *this;
    }
    bool at_end() const { return !stream || stream->done(); }
    friend bool operator==(const EdgeCursor& a, const EdgeCursor& b) { return a.at_end() == b.at_end(); }
};

struct InfoCursor {
    EdgeStream* stream;
    const EdgeInfo& operator*() const { return stream->info(); }
    InfoCursor& operator++() { return *this; }
};

// Where each op is: its first occurrence (the verifier reports any other).
void locate_ops(const Schedule& schedule, ScheduleGraph& g) {
    g.slot_of_op.assign(g.index.size(), -1);
    std::uint32_t next = 0;
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) {
            for (const Op& op : slot) {
                if (!g.index.in_range(op)) continue;
                auto& where = g.slot_of_op[g.index.id(op)];
                if (where < 0) where = static_cast<std::int32_t>(next);
            }
            ++next;
        }
}

}  // namespace

SlotNumbering number_slots(const Schedule& schedule) {
    SlotNumbering numbering = number_ranks(schedule);
    const auto ranks = static_cast<std::uint32_t>(schedule.ranks.size());
    numbering.slot_rank.reserve(numbering.slot_count());
    for (std::uint32_t r = 0; r < ranks; ++r) numbering.slot_rank.insert(numbering.slot_rank.end(), schedule.ranks[r].size(), r);
    return numbering;
}

SlotNumbering number_ranks(const Schedule& schedule) {
    const size_t slots = schedule.slot_count();
    if (slots >= std::numeric_limits<std::int32_t>::max())  // slot_of_op holds slot ids as int32
        throw SizeLimitError(fmt::format("{} slots: the schedule graph numbers slots in 31 bits", slots));
    SlotNumbering numbering;
    const auto ranks = static_cast<std::uint32_t>(schedule.ranks.size());
    numbering.rank_begin.reserve(ranks + 1);
    std::uint32_t next = 0;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        numbering.rank_begin.push_back(next);
        next += static_cast<std::uint32_t>(schedule.ranks[r].size());
    }
    numbering.rank_begin.push_back(next);
    return numbering;
}

ScheduleGraph build_schedule_graph(const Schedule& schedule) {
    ScheduleGraph g(schedule.placement);
    static_cast<SlotNumbering&>(g) = number_slots(schedule);
    locate_ops(schedule, g);
    // At most one rank-order edge per slot and one dependency edge per op.
    const std::uint64_t bound = std::uint64_t{g.slot_count()} + schedule.op_count();
    if (bound >= std::numeric_limits<std::uint32_t>::max())
        throw SizeLimitError(fmt::format("{} slots and {} ops: the schedule graph numbers edges in 32 bits",
                                         g.slot_count(), schedule.op_count()));
    EdgeStream stream(schedule, g);
    g.graph = SlotGraph(boost::edges_are_sorted, EdgeCursor{&stream}, EdgeCursor{}, InfoCursor{&stream}, g.slot_count(),
                        static_cast<std::uint32_t>(bound));
    return g;
}

}  // namespace pp
