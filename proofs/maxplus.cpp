#include "proofs/maxplus.hpp"

#include "model/dag.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <numeric>

namespace pp {

const char* timing_model_name(TimingModel model) {
    return model == TimingModel::Dataflow ? "dataflow" : "batched";
}

ScheduleGraph timing_graph(const TimingGraphOf& graph_of, const Schedule& instance, int t) {
    return graph_of ? graph_of(instance, t) : build_schedule_graph(instance);
}

Slot shift_slot(Slot slot, const std::vector<int>& delta, int k) {
    for (int i = 0; i < slot.count; ++i) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * k;
    slot.loc = {};
    return slot;
}

bool same_slot(const Slot& a, const Slot& b) {
    if (a.count != b.count) return false;
    for (int i = 0; i < a.count; ++i)
        if (!(a.ops[i] == b.ops[i])) return false;
    return true;
}

Schedule PeriodicWord::instantiate(int t) const {
    Schedule s;
    s.placement = base;
    for (size_t p = 0; p < s.placement.pipelines.size(); ++p) s.placement.pipelines[p].microbatches += delta[p] * t;
    s.ranks.resize(base.ranks);
    for (int r = 0; r < base.ranks; ++r) {
        auto& out = s.ranks[r];
        out.reserve(prefix[r].size() + block[r].size() * t + suffix[r].size());
        out.insert(out.end(), prefix[r].begin(), prefix[r].end());
        for (int j = 0; j < t; ++j)
            for (const Slot& slot : block[r]) out.push_back(shift_slot(slot, delta, j));
        for (const Slot& slot : suffix[r]) out.push_back(shift_slot(slot, delta, t));
    }
    s.source = "periodic word, t=" + std::to_string(t);
    return s;
}

size_t PeriodicWord::block_slots() const {
    size_t n = 0;
    for (const auto& b : block) n += b.size();
    return n;
}

std::vector<SlotPlace> slot_places(const PeriodicWord& word, int t) {
    std::vector<SlotPlace> places;
    for (int r = 0; r < word.ranks(); ++r) {
        for (size_t i = 0; i < word.prefix[r].size(); ++i) places.push_back({Region::Prefix, static_cast<int>(i), 0});
        for (int j = 0; j < t; ++j)
            for (size_t i = 0; i < word.block[r].size(); ++i) places.push_back({Region::Block, static_cast<int>(i), j});
        for (size_t i = 0; i < word.suffix[r].size(); ++i) places.push_back({Region::Suffix, static_cast<int>(i), 0});
    }
    return places;
}

std::uint32_t block_slot_id(const PeriodicWord& word, int t, int rank, int index, int j) {
    std::uint32_t base = 0;
    for (int r = 0; r < rank; ++r)
        base += static_cast<std::uint32_t>(word.prefix[r].size() + word.block[r].size() * t + word.suffix[r].size());
    return base + static_cast<std::uint32_t>(word.prefix[rank].size() + word.block[rank].size() * j + index);
}

// ---------------------------------------------------------------------------------------------------
// Fitting

namespace {

bool equal_range(const std::vector<Slot>& a, size_t a0, const std::vector<Slot>& b, size_t b0, size_t n,
                 const std::vector<int>& delta, int shift) {
    for (size_t k = 0; k < n; ++k)
        if (!same_slot(shift_slot(a[a0 + k], delta, shift), b[b0 + k])) return false;
    return true;
}

}  // namespace

WordFit fit_word(const Schedule& s0, const Schedule& s1, const Schedule* s2) {
    WordFit fit;
    if (!same_placement_shape(s0.placement, s1.placement) || (s2 && !same_placement_shape(s0.placement, s2->placement))) {
        fit.failure = "the stage-to-rank maps differ between micro-batch counts";
        return fit;
    }
    PeriodicWord word;
    word.base = s0.placement;
    for (size_t p = 0; p < s0.placement.pipelines.size(); ++p) {
        const int d = s1.placement.pipelines[p].microbatches - s0.placement.pipelines[p].microbatches;
        if (d < 0) {
            fit.failure = "a pipeline loses micro-batches as M grows";
            return fit;
        }
        word.delta.push_back(d);
    }
    const int P = s0.placement.ranks;
    word.prefix.resize(P);
    word.block.resize(P);
    word.suffix.resize(P);
    for (int r = 0; r < P; ++r) {
        const auto& a = s0.ranks[r];
        const auto& b = s1.ranks[r];
        if (b.size() < a.size()) {
            fit.failure = "rank " + std::to_string(r) + " runs fewer slots for the larger M";
            return fit;
        }
        const size_t L = b.size() - a.size();
        size_t lcp = 0;
        while (lcp < a.size() && same_slot(a[lcp], b[lcp])) ++lcp;
        bool found = false, one_step_only = false;
        for (size_t p = lcp + 1; p-- > 0 && !found;) {
            if (!equal_range(a, p, b, p + L, a.size() - p, word.delta, 1)) continue;
            one_step_only = true;
            std::vector<Slot> u(a.begin(), a.begin() + static_cast<long>(p));
            std::vector<Slot> v(b.begin() + static_cast<long>(p), b.begin() + static_cast<long>(p + L));
            std::vector<Slot> w(a.begin() + static_cast<long>(p), a.end());
            if (s2) {
                const auto& c = s2->ranks[r];
                if (c.size() != u.size() + 2 * L + w.size()) continue;
                if (!equal_range(u, 0, c, 0, u.size(), word.delta, 0)) continue;
                if (!equal_range(v, 0, c, u.size(), L, word.delta, 0)) continue;
                if (!equal_range(v, 0, c, u.size() + L, L, word.delta, 1)) continue;
                if (!equal_range(w, 0, c, u.size() + 2 * L, w.size(), word.delta, 2)) continue;
            }
            word.prefix[r] = std::move(u);
            word.block[r] = std::move(v);
            word.suffix[r] = std::move(w);
            found = true;
        }
        if (!found) {
            fit.failure = "rank " + std::to_string(r) +
                          (one_step_only
                               ? ": one step of M inserts one block, but the next step does not insert the same block "
                                 "again: the order grows in more than one place (e.g. all forwards, then all backwards, "
                                 "as GPipe), and the method needs a single growing block per rank (a word "
                                 "prefix . block^t . suffix)"
                               : ": the order for the larger M is not the smaller one with one block inserted "
                                 "(and the later micro-batch indices shifted)");
            return fit;
        }
    }
    fit.word = std::move(word);
    return fit;
}

std::string schedule_mismatch(const Schedule& expected, const Schedule& s) {
    if (!same_placement_shape(expected.placement, s.placement)) return "placement differs";
    for (size_t p = 0; p < expected.placement.pipelines.size(); ++p)
        if (expected.placement.pipelines[p].microbatches != s.placement.pipelines[p].microbatches)
            return "micro-batches of pipeline " + std::to_string(p) + " differ";
    for (size_t r = 0; r < expected.ranks.size(); ++r) {
        const auto& a = expected.ranks[r];
        const auto& b = s.ranks[r];
        for (size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
            if (k >= a.size() || k >= b.size() || !same_slot(a[k], b[k]))
                return "rank " + std::to_string(r) + " slot " + std::to_string(k) + ": word has " +
                       (k < a.size() ? format_slot(a[k]) : std::string("nothing")) + ", schedule has " +
                       (k < b.size() ? format_slot(b[k]) : std::string("nothing"));
        }
    }
    return "";
}

std::string word_mismatch(const PeriodicWord& word, int t, const Schedule& s) { return schedule_mismatch(word.instantiate(t), s); }

// ---------------------------------------------------------------------------------------------------
// Stability of the relative edge structure

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

}  // namespace

Stability stable_from(const PeriodicWord& word) {
    Stability st;
    const size_t pipelines = word.delta.size();
    constexpr std::int64_t kNone = LLONG_MIN;
    std::vector<std::int64_t> maxU(pipelines, kNone), minV(pipelines, LLONG_MAX), maxV(pipelines, kNone),
        minW(pipelines, LLONG_MAX);
    auto scan = [&](const std::vector<std::vector<Slot>>& part, auto&& update) {
        for (const auto& rank : part)
            for (const Slot& slot : rank)
                for (const Op& op : slot) update(op.pipeline, op.microbatch);
    };
    scan(word.prefix, [&](int p, int m) { maxU[p] = std::max<std::int64_t>(maxU[p], m); });
    scan(word.block, [&](int p, int m) {
        minV[p] = std::min<std::int64_t>(minV[p], m);
        maxV[p] = std::max<std::int64_t>(maxV[p], m);
    });
    scan(word.suffix, [&](int p, int m) { minW[p] = std::min<std::int64_t>(minW[p], m); });
    std::int64_t T0 = 1;
    for (size_t p = 0; p < pipelines; ++p) {
        const std::int64_t d = word.delta[p];
        const bool hasU = maxU[p] != kNone, hasV = maxV[p] != kNone, hasW = minW[p] != LLONG_MAX;
        if (d == 0) {
            if (hasV) {
                st.failure = "pipeline " + std::to_string(p) + " has block ops but does not grow";
                return st;
            }
            if (hasU && hasW) {
                st.failure = "pipeline " + std::to_string(p) + " does not grow but has ops before and after the blocks";
                return st;
            }
            continue;
        }
        // Prefix and suffix ops of one micro-batch never meet once minW + t*d > maxU.
        if (hasU && hasW) T0 = std::max(T0, floor_div(maxU[p] - minW[p], d) + 1);
        // Blocks j <= J_U may meet the prefix; blocks with t - j <= D_W may meet the suffix.
        if (hasU && hasV && hasW) {
            const std::int64_t JU = floor_div(maxU[p] - minV[p], d);
            const std::int64_t DW = floor_div(maxV[p] - minW[p], d);
            T0 = std::max(T0, JU + DW + 1);
        }
    }
    st.T0 = static_cast<int>(T0);
    return st;
}

// ---------------------------------------------------------------------------------------------------
// Super-steps

int super_step(const PeriodicStructure& ps, const SlotPlace& place, int rank, int t) {
    switch (place.region) {
        case Region::Prefix: return ps.alpha[rank][place.index];
        case Region::Block: return place.block + ps.sigma[rank];
        case Region::Suffix: return t + ps.beta[rank][place.index];
    }
    return 0;
}

PeriodicStructure analyse_structure(const PeriodicWord& word, int T, const TimingGraphOf& graph_of) {
    PeriodicStructure ps;
    const Stability st = stable_from(word);
    ps.T0 = st.T0;
    if (!st.failure.empty()) {
        ps.failure = st.failure;
        return ps;
    }
    T = std::max(T, st.T0);
    ps.T = T;
    const int P = word.ranks();
    const Schedule s = word.instantiate(T);
    const ScheduleGraph g = timing_graph(graph_of, s, T);
    const auto places = slot_places(word, T);

    // Variables: sigma[r] (P), then prefix slots, then suffix slots.
    std::vector<int> prefix_var(P), suffix_var(P);
    int nvars = P;
    for (int r = 0; r < P; ++r) prefix_var[r] = nvars, nvars += static_cast<int>(word.prefix[r].size());
    for (int r = 0; r < P; ++r) suffix_var[r] = nvars, nvars += static_cast<int>(word.suffix[r].size());
    auto var_of = [&](std::uint32_t slot) {
        const SlotPlace& pl = places[slot];
        const int r = static_cast<int>(g.slot_rank[slot]);
        switch (pl.region) {
            case Region::Prefix: return prefix_var[r] + pl.index;
            case Region::Block: return r;
            case Region::Suffix: return suffix_var[r] + pl.index;
        }
        return 0;
    };
    auto offset_of = [&](std::uint32_t slot) {
        const SlotPlace& pl = places[slot];
        return pl.region == Region::Block ? pl.block : pl.region == Region::Suffix ? T : 0;
    };
    // Constraint x_u + off_u <= x_v + off_v  <=>  x_u <= x_v + (off_v - off_u): arc v -> u, weight off_v - off_u.
    struct Arc {
        int to, weight;
    };
    std::vector<std::vector<Arc>> arcs(nvars);
    const std::uint32_t n = g.slot_count();
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            ++ps.edges;
            const int xu = var_of(u), xv = var_of(v);
            const int w = offset_of(v) - offset_of(u);
            if (xu == xv) {
                if (w < 0) {
                    ps.failure = "a dependency goes from a later block to an earlier one on rank " +
                                 std::to_string(g.slot_rank[u]);
                    ps.negative_cycle_ranks = {g.slot_rank[u]};
                    return ps;
                }
                continue;
            }
            arcs[xv].push_back({xu, w});
        }
    // Bellman-Ford (queue-based) from a virtual source at distance 0 to everything.
    std::vector<std::int64_t> dist(nvars, 0);
    std::vector<int> relaxations(nvars, 0);
    std::vector<bool> queued(nvars, true);
    std::deque<int> queue(nvars);
    std::iota(queue.begin(), queue.end(), 0);
    std::vector<int> parent(nvars, -1);
    while (!queue.empty()) {
        const int a = queue.front();
        queue.pop_front();
        queued[a] = false;
        for (const Arc& arc : arcs[a]) {
            if (dist[a] + arc.weight < dist[arc.to]) {
                dist[arc.to] = dist[a] + arc.weight;
                parent[arc.to] = a;
                if (++relaxations[arc.to] > nvars) {
                    // Not a deadlock by itself: the chain may run through prefix or suffix slots, which do not repeat.
                    ps.failure = "no super-step assignment exists: a chain of dependencies leads back to an earlier "
                                 "block (a deadlock only if it runs through repeating blocks alone; the prover looks for "
                                 "one on a larger instance)";
                    // Walk the parent chain to report the ranks on the cycle.
                    int x = arc.to;
                    for (int k = 0; k < nvars; ++k) x = parent[x];
                    const int start = x;
                    do {
                        if (x < P) ps.negative_cycle_ranks.push_back(static_cast<std::uint32_t>(x));
                        x = parent[x];
                    } while (x != start && x >= 0);
                    return ps;
                }
                if (!queued[arc.to]) queued[arc.to] = true, queue.push_back(arc.to);
            }
        }
    }
    std::int64_t min_sigma = *std::min_element(dist.begin(), dist.begin() + P);
    ps.sigma.resize(P);
    for (int r = 0; r < P; ++r) ps.sigma[r] = static_cast<int>(dist[r] - min_sigma);
    ps.alpha.resize(P);
    ps.beta.resize(P);
    for (int r = 0; r < P; ++r) {
        for (size_t i = 0; i < word.prefix[r].size(); ++i)
            ps.alpha[r].push_back(static_cast<int>(dist[prefix_var[r] + i] - min_sigma));
        for (size_t i = 0; i < word.suffix[r].size(); ++i)
            ps.beta[r].push_back(static_cast<int>(dist[suffix_var[r] + i] - min_sigma));
    }
    auto ss = [&](std::uint32_t slot) { return super_step(ps, places[slot], static_cast<int>(g.slot_rank[slot]), T); };
    const int min_sig = *std::min_element(ps.sigma.begin(), ps.sigma.end());
    const int max_sig = *std::max_element(ps.sigma.begin(), ps.sigma.end());
    int head = min_sig - 1;
    int min_beta = INT_MAX;
    for (int r = 0; r < P; ++r) {
        for (int a : ps.alpha[r]) head = std::max(head, a);
        for (int b : ps.beta[r]) min_beta = std::min(min_beta, b);
    }
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            if (places[u].region == Region::Prefix && places[v].region != Region::Prefix) head = std::max(head, ss(v));
        }
    ps.head_end = head;
    ps.k_inv = std::max(head + 1, max_sig);
    ps.tau = std::min(min_beta, min_sig);
    int lag = 1;
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            if (places[v].region == Region::Prefix || ss(v) <= head) continue;
            lag = std::max(lag, ss(v) - ss(u));
        }
    ps.lag = lag;
    ps.T_struct = std::max({ps.T0, head - (min_beta == INT_MAX ? head : min_beta) + 1, ps.k_inv - ps.tau + 1,
                            head - min_sig + 1, 1});
    ps.feasible = true;
    return ps;
}

std::string check_potentials(const PeriodicWord& word, const PeriodicStructure& ps, int t, const TimingGraphOf& graph_of) {
    const Schedule s = word.instantiate(t);
    const ScheduleGraph g = timing_graph(graph_of, s, t);
    const auto places = slot_places(word, t);
    auto ss = [&](std::uint32_t slot) { return super_step(ps, places[slot], static_cast<int>(g.slot_rank[slot]), t); };
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            const bool backward = ss(v) < ss(u);
            const bool too_far = places[v].region != Region::Prefix && ss(v) > ps.head_end && ss(v) - ss(u) > ps.lag;
            if (backward || too_far)
                return fmt::format("in G_{} an edge from super-step {} (rank {}) goes to super-step {} (rank {})", t, ss(u),
                                   g.slot_rank[u], ss(v), g.slot_rank[v]);
        }
    return "";
}

std::vector<WindowSlot> window_slots(const PeriodicWord& word, const PeriodicStructure& ps, int k) {
    std::vector<WindowSlot> out;
    for (int ss = k - ps.lag + 1; ss <= k; ++ss)
        for (int r = 0; r < word.ranks(); ++r)
            for (size_t i = 0; i < word.block[r].size(); ++i) out.push_back({r, static_cast<int>(i), ss - ps.sigma[r]});
    return out;
}

PeriodicTiming find_periodic_window(const PeriodicWord& word, const PeriodicStructure& ps, const Costs& costs,
                                    int max_cycle, const TimingGraphOf& graph_of) {
    PeriodicTiming pt;
    const int P = word.ranks();
    {
        const TimeScale scale = time_scale_for(costs);
        for (int r = 0; r < P; ++r) {
            Ticks busy = 0;
            for (const Slot& s : word.block[r]) busy += slot_duration(s, word.base, costs, scale);
            pt.block_busy.push_back(scale.to_units(busy));
        }
    }
    const int k_lo = ps.k_inv + ps.lag - 1;
    // Grow the simulated instance until a periodic window shows up or the budget is spent.
    for (int span = 4 * ps.lag + 8; span <= 512; span *= 2) {
        const int k_hi = k_lo + span;  // last window end we look at, including + cycle
        const int T = std::max(ps.T, k_hi - ps.tau + 2);
        const Schedule s = word.instantiate(T);
        const ScheduleGraph g = timing_graph(graph_of, s, T);
        const Simulation sim = simulate(s, g, costs);
        auto end_of = [&](const WindowSlot& w) { return sim.end[block_slot_id(word, T, w.rank, w.index, w.j)]; };
        for (int c = 1; c <= max_cycle; ++c) {
            for (int k = k_lo; k + c <= k_hi && k + c <= T + ps.tau - 1; ++k) {
                const auto window = window_slots(word, ps, k);
                if (window.empty()) break;
                const Ticks d = end_of({window[0].rank, window[0].index, window[0].j + c}) - end_of(window[0]);
                bool ok = true;
                for (const auto& w : window) {
                    if (end_of({w.rank, w.index, w.j + c}) - end_of(w) != d) {
                        ok = false;
                        break;
                    }
                }
                if (!ok) continue;
                pt.found = true;
                pt.k0 = k;
                pt.cycle = c;
                pt.lambda = sim.scale.to_units(d) / Rational(c);
                pt.window_slots = window.size();
                pt.t_periodic = std::max(ps.T0, k + 1 - ps.tau);
                pt.T = T;
                return pt;
            }
        }
    }
    pt.failure = "no periodic window (cycle <= " + std::to_string(max_cycle) + ") within 512 super-steps";
    return pt;
}

}  // namespace pp
