#include "proofs/prove.hpp"

#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "proofs/batched_graph.hpp"
#include "verifier/memory.hpp"
#include "proofs/formula.hpp"
#include "proofs/smt.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace pp {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char* kDualPipeLemma =
    "schedules/dualpipe_steps.cpp emits the reference's 8 steps with repeat counts 2*far, h+1, far, "
    "n4 = H-2n+h+1, far, h+1, far, h+1: only step 4 depends on H (= M/2 for DualPipe, M for DualPipeV), with "
    "slope 1; every micro-batch index is a running counter per (local phase, forward/backward); the W queue is "
    "empty before and after step 4 (step 3 pops what it pushes, steps 4-5 push nothing). So the order for H+1 is "
    "the order for H with one more step-4 round (its body is the same word) and every later index raised by one: "
    "a periodic word in H (proofs/method.md, lemma 'running-counter step programs').";
// A generator that settles into its periodic word only after a few blocks is proved from there on; more than
// this many blocks of transient is more likely a family that is not periodic at all.
constexpr int kMaxOriginShift = 8;

const char* k1F1BLemma =
    "schedules/1f1b.cpp: rank r runs min(M, P-r) = P-r warm-up forwards (M >= P), then M rounds of "
    "'B_k, then the next forward if one is left': a loop whose body does not depend on M, running counters, "
    "and exactly one phase (the rounds with a forward) whose length grows with slope 1 in M: a periodic word "
    "(proofs/method.md, lemma 'running-counter step programs').";
const char* kZbHandLemma =
    "schedules/zb_hand.cpp: c(P-1-r) warm-up forwards, then for i < M the body [F if any is left] I_i [W if "
    "i >= c*r], then the owed W's: for M >= c(P-1) the loop is three phases (F I; F I W; I W) of lengths "
    "c*r, M - c(P-1), c(P-1-r) with running counters, only the middle one growing (slope 1): a periodic word "
    "(proofs/method.md, lemma 'running-counter step programs').";

std::string join_ints(const std::vector<int>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
    return s + "]";
}

std::string costs_text(const CostPoint& p) {
    return fmt::format("F={},I={},W={},B={},FB={},comm={}", format_rational(p[0]), format_rational(p[1]),
                       format_rational(p[2]), format_rational(p[3]), format_rational(p[4]), format_rational(p[5]));
}

// A point strictly inside the region's cone of rays, weighted like interior_point, that also satisfies the
// constraints the cone leaves out (those with a constant term, such as F >= 2): sample points may turn into
// counterexamples, which must lie inside the stated assumptions.
std::optional<CostPoint> region_point(const CostRegion& region, const std::vector<std::int64_t>& weights) {
    const CostPoint p = region.interior_point(weights);
    if (region.contains(p)) return p;
    z3::context ctx;
    z3::solver solver(ctx);
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

// The bubble of one symbolically timed instance; appends each rank's idle time to idle[r].symbolic.
MaxPoly symbolic_bubble(const SymbolicTiming& st, const CostRegion& region, std::vector<RankIdle>& idle) {
    // idle_r = makespan - busy_r: a rank whose busy time is >= another's on the whole region (every ray) idles
    // no longer than it anywhere, so only the ranks with a ray-minimal busy time enter the max.
    const size_t P = st.busy.size();
    std::vector<std::vector<std::int64_t>> busy_values;
    for (const auto& b : st.busy) busy_values.push_back(region.ray_values(b));
    MaxPoly bubble;
    for (size_t r = 0; r < P; ++r) {
        MaxPoly rank_idle = st.makespan;  // pruned; a shift keeps it so
        rank_idle.shift(LinForm{} - st.busy[r], region);
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
        if (!covered) bubble.merge_pruned(rank_idle);
        idle[r].symbolic.push_back(std::move(rank_idle));
    }
    return bubble;
}

}  // namespace

const char* property_name(Property property) {
    switch (property) {
        case Property::BubbleConstant: return "bubble-constant";
        case Property::Dependencies: return "dependencies";
        case Property::DeadlockFree: return "deadlock-free";
        case Property::MemoryBound: return "memory-bound";
    }
    return "?";
}

std::optional<Property> parse_property(const std::string& name) {
    for (Property p : {Property::BubbleConstant, Property::Dependencies, Property::DeadlockFree, Property::MemoryBound})
        if (name == property_name(p)) return p;
    return std::nullopt;
}

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::Proved: return "PROVED";
        case Verdict::Refuted: return "REFUTED";
        case Verdict::Unknown: return "UNKNOWN";
    }
    return "?";
}

std::optional<FamilySpec> family_spec(const std::string& name, int P, std::string* why) {
    const ScheduleFamily* family = find_family(name);
    auto fail = [&](const std::string& reason) -> std::optional<FamilySpec> {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (!family) return fail("unknown family '" + name + "' (see `pipeproof list`)");
    if (P < 1) return fail("P must be at least 1");
    FamilySpec spec;
    spec.name = name;
    spec.ranks = P;
    spec.generate = [family, P](int M) { return family->generate({P, M, std::nullopt}); };
    if (name == "dualpipe") {
        if (P % 2 != 0) return fail("dualpipe needs an even P");
        spec.m0 = 2 * P, spec.step = 2, spec.precondition = "P even, M even, M >= 2P";
        spec.structure_lemma = kDualPipeLemma;
    } else if (name == "dualpipev") {
        spec.m0 = 2 * P, spec.step = 1, spec.precondition = "M >= 2P";
        spec.structure_lemma = kDualPipeLemma;
    } else if (name == "1f1b") {
        spec.m0 = P, spec.step = 1, spec.precondition = "M >= P";
        spec.structure_lemma = k1F1BLemma;
    } else if (name == "zb-h1") {
        spec.m0 = P, spec.step = 1, spec.precondition = "M >= P";
        spec.structure_lemma = kZbHandLemma;
    } else if (name == "zb-h2") {
        spec.m0 = 2 * P, spec.step = 1, spec.precondition = "M >= 2P";
        spec.structure_lemma = kZbHandLemma;
    } else if (name == "gpipe") {
        spec.m0 = 1, spec.step = 1, spec.precondition = "M >= 1";
    } else if (name == "interleaved-1f1b" || name == "zb1p") {
        // PyTorch runs max(1, M // P) rounds and needs M to be a multiple of them: M = 9 fails at P = 4, so the
        // admissible M are no arithmetic progression; every multiple of P is admissible.
        spec.m0 = P, spec.step = P;
        spec.precondition = "M a multiple of P (PyTorch needs max(1, M // P) to divide M; the other such M are not "
                            "an arithmetic progression)";
    } else if (name == "chimera") {
        if (P % 2 != 0) return fail("chimera needs an even P");
        spec.m0 = P, spec.step = P, spec.precondition = "P even, M a positive multiple of P";
    } else {
        // Probe the generator for the first admissible M and a step that keeps it admissible.
        auto ok = [&](int M) {
            try {
                family->generate({P, M, std::nullopt});
                return true;
            } catch (const std::exception&) {
                return false;
            }
        };
        int m0 = 0;
        for (int M = 1; M <= 16 * P && m0 == 0; ++M)
            if (ok(M)) m0 = M;
        if (m0 == 0) return fail("no M <= 16P is accepted by the generator");
        int step = 0;
        for (int k = 1; k <= 4 * P && step == 0; ++k)
            if (ok(m0 + k) && ok(m0 + 2 * k) && ok(m0 + 3 * k)) step = k;
        if (step == 0) return fail("no step keeps M admissible");
        spec.m0 = m0, spec.step = step;
        spec.precondition = "as the generator accepts (probed: M = " + std::to_string(m0) + " + " +
                            std::to_string(step) + "t)";
    }
    return spec;
}

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

// ---------------------------------------------------------------------------------------------------

namespace {

struct Prover {
    const FamilySpec& family;
    const ProveOptions& options;
    ProofResult res;
    std::map<int, Schedule> cache;
    std::optional<PeriodicWord> word;
    PeriodicStructure ps;
    bool lemma_ok = false;
    int T_check = 0;
    // When the order is not one periodic word from the origin: the block count from which a word may start.
    int later_origin = 0;
    // How many blocks earlier provers in this chain have already moved the origin (bounds the recursion).
    int shifted = 0;
    // Batched model: the communication program as a periodic word, the timing graph of the word's instances it
    // induces (empty for dataflow), and the t from which that graph's edge classes are fixed.
    std::optional<ProgramWord> program_word;
    TimingGraphOf graph_of;
    int batched_T0 = 0;
    bool comm_may_be_positive = false;

    bool batched() const { return options.model == TimingModel::Batched && options.property == Property::BubbleConstant; }
    // "bubble(M(a)) = x but bubble(M(b)) = y" at one cost point, with the instance that shows it.
    Counterexample bubble_counterexample(int a, const Rational& at_a, int b, const Rational& at_b, const CostPoint& costs,
                                         const Schedule& schedule) {
        Counterexample cx;
        cx.ranks = family.ranks, cx.microbatches = M(a), cx.other_microbatches = M(b);
        cx.costs = costs;
        cx.what = fmt::format("bubble({}) = {} but bubble({}) = {}", M(a), format_rational(at_a), M(b), format_rational(at_b));
        cx.schedule = schedule;
        return cx;
    }
    // The cost region of a symbolic proof: the assumptions given, or the standard ones; rays computed.
    CostRegion finished_region() const {
        CostRegion region = options.region ? *options.region : CostRegion::standard(false);
        region.finish();
        return region;
    }
    // The timing graph of a generator instance: under batched timing its own program (attached or generic).
    ScheduleGraph instance_graph(const Schedule& s) const {
        return batched() ? batched_timing_graph(s, batched_program(s), comm_may_be_positive) : build_schedule_graph(s);
    }
    ScheduleGraph word_graph(const Schedule& s, int t) const { return timing_graph(graph_of, s, t); }
    ExactTiming timing(const Schedule& s, const Costs& costs) const {
        if (!batched()) return exact_timing(s, costs);
        const Simulation sim = simulate_batched(s, costs);
        ExactTiming t;
        t.makespan = sim.scale.to_units(sim.makespan);
        t.bubble = sim.scale.to_units(sim.bubble);
        for (const auto& r : sim.ranks) t.idle.push_back(sim.scale.to_units(r.idle)), t.busy.push_back(sim.scale.to_units(r.busy));
        return t;
    }

    Prover(const FamilySpec& f, const ProveOptions& o, int already_shifted = 0)
        : family(f), options(o), shifted(already_shifted) {}

    const Schedule& inst(int t) {
        auto it = cache.find(t);
        if (it == cache.end()) it = cache.emplace(t, family.generate(family.microbatches(t))).first;
        return it->second;
    }
    int M(int t) const { return family.microbatches(t); }

    void add(std::string name, std::string statement, std::string method, bool holds = true, double seconds = 0,
             std::string file = "") {
        res.obligations.push_back({std::move(name), std::move(statement), std::move(method), holds, seconds, std::move(file)});
    }
    std::string emit(const std::string& name, const std::string& text) {
        if (options.emit_dir.empty()) return "";
        return smt::write_file(options.emit_dir, name, text);
    }
    ProofResult& unknown(std::string missing) {
        res.verdict = Verdict::Unknown;
        res.missing = std::move(missing);
        return res;
    }
    ProofResult& refuted(Counterexample cx) {
        res.verdict = Verdict::Refuted;
        res.counterexample = std::move(cx);
        return res;
    }
    // PROVED when the generator's structure lemma holds, else UNKNOWN with what is missing.
    ProofResult& proved(std::string summary) {
        res.summary = std::move(summary);
        if (lemma_ok) {
            res.verdict = Verdict::Proved;
        } else {
            res.verdict = Verdict::Unknown;
            res.missing = "a proof that the generator's order is a periodic word beyond M = " +
                          std::to_string(M(T_check)) +
                          " (no structure lemma is recorded for this family); everything else is proved for the "
                          "periodic word";
        }
        return res;
    }

    // ----- concrete refutation on single instances
    std::optional<Counterexample> check_instance(int t, Property property) {
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

    // ----- 1. the periodic word and its tie to the generator
    bool establish_word() {
        const auto t0 = std::chrono::steady_clock::now();
        std::string failure;
        for (int origin = 0; origin <= 2 && !word; ++origin) {
            try {
                WordFit fit = fit_word(inst(origin), inst(origin + 1), &inst(origin + 2));
                if (fit.word) {
                    if (origin > 0) {
                        failure = "the order becomes periodic only from M = " + std::to_string(M(origin));
                        later_origin = origin;
                        break;
                    }
                    word = std::move(fit.word);
                } else {
                    failure = fit.failure;
                }
            } catch (const std::exception& e) {
                failure = e.what();
                break;
            }
        }
        if (!word) {
            res.missing = "the family's order is not a periodic word in M: " + failure;
            return false;
        }
        T_check = 3;
        for (int r = 0; r < word->ranks(); ++r) {
            const int n = static_cast<int>(word->prefix[r].size() + word->suffix[r].size());
            const int L = static_cast<int>(word->block[r].size());
            if (L > 0) T_check = std::max(T_check, (n + L + L - 1) / L);
        }
        for (int t = 0; t <= T_check; ++t) {
            const std::string mismatch = word_mismatch(*word, t, inst(t));
            if (!mismatch.empty()) {
                res.missing = "the generator leaves its periodic word at M = " + std::to_string(M(t)) + ": " + mismatch;
                later_origin = t;
                word.reset();
                return false;
            }
            if (t > 4) cache.erase(t);  // keep memory flat for large P
        }
        lemma_ok = !family.structure_lemma.empty();
        std::vector<int> lu, lv, lw;
        for (int r = 0; r < word->ranks(); ++r) {
            lu.push_back(static_cast<int>(word->prefix[r].size()));
            lv.push_back(static_cast<int>(word->block[r].size()));
            lw.push_back(static_cast<int>(word->suffix[r].size()));
        }
        std::string method = fmt::format(
            "fitted from M = {}, {}, {}; equal op for op to the generator for t = 0..{} (M <= {}), which fixes it for "
            "every t among periodic words with these block lengths (proofs/method.md, lemma 1). ",
            M(0), M(1), M(2), T_check, M(T_check));
        method += lemma_ok ? "The generator is a periodic word for every M: " + family.structure_lemma
                           : "NOT established beyond M = " + std::to_string(M(T_check)) +
                                 ": no structure lemma for this family.";
        std::string deltas;
        for (int d : word->delta) deltas += (deltas.empty() ? "" : ",") + std::to_string(d);
        add("order-structure",
            fmt::format("for every t >= 0, rank r runs prefix_r . block_r(0..t-1) . suffix_r(t) at M = {} + {}t; "
                        "|prefix| = {}, |block| = {}, |suffix| = {}; a block adds ({}) micro-batches per pipeline",
                        family.m0, family.step, join_ints(lu), join_ints(lv), join_ints(lw), deltas),
            method, true, seconds_since(t0));
        return true;
    }

    // ----- 1b. batched timing: the communication program as a periodic word, and its timing graph
    bool batched_comm_may_be_positive() const {
        return options.costs ? options.costs->comm != Rational(0) : finished_region().may_be_positive(CostVar::comm);
    }

    bool establish_batched() {
        const auto t0 = std::chrono::steady_clock::now();
        const bool attached = uses_attached_program(inst(0));
        const ProgramFit fit =
            fit_program_word(*word, batched_program(inst(0)), batched_program(inst(1)), batched_program(inst(2)));
        if (!fit.word) {
            res.missing = "batched timing: the communication program is not a periodic word in M: " + fit.failure;
            return false;
        }
        program_word = fit.word;
        const int horizon = std::max(T_check, program_check_horizon(*program_word));
        for (int t = 0; t <= horizon; ++t) {
            const std::string bad = program_mismatch(*program_word, *word, t, batched_program(inst(t)));
            if (!bad.empty()) {
                res.missing = "batched timing: the communication program leaves its periodic word at M = " +
                              std::to_string(M(t)) + ": " + bad;
                return false;
            }
            if (t > 4) cache.erase(t);
        }
        const BatchedStability st = batched_stable_from(*word, *program_word);
        if (!st.failure.empty()) {
            res.missing = "batched timing: " + st.failure;
            return false;
        }
        batched_T0 = st.T0;
        graph_of = [this](const Schedule& s, int t) {
            return batched_timing_graph(s, program_word->instantiate(*word, t), comm_may_be_positive);
        };
        // Why the program, not only the order, is periodic for every M.
        std::string lemma;
        if (!attached)
            lemma = "the generic rule (verifier/batched.hpp) builds batch k from slot k's inputs and slot k-1's outputs "
                    "only, so the program of a periodic word is a periodic word (a sliding window of width 2)";
        else if (family.name == "dualpipe" || family.name == "dualpipev")
            lemma = "schedules/dualpipe_steps.cpp queues the reference's receives and sends inside the same step loops "
                    "as the compute, each naming its tensor by a running counter per (phase, direction), and what is "
                    "still queued across a step-4 round is the same up to that shift (step 4's first round, j = 0, "
                    "differs and is a fixed iteration); lemma 'running-counter step programs' applies to the batches "
                    "too";
        if (lemma.empty()) lemma_ok = false;
        int stages_total = 0;
        for (const auto& b : program_word->block) stages_total += static_cast<int>(b.size());
        add("comm-program-structure",
            fmt::format("for every t >= 0 the {} communication program is prefix . block(0..t-1) . suffix(t) batch "
                        "by batch ({} batches per block over all ranks); in the slot word's block coordinates the "
                        "batched timing graph's edges (rank order paying comm iff the batch is non-empty; counterpart "
                        "post -> batch, paying comm) do not depend on t for t >= {}",
                        attached ? "generator's attached" : "generic", stages_total, batched_T0),
            fmt::format("fitted from M = {}, {}, {} and equal batch for batch to the program for t = 0..{} (lemma 1 "
                        "on batch sequences). Counterparts pair by a running counter per channel whose per-block "
                        "growth is checked equal on both ends, so from T0 on prefix and suffix counters of a channel "
                        "no longer meet and every pairing keeps its block offset; the two words' splits differ by a "
                        "bounded number of steps (index arithmetic, proofs/method.md §2b). {}",
                        M(0), M(1), M(2), horizon, lemma.empty() ? "NOT established for every M: no lemma for this "
                                                                   "family's attached program." : "For every M: " + lemma + "."),
            true, seconds_since(t0));
        return true;
    }

    // The batched graph's edge classes at ps.T .. up_to, compared in block coordinates: a machine check of the
    // argued stability on the instances the potentials were checked on.
    bool check_batched_classes(int up_to) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto first = edge_classes(*word, word_graph(word->instantiate(ps.T), ps.T), ps.T);
        for (int t = ps.T + 1; t <= up_to; ++t)
            if (edge_classes(*word, word_graph(word->instantiate(t), t), t) != first) {
                res.missing = fmt::format("batched timing: the timing graph's edge classes of G_{} and G_{} differ in "
                                          "block coordinates",
                                          ps.T, t);
                add("batched-edge-classes", res.missing, "comparison", false, seconds_since(t0));
                return false;
            }
        add("batched-edge-classes",
            fmt::format("the batched timing graphs of G_{}..G_{} have the same {} edge classes in block coordinates",
                        ps.T, up_to, first.size()),
            "exact comparison (a machine check of the comm-program-structure argument on these instances)", true,
            seconds_since(t0));
        return true;
    }

    // ----- 2. super-steps
    bool establish_structure() {
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

    // A deadlock that the infeasible potentials predict, found on a concrete instance.
    std::optional<Counterexample> find_deadlock(int up_to) {
        for (int t = 0; t <= up_to; ++t) {
            auto cx = check_instance(t, Property::DeadlockFree);
            if (cx) return cx;
            cache.erase(t);
        }
        return std::nullopt;
    }

    ProofResult run_guarded() {
        try {
            return run();
        } catch (const SimulationError& e) {
            res.verdict = Verdict::Unknown;
            res.missing = std::string("simulation failed: ") + e.what();
            return res;
        }
    }

    // ----- properties
    ProofResult& run() {
        res.family = family.name;
        res.ranks = family.ranks;
        res.m_origin = family.m0;
        res.step = family.step;
        res.assumptions.push_back(fmt::format("M ranges over {} + {}t, t >= 0 ({})", family.m0, family.step,
                                              family.precondition));
        switch (options.property) {
            case Property::BubbleConstant:
                res.statement = fmt::format("for every admissible M, bubble(M) = bubble({}) (bubble = the largest "
                                            "idle time of a rank, idle = makespan - busy)",
                                            family.m0);
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
        if (!establish_word()) {
            if (later_origin > 0 && shifted + later_origin <= kMaxOriginShift)
                return prove_from_later_origin(later_origin);
            return refute_on_instances_or_unknown();
        }
        res.word = word;
        if (batched() && !establish_batched()) return refute_on_instances_or_unknown();
        if (!establish_structure()) {
            if (!ps.failure.empty() && ps.failure.find("no super-step") != std::string::npos) {
                if (auto cx = find_deadlock(ps.T0 + 64)) {
                    cx->what += "\n  (predicted by the periodic graph: " + ps.failure + ")";
                    return refuted(*cx);
                }
            }
            return refute_on_instances_or_unknown();
        }
        res.structure = ps;
        switch (options.property) {
            case Property::DeadlockFree:
            case Property::Dependencies: return prove_graph_property();
            case Property::MemoryBound: return prove_memory();
            case Property::BubbleConstant:
                return options.costs ? prove_bubble_exact(*options.costs) : prove_bubble_symbolic();
        }
        return res;
    }

    ProofResult& refute_on_instances_or_unknown() {
        if (options.property != Property::BubbleConstant)
            for (int t = 0; t <= 4; ++t)
                if (auto cx = check_instance(t, options.property)) return refuted(*cx);
        if (options.property == Property::BubbleConstant) {
            for (int t = 0; t <= 4; ++t)
                if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
            // Differences between the first instances still refute: at the given costs, or at a few interior
            // points of the region (a concrete point suffices to refute the symbolic statement).
            std::vector<Costs> points;
            if (options.costs) {
                points.push_back(*options.costs);
            } else {
                const CostRegion region = finished_region();
                for (std::int64_t w : {1, 3}) {
                    std::vector<std::int64_t> weights(region.rays.size(), 1);
                    if (!weights.empty()) weights[0] = w;
                    if (auto point = region_point(region, weights)) points.push_back(costs_at(*point));
                }
            }
            for (const Costs& costs : points) {
                try {
                    const ExactTiming b0 = timing(inst(0), costs);
                    for (int t = 1; t <= 4; ++t) {
                        const ExactTiming bt = timing(inst(t), costs);
                        if (!(bt.bubble == b0.bubble))
                            return refuted(bubble_counterexample(0, b0.bubble, t, bt.bubble, point_of(costs), inst(t)));
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

    // The order is a periodic word only from block count k on: prove the statement for the family restricted to
    // M >= M(k) (a family of its own) and settle M(0)..M(k-1) instance by instance.
    ProofResult& prove_from_later_origin(int k) {
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
    bool settle_early_bubbles(const ProofResult& sub, int k, std::string& method) {
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

    // Coverage of every (pipeline, stage, micro-batch) for all t, in linear integer arithmetic.
    bool prove_coverage() {
        const auto t0 = std::chrono::steady_clock::now();
        z3::context ctx;
        z3::solver solver(ctx);
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

    ProofResult& prove_graph_property() {
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

    // ----- memory
    ProofResult& prove_memory() {
        const auto t0 = std::chrono::steady_clock::now();
        TimeScale scale;
        scale.include(options.activations.forward_alloc);
        scale.include(options.activations.input_grad_free);
        const Ticks alloc = scale.to_ticks(options.activations.forward_alloc);
        const Ticks free_i = scale.to_ticks(options.activations.input_grad_free);
        auto allocated = [&](const Slot& s) {
            Ticks a = 0;
            for (const Op& op : s) if (op.kind == OpKind::F) a += alloc;
            return a;
        };
        auto released = [&](const Slot& s) {
            Ticks a = 0;
            for (const Op& op : s) {
                if (op.kind == OpKind::I) a += free_i;
                if (op.kind == OpKind::W) a += alloc - free_i;
                if (op.kind == OpKind::B) a += alloc;
            }
            return a;
        };
        // (peak reached inside the part starting from live = 0, net change)
        auto profile = [&](const std::vector<Slot>& part) {
            Ticks live = 0, peak = 0;
            bool any = false;
            for (const Slot& s : part) {
                live += allocated(s);
                peak = any ? std::max(peak, live) : live;
                any = true;
                live -= released(s);
            }
            return std::tuple<Ticks, Ticks, bool>(peak, live, any);
        };
        std::vector<Rational> peak_t0, peak_t;
        bool bounded = true;
        int growing_rank = -1;
        Ticks growth = 0;
        for (int r = 0; r < word->ranks(); ++r) {
            auto [pu, nu, au] = profile(word->prefix[r]);
            auto [pv, nv, av] = profile(word->block[r]);
            auto [pw, nw, aw] = profile(word->suffix[r]);
            (void)nw;
            Ticks p0 = au ? pu : 0;
            if (aw) p0 = std::max(p0, nu + pw);
            Ticks p1 = p0;
            if (av) p1 = std::max(p1, nu + pv);
            if (nv != 0) {
                bounded = false;
                if (growing_rank < 0 || nv > growth) growing_rank = r, growth = nv;
            }
            peak_t0.push_back(scale.to_units(p0));
            peak_t.push_back(scale.to_units(p1));
        }
        if (!bounded) {
            // Concrete instances show the growth.
            Counterexample cx;
            cx.ranks = family.ranks;
            cx.microbatches = M(0);
            cx.other_microbatches = M(4);
            const auto a = peak_activations(inst(0), options.activations);
            const auto b = peak_activations(inst(4), options.activations);
            cx.what = fmt::format("rank {}'s live activations grow by {} per block: peak {} at M={} but {} at M={}",
                                  growing_rank, format_rational(scale.to_units(growth)), format_rational(a[growing_rank]),
                                  M(0), format_rational(b[growing_rank]), M(4));
            cx.schedule = inst(4);
            add("block-net", "a block allocates as much as it releases on every rank", "exact count: fails", false);
            return refuted(cx);
        }
        // Cross-check the closed form on the instances.
        for (int t = 0; t <= std::min(T_check, 6); ++t) {
            const auto peaks = peak_activations(inst(t), options.activations);
            for (int r = 0; r < word->ranks(); ++r)
                if (!(peaks[r] == (t == 0 ? peak_t0[r] : peak_t[r])))
                    return unknown("internal: the closed-form peak disagrees with the instance at M = " + std::to_string(M(t)));
        }
        add("block-net", "on every rank a block releases exactly what it allocates, so the live count after the "
                         "prefix, at each block position and in the suffix is the same for every t",
            "exact count over the periodic word", true, seconds_since(t0));
        res.peaks = peak_t;
        res.peaks_at_origin = peak_t0;
        std::string values;
        for (size_t r = 0; r < peak_t.size(); ++r) values += (r ? " " : "") + format_rational(peak_t[r]);
        std::string values0;
        for (size_t r = 0; r < peak_t0.size(); ++r) values0 += (r ? " " : "") + format_rational(peak_t0[r]);
        add("peaks", fmt::format("peak per rank for every M > {}: [{}]; at M = {}: [{}]", M(0), values, M(0), values0),
            "maximum over prefix, one block and suffix (checked against the instances for t <= 6)");
        Rational worst{0};
        for (const auto& v : peak_t) worst = std::max(worst, v);
        for (const auto& v : peak_t0) worst = std::max(worst, v);
        if (options.memory_bound && worst > *options.memory_bound) {
            Counterexample cx;
            cx.ranks = family.ranks;
            int t = 1, rank = 0;
            for (size_t r = 0; r < peak_t.size(); ++r)
                if (peak_t[r] > *options.memory_bound) rank = static_cast<int>(r);
            for (size_t r = 0; r < peak_t0.size(); ++r)
                if (peak_t0[r] > *options.memory_bound) t = 0, rank = static_cast<int>(r);
            cx.microbatches = M(t);
            cx.what = fmt::format("rank {} holds {} activations at P={}, M={} (bound {})", rank,
                                  format_rational(t == 0 ? peak_t0[rank] : peak_t[rank]), family.ranks, M(t),
                                  format_rational(*options.memory_bound));
            cx.schedule = inst(t);
            return refuted(cx);
        }
        return proved(fmt::format("activation peak per rank = [{}] for every M > {} ([{}] at M = {})", values, M(0),
                                  values0, M(0)));
    }

    // ----- bubble, exact costs
    ProofResult& prove_bubble_exact(const Costs& costs) {
        res.assumptions.push_back("costs (exact): " + format_costs(costs) +
                                  (costs.per_block.empty() ? "" : " with per-block overrides"));
        if (res.statement.find("bubble(M) =") != std::string::npos) {
        }
        // Every instance we time must be valid.
        for (int t = 0; t <= std::min(ps.T_struct, 3); ++t)
            if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
        const auto t0 = std::chrono::steady_clock::now();
        const PeriodicTiming pt = find_periodic_window(*word, ps, costs, 4, graph_of);
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
        if (worst >= 0) {
            Counterexample cx;
            cx.ranks = family.ranks;
            cx.microbatches = M(0);
            cx.costs = point_of(costs);
            int found = -1;
            Rational value{0};
            for (int t = 1; t < t_end + 400 && found < 0; ++t) {
                const Rational b = t < t_end ? bubbles[t] : timing(inst(t), costs).bubble;
                cache.erase(t);
                if (!(b == bubbles[0])) found = t, value = b;
            }
            cx.what = fmt::format(
                "rank {} idles {} longer per block: a block takes lambda = {} but gives rank {} only {} of work, so "
                "the bubble grows linearly in M (slope {} per {} micro-batches)",
                worst, format_rational(slope[worst]), format_rational(pt.lambda), worst, format_rational(pt.block_busy[worst]),
                format_rational(slope[worst]), family.step);
            if (found >= 0) {
                cx.other_microbatches = M(found);
                cx.what += fmt::format("; bubble({}) = {} but bubble({}) = {}", M(0), format_rational(bubbles[0]),
                                       M(found), format_rational(value));
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
        for (size_t t = 1; t < bubbles.size(); ++t)
            if (!(bubbles[t] == bubbles[0])) {
                Counterexample cx;
                cx.ranks = family.ranks;
                cx.microbatches = M(0);
                cx.other_microbatches = M(static_cast<int>(t));
                cx.costs = point_of(costs);
                cx.what = fmt::format("bubble({}) = {} but bubble({}) = {} (the bubble is periodic from M = {} on)", M(0),
                                      format_rational(bubbles[0]), M(static_cast<int>(t)), format_rational(bubbles[t]),
                                      M(pt.t_periodic));
                cx.schedule = inst(static_cast<int>(t));
                return refuted(cx);
            }
        res.bubble_exact = bubbles[0];
        return proved(fmt::format("bubble = {} for every M >= {} (every rank's idle time is constant in M)",
                                  format_rational(bubbles[0]), M(0)));
    }

    // The window obligation with the longest-path equations of every slot up to the window's end, for z3.
    std::string window_smt_exact(const Costs& costs, const PeriodicTiming& pt) {
        const int T = pt.T;
        const Schedule s = word->instantiate(T);
        const ScheduleGraph g = word_graph(s, T);
        const TimedDag dag = timed_dag(g);
        const auto places = slot_places(*word, T);
        const int k_max = pt.k0 + pt.cycle;
        auto ss = [&](std::uint32_t slot) { return super_step(ps, places[slot], static_cast<int>(g.slot_rank[slot]), T); };
        z3::context ctx;
        z3::solver solver(ctx);
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

    // ----- bubble, symbolic costs
    ProofResult& prove_bubble_symbolic() {
        const CostRegion region = finished_region();
        for (const auto& text : region.describe()) res.assumptions.push_back("cost assumption: " + text);
        for (int t = 0; t <= std::min(ps.T_struct, 3); ++t)
            if (auto cx = check_instance(t, Property::Dependencies)) return refuted(*cx);
        // Block work per rank, and lambda = the common one.
        std::vector<LinForm> busy(word->ranks());
        for (int r = 0; r < word->ranks(); ++r)
            for (const Slot& s : word->block[r]) busy[r] += slot_form(s);
        const auto t0 = std::chrono::steady_clock::now();
        // Sample points: find the window, and refute on the spot if the rate exceeds a rank's work there.
        int k0 = 0, cycle = 1, T = ps.T;
        std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
        for (int sample = 0; sample < std::max(1, options.samples); ++sample) {
            std::vector<std::int64_t> weights(region.rays.size(), 1);
            if (sample > 0)
                for (auto& w : weights) {
                    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                    w = 1 + static_cast<std::int64_t>((seed >> 33) % 5);
                }
            const auto inside = region_point(region, weights);
            if (!inside) return unknown("no sample point satisfies the cost assumptions (Z3)");
            const CostPoint point = *inside;
            const Costs costs = costs_at(point);
            const PeriodicTiming pt = find_periodic_window(*word, ps, costs, 4, graph_of);
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
        const LinForm lambda = busy[0];
        const LinForm shift = static_cast<std::int64_t>(cycle) * lambda;
        // Symbolic simulation of G_T with room for a few more windows.
        T += cycle + 8;
        const Schedule s = word->instantiate(T);
        const ScheduleGraph g = word_graph(s, T);
        // Block slots that are provably the previous block's plus lambda are shifted, not recomputed (identical
        // polynomials; symbolic.hpp, SymbolicOptions).
        SymbolicOptions sim_options;
        sim_options.keep_start = false;
        for (int r = 0; r < word->ranks(); ++r) sim_options.period.push_back(static_cast<std::uint32_t>(word->block[r].size()));
        sim_options.step = lambda;
        const SymbolicTiming st = symbolic_simulate(s, g, region, sim_options);
        std::optional<CostPoint> witness;
        int found_k = -1;
        std::string method;
        std::string window_smt;
        for (int k = k0; k <= k0 + 8 && k + cycle <= T + ps.tau - 1 && found_k < 0; ++k) {
            const auto window = window_slots(*word, ps, k);
            std::vector<std::pair<std::uint32_t, std::uint32_t>> pending;
            for (const auto& w : window) {
                const auto a = block_slot_id(*word, T, w.rank, w.index, w.j);
                const auto b = block_slot_id(*word, T, w.rank, w.index, w.j + cycle);
                MaxPoly shifted = st.end[a];
                shifted.shift(shift, region);
                if (!shifted.same_forms(st.end[b])) pending.emplace_back(a, b);
            }
            bool ok = true;
            for (auto [a, b] : pending) {
                auto out = smt::equal_on_region(st.end[b], st.end[a], shift, region, "window slot");
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
                if (!options.emit_dir.empty()) window_smt = window_smt_symbolic(st, T, k, cycle, shift, region);
            }
        }
        if (found_k < 0) {
            if (witness) return refute_at(*witness, "a point where the window is not (yet) periodic", true);
            return unknown("no periodic window found symbolically near super-step " + std::to_string(k0));
        }
        const int t_periodic = std::max(ps.T0, found_k + 1 - ps.tau);
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
        const SymbolicReference reference{&s, &g, &st, timed_dag(g)};
        SymbolicPrevious previous = symbolic_previous(reference);
        std::vector<SymbolicTiming> timings(t_end);
        for (int t = t_end - 1; t >= 0; --t) {
            const Schedule& inst_t = inst(t);
            const ScheduleGraph gt = instance_graph(inst_t);
            const LinForm step = static_cast<std::int64_t>(t == t_end - 1 ? T - t : 1) * (LinForm{} - lambda);
            timings[t] = symbolic_simulate_reusing(inst_t, gt, region, reference, &previous, &step);
            cache.erase(t);
        }
        for (int t = 0; t < t_end; ++t) bubbles.push_back(symbolic_bubble(timings[t], region, res.idle));
        z3::context ctx;
        z3::solver base_solver(ctx);
        smt::assert_region(base_solver, region);
        z3::expr_vector differ(ctx);
        int z3_needed = 0;
        for (int t = 1; t < t_end; ++t) {
            if (!options.emit_dir.empty()) differ.push_back(smt::max_of(ctx, bubbles[t]) != smt::max_of(ctx, bubbles[0]));
            if (bubbles[t].same_forms(bubbles[0])) continue;
            ++z3_needed;
            auto out = smt::equal_on_region(bubbles[t], bubbles[0], LinForm{}, region, "base case");
            if (out.result == z3::sat && out.witness) return refute_at(*out.witness, "a point where the base cases differ");
            if (out.result != z3::unsat) return unknown("Z3 could not compare the base cases");
        }
        std::string base_file;
        if (!options.emit_dir.empty() && t_end > 1) {
            base_solver.add(z3::mk_or(differ));
            base_file = emit("base.smt2", smt::check(ctx, base_solver, "base cases: bubble(t) = bubble(0)", "unsat", 1).smt2);
        }
        // For reading, only the forms that are the strict maximum somewhere on the region: the same function there.
        const MaxPoly bubble = needed_forms(bubbles[0], region);
        add("base-cases",
            fmt::format("bubble(M) for M = {}..{} is one piecewise-linear function of the costs: {}", M(0), M(t_end - 1),
                        bubble.str(region)),
            (z3_needed == 0 ? std::string("symbolic simulation; identical max-plus polynomials")
                            : fmt::format("symbolic simulation; {} case(s) proved equal by Z3", z3_needed)) +
                fmt::format("; printed with the {} of its {} linear forms that are the largest somewhere on the region "
                            "(the others never exceed them: Z3, linear real arithmetic)",
                            bubble.forms.size(), bubbles[0].forms.size()),
            true, seconds_since(t1), base_file);
        for (auto& ri : res.idle) ri.slope_form = LinForm{};
        res.bubble_symbolic = bubble;
        return proved(fmt::format("bubble = {} for every M >= {} and every cost point of the region", bubble.str(region),
                                  M(0)));
    }

    std::string window_smt_symbolic(const SymbolicTiming& st, int T, int k, int cycle, const LinForm& shift,
                                    const CostRegion& region) {
        z3::context ctx;
        z3::solver solver(ctx);
        smt::assert_region(solver, region);
        z3::expr_vector bad(ctx);
        for (const auto& w : window_slots(*word, ps, k)) {
            const auto a = block_slot_id(*word, T, w.rank, w.index, w.j);
            const auto b = block_slot_id(*word, T, w.rank, w.index, w.j + cycle);
            bad.push_back(smt::max_of(ctx, st.end[b]) != smt::max_of(ctx, st.end[a]) + smt::form(ctx, shift));
        }
        solver.add(z3::mk_or(bad));
        return smt::check(ctx, solver, "periodic window (symbolic costs, max-plus polynomials)", "unsat", 1).smt2;
    }

    // Re-runs the exact proof at a concrete cost point; a refutation there refutes the symbolic statement.
    ProofResult& refute_at(const CostPoint& point, const std::string& where, bool unknown_if_holds = true) {
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
};

}  // namespace

ProofResult prove(const FamilySpec& family, const ProveOptions& options) {
    Prover prover(family, options);
    return prover.run_guarded();
}

std::string format_proof(const ProofResult& r, bool deepseek_basis) {
    (void)deepseek_basis;
    std::string out;
    out += fmt::format("family: {}  P={}  M = {} + {}t\n", r.family, r.ranks, r.m_origin, r.step);
    out += "statement: " + r.statement + "\n";
    out += fmt::format("verdict: {}\n", verdict_name(r.verdict));
    if (!r.summary.empty()) out += "result: " + r.summary + "\n";
    if (r.verdict == Verdict::Unknown && !r.missing.empty()) out += "missing: " + r.missing + "\n";
    if (r.counterexample) {
        const auto& cx = *r.counterexample;
        out += fmt::format("counterexample: P={} M={}", cx.ranks, cx.microbatches);
        if (cx.other_microbatches) out += fmt::format(" (vs M={})", *cx.other_microbatches);
        if (cx.costs) out += " costs " + costs_text(*cx.costs);
        out += "\n  " + cx.what + "\n";
    }
    out += "assumptions:\n";
    for (const auto& a : r.assumptions) out += "  - " + a + "\n";
    out += "obligations:\n";
    int k = 1;
    for (const auto& o : r.obligations) {
        out += fmt::format("  [{}] {} ({}){}\n", k++, o.name, o.holds ? "holds" : "FAILS",
                           o.seconds > 0 ? fmt::format(", {:.3f} s", o.seconds) : "");
        out += "      statement: " + o.statement + "\n";
        out += "      discharged: " + o.method + "\n";
        if (!o.file.empty()) out += "      smt-lib2: " + o.file + "\n";
    }
    return out;
}

}  // namespace pp
