// A generator whose order becomes a periodic word only after k blocks: the statement is proved for the
// family restricted to M >= M(k) and the instances before it are settled one by one.
#include "proofs/prover.hpp"

#include "verifier/memory.hpp"

#include <fmt/format.h>

namespace pp {

// The order is a periodic word only from block count k on: prove the statement for the family restricted to
// M >= M(k) (a family of its own) and settle M(0)..M(k-1) instance by instance.
ProofResult& Prover::prove_from_later_origin(int k) {
    const std::string why = res.missing;
    for (int t = 0; t < k; ++t) {
        const Property p = options.property == Property::BubbleConstant ? Property::Dependencies : options.property;
        if (auto cx = check_instance(t, p)) return refuted(*cx);
    }
    FamilySpec later = family;
    later.m0 = M(k);
    later.precondition = family.precondition + fmt::format("; from M = {} on", M(k));
    Prover sub_prover(later, options, shifted + k);
    ProofResult sub = sub_prover.run_guarded();
    res.obligations.push_back(
        {"later-origin",
         fmt::format("the statement for M = {}..{} instance by instance, and for every M >= {} by the proof below "
                     "(whose obligations all concern M >= {})",
                     M(0), M(k - 1), M(k), M(k)),
         why + "; so the origin moves to M = " + std::to_string(M(k)), true, 0, ""});
    const size_t sub_begin = res.obligations.size();
    for (auto& o : sub.obligations) res.obligations.push_back(std::move(o));
    for (size_t a = 1; a < sub.assumptions.size(); ++a) res.assumptions.push_back(sub.assumptions[a]);
    res.word = sub.word;
    res.structure = sub.structure;
    res.summary = sub.summary;
    res.counterexample = sub.counterexample;
    if (sub.verdict != Verdict::Proved) {
        res.verdict = sub.verdict;
        res.missing = sub.missing.empty() ? "" : "for M >= " + std::to_string(M(k)) + ": " + sub.missing;
        return res;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::string early;  // what the first instances showed
    switch (options.property) {
        case Property::Dependencies:
        case Property::DeadlockFree:
            early = "exact verification of each instance";
            break;
        case Property::MemoryBound: {
            res.peaks = sub.peaks;
            std::string values;
            for (int t = 0; t < k; ++t) {
                const auto peaks = peak_activations(inst(t), options.activations);
                if (t == 0) res.peaks_at_origin = peaks;
                values += fmt::format("{}M = {}: [", t ? "; " : "", M(t));
                for (size_t r = 0; r < peaks.size(); ++r) values += (r ? " " : "") + format_rational(peaks[r]);
                values += "]";
            }
            early = "exact count on each instance (against the bound too, when one is given): " + values;
            res.summary += " (" + values + ")";
            break;
        }
        case Property::BubbleConstant:
            if (!settle_early_bubbles(sub, k, early)) return res;
            break;
    }
    res.obligations.insert(res.obligations.begin() + static_cast<long>(sub_begin),
                           {"early-instances",
                            fmt::format("the statement holds at M = {}..{}", M(0), M(k - 1)), early, true,
                            seconds_since(t0), ""});
    if (options.property != Property::MemoryBound)
        res.summary += fmt::format("; M = {}..{} checked instance by instance", M(0), M(k - 1));
    res.verdict = Verdict::Proved;
    return res;
}

// Bubble at the instances before a moved origin: equal to the proved constant, or a counterexample.
bool Prover::settle_early_bubbles(const ProofResult& sub, int k, std::string& method) {
    res.t_periodic = sub.t_periodic + k;
    res.cycle = sub.cycle;
    res.idle.assign(family.ranks, {});
    if (options.costs) {
        for (int t = 0; t < k; ++t) {
            const ExactTiming et = timing(inst(t), *options.costs);
            for (int r = 0; r < family.ranks; ++r) res.idle[r].exact.push_back(et.idle[r]);
            if (!(et.bubble == *sub.bubble_exact)) {
                res.summary.clear();
                refuted(bubble_counterexample(t, et.bubble, k, *sub.bubble_exact, point_of(*options.costs), inst(t)));
                return false;
            }
        }
        for (int r = 0; r < family.ranks; ++r) {
            for (const auto& v : sub.idle[r].exact) res.idle[r].exact.push_back(v);
            res.idle[r].slope = sub.idle[r].slope;
        }
        res.bubble_exact = sub.bubble_exact;
        method = "exact simulation of each instance";
        return true;
    }
    const CostRegion region = finished_region();
    for (int t = 0; t < k; ++t) {
        const Schedule& s = inst(t);
        const MaxPoly bubble = symbolic_bubble(symbolic_simulate(s, instance_graph(s), region), region, res.idle);
        if (bubble.same_forms(*sub.bubble_symbolic)) continue;
        const auto out = smt::equal_on_region(bubble, *sub.bubble_symbolic, LinForm{}, region, "early instance");
        if (out.result == z3::unsat) continue;
        if (out.result == z3::sat && out.witness) {
            const Costs costs = costs_at(*out.witness);
            const Rational here = timing(s, costs).bubble, there = timing(inst(k), costs).bubble;
            if (!(here == there)) {
                res.summary.clear();
                refuted(bubble_counterexample(t, here, k, there, *out.witness, s));
                return false;
            }
        }
        res.summary.clear();
        unknown(fmt::format("Z3 could not compare the bubble at M = {} with the proved one", M(t)));
        return false;
    }
    for (int r = 0; r < family.ranks; ++r) {
        for (const auto& v : sub.idle[r].symbolic) res.idle[r].symbolic.push_back(v);
        res.idle[r].slope_form = LinForm{};
    }
    res.bubble_symbolic = sub.bubble_symbolic;
    method = "symbolic simulation of each instance; equal to the proved bubble on the region (identical "
             "polynomials or Z3 unsat)";
    return true;
}

}  // namespace pp
