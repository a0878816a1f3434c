#pragma once
// The periodic structure of a zone word (proofs/zone_word.hpp), the analogue of proofs/maxplus.hpp's super-steps
// for orders that grow in several places (proofs/method.md §4b):
//   * segments: the slots of instance t fall into 2K + 1 segments in rank order -- transition 0, the middle of
//     zone 0, transition 1, ..., the middle of zone K-1, transition K -- where transition i holds fixed part i,
//     the last E blocks of zone i-1 and the first H blocks of zone i. An edge between segments more than one
//     apart is *long* (GPipe's F(P-1, m) -> B(P-1, m)); the others are *short*.
//   * per zone i, super-steps j + sigma_i[r] for block j on rank r such that every short edge between zone-i
//     blocks goes to the same or a later super-step (Bellman-Ford), and the range of super-steps where the
//     zone's one-step map reads nothing but zone-i blocks: there it is one homogeneous max-plus map.
//   * the pieces entry_0 < zone_0 < entry_1 < ... < zone_{K-1} < entry_K: every short edge stays in its piece or
//     goes to the next one, and the next entry reads only the last `window` super-steps of a zone.
// Long edges are left out of the timing recurrence; the prover shows that they never bind.
#include "model/dag.hpp"
#include "proofs/zone_word.hpp"

#include <functional>
#include <string>
#include <vector>

namespace pp {

struct ZoneStructure {
    bool ok = false;
    std::string failure;
    int H = 2, E = 1, D = 0;    // transition widths (blocks); largest block offset of an edge relation
    int T0 = 0;                 // edge classes are the same for every t >= T0 (compared on T0..T0+2)
    int T = 0;                  // the instance the potentials and ranges were computed on
    std::vector<std::vector<int>> sigma;  // [zone][rank]
    std::vector<int> lag;                 // [zone] largest super-step lag of a short zone edge
    std::vector<int> window;              // [zone] window length (>= lag; covers what the next entry reads)
    std::vector<int> k_lo;                // [zone] first super-step of the translation-invariant range
    std::vector<int> hi_offset;           // [zone] its last super-step in instance t is t + hi_offset
    size_t classes = 0, long_classes = 0;
};

// Segment of a slot of instance t (needs t >= H + E): 2i = transition i, 2i+1 = the middle of zone i.
int zone_segment(const ZonePlace& place, int t, int H, int E);
inline bool long_edge(int seg_u, int seg_v) { return seg_v - seg_u >= 2; }

// The timing graph of an instance: the dataflow graph (build_schedule_graph) when empty; under batched timing the
// batched timing graph of proofs/batched_graph.hpp (its counterpart edges join a slot to the peer's slot before
// the batch holding the counterpart: one more block of offset, same locality).
using ZoneGraphOf = std::function<ScheduleGraph(const Schedule&)>;
ScheduleGraph zone_graph(const ZoneGraphOf& graph_of, const Schedule& s);
ZoneStructure analyse_zones(const ZoneWord& word, const ZoneGraphOf& graph_of = {});
// Super-step of a block slot.
inline int zone_super_step(const ZoneStructure& zs, const ZonePlace& place, int rank) {
    return place.j + zs.sigma[place.zone][rank];
}

struct ZoneWindowSlot {
    int rank, index, j;
};
// The zone's window of super-steps k - window + 1 .. k (every rank's block slots there).
std::vector<ZoneWindowSlot> zone_window(const ZoneWord& word, const ZoneStructure& zs, int zone, int k);

// The long edges of instance t as (u, v, pays comm), given its graph and places.
struct LongEdge {
    std::uint32_t u, v;
    bool cross;
};
std::vector<LongEdge> long_edges(const ScheduleGraph& graph, const std::vector<ZonePlace>& places, int t, int H, int E);

}  // namespace pp
