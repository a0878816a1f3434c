// A generator whose order becomes a periodic word only after k blocks: the statement is proved for the
// family restricted to M >= M(k) and the instances before it are settled one by one.
#include "proofs/prover.hpp"

#include "proofs/formula.hpp"
#include "verifier/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pp {

// The order is a periodic word only from block count k on: prove the statement for the family restricted to
// M >= M(k) (a family of its own) and settle M(0)..M(k-1) instance by instance.
namespace {
// The M at which a sub-proof found its recurring comm failure (obligation comm-failure-recurs: "(M >= X)").
int sub_witness_m(const ProofResult& sub) {
    for (const auto& o : sub.obligations)
        if (o.name == "comm-failure-recurs") {
            const auto at = o.statement.find("(M >= ");
            if (at != std::string::npos) return std::atoi(o.statement.c_str() + at + 6);
        }
    return 0;
}
}  // namespace

ProofResult& Prover::prove_from_later_origin(int k, std::optional<PeriodicWord> recut) {
    const std::string why = res.missing;
    for (int t = 0; t < k; ++t) {
        const Property p = options.property == Property::BubbleConstant ? Property::Dependencies : options.property;
        if (auto cx = check_instance(t, p)) return refuted(*cx);
    }
    FamilySpec later = family;
    later.m0 = M(k);
    later.precondition = family.precondition + fmt::format("; from M = {} on", M(k));
    Prover sub_prover(later, options, shifted + k);
    sub_prover.given_word = std::move(recut);
    ProofResult sub = sub_prover.run_guarded();
    res.obligations.push_back(
        {"later-origin",
         fmt::format("the statement for M = {}..{} instance by instance, and for every M >= {} by the proof below "
                     "(whose obligations all concern M >= {})",
                     M(0), M(k - 1), M(k), M(k)),
         why + "; so the origin moves to M = " + std::to_string(M(k)), true, 0, ""});
    const size_t sub_begin = res.obligations.size();
    for (auto& o : sub.obligations) res.obligations.push_back(std::move(o));
    for (size_t a = 1; a < sub.assumptions.size(); ++a)
        if (std::find(res.assumptions.begin(), res.assumptions.end(), sub.assumptions[a]) == res.assumptions.end())
            res.assumptions.push_back(sub.assumptions[a]);
    res.word = sub.word;
    res.structure = sub.structure;
    res.certificate = sub.certificate;  // the word from M(k) on; the claim is the whole family's (finish_certificate)
    res.summary = sub.summary;
    res.counterexample = sub.counterexample;
    if (sub.verdict != Verdict::Proved) {
        // A blocking program that fails for every M >= M(k): it may fail below the new origin too (the least M_d).
        if (sub.verdict == Verdict::Refuted && res.counterexample && res.counterexample->for_every_m_from &&
            *res.counterexample->for_every_m_from == M(k)) {
            int t_d = k;
            while (t_d > 0 && !program_problem(inst(t_d - 1)).empty()) --t_d;
            if (t_d < k) {
                res.counterexample->for_every_m_from = M(t_d);
                res.obligations.push_back({"comm-failure-below-origin",
                                           fmt::format("the generator's blocking program fails at M = {}..{} too{}", M(t_d),
                                                       M(k - 1), t_d > 0 ? fmt::format(" (it runs at M = {})", M(t_d - 1)) : ""),
                                           "check_comm_program on the generator's own program", true, 0, ""});
                // The recurring witness was found at M(k) or later (the sub-proof's summary says where).
                const int m_w = std::max(M(k), sub_witness_m(sub));
                const auto kind = res.counterexample->kind == "comm-mismatch" ? RecurringCommFailure::Kind::Mismatch
                                                                               : RecurringCommFailure::Kind::Deadlock;
                res.summary = comm_failure_summary(M(t_d), m_w, kind);
                sub.summary = res.summary;
                const std::string from = fmt::format("any M >= {}", M(k));
                if (auto at = res.counterexample->what.find(from); at != std::string::npos)
                    res.counterexample->what.replace(at, from.size(), fmt::format("any M >= {}", M(t_d)));
                // The counterexample: the first failing instance at or after --from-M, now possibly below M(k).
                const int at_t = std::max(t_d, t_from());
                if (at_t < k) {
                    res.counterexample->microbatches = M(at_t);
                    res.counterexample->schedule = inst(at_t);
                    res.counterexample->what += fmt::format("\n  at M = {}: {}", M(at_t), program_problem(inst(at_t)));
                }
            }
        }
        // Unknown for want of a structure lemma (v-zb): the bubble found for M >= M(k) still moves down over the
        // early instances equal to it, so the M0 printed is the least one there too; the verdict stays UNKNOWN.
        if (sub.verdict == Verdict::Unknown && options.property == Property::BubbleConstant &&
            (sub.bubble_exact || sub.bubble_symbolic)) {
            std::string early;
            if (!settle_early_bubbles(sub, k, early)) return res;
            res.summary = bubble_summary();
        }
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
            res.peaks_from_m = sub.peaks_from_m;
            std::string values;
            for (int t = 0; t < k; ++t) {
                const auto peaks = peak_activations(inst(t), options.activations);
                if (t == 0) res.peaks_at_origin = peaks;
                // Before the sub-proof's own early instances (it may have moved its origin again), in M order.
                if (res.certificate.memory)
                    res.certificate.memory->early.insert(res.certificate.memory->early.begin() + t, {M(t), peaks});
                values += fmt::format("{}M = {}: [", t ? "; " : "", M(t));
                for (size_t r = 0; r < peaks.size(); ++r) values += (r ? " " : "") + format_rational(peaks[r]);
                values += "]";
            }
            early = "exact count on each instance (against the bound too, when one is given): " + values;
            // In M order: before the sub-proof's own early list, when it moved its origin too.
            const auto later_list = res.summary.find(" (M = ");
            res.summary.insert(later_list == std::string::npos ? res.summary.size() : later_list, " (" + values + ")");
            break;
        }
        case Property::BubbleConstant: {
            if (!settle_early_bubbles(sub, k, early)) return res;
            res.summary = bubble_summary();
            break;
        }
    }
    res.obligations.insert(res.obligations.begin() + static_cast<long>(sub_begin),
                           {"early-instances",
                            fmt::format("the statement holds at M = {}..{}", M(0), M(k - 1)), early, true,
                            seconds_since(t0), ""});
    if (options.property != Property::MemoryBound && options.property != Property::BubbleConstant)
        res.summary += fmt::format("; M = {}..{} checked instance by instance", M(0), M(k - 1));
    res.verdict = Verdict::Proved;
    return res;
}

// "bubble = b for every admissible M >= M0", with the values below M0.
std::string Prover::bubble_summary() const {
    const std::string value = res.bubble_exact ? format_rational(*res.bubble_exact) : res.bubble_symbolic->str(finished_region());
    return fmt::format("bubble = {} for every admissible M >= {}{}{}", value, res.constant_from_m,
                       res.bubble_symbolic ? " and every cost point of the region" : "", early_text());
}

// Bubble at the instances before a moved origin: the proof from M(k) on says bubble = b from its least M0; when
// that M0 is M(k) itself, the early instances equal to b move M0 further down (proofs/method.md §4a).
bool Prover::settle_early_bubbles(const ProofResult& sub, int k, std::string& method) {
    res.t_periodic = sub.t_periodic + k;
    res.cycle = sub.cycle;
    res.idle.assign(family.ranks, {});
    const bool exact = options.costs.has_value();
    std::vector<Rational> exact_values;
    std::vector<MaxPoly> symbolic_values;
    const CostRegion region = exact ? CostRegion{} : finished_region();
    for (int t = 0; t < k; ++t) {
        const Schedule& s = inst(t);
        if (exact) {
            const ExactTiming et = timing(s, *options.costs);
            for (int r = 0; r < family.ranks; ++r) res.idle[r].exact.push_back(et.idle[r]);
            exact_values.push_back(et.bubble);
        } else {
            symbolic_values.push_back(symbolic_bubble(symbolic_simulate(s, instance_graph(s), region), region, res));
        }
    }
    for (int r = 0; r < family.ranks; ++r) {
        for (const auto& v : sub.idle[r].exact) res.idle[r].exact.push_back(v);
        for (const auto& v : sub.idle[r].busy_symbolic) res.idle[r].busy_symbolic.push_back(v);
        res.idle[r].slope = sub.idle[r].slope;
        res.idle[r].slope_form = sub.idle[r].slope_form;
    }
    for (const auto& m : sub.makespan_symbolic) res.makespan_symbolic.push_back(m);
    if (!exact) res.region = region;
    res.bubble_exact = sub.bubble_exact;
    res.bubble_symbolic = sub.bubble_symbolic;
    // Walk down from M(k) while the early instances equal the proved value.
    int t0 = sub.constant_from_m == M(k) ? k : -1;
    std::optional<CostPoint> witness;
    while (t0 > 0) {
        const int t = t0 - 1;
        bool equal = false;
        if (exact) {
            equal = exact_values[t] == *sub.bubble_exact;
        } else if (symbolic_values[t].same_forms(*sub.bubble_symbolic)) {
            equal = true;
        } else {
            const auto out = smt::equal_on_region(symbolic_values[t], *sub.bubble_symbolic, LinForm{}, region, "early instance");
            if (out.result == z3::unknown) {
                res.summary.clear();
                unknown(fmt::format("Z3 could not compare the bubble at M = {} with the proved one", M(t)));
                return false;
            }
            equal = out.result == z3::unsat;
            if (!equal) witness = out.witness;
        }
        if (!equal) break;
        --t0;
    }
    if (options.from_m && t0 >= 0 && t_from() < t0) {
        // --from-M lies below the least M0: bubble(M(t0 - 1)) differs from bubble(M(t0)) = b.
        res.summary.clear();
        const int t = t0 - 1;
        if (exact) {
            refuted(bubble_counterexample(t, exact_values[t], t0, *sub.bubble_exact, point_of(*options.costs), inst(t)));
            return false;
        }
        if (!witness) {
            unknown("the early bubble differs from the proved one, but Z3 gave no point");
            return false;
        }
        const Costs costs = costs_at(*witness);
        const Rational here = timing(inst(t), costs).bubble, there = timing(inst(t0), costs).bubble;
        if (here == there) {
            unknown(fmt::format("the bubble at M = {} differs symbolically but not at Z3's point", M(t)));
            return false;
        }
        refuted(bubble_counterexample(t, here, t0, there, *witness, inst(t)));
        return false;
    }
    res.early_bubbles.clear();
    res.early_exact.clear();
    res.early_symbolic.clear();
    const int ours = t0 >= 0 ? t0 : k;
    for (int t = 0; t < ours; ++t) {
        if (exact) {
            res.early_bubbles.emplace_back(M(t), format_rational(exact_values[t]));
            res.early_exact.push_back(exact_values[t]);
        } else {
            res.early_symbolic.push_back(needed_forms(symbolic_values[t], region));
            res.early_bubbles.emplace_back(M(t), res.early_symbolic.back().str(region));
        }
    }
    if (t0 < 0) {
        for (const auto& e : sub.early_bubbles) res.early_bubbles.push_back(e);
        for (const auto& e : sub.early_exact) res.early_exact.push_back(e);
        for (const auto& e : sub.early_symbolic) res.early_symbolic.push_back(e);
    }
    res.constant_from_m = t0 >= 0 ? M(t0) : sub.constant_from_m;
    method = exact ? "exact simulation of each instance" : "symbolic simulation of each instance";
    if (t0 < 0)
        method += "; listed (the proved bubble holds only from M = " + std::to_string(sub.constant_from_m) + ")";
    else if (t0 < k)
        method += fmt::format("; equal to the proved bubble for M = {}..{}{}", M(t0), M(k - 1),
                              t0 > 0 ? fmt::format(", not at M = {}", M(t0 - 1)) : std::string());
    else if (k > 0)  // no earlier instance equals it: the empty range "M(k)..M(k-1)" is not printed
        method += fmt::format("; the bubble at M = {} already differs from the proved one", M(k - 1));
    return true;
}

}  // namespace pp
