// Bubble-constant for zone words (orders that grow in several places per rank: GPipe, Looped BFS). Each zone is a
// periodic max-plus system of its own, entered from the one before it; the long edges between zones are left out
// of the recurrence and shown never to bind (proofs/method.md §4b).
#include "proofs/prover.hpp"

#include "proofs/formula.hpp"
#include "proofs/zone_structure.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <numeric>

namespace pp {

namespace {

struct ZoneFit {
    int k0 = 0, cycle = 1;
    Rational lambda{0};
};

// Exact windows of one simulated instance: per zone the first k0 >= k_lo + window - 1 with W(k0 + c) - W(k0) one
// constant (c <= 4) and k0 + c inside the invariant range.
std::optional<std::vector<ZoneFit>> exact_windows(const ZoneWord& w, const ZoneStructure& zs, int t, const Simulation& sim,
                                                  std::string& why) {
    std::vector<ZoneFit> fits;
    for (int z = 0; z < w.zones(); ++z) {
        const int k_hi = t + zs.hi_offset[z];
        auto end_of = [&](const ZoneWindowSlot& x, int plus) {
            return sim.end[w.block_slot_id(t, x.rank, z, x.index, x.j + plus)];
        };
        bool found = false;
        for (int c = 1; c <= 4 && !found; ++c)
            for (int k = zs.k_lo[z] + zs.window[z] - 1; k + c <= k_hi && !found; ++k) {
                const auto window = zone_window(w, zs, z, k);
                const Ticks d = end_of(window[0], c) - end_of(window[0], 0);
                bool ok = true;
                for (const auto& x : window)
                    if (end_of(x, c) - end_of(x, 0) != d) {
                        ok = false;
                        break;
                    }
                if (!ok) continue;
                fits.push_back({k, c, sim.scale.to_units(d) / Rational(c)});
                found = true;
            }
        if (!found) {
            why = fmt::format("zone {}: no periodic window (cycle <= 4) inside instance t = {}", z, t);
            return std::nullopt;
        }
    }
    return fits;
}

}  // namespace

ProofResult& Prover::prove_zone_bubble(bool order_checked) {
    const ZoneWord& w = family.zones->word;
    const auto t_order = std::chrono::steady_clock::now();
    const int K = w.zones();
    // 1. The generator is the zone word (derived from its zone program in family_zone_word) -- also compared op for op.
    const int t_check = 12;
    for (int t = 0; t <= t_check && !order_checked; ++t) {
        const std::string bad = zone_word_mismatch(w, t, inst(t));
        if (!bad.empty())
            return unknown("the generator's order is not its zone word at M = " + std::to_string(M(t)) + ": " + bad);
        if (t > 2) cache.erase(t);
    }
    lemma_ok = true;
    if (!order_checked)
        add("order-structure",
            fmt::format("for every t >= 0, every rank runs fixed_0 . zone_0(0..t-1) . fixed_1 . ... . zone_{}(0..t-1) . "
                        "fixed_{} at M = {} + {}t ({} zones: {})",
                        K - 1, K, family.m0, family.step, K, [&] {
                            std::string d;
                            for (int z = 0; z < K; ++z) d += (z ? " " : "") + std::string(w.direction[z] > 0 ? "up" : "down");
                            return d;
                        }()),
            "the zone word is derived from the generator's zone program: " + family.zones->lemma +
                fmt::format("; compared op for op with the generator for t = 0..{}", t_check),
            true, seconds_since(t_order));
    // 2. Segments, long edges, per-zone super-steps and invariant ranges.
    const auto t_struct = std::chrono::steady_clock::now();
    const ZoneStructure zs = analyse_zones(w, zone_graph_of);
    if (!zs.ok) return unknown("zone structure: " + zs.failure);
    std::string sig;
    for (int z = 0; z < K; ++z) sig += (z ? "; " : "") + join_ints(zs.sigma[z]);
    add("zone-structure",
        fmt::format("for every t >= T0 = {}, the {} edge classes in coordinates relative to each zone's start and end "
                    "do not depend on t; {} long edge relation(s) (between segments two or more apart) are left out of "
                    "the recurrence; zone super-steps j + sigma: {}; every short edge stays in its piece or enters the "
                    "next one (entry_0 < zone_0 < entry_1 < ...)",
                    zs.T0, zs.classes, zs.long_classes, sig),
        fmt::format("edge classes compared on t = {}..{} (index arithmetic: every edge joins ops of one micro-batch or "
                    "rank neighbours; proofs/method.md §4b); Bellman-Ford per zone and the piece order on t = {}",
                    zs.T0, zs.T0 + 2, zs.T),
        true, seconds_since(t_struct));
    // Per rank: work of one block of every zone (their sum is the rank's growth of busy time per block).
    std::vector<std::vector<LinForm>> zone_work(K, std::vector<LinForm>(w.ranks()));
    std::vector<LinForm> work(w.ranks());
    for (int z = 0; z < K; ++z)
        for (int r = 0; r < w.ranks(); ++r) {
            for (const Slot& s : w.block[r][z]) zone_work[z][r] += slot_form(s);
            work[r] += zone_work[z][r];
        }
    const bool exact = options.costs.has_value();
    const CostRegion region = exact ? CostRegion{} : finished_region();
    if (!exact)
        for (const auto& text : region.describe()) res.assumptions.push_back("cost assumption: " + text);
    else
        res.assumptions.push_back("costs (exact): " + format_costs(*options.costs));
    for (int t = 0; t <= 3; ++t)
        if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
    // 3. Windows at exact points: the given costs, or sample points of the region.
    std::vector<CostPoint> points;
    if (exact) {
        points.push_back(point_of(*options.costs));
    } else {
        std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
        for (int sample = 0; sample < std::max(1, options.samples); ++sample) {
            std::vector<std::int64_t> weights(region.rays.size(), 1);
            if (sample > 0)
                for (auto& x : weights) {
                    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                    x = 1 + static_cast<std::int64_t>((seed >> 33) % 5);
                }
            const auto p = region_point(region, weights);
            if (!p) return unknown("no sample point satisfies the cost assumptions (Z3)");
            points.push_back(*p);
        }
    }
    const auto t_window = std::chrono::steady_clock::now();
    std::vector<ZoneFit> fit(K);
    std::vector<std::vector<Rational>> lambda_at(K);  // per zone, per point
    int C = 1;
    for (size_t pi = 0; pi < points.size(); ++pi) {
        const Costs costs = exact ? *options.costs : costs_at(points[pi]);
        for (int rho = 0; rho < C; ++rho) {
            const int t = zs.T + rho;
            const Schedule s = w.instantiate(t);
            const Simulation sim = simulate(s, zone_graph(zone_graph_of, s), costs);
            std::string why;
            const auto fits = exact_windows(w, zs, t, sim, why);
            if (!fits) return unknown("timing at " + costs_text(points[pi]) + ": " + why);
            for (int z = 0; z < K; ++z) {
                if (rho == 0) lambda_at[z].push_back((*fits)[z].lambda);
                else if (!((*fits)[z].lambda == lambda_at[z].back()))
                    return unknown(fmt::format("zone {} grows at different rates for different residues", z));
                fit[z].k0 = std::max(fit[z].k0, (*fits)[z].k0);
                fit[z].cycle = std::lcm(fit[z].cycle, (*fits)[z].cycle);
            }
            int c_all = 1;
            for (const auto& f : fit) c_all = std::lcm(c_all, f.cycle);
            if (c_all > 12) return unknown("the zones' periodic windows have a combined cycle above 12");
            C = c_all;
        }
    }
    // The rate of each zone as a linear form: a rank's block work in that zone matching it at every point.
    std::vector<LinForm> lambda(K);
    for (int z = 0; z < K; ++z) {
        bool found = false;
        // Under batched timing with comm, a rank's chain also pays comm before each of its non-empty batches: the
        // candidates are a rank's block work plus k * comm (k up to its block length). Only a guess: the windows
        // below check it (exactly, or as polynomials / Z3).
        const int max_k = zone_graph_of ? static_cast<int>(w.block[0][z].size()) + 2 : 0;
        for (int k = 0; k <= max_k && !found; ++k)
            for (int r = 0; r < w.ranks() && !found; ++r) {
                const LinForm candidate = zone_work[z][r] + static_cast<std::int64_t>(k) * LinForm::var(CostVar::comm);
                bool all = true;
                for (size_t pi = 0; pi < points.size() && all; ++pi) all = candidate.eval(points[pi]) == lambda_at[z][pi];
                if (all) lambda[z] = candidate, found = true;
            }
        if (!found)
            return unknown(fmt::format("zone {}'s time per block is no rank's work in it; prove at exact costs instead", z));
    }
    LinForm Lambda;
    for (const auto& l : lambda) Lambda += l;
    // 4. The windows, re-checked on the instances that fix them: exactly, or as max-plus polynomials.
    auto window_text = [&] {
        std::string s;
        for (int z = 0; z < K; ++z)
            s += fmt::format("{}zone {}: super-steps {}..{} + {} block(s) = + {}", z ? "; " : "", z,
                             fit[z].k0 - zs.window[z] + 1, fit[z].k0, fit[z].cycle,
                             format_form(static_cast<std::int64_t>(fit[z].cycle) * lambda[z], true));
        return s;
    };
    // Long edges never bind on an instance: the end of u (+ comm) is at most the end of the slot before v on its rank
    // (which v waits for anyway).
    std::string long_failure;
    int z3_calls = 0;
    auto check_long_exact = [&](const Schedule& s, const ScheduleGraph& g, const Simulation& sim, int t) {
        const auto places = w.places(t);
        const Rational comm = options.costs->comm;
        for (const LongEdge& e : long_edges(g, places, t, zs.H, zs.E)) {
            const Rational lhs = sim.scale.to_units(sim.end[e.u]) + (e.cross ? comm : Rational(0));
            // Against the slot before v on its rank (one fixed relation: see the wedge argument).
            const bool first = g.position(e.v) == 0;
            const Rational rhs = first ? Rational(0) : sim.scale.to_units(sim.end[e.v - 1]);
            if (first || lhs > rhs) {
                long_failure = fmt::format("at M = {} the long edge {} -> {} binds", M(t), format_slot(g.slot(s, e.u)),
                                           format_slot(g.slot(s, e.v)));
                return false;
            }
        }
        return true;
    };
    auto check_long_symbolic = [&](const Schedule& s, const ScheduleGraph& g, const SymbolicTiming& st, int t) {
        const auto places = w.places(t);
        const LinForm comm = LinForm::var(CostVar::comm);
        for (const LongEdge& e : long_edges(g, places, t, zs.H, zs.E)) {
            MaxPoly lhs = st.end[e.u];
            if (e.cross) lhs.shift(comm, region);
            if (g.position(e.v) == 0) {
                long_failure = fmt::format("at M = {} the long edge into {} has no slot before it on its rank", M(t),
                                           format_slot(g.slot(s, e.v)));
                return false;
            }
            // Against the slot before v on its rank (one fixed relation: see the wedge argument).
            const MaxPoly& rhs = st.end[e.v - 1];
            MaxPoly both = rhs;
            both.merge_pruned(lhs);
            if (both.same_forms(rhs)) continue;
            ++z3_calls;
            if (smt::leq_on_region(lhs, rhs, region, "long edge").result != z3::unsat) {
                long_failure = fmt::format("at M = {} the long edge {} -> {} may bind", M(t), format_slot(g.slot(s, e.u)),
                                           format_slot(g.slot(s, e.v)));
                return false;
            }
        }
        return true;
    };
    std::string window_method;
    if (exact) {
        for (int rho = 0; rho < C; ++rho) {
            const Schedule s = w.instantiate(zs.T + rho);
            const ScheduleGraph g = zone_graph(zone_graph_of, s);
            if (!check_long_exact(s, g, simulate(s, g, *options.costs), zs.T + rho)) return unknown(long_failure);
        }
        window_method = fmt::format("exact simulation of t = {}..{}", zs.T, zs.T + C - 1);
    } else {
        // Symbolic: every zone's window, every residue, and the long edges on those instances.
        int pending = 0;
        for (int rho = 0; rho < C; ++rho) {
            const int t = zs.T + rho;
            const Schedule s = w.instantiate(t);
            const ScheduleGraph g = zone_graph(zone_graph_of, s);
            SymbolicOptions so;
            so.keep_start = false;
            const SymbolicTiming st = symbolic_simulate(s, g, region, so);
            for (int z = 0; z < K; ++z) {
                const LinForm shift = static_cast<std::int64_t>(fit[z].cycle) * lambda[z];
                bool done = false;
                std::optional<CostPoint> witness;
                for (int k = fit[z].k0; k <= fit[z].k0 + 8 && k + fit[z].cycle <= t + zs.hi_offset[z] && !done; ++k) {
                    bool ok = true;
                    for (const auto& x : zone_window(w, zs, z, k)) {
                        const MaxPoly& a = st.end[w.block_slot_id(t, x.rank, z, x.index, x.j)];
                        const MaxPoly& b = st.end[w.block_slot_id(t, x.rank, z, x.index, x.j + fit[z].cycle)];
                        MaxPoly shifted = a;
                        shifted.shift(shift, region);
                        if (shifted.same_forms(b)) continue;
                        ++pending;
                        const auto out = smt::equal_on_region(b, a, shift, region, "zone window");
                        if (out.result != z3::unsat) {
                            ok = false;
                            witness = out.witness;
                            break;
                        }
                    }
                    if (ok) fit[z].k0 = std::max(fit[z].k0, k), done = true;
                }
                if (!done) {
                    if (witness) return refute_at(*witness, fmt::format("a point where zone {}'s window is not periodic", z));
                    return unknown(fmt::format("zone {}: no periodic window found symbolically", z));
                }
            }
            if (!check_long_symbolic(s, g, st, t)) return unknown(long_failure);
        }
        window_method = fmt::format("symbolic simulation of t = {}..{} (max-plus polynomials{}); windows found at {} "
                                    "sample point(s)",
                                    zs.T, zs.T + C - 1, pending ? fmt::format(", {} slot(s) by Z3", pending) : "",
                                    points.size());
    }
    int t_p = zs.T0;
    for (int z = 0; z < K; ++z) t_p = std::max(t_p, fit[z].k0 + fit[z].cycle - zs.hi_offset[z]);
    add("zone-windows",
        fmt::format("for every t >= {} and every cost point{}: {}; so each zone's later windows, the entry of the next "
                    "zone and the tail of every instance shift by the same amounts (lambda per zone = {})",
                    t_p, exact ? "" : " of the region", window_text(), [&] {
                        std::string s;
                        for (int z = 0; z < K; ++z) s += (z ? ", " : "") + format_form(lambda[z], true);
                        return s;
                    }()),
        window_method + "; long edges never bind there (proofs/method.md §4b)", true, seconds_since(t_window));
    // 5. Growth: the makespan grows by Lambda per block, rank r's busy time by work[r].
    res.t_periodic = t_p;
    res.cycle = C;
    res.idle.assign(w.ranks(), {});
    if (!exact) res.region = region;
    int growing = -1;
    for (int r = 0; r < w.ranks(); ++r)
        if (region.rays.empty() ? !(Lambda.eval(points[0]) == work[r].eval(points[0]))
                                : region.ray_values(Lambda) != region.ray_values(work[r]))
            growing = r;
    if (growing >= 0 && !exact) {
        for (const auto& p : points)
            if (!(Lambda.eval(p) == work[growing].eval(p))) return refute_at(p, "a sample point where the bubble grows");
        return unknown("the bubble grows on part of the cost region only; prove at exact costs there");
    }
    // 6. Base cases t < t_p + C, and the long edges on the first instance of every residue from t_p on.
    const auto t_base = std::chrono::steady_clock::now();
    const int t_end = t_p + C;
    std::vector<Rational> exact_bubbles;
    std::vector<MaxPoly> bubbles;
    for (int t = 0; t < t_end; ++t) {
        const Schedule& s = inst(t);
        const ScheduleGraph g = zone_graph(zone_graph_of, s);
        if (exact) {
            const Simulation sim = simulate(s, g, *options.costs);
            const ExactTiming et = zone_graph_of ? timing(s, *options.costs) : exact_timing(s, *options.costs);
            for (int r = 0; r < w.ranks(); ++r) res.idle[r].exact.push_back(et.idle[r]);
            exact_bubbles.push_back(et.bubble);
            if (t >= t_p && !check_long_exact(s, g, sim, t)) return unknown(long_failure);
        } else {
            SymbolicOptions so;
            so.keep_start = false;
            const SymbolicTiming st = symbolic_simulate(s, g, region, so);
            bubbles.push_back(symbolic_bubble(st, region, res));
            if (t >= t_p && !check_long_symbolic(s, g, st, t)) return unknown(long_failure);
        }
        cache.erase(t);
    }
    if (growing >= 0) {
        const Rational slope = Lambda.eval(points[0]) - work[growing].eval(points[0]);
        for (int r = 0; r < w.ranks(); ++r) res.idle[r].slope = Lambda.eval(points[0]) - work[r].eval(points[0]);
        Counterexample cx;
        cx.ranks = family.ranks;
        const int a = std::max(t_from(), t_p);
        cx.microbatches = M(a);
        cx.costs = points[0];
        const Rational at_a = timing(inst(a), *options.costs).bubble;
        for (int t = a + 1; t < a + 400; ++t) {
            const Rational b = timing(inst(t), *options.costs).bubble;
            cache.erase(t);
            if (!(b == at_a)) {
                cx.other_microbatches = M(t);
                cx.what = fmt::format("rank {} idles {} longer per block (the zones take {} per block, its work is {}); "
                                      "bubble({}) = {} but bubble({}) = {}",
                                      growing, format_rational(slope), format_rational(Lambda.eval(points[0])),
                                      format_rational(work[growing].eval(points[0])), M(a), format_rational(at_a), M(t),
                                      format_rational(b));
                cx.schedule = inst(t);
                break;
            }
        }
        res.summary = fmt::format("bubble grows by {} per block for M >= {}", format_rational(slope), M(t_p));
        return refuted(cx);
    }
    for (auto& ri : res.idle) ri.slope_form = LinForm{};
    // 7. Eventually constant.
    int z3_base = 0;
    const BubbleCompare compare = [&](int a, int b) {
        if (exact) return BubbleComparison{exact_bubbles[a] == exact_bubbles[b] ? BubbleComparison::Equal
                                                                                 : BubbleComparison::Differ,
                                           {}};
        if (bubbles[a].same_forms(bubbles[b])) return BubbleComparison{};
        ++z3_base;
        const auto out = smt::equal_on_region(bubbles[a], bubbles[b], LinForm{}, region, "base case");
        if (out.result == z3::unsat) return BubbleComparison{};
        if (out.result == z3::sat && out.witness) return BubbleComparison{BubbleComparison::Differ, out.witness};
        return BubbleComparison{BubbleComparison::Unknown, {}};
    };
    const BubbleText text = [&](int t) {
        return exact ? format_rational(exact_bubbles[t]) : needed_forms(bubbles[t], region).str(region);
    };
    const BubbleDiffer differ = [&](int a, int b, const std::optional<CostPoint>& at, const std::string& why) {
        if (exact) {
            Counterexample cx = bubble_counterexample(a, exact_bubbles[a], b, exact_bubbles[b], points[0], inst(b));
            cx.what += " (" + why + ")";
            refuted(cx);
        } else if (at) {
            refute_at(*at, fmt::format("a point where bubble({}) != bubble({}): {}", M(a), M(b), why));
        } else {
            unknown(fmt::format("bubble({}) and bubble({}) differ, but Z3 gave no point", M(a), M(b)));
        }
    };
    std::string settled;
    if (!settle_eventual(t_p, C, compare, text, differ, settled)) return res;
    const std::string value = exact ? format_rational(exact_bubbles[t_p]) : needed_forms(bubbles[t_p], region).str(region);
    add("base-cases",
        fmt::format("bubble(M) for M = {}..{}: {} from M = {} on{}", M(0), M(t_end - 1), value, res.constant_from_m,
                    early_text()),
        std::string(exact ? "exact simulation" : "symbolic simulation") +
            (z3_base ? fmt::format(" ({} comparison(s) by Z3)", z3_base) : std::string()) + "; " + settled +
            fmt::format("; long edges never bind on t = {}..{}, the first instance of every residue from the window "
                        "on, and so on every later instance (a long edge's slack is affine in (t, j) on each piece, with "
                        "non-negative growth: proofs/method.md §4b){}",
                        t_p, t_end - 1, z3_calls ? fmt::format(" ({} long-edge comparison(s) by Z3)", z3_calls) : ""),
        true, seconds_since(t_base));
    if (exact) {
        res.bubble_exact = exact_bubbles[t_p];
        for (int t = 0; M(t) < res.constant_from_m; ++t) res.early_exact.push_back(exact_bubbles[t]);
    } else {
        res.bubble_symbolic = needed_forms(bubbles[t_p], region);
    }
    return proved(fmt::format("bubble = {} for every admissible M >= {}{}{}", value, res.constant_from_m,
                              exact ? "" : " and every cost point of the region", early_text()));
}

}  // namespace pp
