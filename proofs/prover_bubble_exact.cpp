// Phase 3 with exact costs: the window of super-steps that repeats shifted by c * lambda (max-plus
// homogeneity, proofs/method.md §4), the base cases by exact simulation, and a growing bubble refuted with
// the instance that shows it.
#include "proofs/smt.hpp"
#include "proofs/prover.hpp"

#include "model/dag.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

namespace pp {

ProofResult& Prover::prove_bubble_exact(const Costs& costs) {
    std::string overrides;
    for (const auto& [block, c] : costs.per_block)
        overrides += fmt::format("{}block {}: {}", overrides.empty() ? "" : "; ", block, format_op_costs(c));
    res.assumptions.push_back("costs (exact): " + format_costs(costs) +
                              (overrides.empty() ? "" : " with per-block costs (" + overrides + ")"));
    // Every instance we time must be valid.
    for (int t = 0; t <= std::min(ps.T_struct, 3); ++t)
        if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
    const auto t0 = std::chrono::steady_clock::now();
    PeriodicTiming pt = find_periodic_window(*word, ps, costs, 4, graph_of);
    // A comm-bound steady state can repeat only every many blocks (ZB-H2 with comm > F: the critical cycle runs
    // through the P2P latencies, its mean a fraction with a larger denominator): look for longer cycles too.
    if (!pt.found) pt = find_periodic_window(*word, ps, costs, kLongCycle, graph_of);
    if (!pt.found) return unknown("timing: " + pt.failure);
    std::vector<Rational> slope;
    std::string busy_text;
    for (int r = 0; r < word->ranks(); ++r) {
        slope.push_back(pt.lambda * Rational(1) - pt.block_busy[r]);
        busy_text += (r ? " " : "") + format_rational(pt.block_busy[r]);
    }
    std::string file;
    if (!options.emit_dir.empty()) file = emit("window.smt2", window_smt_exact(costs, pt));
    add("periodic-window",
        fmt::format("the end times of the {} slots of super-steps {}..{} plus {} block(s) are those of super-steps "
                    "{}..{} plus {}*{} (lambda = {} per block; a block's work per rank = [{}]), so every later window "
                    "and the tail of every G_t, t >= {}, shift by the same amount",
                    pt.window_slots, pt.k0 - ps.lag + 1, pt.k0, pt.cycle, pt.k0 - ps.lag + 1, pt.k0, pt.cycle,
                    format_rational(pt.lambda), format_rational(pt.lambda), busy_text, pt.t_periodic),
        fmt::format("exact simulation of G_{} (max-plus homogeneity of the one-step map; proofs/method.md §4)", pt.T),
        true, seconds_since(t0), file);
    const int t_end = pt.t_periodic + pt.cycle;
    res.t_periodic = pt.t_periodic;
    res.cycle = pt.cycle;
    res.idle.assign(word->ranks(), {});
    std::vector<Rational> bubbles;
    const auto t1 = std::chrono::steady_clock::now();
    for (int t = 0; t < t_end; ++t) {
        const ExactTiming et = timing(inst(t), costs);
        for (int r = 0; r < word->ranks(); ++r) res.idle[r].exact.push_back(et.idle[r]);
        bubbles.push_back(et.bubble);
        cache.erase(t);
    }
    for (int r = 0; r < word->ranks(); ++r) res.idle[r].slope = slope[r];
    std::string btext;
    for (size_t t = 0; t < bubbles.size(); ++t) btext += (t ? " " : "") + format_rational(bubbles[t]);
    add("base-cases", fmt::format("bubble for M = {}..{} (step {}): {}", M(0), M(t_end - 1), family.step, btext),
        "exact simulation of the generator's output", true, seconds_since(t1));
    // Growth?
    int worst = -1;
    for (int r = 0; r < word->ranks(); ++r)
        if (slope[r] > Rational(0) && (worst < 0 || slope[r] > slope[worst])) worst = r;
    auto bubble_at = [&](int t) {
        if (t < t_end) return bubbles[t];
        if (worst < 0) return bubbles[pt.t_periodic + (t - pt.t_periodic) % pt.cycle];
        const Rational b = timing(inst(t), costs).bubble;
        cache.erase(t);
        return b;
    };
    if (worst >= 0) {
        Counterexample cx;
        cx.ranks = family.ranks;
        const int a = std::max(t_from(), pt.t_periodic);
        cx.microbatches = M(a);
        cx.costs = point_of(costs);
        const Rational at_a = bubble_at(a);
        int found = -1;
        Rational value{0};
        for (int t = a + 1; t < a + t_end + 400 && found < 0; ++t) {
            const Rational b = bubble_at(t);
            if (!(b == at_a)) found = t, value = b;
        }
        cx.what = fmt::format(
            "rank {} idles {} longer per block: a block takes lambda = {} but gives rank {} only {} of work, so "
            "the bubble grows linearly in M (slope {} per {} micro-batches)",
            worst, format_rational(slope[worst]), format_rational(pt.lambda), worst, format_rational(pt.block_busy[worst]),
            format_rational(slope[worst]), family.step);
        if (found >= 0) {
            cx.other_microbatches = M(found);
            cx.what += fmt::format("; bubble({}) = {} but bubble({}) = {}", M(a), format_rational(at_a), M(found),
                                   format_rational(value));
            cx.schedule = inst(found);
        }
        if (!costs.per_block.empty())
            cx.what += "; the costs printed are the base costs, with the per-block overrides of the assumptions on top";
        // The window repeats every pt.cycle blocks, so the growth is exact per cycle and an average per block.
        res.summary = pt.cycle == 1
                          ? fmt::format("bubble grows by {} per block for M >= {}", format_rational(slope[worst]),
                                        M(pt.t_periodic))
                          : fmt::format("bubble grows by {} every {} blocks ({} per block on average) for M >= {}",
                                        format_rational(slope[worst] * Rational(pt.cycle)), pt.cycle,
                                        format_rational(slope[worst]), M(pt.t_periodic));
        return refuted(cx);
    }
    const auto compare = [&](int a, int b) {
        return BubbleComparison{bubble_at(a) == bubble_at(b) ? BubbleComparison::Equal : BubbleComparison::Differ, {}};
    };
    const auto text = [&](int t) { return format_rational(bubble_at(t)); };
    const auto differ = [&](int a, int b, const std::optional<CostPoint>&, const std::string& why) {
        Counterexample cx = bubble_counterexample(a, bubble_at(a), b, bubble_at(b), point_of(costs), inst(b));
        cx.what += " (" + why + ")";
        refuted(cx);
    };
    std::string settled;
    if (!settle_eventual(pt.t_periodic, pt.cycle, compare, text, differ, settled)) return res;
    add("eventually-constant",
        fmt::format("bubble(M) = {} for every admissible M >= {}", format_rational(bubble_at(pt.t_periodic)),
                    res.constant_from_m),
        "every rank's idle time repeats from M = " + std::to_string(M(pt.t_periodic)) + " (slopes 0); " + settled);
    res.bubble_exact = bubble_at(pt.t_periodic);
    res.certificate.window = CertificateWindow{pt.T, pt.k0, pt.cycle, pt.lambda, std::nullopt};
    for (int t = 0; M(t) < res.constant_from_m; ++t) res.early_exact.push_back(bubbles[t]);
    return proved(fmt::format("bubble = {} for every admissible M >= {}{} (every rank's idle time is periodic in M "
                              "with slope 0)",
                              format_rational(*res.bubble_exact), res.constant_from_m, early_text()));
}

// The window obligation with the longest-path equations of every slot up to the window's end, for z3.
std::string Prover::window_smt_exact(const Costs& costs, const PeriodicTiming& pt) {
    const int T = pt.T;
    const Schedule s = word->instantiate(T);
    const ScheduleGraph g = word_graph(s, T);
    const TimedDag dag = timed_dag(g);
    const auto places = slot_places(*word, T);
    const int k_max = pt.k0 + pt.cycle;
    auto ss = [&](std::uint32_t slot) { return super_step(ps, places[slot], static_cast<int>(g.slot_rank[slot]), T); };
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    const TimeScale scale = time_scale_for(costs);
    const z3::expr comm = smt::rational(ctx, costs.comm);
    std::vector<std::optional<z3::expr>> end(g.slot_count());
    for (std::uint32_t v : dag.topo) {
        if (ss(v) > k_max) continue;
        z3::expr e = ctx.real_const(("e" + std::to_string(v)).c_str());
        z3::expr start = ctx.real_val(0);
        for (auto [u, cross] : dag.preds[v]) {
            if (!end[u]) continue;  // cannot happen: predecessors are in earlier or equal super-steps
            z3::expr arrival = cross ? *end[u] + comm : *end[u];
            start = z3::ite(arrival > start, arrival, start);
        }
        const Ticks d = slot_duration(g.slot(s, v), s.placement, costs, scale);
        solver.add(e == start + smt::rational(ctx, scale.to_units(d)));
        end[v] = e;
    }
    z3::expr_vector bad(ctx);
    const z3::expr shift = smt::rational(ctx, pt.lambda * Rational(pt.cycle));
    for (const auto& w : window_slots(*word, ps, pt.k0)) {
        const auto a = block_slot_id(*word, T, w.rank, w.index, w.j);
        const auto b = block_slot_id(*word, T, w.rank, w.index, w.j + pt.cycle);
        if (end[a] && end[b]) bad.push_back(*end[b] != *end[a] + shift);
    }
    solver.add(z3::mk_or(bad));
    return smt::check(ctx, solver, "periodic window (exact costs, longest-path equations)", "unsat", 1).smt2;
}

}  // namespace pp
