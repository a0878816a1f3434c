// Batched timing (DeepSeek's blocking P2P batches) of a zone word (GPipe, Looped BFS), proofs/method.md §2c:
//   - the generic program fails (deadlock / mismatch) inside its stable head: REFUTED for every M >= M_d;
//   - it runs: the zone route (prover_zones.cpp, §4b) on the batched timing graph, at comm = 0 and, where the graph
//     expresses the timing (no first batch waiting without a predecessor), at comm > 0 -- PROVED, or REFUTED with
//     the exact slope;
//   - fallback when that gives no verdict and comm > 0 is possible: every non-empty batch makes its rank wait comm
//     after its previous slot, so idle_r(M) >= comm * N_r(M) with N_r the number of non-empty batches of rank r,
//     affine and growing in M: the bubble is unbounded, REFUTED for every M0 (a pair of instances at M >= --from-M).
#include "proofs/prover.hpp"

#include "proofs/batched_failure.hpp"
#include "proofs/batched_graph.hpp"
#include "verifier/batched.hpp"

#include <fmt/format.h>

namespace pp {

namespace {

// Non-empty batches before rank r's slots (the trailing commit waits for nothing that is timed).
std::vector<long> waiting_batches(const Schedule& s) {
    const CommProgram program = batched_program(s);
    std::vector<long> n(program.size(), 0);
    for (size_t r = 0; r < program.size(); ++r)
        for (const CommStep& step : program[r]) n[r] += step.slot >= 0 && !step.batch.empty();
    return n;
}

}  // namespace

ProofResult& Prover::prove_zone_batched() {
    const ZoneWord& w = family.zones->word;
    const auto t_order = std::chrono::steady_clock::now();
    const int t_check = 12;
    for (int t = 0; t <= t_check; ++t) {
        const std::string bad = zone_word_mismatch(w, t, inst(t));
        if (!bad.empty())
            return unknown("the generator's order is not its zone word at M = " + std::to_string(M(t)) + ": " + bad);
        if (t > 2) cache.erase(t);
    }
    lemma_ok = true;
    add("order-structure",
        fmt::format("for every t >= 0 every rank runs its zone word fixed_0 . zone_0(0..t-1) . fixed_1 . ... at M = {} "
                    "+ {}t ({} zones)",
                    family.m0, family.step, w.zones()),
        "the zone word is derived from the generator's zone program: " + family.zones->lemma +
            fmt::format("; compared op for op with the generator for t = 0..{}", t_check),
        true, seconds_since(t_order));
    for (int t = 0; t <= 3; ++t)
        if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);

    // 1. Does the generic blocking program run? A failure in the stable head recurs for every larger M.
    const auto t0 = std::chrono::steady_clock::now();
    // Deadlocks of these orders start once M reaches a multiple of P (Looped BFS: M >= 2P), so look that far.
    const int t_scan = std::max(t_check, (4 * family.ranks + 4 - family.m0) / family.step);
    int first_bad = -1;
    for (int t = 0; t <= t_scan && first_bad < 0; ++t) {
        if (!program_problem(inst(t)).empty()) first_bad = t;
        if (t > 2) cache.erase(t);
    }
    if (first_bad >= 0) {
        // Head of rank r: its fixed_0 up to the first end-anchored op, and zone 0's blocks when zone 0 ascends and
        // fixed_0 has no end-anchored op (block j is then raised by j*delta whatever t is). Batch k of the generic
        // rule reads slots k-1 and k only, so the batches of these steps are the same in every larger instance.
        auto heads_at = [&](int t) {
            std::vector<int> heads;
            for (int r = 0; r < w.ranks(); ++r) {
                int h = 0;
                bool anchored = false;
                for (const ZoneSlot& zs : w.fixed[r][0]) {
                    if (zs.end_anchored[0] || zs.end_anchored[1]) {
                        anchored = true;
                        break;
                    }
                    ++h;
                }
                if (!anchored && w.zones() > 0 && w.direction[0] > 0) h += t * static_cast<int>(w.block[r][0].size());
                heads.push_back(h);
            }
            return heads;
        };
        for (int t_w = first_bad; t_w <= t_scan + 4; ++t_w) {
            const Schedule s = w.instantiate(t_w);
            if (auto found = recurring_comm_failure_in_heads(s, batched_program(s), heads_at(t_w)))
                return refute_recurring_failure(
                    *found, t_w,
                    fmt::format("found in the generic program of the zone word's instance at t = {} inside each rank's "
                                "head (fixed_0 and zone 0's ascending blocks: slots that every larger instance runs "
                                "first, unchanged; the generic rule's batch k reads slots k-1 and k only), so every "
                                "larger instance has the same batches there and the same pairings and waits "
                                "(proofs/method.md §2c)",
                                t_w),
                    t0);
        }
        return unknown(fmt::format("batched timing: the blocking P2P program cannot run at M = {} ({}), but no failure "
                                   "inside the head that larger M repeat was found; the prover cannot say whether it "
                                   "fails for every larger M",
                                   M(first_bad), program_problem(inst(first_bad))));
    }
    add("comm-program-runs",
        fmt::format("the generic blocking program runs (no deadlock, no mismatched channel) at M = {}..{}", M(0),
                    M(t_scan)),
        "check_comm_program on the generator's instances", true, seconds_since(t0));

    // 2. comm = 0, or comm > 0 where the batched graph times it: the zone route; else idle_r(M) >= comm * N_r(M).
    if (!batched_comm_may_be_positive()) {
        // comm = 0: the zone route of method.md §4b on the batched timing graph (counterpart edges included; its
        // edge classes are compared like the dataflow graph's, the long ones shown never to bind).
        if (options.costs && !options.costs->per_block.empty())
            return unknown("batched timing of a zone word with per-block costs is not handled");
        zone_graph_of = [](const Schedule& s) { return batched_timing_graph(s, batched_program(s), false); };
        return prove_zone_bubble(true);
    }
    // comm > 0: the same route gives the exact slope when the batched graph expresses the timing (no first batch
    // waits without a predecessor; batched_timing_graph throws otherwise). Anything short of a verdict falls back
    // to the lower bound below, from the state before the attempt.
    if (!options.costs || options.costs->per_block.empty()) {
        const ProofResult before = res;
        zone_graph_of = [](const Schedule& s) { return batched_timing_graph(s, batched_program(s), true); };
        std::string why;
        try {
            if (prove_zone_bubble(true).verdict != Verdict::Unknown) return res;
            why = res.missing;
        } catch (const SimulationError& e) {
            why = e.what();
        }
        res = before;
        zone_graph_of = nullptr;
        res.assumptions.push_back("the zone route on the batched timing graph gave no verdict (" + why +
                                  "); a lower bound instead");
    }
    std::optional<Costs> costs = options.costs;
    if (!costs) {
        // A point of the region with comm > 0 (an interior point of the rays, or with comm's ray weighted up).
        const CostRegion region = finished_region();
        for (const auto& text : region.describe()) res.assumptions.push_back("cost assumption: " + text);
        for (std::int64_t weight : {1, 3, 7}) {
            std::vector<std::int64_t> weights(region.rays.size(), 1);
            for (size_t i = 0; i < region.rays.size(); ++i)
                if (region.rays[i][static_cast<size_t>(CostVar::comm)] != 0) weights[i] = weight;
            if (auto p = region_point(region, weights); p && (*p)[static_cast<size_t>(CostVar::comm)] > Rational(0)) {
                costs = costs_at(*p);
                break;
            }
        }
        if (!costs) return unknown("no point of the cost region with comm > 0 was found (Z3)");
    } else {
        res.assumptions.push_back("costs (exact): " + format_costs(*options.costs));
    }
    const Rational comm = costs->comm;
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<std::vector<long>> counts;  // per t = 0..t_check, per rank
    for (int t = 0; t <= t_check; ++t) {
        counts.push_back(waiting_batches(inst(t)));
        if (t > 2) cache.erase(t);
    }
    int worst = -1;
    long slope = 0;
    std::vector<long> slopes(w.ranks(), 0);
    for (int r = 0; r < w.ranks(); ++r) {
        slopes[r] = counts[2][r] - counts[1][r];
        for (int t = 1; t < t_check; ++t)
            if (counts[t + 1][r] - counts[t][r] != slopes[r])
                return unknown(fmt::format("batched timing: rank {}'s count of waiting batches is not affine in M "
                                           "({} at M = {}, {} at M = {}, {} at M = {})",
                                           r, counts[t - 1][r], M(t - 1), counts[t][r], M(t), counts[t + 1][r], M(t + 1)));
        if (slopes[r] > slope) slope = slopes[r], worst = r;
    }
    if (worst < 0) return unknown("batched timing: no rank's count of waiting batches grows with M");
    const long base = counts[1][worst] - slopes[worst];
    add("waiting-batches",
        fmt::format("for every t >= 1, rank {} runs {} + {}t slots whose batch is not empty (M = {} + {}t); per rank "
                    "the growth per block is {}",
                    worst, base, slope, family.m0, family.step, join_ints(std::vector<int>(slopes.begin(), slopes.end()))),
        fmt::format("counted on the generator's programs for t = 0..{}, affine for t = 1..{}: whether the generic "
                    "batch before a slot is empty depends only on the kinds and stages of that slot and the one "
                    "before it (cross-rank inputs, cross-rank outputs), not on micro-batch indices, so along the "
                    "zone word the count is the fixed parts' plus t times each zone block's (cyclically) plus the "
                    "fixed boundary pairs: affine for t >= 1",
                    t_check, t_check),
        true, seconds_since(t1));
    add("comm-lower-bound",
        fmt::format("bubble(M) >= idle_{}(M) >= comm * ({} + {}t) for every t >= 1: the bubble is unbounded when comm > 0",
                    worst, base, slope),
        "the rendezvous semantics (verifier/batched.hpp): a rank posts batch k when slot k-1 ends and a non-empty "
        "batch completes no earlier than comm after its own post, so slot k starts >= end of slot k-1 + comm; summed "
        "over the rank's slots, makespan >= busy_r + comm * N_r",
        true, 0);

    // 3. A pair of instances at M >= --from-M whose bubbles differ: bubble(a) exactly, then the first t with
    // comm * N(t) > bubble(a), simulated exactly too.
    const auto t2 = std::chrono::steady_clock::now();
    const int a = std::max(1, t_from());
    const Rational at_a = timing(inst(a), *costs).bubble;
    const Rational need = at_a / comm - Rational(base);
    long b = a + 1;
    while (Rational(slope) * Rational(b) <= need) ++b;
    const Rational at_b = timing(inst(static_cast<int>(b)), *costs).bubble;
    if (!(at_b > at_a))
        return unknown(fmt::format("batched timing: the lower bound and the simulation disagree (bubble({}) = {}, "
                                   "bubble({}) = {})",
                                   M(a), format_rational(at_a), M(static_cast<int>(b)), format_rational(at_b)));
    Counterexample cx = bubble_counterexample(a, at_a, static_cast<int>(b), at_b, point_of(*costs), inst(static_cast<int>(b)));
    cx.kind = "comm-growth";
    cx.what += fmt::format(" (exact batched simulation; for every larger M the bubble stays >= comm * ({} + {}t) = "
                           "{} + {}t with comm = {}, so it is unbounded: no M0 exists)",
                           base, slope, format_rational(comm * Rational(base)), format_rational(comm * Rational(slope)),
                           format_rational(comm));
    add("counterexample-pair",
        fmt::format("bubble({}) = {} < bubble({}) = {}", M(a), format_rational(at_a), M(static_cast<int>(b)),
                    format_rational(at_b)),
        "exact batched simulation (simulate_batched) at " + format_costs(*costs), true, seconds_since(t2));
    res.summary = fmt::format("bubble grows without bound: bubble(M) >= comm * ({} + {}t) at M = {} + {}t (rank {}'s "
                              "waiting batches; at least {} per block for comm = {})",
                              base, slope, family.m0, family.step, worst, format_rational(comm * Rational(slope)),
                              format_rational(comm));
    return refuted(std::move(cx));
}

}  // namespace pp
