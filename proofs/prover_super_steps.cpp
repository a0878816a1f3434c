// Phase 2: super-step potentials (Bellman-Ford on the periodic graph) make every edge go forward; with them
// op coverage (Z3, linear integer arithmetic), dependency order and deadlock-freedom hold for every M
// (Karp-Miller-Winograd style; proofs/method.md §2-3).
#include "proofs/smt.hpp"
#include "proofs/prover.hpp"

#include <fmt/format.h>

#include <array>

namespace pp {

bool Prover::establish_structure() {
    const auto t0 = std::chrono::steady_clock::now();
    const Stability st = stable_from(*word);
    if (!st.failure.empty()) {
        res.missing = st.failure;
        return false;
    }
    add("relative-structure",
        fmt::format("for every t >= T0 = {}, the edges of G_t written in block coordinates do not depend on t", st.T0),
        "index arithmetic: every edge joins two ops of one micro-batch or two rank neighbours, block and suffix "
        "indices are affine in j and t with the same slope, and prefix/suffix ops of one micro-batch cannot "
        "meet from T0 on (proofs/method.md §2)");
    ps = analyse_structure(*word, std::max({st.T0, batched_T0, 2}), graph_of);
    // The batched graph's classes are fixed only from batched_T0 on, which the dataflow T0 does not know.
    ps.T0 = std::max(ps.T0, batched_T0);
    ps.T_struct = std::max(ps.T_struct, ps.T0);
    if (!ps.feasible) {
        add("super-steps", "a super-step potential making every edge go forward", "Bellman-Ford: " + ps.failure,
            false, seconds_since(t0));
        return false;
    }
    // The potentials come from G_T; confirm them on the next instances, which contain every edge class
    // that spans up to lag + 1 blocks.
    const int t_recheck = ps.T + ps.lag + 2;
    for (int t = ps.T + 1; t <= t_recheck; ++t)
        if (const std::string bad = check_potentials(*word, ps, t, graph_of); !bad.empty()) {
            add("super-steps", "the super-step potentials of G_" + std::to_string(ps.T) + " hold for every G_t",
                "re-check on G_" + std::to_string(t) + ": " + bad, false, seconds_since(t0));
            res.missing = "the super-step potentials of G_" + std::to_string(ps.T) + " do not hold on G_" +
                          std::to_string(t) + " (" + bad + ")";
            return false;
        }
    if (graph_of && !check_batched_classes(t_recheck)) return false;
    int amin = 1 << 30, amax = -(1 << 30), bmin = 1 << 30, bmax = -(1 << 30);
    for (int r = 0; r < word->ranks(); ++r) {
        for (int a : ps.alpha[r]) amin = std::min(amin, a), amax = std::max(amax, a);
        for (int b : ps.beta[r]) bmin = std::min(bmin, b), bmax = std::max(bmax, b);
    }
    add("super-steps",
        fmt::format("block j of rank r is super-step j + sigma_r, sigma = {}; prefix slots in [{}, {}], suffix slots in "
                    "t + [{}, {}]; every edge of every G_t (t >= {}) goes to the same or a later super-step; head "
                    "<= {}, translation-invariant middle from {}, tail from t + {}, largest lag {}",
                    join_ints(ps.sigma), amin > amax ? 0 : amin, amin > amax ? 0 : amax, bmin > bmax ? 0 : bmin,
                    bmin > bmax ? 0 : bmax, ps.T0, ps.head_end, ps.k_inv, ps.tau, ps.lag),
        fmt::format("Bellman-Ford on the integer difference constraints of the {} edges of G_{} (the same "
                    "constraints for every t >= T0), re-checked edge by edge on G_{}..G_{}",
                    ps.edges, ps.T, ps.T + 1, t_recheck),
        true, seconds_since(t0));
    return true;
}

// Coverage of every (pipeline, stage, micro-batch) for all t, in linear integer arithmetic.
bool Prover::prove_coverage() {
    const auto t0 = std::chrono::steady_clock::now();
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    z3::expr x = ctx.int_const("x"), t = ctx.int_const("t");
    solver.add(t >= 0);
    const Placement& pl = word->base;
    // kind 0 F, 1 I, 2 W, 3 B: count(x, t) per (pipeline, stage).
    std::map<std::pair<int, int>, std::array<std::vector<z3::expr>, 4>> terms;
    auto add_term = [&](const Op& op, Region region) {
        auto& slot = terms[{op.pipeline, op.stage}][static_cast<int>(op.kind)];
        const int m = op.microbatch, d = word->delta[op.pipeline];
        z3::expr hit(ctx);
        if (region == Region::Prefix) hit = x == m;
        else if (region == Region::Suffix) hit = x == ctx.int_val(m) + ctx.int_val(d) * t;
        else {
            hit = x >= m && x < ctx.int_val(m) + ctx.int_val(d) * t;
            if (d > 1) hit = hit && z3::mod(x - m, d) == 0;
        }
        slot.push_back(z3::ite(hit, ctx.int_val(1), ctx.int_val(0)));
    };
    for (int r = 0; r < word->ranks(); ++r) {
        for (const Slot& s : word->prefix[r]) for (const Op& op : s) add_term(op, Region::Prefix);
        for (const Slot& s : word->block[r]) for (const Op& op : s) add_term(op, Region::Block);
        for (const Slot& s : word->suffix[r]) for (const Op& op : s) add_term(op, Region::Suffix);
    }
    z3::expr_vector violations(ctx);
    auto sum = [&](const std::vector<z3::expr>& v) {
        z3::expr s = ctx.int_val(0);
        for (const auto& e : v) s = s + e;
        return s;
    };
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int s = 0; s < pl.pipelines[p].stages(); ++s) {
            auto& k = terms[{p, s}];
            z3::expr in = x >= 0 && x < ctx.int_val(pl.pipelines[p].microbatches) + ctx.int_val(word->delta[p]) * t;
            z3::expr one = z3::ite(in, ctx.int_val(1), ctx.int_val(0));
            z3::expr F = sum(k[0]), I = sum(k[1]), W = sum(k[2]), B = sum(k[3]);
            violations.push_back(F != one || B + I != one || W != I);
        }
    solver.add(z3::mk_or(violations));
    auto out = smt::check(ctx, solver, "op coverage for every t", "unsat");
    const std::string file = emit("coverage.smt2", out.smt2);
    const bool ok = out.result == z3::unsat;
    add("op-coverage",
        "for every t >= 0 and every (pipeline, stage, micro-batch < M): exactly one F, exactly one of {B, I}, as "
        "many W as I, and nothing outside the range",
        std::string("Z3, linear integer arithmetic over (t, micro-batch) with block indices as arithmetic "
                    "progressions: ") +
            (ok ? "unsat (proved)" : out.result == z3::sat ? "sat (a gap or a duplicate)" : "unknown"),
        ok, seconds_since(t0), file);
    return ok;
}

ProofResult& Prover::prove_graph_property() {
    const bool deps = options.property == Property::Dependencies;
    if (deps && !prove_coverage()) {
        for (int t = 0; t <= ps.T_struct + 2; ++t)
            if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
        return unknown("op coverage could not be proved for every t");
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t <= ps.T_struct; ++t) {
        if (auto cx = check_instance(t, options.property)) return refuted(*cx);
        cache.erase(t);
    }
    add(deps ? "instances" : "acyclic-instances",
        fmt::format("G_t passes {} for t = 0..{} (M = {}..{})", deps ? "every check of `pipeproof verify`" : "the cycle check",
                    ps.T_struct, M(0), M(ps.T_struct)),
        "exact verification of the generator's output", true, seconds_since(t0));
    add("periodic-graph",
        fmt::format("for every t >= T_struct = {}, each super-step of G_t is, up to translation, a head or tail "
                    "super-step of G_{} or a subset of one of its middle super-steps{}",
                    ps.T_struct, ps.T_struct, deps ? ", and every same-rank edge class occurs in it" : ""),
        "edges never go to an earlier super-step, so a cycle stays inside one super-step; classes are t-independent "
        "from T0 on (proofs/method.md §3)");
    return proved(deps ? "dependencies respected and deadlock-free for every M"
                       : "deadlock-free for every M (Karp-Miller-Winograd-style periodic graph argument)");
}

}  // namespace pp
