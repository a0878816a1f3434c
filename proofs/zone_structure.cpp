#include "proofs/zone_structure.hpp"

#include "proofs/difference_constraints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <deque>
#include <numeric>
#include <set>

namespace pp {

int zone_segment(const ZonePlace& place, int t, int H, int E) {
    if (place.zone < 0) return 2 * place.part;
    if (place.j < H) return 2 * place.zone;
    if (place.j >= t - E) return 2 * place.zone + 2;
    return 2 * place.zone + 1;
}

namespace {

// The block offset of an edge between two block slots: j_v - j_u when both zones count blocks the same way,
// j_v + j_u - (t - 1) when one counts micro-batches down (a relation between block j and block t - 1 - j).
int relation(const ZoneWord& w, const ZonePlace& a, const ZonePlace& b, int t) {
    if (a.zone < 0 || b.zone < 0) return 0;
    return w.direction[a.zone] == w.direction[b.zone] ? b.j - a.j : b.j + a.j - (t - 1);
}

// A slot in coordinates that do not move with t: blocks near the start by j, near the end by j - t, the middle
// ones as "mid" (INT_MIN).
std::array<int, 4> coordinates(const ZonePlace& p, int t, int width) {
    int jh = 0;
    if (p.zone >= 0) jh = p.j < width ? p.j : p.j >= t - width ? p.j - t : INT_MIN;
    return {p.zone, p.part, p.index, jh};
}

using EdgeClass = std::array<int, 11>;

std::set<EdgeClass> edge_classes_of(const ZoneWord& w, int t, int width, const ZoneGraphOf& graph_of) {
    const Schedule s = w.instantiate(t);
    const ScheduleGraph g = zone_graph(graph_of, s);
    const auto places = w.places(t);
    std::set<EdgeClass> out;
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            const auto a = coordinates(places[u], t, width), b = coordinates(places[v], t, width);
            out.insert({static_cast<int>(g.slot_rank[u]), a[0], a[1], a[2], a[3], static_cast<int>(g.slot_rank[v]), b[0],
                        b[1], b[2], b[3] == INT_MIN ? relation(w, places[u], places[v], t) * 2 + 1 : b[3] * 2,
                        g.graph[e].cross_rank ? 1 : 0});
        }
    return out;
}

}  // namespace

std::vector<LongEdge> long_edges(const ScheduleGraph& g, const std::vector<ZonePlace>& places, int t, int H, int E) {
    std::vector<LongEdge> out;
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            if (long_edge(zone_segment(places[u], t, H, E), zone_segment(places[v], t, H, E)))
                out.push_back({u, v, g.graph[e].cross_rank});
        }
    return out;
}

ScheduleGraph zone_graph(const ZoneGraphOf& graph_of, const Schedule& s) {
    return graph_of ? graph_of(s) : build_schedule_graph(s);
}

ZoneStructure analyse_zones(const ZoneWord& w, const ZoneGraphOf& graph_of) {
    ZoneStructure zs;
    const int K = w.zones(), P = w.ranks();
    // 1. The largest block offset of a relation, read off an instance with every relation present.
    {
        const int t = 12;
        const Schedule s = w.instantiate(t);
        const ScheduleGraph g = zone_graph(graph_of, s);
        const auto places = w.places(t);
        for (std::uint32_t u = 0; u < g.slot_count(); ++u)
            for (auto e : out_edges_of(g.graph, u)) {
                const std::uint32_t v = target_of(g.graph, e);
                if (places[u].zone >= 0 && places[v].zone >= 0)
                    zs.D = std::max(zs.D, std::abs(relation(w, places[u], places[v], t)));
            }
    }
    if (zs.D > 16) {
        zs.failure = fmt::format("an edge relates blocks {} apart: not a zone word with local edges", zs.D);
        return zs;
    }
    zs.E = zs.D + 1;
    zs.H = 2 * zs.D + 2;
    // 2. Edge classes in t-independent coordinates, compared on three consecutive instances (method.md §4b).
    // A relation between block j and block t - 1 - j + d joins the first blocks of one zone to the last of another;
    // from T0 on no such pair falls into the first `width` blocks of both.
    const int width = std::max(zs.H, zs.E);
    zs.T0 = 2 * width + zs.D + 2;
    const auto classes = edge_classes_of(w, zs.T0, width, graph_of);
    for (int t = zs.T0 + 1; t <= zs.T0 + 2; ++t)
        if (edge_classes_of(w, t, width, graph_of) != classes) {
            zs.failure = fmt::format("the edge classes of instances {} and {} differ", zs.T0, t);
            return zs;
        }
    zs.classes = classes.size();
    // 3. Potentials, ranges and pieces on one large instance.
    const int T = zs.T = 4 * (zs.H + zs.E) + 24;
    const Schedule s = w.instantiate(T);
    const ScheduleGraph g = zone_graph(graph_of, s);
    const auto places = w.places(T);
    auto seg = [&](std::uint32_t x) { return zone_segment(places[x], T, zs.H, zs.E); };
    auto block_of = [&](std::uint32_t x, int zone) { return places[x].zone == zone; };
    std::set<std::pair<int, int>> long_pairs;
    zs.sigma.assign(K, std::vector<int>(P, 0));
    zs.lag.assign(K, 0);
    zs.window.assign(K, 1);
    zs.k_lo.assign(K, 0);
    zs.hi_offset.assign(K, 0);
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            if (seg(v) - seg(u) <= -2) {
                zs.failure = fmt::format("an edge goes from segment {} back to segment {} (rank {} to rank {})", seg(u),
                                         seg(v), g.slot_rank[u], g.slot_rank[v]);
                return zs;
            }
            if (long_edge(seg(u), seg(v))) long_pairs.insert({seg(u), seg(v)});
        }
    zs.long_classes = long_pairs.size();
    for (int z = 0; z < K; ++z) {
        std::vector<std::array<int, 3>> constraints;
        for (std::uint32_t u = 0; u < g.slot_count(); ++u)
            for (auto e : out_edges_of(g.graph, u)) {
                const std::uint32_t v = target_of(g.graph, e);
                if (!block_of(u, z) || !block_of(v, z) || long_edge(seg(u), seg(v))) continue;
                constraints.push_back({static_cast<int>(g.slot_rank[u]), static_cast<int>(g.slot_rank[v]),
                                       places[u].j - places[v].j});
            }
        const auto solved = solve_differences(P, constraints);
        if (!solved) {
            zs.failure = fmt::format("zone {}: no super-step assignment makes every edge go forward", z);
            return zs;
        }
        // The shortest-path distances satisfy every constraint; shift so that the smallest is 0.
        const std::vector<std::int64_t>& dist = *solved;
        const std::int64_t lo = *std::min_element(dist.begin(), dist.end());
        for (int r = 0; r < P; ++r) zs.sigma[z][r] = static_cast<int>(dist[r] - lo);
    }
    auto ss = [&](std::uint32_t x) { return zone_super_step(zs, places[x], static_cast<int>(g.slot_rank[x])); };
    for (int z = 0; z < K; ++z) {
        const int max_sigma = *std::max_element(zs.sigma[z].begin(), zs.sigma[z].end());
        const int min_sigma = *std::min_element(zs.sigma[z].begin(), zs.sigma[z].end());
        int bad_head = INT_MIN, bad_tail = INT_MAX;
        // A zone slot is "bad" when a short edge into it comes from outside the zone's blocks: the zone's one-step
        // map is translation-invariant only strictly between the bad slots near its start and those near its end.
        std::vector<bool> bad(g.slot_count(), false);
        for (std::uint32_t u = 0; u < g.slot_count(); ++u)
            for (auto e : out_edges_of(g.graph, u)) {
                const std::uint32_t v = target_of(g.graph, e);
                if (!block_of(v, z) || long_edge(seg(u), seg(v))) continue;
                if (!block_of(u, z)) bad[v] = true;
                else zs.lag[z] = std::max(zs.lag[z], ss(v) - ss(u));
            }
        for (std::uint32_t v = 0; v < g.slot_count(); ++v) {
            if (!bad[v]) continue;
            if (places[v].j < T / 2) bad_head = std::max(bad_head, ss(v));
            else bad_tail = std::min(bad_tail, ss(v));
        }
        zs.k_lo[z] = std::max(bad_head == INT_MIN ? INT_MIN : bad_head + 1, max_sigma);
        const int k_hi = std::min(bad_tail == INT_MAX ? INT_MAX : bad_tail - 1, T - 1 + min_sigma);
        zs.hi_offset[z] = k_hi - T;
        if (k_hi - zs.k_lo[z] < T / 2) {
            zs.failure = fmt::format("zone {}: the translation-invariant range {}..{} of instance {} is too short", z,
                                     zs.k_lo[z], k_hi, T);
            return zs;
        }
        zs.lag[z] = std::max(zs.lag[z], 1);
        zs.window[z] = zs.lag[z];
    }
    // 4. Pieces: entry_0 = 0, zone_0 = 1, entry_1 = 2, ...; short edges stay or move to the next piece, and what
    //    an entry reads of the zone before it lies in that zone's last `window` super-steps.
    auto piece = [&](std::uint32_t x) {
        const ZonePlace& p = places[x];
        if (p.zone < 0) return 2 * p.part;
        const int k = ss(x);
        if (k < zs.k_lo[p.zone]) return 2 * p.zone;
        if (k > T + zs.hi_offset[p.zone]) return 2 * p.zone + 2;
        return 2 * p.zone + 1;
    };
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            if (long_edge(seg(u), seg(v))) continue;
            const int a = piece(u), b = piece(v);
            if (b != a && b != a + 1) {
                zs.failure = fmt::format("a short edge goes from piece {} to piece {} (rank {} to rank {}): the zones "
                                         "are not sequential",
                                         a, b, g.slot_rank[u], g.slot_rank[v]);
                return zs;
            }
            if (a % 2 == 1 && b == a + 1) {
                const int z = a / 2;
                zs.window[z] = std::max(zs.window[z], T + zs.hi_offset[z] - ss(u) + 1);
            }
        }
    zs.ok = true;
    return zs;
}

std::vector<ZoneWindowSlot> zone_window(const ZoneWord& word, const ZoneStructure& zs, int zone, int k) {
    std::vector<ZoneWindowSlot> out;
    for (int s = k - zs.window[zone] + 1; s <= k; ++s)
        for (int r = 0; r < word.ranks(); ++r)
            for (size_t i = 0; i < word.block[r][zone].size(); ++i)
                out.push_back({r, static_cast<int>(i), s - zs.sigma[zone][r]});
    return out;
}

}  // namespace pp
