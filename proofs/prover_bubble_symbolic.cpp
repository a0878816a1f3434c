// Phase 3 with symbolic costs: the periodic window and the base cases as max-plus polynomials over a cost
// region, compared exactly (same forms after pruning) or by Z3; a failure at a concrete point is re-proved
// there exactly, so a REFUTED always carries an exact counterexample (proofs/method.md §4).
#include "proofs/smt.hpp"
#include "proofs/prover.hpp"

#include "proofs/formula.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace pp {

// A point strictly inside the region's cone of rays, weighted like interior_point, that also satisfies the
// constraints the cone leaves out (those with a constant term, such as F >= 2): sample points may turn into
// counterexamples, which must lie inside the stated assumptions.
std::optional<CostPoint> region_point(const CostRegion& region, const std::vector<std::int64_t>& weights) {
    const CostPoint p = region.interior_point(weights);
    if (region.contains(p)) return p;
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    smt::assert_region(solver, region);
    const z3::expr mu = ctx.real_const("mu");
    solver.add(mu > 0);
    std::vector<z3::expr> sum;
    for (int i = 0; i < kCostVars; ++i) sum.push_back(ctx.real_val(0));
    for (size_t r = 0; r < region.rays.size(); ++r) {
        const z3::expr lambda = ctx.real_const(("lambda" + std::to_string(r)).c_str());
        const std::int64_t w = r < weights.size() ? weights[r] : 1;
        solver.add(lambda >= ctx.real_val(static_cast<int64_t>(w)) * mu);
        for (int i = 0; i < kCostVars; ++i)
            if (region.rays[r][i] != 0) sum[i] = sum[i] + ctx.real_val(static_cast<int64_t>(region.rays[r][i])) * lambda;
    }
    for (int i = 0; i < kCostVars; ++i) solver.add(smt::cost_var(ctx, i) == sum[i]);
    const auto out = smt::check(ctx, solver, "a sample point of the region", "sat", 10000);
    if (out.result != z3::sat || !out.witness || !region.contains(*out.witness)) return std::nullopt;
    return out.witness;
}

// The bubble of one symbolically timed instance; appends its makespan and each rank's busy time to res.
MaxPoly symbolic_bubble(const SymbolicTiming& st, const CostRegion& region, ProofResult& res) {
    // idle_r = makespan - busy_r: a rank whose busy time is >= another's on the whole region (every ray) idles
    // no longer than it anywhere, so only the ranks with a ray-minimal busy time enter the max.
    const size_t P = st.busy.size();
    if (res.idle.size() < P) res.idle.resize(P);
    std::vector<std::vector<std::int64_t>> busy_values;
    for (const auto& b : st.busy) busy_values.push_back(region.ray_values(b));
    MaxPoly bubble;
    for (size_t r = 0; r < P; ++r) {
        res.idle[r].busy_symbolic.push_back(st.busy[r]);
        bool covered = false;
        for (size_t q = 0; q < P && !covered; ++q) {
            if (q == r) continue;
            bool le = true, equal = true;
            for (size_t k = 0; k < busy_values[r].size(); ++k) {
                le = le && busy_values[q][k] <= busy_values[r][k];
                equal = equal && busy_values[q][k] == busy_values[r][k];
            }
            covered = le && (!equal || q < r);
        }
        if (covered) continue;
        MaxPoly rank_idle = st.makespan;  // pruned; a shift keeps it so
        rank_idle.shift(LinForm{} - st.busy[r], region);
        bubble.merge_pruned(rank_idle);
    }
    res.makespan_symbolic.push_back(st.makespan);
    return bubble;
}

MaxPoly idle_symbolic(const ProofResult& result, int rank, int t) {
    MaxPoly idle = result.makespan_symbolic.at(t);
    idle.shift(LinForm{} - result.idle.at(rank).busy_symbolic.at(t), *result.region);
    return idle;
}

ProofResult& Prover::prove_bubble_symbolic() {
    const CostRegion region = finished_region();
    for (const auto& text : region.describe()) res.assumptions.push_back("cost assumption: " + text);
    for (int t = 0; t <= std::min(ps.T_struct, 3); ++t)
        if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
    // Block work per rank, and lambda = the common one.
    std::vector<LinForm> busy(word->ranks());
    for (int r = 0; r < word->ranks(); ++r)
        for (const Slot& s : word->block[r]) busy[r] += slot_form(s);
    const auto t0 = std::chrono::steady_clock::now();
    // Sample points: find the window, and refute on the spot if the rate exceeds a rank's work there. A Z3 point
    // where the window found is not yet periodic joins the sample points of the next round (its exact window is
    // later or longer), a few rounds at most: the points only guide the search, soundness rests on the checks.
    int k0 = 0, cycle = 1, T = ps.T;
    std::vector<CostPoint> extra_points;
    std::optional<SymbolicTiming> timed;
    Schedule s;
    std::optional<ScheduleGraph> g;
    const int max_rounds = 4;
    std::optional<CostPoint> witness;
    int found_k = -1;
    std::string method;
    std::string window_smt;
    LinForm lambda, shift;
    for (int round = 0; round < max_rounds && found_k < 0; ++round) {
        k0 = 0, cycle = 1, T = ps.T;
        std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
        const int randoms = std::max(1, options.samples);
        for (int sample = 0; sample < randoms + static_cast<int>(extra_points.size()); ++sample) {
            std::optional<CostPoint> inside;
            if (sample < randoms) {
                std::vector<std::int64_t> weights(region.rays.size(), 1);
                if (sample > 0)
                    for (auto& w : weights) {
                        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                        w = 1 + static_cast<std::int64_t>((seed >> 33) % 5);
                    }
                inside = region_point(region, weights);
            } else {
                inside = extra_points[sample - randoms];
            }
            if (!inside) return unknown("no sample point satisfies the cost assumptions (Z3)");
            const CostPoint point = *inside;
            const Costs costs = costs_at(point);
            PeriodicTiming pt = find_periodic_window(*word, ps, costs, 4, graph_of);
            if (!pt.found) pt = find_periodic_window(*word, ps, costs, kLongCycle, graph_of);  // as the exact proof
            if (!pt.found) return unknown("timing at the sample point " + costs_text(point) + ": " + pt.failure);
            for (int r = 0; r < word->ranks(); ++r)
                if (!(pt.lambda == busy[r].eval(point))) return refute_at(point, "the sample point");
            k0 = std::max(k0, pt.k0);
            cycle = std::lcm(cycle, pt.cycle);
            T = std::max(T, pt.T);
        }
        if (cycle > 12) return unknown("the periodic windows at the sample points have a combined cycle above 12");
        for (int r = 1; r < word->ranks(); ++r)
            if (region.ray_values(busy[r]) != region.ray_values(busy[0]))
                return unknown("the ranks do a different amount of work per block on parts of the cost region ("
                               "lambda is not one linear form); prove at exact costs instead");
        lambda = busy[0];
        shift = static_cast<std::int64_t>(cycle) * lambda;
        // Symbolic simulation of G_T with room for a few more windows.
        T += cycle + 8;
        s = word->instantiate(T);
        g = word_graph(s, T);
        // Block slots that are provably the previous block's plus lambda are shifted, not recomputed (identical
        // polynomials; symbolic.hpp, SymbolicOptions).
        SymbolicOptions sim_options;
        sim_options.keep_start = false;
        for (int r = 0; r < word->ranks(); ++r) sim_options.period.push_back(static_cast<std::uint32_t>(word->block[r].size()));
        sim_options.step = lambda;
        sim_options.share = true;  // shifted slots share one polynomial (memory: proofs/README.md)
    timed = symbolic_simulate(s, *g, region, sim_options);
    const SymbolicTiming& st = *timed;
    witness.reset();
    for (int k = k0; k <= k0 + 8 && k + cycle <= T + ps.tau - 1 && found_k < 0; ++k) {
        const auto window = window_slots(*word, ps, k);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> pending;
        for (const auto& w : window) {
            const auto a = block_slot_id(*word, T, w.rank, w.index, w.j);
            const auto b = block_slot_id(*word, T, w.rank, w.index, w.j + cycle);
            if (st.end_shifted(a, b, shift)) continue;
            MaxPoly shifted = st.end_of(a, region);
            shifted.shift(shift, region);
            if (!shifted.same_forms(st.end_of(b, region))) pending.emplace_back(a, b);
        }
        bool ok = true;
        for (auto [a, b] : pending) {
            auto out = smt::equal_on_region(st.end_of(b, region), st.end_of(a, region), shift, region, "window slot");
            if (out.result != z3::unsat) {
                ok = false;
                if (out.witness) witness = out.witness;
                break;
            }
        }
        if (ok) {
            found_k = k;
            method = pending.empty()
                         ? "symbolic simulation of G_" + std::to_string(T) +
                               " with exact max-plus polynomials; the two windows are the same polynomials shifted "
                               "(syntactic identity after exact pruning on the region's rays)"
                         : fmt::format("symbolic simulation of G_{}; {} of {} slots identical as polynomials, the "
                                       "rest proved equal on the region by Z3 (unsat)",
                                       T, window.size() - pending.size(), window.size());
            if (round > 0) method += fmt::format(" (window searched with {} Z3 point(s) of earlier rounds as extra "
                                                 "sample points)", extra_points.size());
            if (!options.emit_dir.empty()) window_smt = window_smt_symbolic(st, T, k, cycle, shift, region);
        }
    }
    if (found_k < 0) {
        const bool fresh = witness && std::find(extra_points.begin(), extra_points.end(), *witness) == extra_points.end();
        if (!fresh || round + 1 == max_rounds) {
            if (witness) return refute_at(*witness, "a point where the window is not (yet) periodic", true);
            return unknown("no periodic window found symbolically near super-step " + std::to_string(k0));
        }
        extra_points.push_back(*witness);
    }
    }
    const SymbolicTiming& st = *timed;
    const int t_periodic = std::max(ps.T0, found_k + 1 - ps.tau);
    res.certificate.window = CertificateWindow{T, found_k, cycle, Rational(0), lambda.c};
    add("periodic-window",
        fmt::format("for every cost point of the region: the end times of the slots of super-steps {}..{} plus {} "
                    "block(s) equal those of super-steps {}..{} plus {} (lambda = {} = every rank's work per "
                    "block), so every later window and the tail of every G_t, t >= {}, shift by the same amount",
                    found_k - ps.lag + 1, found_k, cycle, found_k - ps.lag + 1, found_k, format_form(shift, true),
                    format_form(lambda, true), t_periodic),
        method, true, seconds_since(t0), emit("window.smt2", window_smt));
    // Base cases.
    const auto t1 = std::chrono::steady_clock::now();
    const int t_end = t_periodic + cycle;
    res.t_periodic = t_periodic;
    res.cycle = cycle;
    res.idle.assign(word->ranks(), {});
    std::vector<MaxPoly> bubbles;
    // Each G_t takes the end times it provably shares with G_T (the window's simulation) and those that are
    // provably the next instance's minus lambda (G_T's for the first), checked slot by slot in
    // symbolic_simulate_reusing (proofs/method.md §4), so the instances are timed from t_end - 1 down to 0.
    const SymbolicReference reference{&s, &*g, &st, timed_dag(*g)};
    SymbolicPrevious previous = symbolic_previous(reference);
    std::vector<SymbolicTiming> timings(t_end);
    for (int t = t_end - 1; t >= 0; --t) {
        const Schedule& inst_t = inst(t);
        const ScheduleGraph gt = instance_graph(inst_t);
        const LinForm step = static_cast<std::int64_t>(t == t_end - 1 ? T - t : 1) * (LinForm{} - lambda);
        timings[t] = symbolic_simulate_reusing(inst_t, gt, region, reference, &previous, &step);
        cache.erase(t);
    }
    res.region = region;
    for (int t = 0; t < t_end; ++t) bubbles.push_back(symbolic_bubble(timings[t], region, res));
    timings.clear();
    // Eventually constant: compare one period, then walk down from t_periodic (proofs/method.md §4a).
    int z3_needed = 0;
    const auto compare = [&](int a, int b) {
        if (bubbles[a].same_forms(bubbles[b])) return BubbleComparison{};
        ++z3_needed;
        const auto out = smt::equal_on_region(bubbles[a], bubbles[b], LinForm{}, region, "base case");
        if (out.result == z3::unsat) return BubbleComparison{};
        if (out.result == z3::sat && out.witness) return BubbleComparison{BubbleComparison::Differ, out.witness};
        return BubbleComparison{BubbleComparison::Unknown, {}};
    };
    const auto text = [&](int t) { return needed_forms(bubbles[t], region).str(region); };
    const auto differ = [&](int a, int b, const std::optional<CostPoint>& at, const std::string& why) {
        if (!at) {
            unknown(fmt::format("bubble({}) and bubble({}) differ, but Z3 gave no point", M(a), M(b)));
            return;
        }
        refute_at(*at, fmt::format("a point where bubble({}) != bubble({}): {}", M(a), M(b), why));
    };
    std::string settled;
    if (!settle_eventual(t_periodic, cycle, compare, text, differ, settled)) return res;
    const int t_const = static_cast<int>(res.early_bubbles.size());
    res.early_symbolic.clear();
    for (int t = 0; t < t_const; ++t) res.early_symbolic.push_back(needed_forms(bubbles[t], region));
    std::string base_file;
    if (!options.emit_dir.empty() && t_end - t_const > 1) {
        z3::context ctx;
        z3::solver base_solver(ctx);
        smt::keep_ctrl_c(base_solver);
        smt::assert_region(base_solver, region);
        z3::expr_vector differ_any(ctx);
        for (int t = t_const + 1; t < t_end; ++t)
            differ_any.push_back(smt::max_of(ctx, bubbles[t]) != smt::max_of(ctx, bubbles[t_const]));
        base_solver.add(z3::mk_or(differ_any));
        base_file = emit("base.smt2", smt::check(ctx, base_solver,
                                                 fmt::format("base cases: bubble(t) = bubble({}) for t = {}..{}", t_const, t_const,
                                                             t_end - 1),
                                                 "unsat", 1)
                                          .smt2);
    }
    // For reading, only the forms that are the strict maximum somewhere on the region: the same function there.
    const MaxPoly bubble = needed_forms(bubbles[t_periodic], region);
    add("base-cases",
        fmt::format("bubble(M) for M = {}..{} is one piecewise-linear function of the costs: {}{}", M(t_const), M(t_end - 1),
                    bubble.str(region), early_text()),
        (z3_needed == 0 ? std::string("symbolic simulation; identical max-plus polynomials")
                        : fmt::format("symbolic simulation; {} comparison(s) by Z3", z3_needed)) +
            "; " + settled +
            fmt::format("; printed with the {} of its {} linear forms that are the largest somewhere on the region "
                        "(the others never exceed them: Z3, linear real arithmetic)",
                        bubble.forms.size(), bubbles[t_periodic].forms.size()),
        true, seconds_since(t1), base_file);
    for (auto& ri : res.idle) ri.slope_form = LinForm{};
    res.bubble_symbolic = bubble;
    return proved(fmt::format("bubble = {} for every admissible M >= {} and every cost point of the region{}",
                              bubble.str(region), res.constant_from_m, early_text()));
}

std::string Prover::window_smt_symbolic(const SymbolicTiming& st, int T, int k, int cycle, const LinForm& shift,
                                const CostRegion& region) {
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    smt::assert_region(solver, region);
    z3::expr_vector bad(ctx);
    for (const auto& w : window_slots(*word, ps, k)) {
        const auto a = block_slot_id(*word, T, w.rank, w.index, w.j);
        const auto b = block_slot_id(*word, T, w.rank, w.index, w.j + cycle);
        bad.push_back(smt::max_of(ctx, st.end_of(b, region)) != smt::max_of(ctx, st.end_of(a, region)) + smt::form(ctx, shift));
    }
    solver.add(z3::mk_or(bad));
    return smt::check(ctx, solver, "periodic window (symbolic costs, max-plus polynomials)", "unsat", 1).smt2;
}

// Re-runs the exact proof at a concrete cost point; a refutation there refutes the symbolic statement.
ProofResult& Prover::refute_at(const CostPoint& point, const std::string& where, bool unknown_if_holds) {
    if (!(options.region ? *options.region : CostRegion::standard(false)).contains(point))
        return unknown("internal: the point " + costs_text(point) + " (" + where +
                       ") lies outside the cost assumptions, so it cannot refute");
    ProveOptions exact = options;
    exact.costs = costs_at(point);
    exact.emit_dir.clear();
    ProofResult sub = prove(family, exact);
    if (sub.verdict == Verdict::Refuted) {
        res.obligations.push_back({"counterexample-search",
                                   "the statement at " + where + ": " + costs_text(point),
                                   "exact proof at that point (below)", false, 0, ""});
        for (auto& o : sub.obligations) {
            o.name = "  at point: " + o.name;
            res.obligations.push_back(o);
        }
        res.summary = sub.summary;
        return refuted(*sub.counterexample);
    }
    (void)unknown_if_holds;
    return unknown("the symbolic check failed at " + costs_text(point) + " (" + where +
                   ") but the exact proof there says " + verdict_name(sub.verdict) +
                   "; the transient may be longer than the window searched");
}

}  // namespace pp
