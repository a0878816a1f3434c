// The prover's driver (proofs/prove.hpp): which phases run for which property, the verdict helpers, and the
// checks of single instances that refute a statement outright. The phases live in prover_*.cpp.
#include "proofs/prover.hpp"
#include "proofs/word_rotation.hpp"

#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>

namespace pp {

ExactTiming exact_timing(const Schedule& schedule, const Costs& costs) {
    const ScheduleGraph g = build_schedule_graph(schedule);
    const Simulation sim = simulate(schedule, g, costs);
    ExactTiming t;
    t.makespan = sim.scale.to_units(sim.makespan);
    t.bubble = sim.scale.to_units(sim.bubble);
    for (const auto& r : sim.ranks) {
        t.idle.push_back(sim.scale.to_units(r.idle));
        t.busy.push_back(sim.scale.to_units(r.busy));
    }
    return t;
}

// The cost region of a symbolic proof: the assumptions given, or the standard ones; rays computed.
CostRegion Prover::finished_region() const {
    CostRegion region = options.region ? *options.region : CostRegion::standard(false);
    region.finish();
    return region;
}

// The timing graph of a generator instance: under batched timing its own program (attached or generic).
ScheduleGraph Prover::instance_graph(const Schedule& s) const {
    return batched() ? batched_timing_graph(s, batched_program(s), comm_may_be_positive) : build_schedule_graph(s);
}

ExactTiming Prover::timing(const Schedule& s, const Costs& costs) const {
    if (!batched()) return exact_timing(s, costs);
    const Simulation sim = simulate_batched(s, costs);
    ExactTiming t;
    t.makespan = sim.scale.to_units(sim.makespan);
    t.bubble = sim.scale.to_units(sim.bubble);
    for (const auto& r : sim.ranks) t.idle.push_back(sim.scale.to_units(r.idle)), t.busy.push_back(sim.scale.to_units(r.busy));
    return t;
}

// PROVED when the generator's structure lemma holds, else UNKNOWN with what is missing.
ProofResult& Prover::proved(std::string summary) {
    res.summary = std::move(summary);
    if (lemma_ok) {
        res.verdict = Verdict::Proved;
    } else {
        res.verdict = Verdict::Unknown;
        res.missing = "a proof that the generator's order is a periodic word beyond M = " +
                      std::to_string(M(T_check)) +
                      (structure_failure.empty() ? std::string(" (no structure lemma is recorded for this family)")
                                                 : " (its structure check failed: " + structure_failure + ")") +
                      "; everything else is proved for the periodic word";
    }
    return res;
}

std::optional<Counterexample> Prover::check_instance(int t, Property property) {
    Schedule s;
    try {
        s = inst(t);
    } catch (const std::exception& e) {
        return std::nullopt;
    }
    VerifyOptions vo;
    vo.activations = options.activations;
    if (property == Property::MemoryBound) {
        // Without a bound there is nothing an instance alone can refute.
        if (!options.memory_bound) return std::nullopt;
        vo.memory_limit = options.memory_bound;
    }
    const VerifyReport report = verify(s, vo);
    std::vector<const Violation*> relevant;
    for (const auto& v : report.violations) {
        if (property == Property::DeadlockFree &&
            !(v.kind == ViolationKind::Deadlock || v.kind == ViolationKind::OrderContradicts))
            continue;
        if (property == Property::MemoryBound && v.kind != ViolationKind::MemoryLimit) continue;
        relevant.push_back(&v);
    }
    if (relevant.empty()) return std::nullopt;
    Counterexample cx;
    cx.ranks = family.ranks;
    cx.microbatches = M(t);
    cx.what = fmt::format("{} at P={}, M={}: {} violation(s); first: {}: {}", family.name, family.ranks, M(t),
                          relevant.size(), violation_name(relevant[0]->kind), relevant[0]->message);
    for (const auto& w : relevant[0]->witness) cx.what += "\n    " + w;
    cx.schedule = s;
    return cx;
}

// A deadlock that the infeasible potentials predict, found on a concrete instance.
std::optional<Counterexample> Prover::find_deadlock(int up_to) {
    for (int t = 0; t <= up_to; ++t) {
        auto cx = check_instance(t, Property::DeadlockFree);
        if (cx) return cx;
        cache.erase(t);
    }
    return std::nullopt;
}

ProofResult Prover::run_guarded() {
    try {
        run();
    } catch (const SimulationError& e) {
        res.verdict = Verdict::Unknown;
        res.missing = std::string("simulation failed: ") + e.what();
    } catch (const budget::Exhausted& e) {
        // What was established stays in res (assumptions, obligations discharged); nothing is claimed for M.
        res.verdict = Verdict::Unknown;
        res.counterexample.reset();
        res.missing = e.what + "; the obligations below were discharged before it";
    }
    return std::move(res);  // the result holds every base case's polynomials: no copy
}

ProofResult& Prover::run() {
    res.family = family.name;
    res.ranks = family.ranks;
    res.stages_per_rank = family.stages_per_rank;
    res.group_size = family.group_size;
    res.m_origin = family.m0;
    res.step = family.step;
    res.assumptions.push_back(fmt::format("M ranges over {} + {}t, t >= 0 ({})", family.m0, family.step,
                                          family.precondition));
    if (!family.order_assumption.empty()) res.assumptions.push_back(family.order_assumption);
    switch (options.property) {
        case Property::BubbleConstant:
            res.statement =
                options.from_m
                    ? fmt::format("bubble(M) is the same for every admissible M >= {} (bubble = the largest idle time "
                                  "of a rank, idle = makespan - busy)",
                                  *options.from_m)
                    : "bubble(M) is eventually constant: bubble(M) = b for every admissible M >= M0 (b and the least "
                      "such M0 are the result; bubble = the largest idle time of a rank, idle = makespan - busy)";
            break;
        case Property::Dependencies:
            res.statement = "for every admissible M, every op occurs exactly once on a rank holding its stage, "
                            "pairs are one F and one backward, W follows its I, no rank runs an op before a "
                            "same-rank dependency, and the schedule is deadlock-free";
            break;
        case Property::DeadlockFree:
            res.statement = "for every admissible M, the dependency graph with each rank's order is acyclic "
                            "(every slot can start)";
            break;
        case Property::MemoryBound:
            res.statement = options.memory_bound
                                ? fmt::format("for every admissible M, every rank's activation peak is <= {}",
                                              format_rational(*options.memory_bound))
                                : "for every admissible M, the activation peak of every rank is the same "
                                  "(values below)";
            break;
    }
    if (batched()) {
        res.assumptions.push_back("timing: batched (DeepSeek's blocking P2P batches: a slot starts when the batch "
                                  "before it has completed, each op once its counterpart is posted on the peer, "
                                  "plus comm; verifier/batched.hpp)");
        comm_may_be_positive = batched_comm_may_be_positive();
    } else if (options.property == Property::BubbleConstant)
        res.assumptions.push_back(std::string("timing: ") + timing_model_name(options.model) +
                                  " (a slot starts when its rank is free and its inputs have arrived; a cross-rank "
                                  "dependency adds comm)");
    if (family.zones) {
        record_zone_word();
        if (batched()) res.certificate.not_carried.push_back("batched timing of a zone word");
        res.certificate.not_carried.push_back("the timing of a zone word (per-zone windows, their chaining and the long "
                                              "edges: proofs/method.md §4b), which certificate version 1 does not carry");
        if (batched()) return prove_zone_batched();
        if (options.property == Property::BubbleConstant && !batched() &&
            (!options.costs || options.costs->per_block.empty()))
            return prove_zone_bubble();
        if (options.property == Property::MemoryBound) return prove_zone_memory();
        return unknown("this family's order grows in several places per rank (a zone word); the prover handles it for "
                       "bubble-constant with uniform costs and dataflow timing, and memory-bound when the peak grows, "
                       "only");
    }
    if (!establish_word()) {
        if (later_origin > 0 && shifted + later_origin <= max_origin_shift(family.ranks))
            return prove_from_later_origin(later_origin);
        return refute_on_instances_or_unknown();
    }
    res.word = word;
    record_word();
    if (batched()) {
        // A program that cannot run is settled first (it needs no program word when it is the generic one).
        const bool fitted = establish_batched();
        if (auto failed = settle_comm_failure()) return failed->get();
        if (!fitted) return refute_on_instances_or_unknown();
    }
    if (!establish_structure()) {
        if (!ps.failure.empty() && ps.failure.find("no super-step") != std::string::npos) {
            if (auto cx = find_deadlock(ps.T0 + 64)) {
                cx->what += "\n  (predicted by the periodic graph: " + ps.failure + ")";
                return refuted(*cx);
            }
            // No single potential per rank, but maybe one per slot: then the blocks are cut where ranks differ,
            // and the word re-cut there (one block later) is proved from scratch. Once per proof.
            if (!given_word && shifted + 1 <= max_origin_shift(family.ranks))
                if (auto recut = rotate_blocks_for_super_steps(*word, std::max({ps.T0, batched_T0, 2}), graph_of))
                    return prove_from_later_origin(1, std::move(recut));
        }
        return refute_on_instances_or_unknown();
    }
    res.structure = ps;
    res.certificate.potentials = CertificatePotentials{ps.T, ps.sigma, ps.alpha, ps.beta};
    switch (options.property) {
        case Property::DeadlockFree:
        case Property::Dependencies: return prove_graph_property();
        case Property::MemoryBound: return prove_memory();
        case Property::BubbleConstant:
            return options.costs ? prove_bubble_exact(*options.costs) : prove_bubble_symbolic();
    }
    return res;
}

ProofResult& Prover::refute_on_instances_or_unknown() {
    if (options.property != Property::BubbleConstant)
        for (int t = 0; t <= 4; ++t)
            if (auto cx = check_instance(t, options.property)) return refuted(*cx);
    if (options.property == Property::BubbleConstant) {
        for (int t = 0; t <= 4; ++t)
            if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
        // Without a periodicity proof only a difference at M >= --from-M refutes (the statement is about the
        // bubble from some M0 on; small M may differ): at the given costs, or at a few interior points of the region
        // (a concrete point suffices to refute the symbolic statement).
        std::vector<Costs> points;
        if (!options.from_m) {
            // nothing to compare
        } else if (options.costs) {
            points.push_back(*options.costs);
        } else {
            const CostRegion region = finished_region();
            for (std::int64_t w : {1, 3}) {
                std::vector<std::int64_t> weights(region.rays.size(), 1);
                if (!weights.empty()) weights[0] = w;
                if (auto point = region_point(region, weights)) points.push_back(costs_at(*point));
            }
        }
        const int a = t_from();
        for (const Costs& costs : points) {
            try {
                const ExactTiming b0 = timing(inst(a), costs);
                for (int t = a + 1; t <= a + 4; ++t) {
                    const ExactTiming bt = timing(inst(t), costs);
                    if (!(bt.bubble == b0.bubble))
                        return refuted(bubble_counterexample(a, b0.bubble, t, bt.bubble, point_of(costs), inst(t)));
                }
            } catch (const SimulationError&) {
            } catch (const GenerateError&) {
            }
        }
    }
    if (res.missing.empty()) res.missing = ps.failure;
    res.verdict = Verdict::Unknown;
    return res;
}

Counterexample Prover::bubble_counterexample(int a, const Rational& at_a, int b, const Rational& at_b,
                                             const CostPoint& costs, const Schedule& schedule) {
    Counterexample cx;
    cx.ranks = family.ranks, cx.microbatches = M(a), cx.other_microbatches = M(b);
    cx.costs = costs;
    cx.what = fmt::format("bubble({}) = {} but bubble({}) = {}", M(a), format_rational(at_a), M(b), format_rational(at_b));
    cx.schedule = schedule;
    return cx;
}

void Prover::record_zone_word() {
    const FamilyZoneWord& f = *family.zones;
    CertificateZoneWord w;
    w.m_origin = f.m0;
    w.step = f.step;
    w.delta = f.word.delta;
    w.direction = f.word.direction;
    w.block = f.word.block;
    for (const auto& parts : f.word.fixed) {
        w.fixed.emplace_back();
        w.end_anchored.emplace_back();
        for (const auto& part : parts) {
            w.fixed.back().emplace_back();
            w.end_anchored.back().emplace_back();
            for (const ZoneSlot& z : part) {
                w.fixed.back().back().push_back(z.slot);
                w.end_anchored.back().back().push_back(z.end_anchored);
            }
        }
    }
    res.certificate.zone_word = std::move(w);
}

void Prover::record_word() {
    CertificateWord w;
    w.m_origin = family.m0;
    w.step = family.step;
    w.delta = word->delta;
    w.prefix = word->prefix;
    w.block = word->block;
    w.suffix = word->suffix;
    res.certificate.word = std::move(w);
}

ProofResult prove(const FamilySpec& family, const ProveOptions& options) {
    Prover prover(family, options);
    return prover.run_guarded();
}

}  // namespace pp
