#pragma once
// The dependency DAG of a schedule, at the granularity of slots (a pair is one node):
//   F(s-1,m) -> F(s,m);  F(last,m) -> I/B(last,m);  I/B(s+1,m) -> I/B(s,m);  I(s,m) -> W(s,m)
// (within each pipeline), plus the rank-order edges slot k -> slot k+1 of every rank.
// Stored as a Boost.Graph compressed_sparse_row_graph with 32-bit vertex and edge numbers and a 3-byte edge
// record: flat arrays of about 11 bytes per edge, so a schedule of millions of ops is built and walked at
// memory speed (docs/benchmarks.md, "Reading speed against awk").
#include "model/schedule.hpp"

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace pp {

enum class EdgeKind : std::uint8_t { RankOrder, Dependency };

struct EdgeInfo {
    EdgeKind kind = EdgeKind::RankOrder;
    bool cross_rank = false;     // a dependency whose ops live on different ranks pays the P2P latency
    std::uint8_t target_op = 0;  // a dependency's op in the target slot (ops[target_op]); see dependency_link
};

using SlotGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeInfo,
                                                     boost::no_property, std::uint32_t, std::uint32_t>;
using SlotEdge = SlotGraph::edge_descriptor;

// The out-edges of a slot, for range-for loops.
inline auto out_edges_of(const SlotGraph& graph, std::uint32_t slot) {
    return boost::make_iterator_range(boost::out_edges(static_cast<SlotGraph::vertex_descriptor>(slot), graph));
}
inline std::uint32_t target_of(const SlotGraph& graph, const SlotEdge& edge) {
    return static_cast<std::uint32_t>(boost::target(edge, graph));
}
inline size_t edge_number(const SlotGraph& graph, const SlotEdge& edge) {
    return edge.idx;  // CSR edges are numbered 0..E-1 in storage order
}

// Slots numbered 0..n-1, rank after rank: enough to name, time and print them. ScheduleGraph adds the edges.
struct SlotNumbering {
    std::vector<std::uint32_t> rank_begin;  // slots of rank r are [rank_begin[r], rank_begin[r+1])
    // The rank of every slot, for the graph's inner loops; empty in a numbering made by number_ranks, where
    // rank_of searches rank_begin instead (4 bytes per slot fewer, for printing a few slots of a large file).
    std::vector<std::uint32_t> slot_rank;

    std::uint32_t slot_count() const { return rank_begin.empty() ? 0 : rank_begin.back(); }
    std::uint32_t rank_of(std::uint32_t global) const {
        if (!slot_rank.empty()) return slot_rank[global];
        // The last rank that begins at or before `global`: empty ranks before it begin there too.
        const auto after = std::upper_bound(rank_begin.begin(), rank_begin.end(), global);
        return static_cast<std::uint32_t>(after - rank_begin.begin() - 1);
    }
    std::uint32_t position(std::uint32_t global) const { return global - rank_begin[rank_of(global)]; }  // within its rank
    const Slot& slot(const Schedule& s, std::uint32_t global) const {
        return s.ranks[rank_of(global)][position(global)];
    }
};

// Throws SizeLimitError past 2^32 - 2 slots.
SlotNumbering number_slots(const Schedule& schedule);
// The same numbering without slot_rank.
SlotNumbering number_ranks(const Schedule& schedule);

struct ScheduleGraph : SlotNumbering {
    explicit ScheduleGraph(const Placement& placement) : index(placement) {}
    OpIndex index;
    std::vector<std::int32_t> slot_of_op;   // op id -> global slot id, -1 when absent
    SlotGraph graph;

    bool present(const Op& op) const { return index.in_range(op) && slot_of_op[index.id(op)] >= 0; }
    std::int32_t slot_of(const Op& op) const { return index.in_range(op) ? slot_of_op[index.id(op)] : -1; }
};

// The dependency predecessor of op, if it is present in the graph (every op has at most one).
// A backward of stage s < last depends on whichever backward (I or B) of stage s+1 is present.
std::optional<Op> dependency_predecessor(const ScheduleGraph& g, const Op& op, const Placement& placement);

// The two ops a dependency edge into slot `target` links: the target's op and its dependency predecessor.
struct DependencyLink {
    Op from;
    Op to;
};
DependencyLink dependency_link(const Schedule& schedule, const ScheduleGraph& g, std::uint32_t target,
                               const EdgeInfo& info);

// Builds the graph. Ops out of range and repeated occurrences are left out (the verifier reports them);
// a dependency on a missing op gets no edge. Out-edges of a slot: its rank-order edge first, then its
// dependents in slot order. A graph past 2^32 - 1 slots or edges throws SizeLimitError.
ScheduleGraph build_schedule_graph(const Schedule& schedule);

}  // namespace pp
