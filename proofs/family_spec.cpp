// The families the prover knows at a fixed P: the admissible micro-batch counts M = m0 + step * t and the
// structure lemma that ties each generator's order to a periodic word for every M.
#include "proofs/prove.hpp"

#include "schedules/registry.hpp"
#include "schedules/v1f1b.hpp"
#include "schedules/v_zb.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace pp {

namespace {


// The greedy families (issue 33). Their generators are passes over integer slots; the argument is that every
// decision is the same up to a shift once the warm-up is past, which the long op-for-op check below backs.
const char* kVGreedyLemma =
    "schedules/v_greedy.cpp (zbv_greedy.py, shared by v-min and v-half) starts from the slots pattern + 6*mb: the "
    "input for M+1 is the input for M with one 6-slot period (one micro-batch) inserted before the cool-down. "
    "Every later pass runs left to right (WFILL, IMPROVE with W's, IMPROVE without them, WFILL, SQUEEZE), and each "
    "decision reads the op's dependencies (a fixed distance back), the free slots and the peaks of running memory "
    "totals against a limit (the largest peak of any rank, taken in the warm-up or the periodic middle from the "
    "checked range on). Both IMPROVE passes leave the steady phase in place (from the first I c0 of rank 0, a slot "
    "fixed by P, to the first F c0 of micro-batch M-1); the pass with W's moves warm-up ops by decisions that do "
    "not depend on M, the pass without leaves them; both move cool-down ops by the decisions for M shifted by 6 "
    "slots and one micro-batch: in the pass without W's the two slots per period the W's left free are the same "
    "in every period, so what a cool-down op can move into repeats with the period. WFILL then refills those "
    "slots, so in SQUEEZE (an as-soon-as-possible list schedule in slot order) every rank is busy in all 6 slots "
    "of a period of the middle (F c0, F c1, I c1, I c0 and two W's) and the middle stays in lock-step. So the order "
    "for M+1 is the order for M with one more period of 6 ops per rank: a periodic word. Argued "
    "(shift-equivariance), not machine-checked";
// How far the greedy families' words are compared with their generators: 4P + 8 micro-batches, far past the
// warm-up and cool-down (at most 2P micro-batches each), so that a decision that changes with M would show.
int greedy_check_until(int P) { return 4 * P + 8; }

// A greedy's structure lemma from its state recurrence (schedules/greedy_recurrence.hpp): the check gives a
// periodic word per residue class of M modulo e from from_m; the fitted word agrees with the generator on every M
// up to the horizon returned, which covers Lemma 1 for each class (n_r + L_r over L_r blocks, with n_r the rank's
// slots at the class's first M and L_r its growth per period), so the two words are one for every M.
// `source` names the check, `repeats` what it found repeating, `alike` why the runs at M and M + e agree up to there.
struct RecurrenceWording {
    std::string method, source, repeats, alike;
};

StructureCheck recurrence_structure_check(const std::string& family_name, const GenerateParams& params,
                                          const GreedyRecurrence& rec, const RecurrenceWording& words) {
    StructureCheck out;
    if (!rec.holds) {
        out.failure = family_name + "'s greedy state does not repeat: " + rec.failure;
        return out;
    }
    const int e = rec.period_m, top = rec.from_m + e - 1;
    auto slots_at = [&](int M) {
        GenerateParams at = params;
        at.microbatches = M;
        std::vector<long long> n;
        for (const auto& rank : find_family(family_name)->generate(at).ranks) n.push_back(static_cast<long long>(rank.size()));
        return n;
    };
    const std::vector<long long> n = slots_at(top), grown = slots_at(top + e);
    long long T = 3;
    for (size_t r = 0; r < n.size(); ++r) {
        const long long L = grown[r] - n[r];
        if (L <= 0) {
            out.failure = fmt::format("rank {} gains no slot per period from M = {}", r, top);
            return out;
        }
        T = std::max(T, (n[r] + L + L - 1) / L);
    }
    out.check_until_m = static_cast<int>(top + e * T);
    out.record = CertificateStructureCheck{words.method, rec.from_m, e};
    out.lemma = fmt::format("machine-checked ({}): at M = {}{} {} repeats shifted by {} micro-batch(es), and {}; by "
                            "induction on M the order at every M >= {} is prefix . block^t . suffix(t), tied to the "
                            "fitted word by Lemma 1 up to M = {}",
                            words.source, rec.from_m, e > 1 ? fmt::format("..{}", top) : std::string(), words.repeats,
                            e, words.alike, rec.from_m, out.check_until_m);
    return out;
}

// v-zb: the rounds of the reference's greedy (schedules/v_zb.hpp), for the parameters it is ordered with.
StructureCheck v_zb_structure_check(const GenerateParams& params) {
    const GreedyRecurrence rec = check_v_zb_recurrence(params, 2 * params.ranks, 16 * params.ranks + 16);
    return recurrence_structure_check(
        "v-zb", params, rec,
        {"greedy-state-recurrence", "schedules/v_zb.hpp, greedy state recurrence",
         fmt::format("in each of the {} runs of the reference's greedy (four variants and their retries) the whole "
                     "state (counts, clocks, memory, bubbles, owed W's, readable end times) after round k + 2e",
                     rec.runs_checked),
         "no comparison with M before it could come out otherwise for a larger M"});
}

// 1F1B-V: the column sweep of its compaction (schedules/v1f1b.hpp).
StructureCheck v1f1b_structure_check(int P) {
    const GreedyRecurrence rec = check_1f1b_v_recurrence(P, 2 * P, 16 * P + 16);
    return recurrence_structure_check(
        "1f1b-v", GenerateParams{P, 1, 2}, rec,
        {"sweep-state-recurrence", "schedules/v1f1b.hpp, sweep state recurrence",
         "the compaction sweep's state at column k + 6e (the cells and running memory within its read window, the "
         "counts, the positions it can still look up)",
         "every read from column k on stays within that window, and the rows for M and M + e agree before column "
         "k + 6e"});
}

// The structure of a family whose generator runs a step program (schedules/step_program.hpp): Lemma 2's side
// conditions checked on the program itself. The generator is that program run at t, so the fitted word, compared
// with it up to Lemma 1's horizon, is the generator's order for every M.
StructureCheck step_program_structure_check(const ScheduleFamily& family, const GenerateParams& params) {
    StructureCheck out;
    FamilyStepProgram program;
    try {
        program = family.step_program(params);
    } catch (const std::exception& e) {
        out.failure = family.name + " has no step program here: " + e.what();
        return out;
    }
    if (std::string why = step_program_lemma2_failure(program, &out.delta); !why.empty()) {
        out.failure = family.name + "'s step program is not a running-counter program: " + why;
        return out;
    }
    // Lemma 1 between the program's word and the fitted one from the program's origin on: compare the generator
    // that far (the fitted word may start earlier; below the program's origin it is compared instance by instance).
    long long horizon = 3;
    for (const RankStepProgram& rank : program.ranks) {
        const auto n = static_cast<long long>(run_step_program(rank, 0).size());
        const auto L = static_cast<long long>(run_step_program(rank, 1).size()) - n;
        if (L > 0) horizon = std::max(horizon, (n + L + L - 1) / L);
    }
    out.check_until_m = static_cast<int>(program.m_origin + program.m_step * horizon);
    out.record = CertificateStructureCheck{"step-program", program.m_origin, program.m_step};
    out.lemma = fmt::format(
        "machine-checked (schedules/step_program.hpp, Lemma 2 on the program): {}'s generator runs a step program "
        "(loops with trip counts base + slope*t, bodies of tokens without micro-batch numbers, M = {} + {}t); on "
        "every rank exactly one loop has slope 1, and one iteration of it raises every counter and every queued W by "
        "the pipeline's delta, so the order is prefix . block^t . suffix(t) for every t (proofs/method.md, Lemma 2)",
        family.name, program.m_origin, program.m_step);
    return out;
}

}  // namespace

void order_family_for_costs(FamilySpec& spec, const Costs& costs, const std::optional<ActivationModel>& sizes) {
    const ScheduleFamily* family = find_family(spec.name);
    if (!family || !family->orders_for_costs) return;
    const int P = spec.ranks;
    const std::optional<int> v = spec.stages_per_rank;
    spec.generate = [family, P, v, costs, sizes](int M) {
        GenerateParams params{P, M, v};
        params.costs = costs;
        params.activation_sizes = sizes;
        return family->generate(params);
    };
    spec.check_structure = nullptr;  // a check speaks about the generator it was set with
    if (spec.name == "v-zb") {
        GenerateParams params{P, 1, v};
        params.costs = costs;
        params.activation_sizes = sizes;
        spec.check_structure = [params] { return v_zb_structure_check(params); };
    }
    spec.order_assumption = "order: " + spec.name + " ordered for the exact costs it is timed at" +
                            (sizes ? std::string(" and the activation sizes given") : std::string()) +
                            " (its order depends on them)";
}

std::optional<FamilySpec> family_spec(const std::string& spelled, int P, std::string* why, std::optional<int> V,
                                      std::optional<int> G, std::optional<int> K, std::optional<int> R) {
    const ScheduleFamily* family = find_family(spelled);
    auto fail = [&](const std::string& reason) -> std::optional<FamilySpec> {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (!family) return fail(unknown_family_message(spelled));
    const std::string& name = family->name;
    if (P < 1) return fail("P must be at least 1");
    // Its ops are segment units at 1/k of the costs and stash: only a caller that scales them (prove) asks for it.
    if (family_takes_segments(name) && !K)
        return fail(name + ": this command does not model sequence segments (prove, refute, verify, simulate, show and compare do)");
    if (K && !family_takes_segments(name)) return fail(name + " has no sequence segments: --segments applies to seq1f1b");
    if (K && *K < 1) return fail("--segments must be at least 1");
    // V as `generate` takes it: the families whose parameters name V (list), and V = 2 where it is fixed.
    const bool takes_v = family->parameters.find('V') != std::string::npos;
    if (V && !takes_v && !(name == "zbv" && *V == 2) && !(name == "chimera" && *V == 2))
        return fail(name + " has no stages-per-rank parameter V (" + family->parameters + ")");
    if (V && *V < 1) return fail("V must be at least 1");
    if (G && !family_takes_group_size(name))
        return fail(name + " has no micro-batch group size: --group-size applies to interleaved-1f1b, combined-1f1b and "
                           "group-interleaved");
    if (G && name == "group-interleaved" && (*G < 1 || *G > P)) return fail("group-interleaved takes 1 <= G <= P");
    if (G && name != "group-interleaved" && (P < 2 || *G < P))
        return fail("Megatron's group size needs P >= 2 and G >= P (P <= G <= M)");
    // group-interleaved's generator defaults G to ceil(P/2): named in the spec (the family line), but M is then not
    // restricted to its multiples, as it is when G is given.
    const bool default_group_size = !G && name == "group-interleaved";
    if (default_group_size) G = (P + 1) / 2;
    FamilySpec spec;
    spec.name = name;
    spec.ranks = P;
    if (takes_v) spec.stages_per_rank = V.value_or(name == "combined-1f1b" && P == 1 ? 1 : 2);
    spec.group_size = G;
    spec.segments = K.value_or(1);
    const std::optional<int> v = spec.stages_per_rank;
    const auto params_at = [P, v, G, K](int M) {
        GenerateParams params{P, M, v};
        params.group_size = G;
        params.segments = K;
        return params;
    };
    // Segment units as the prover's micro-batches (FamilySpec::segments): the caller's costs are per unit already.
    spec.generate = [family, params_at](int M) {
        Schedule s = family->generate(params_at(M));
        s.segments = 1;
        return s;
    };
    // A step program is read at the progression's first M (Megatron's order reads its residue modulo G).
    const auto check_step_program = [&] {
        if (family->step_program)
            spec.check_structure = [family, params_at, m0 = spec.m0] { return step_program_structure_check(*family, params_at(m0)); };
    };
    if (R && (!G || default_group_size || name == "group-interleaved"))
        return fail("--residue takes Megatron's order: interleaved-1f1b or combined-1f1b with --group-size");
    if (G && (!default_group_size || name == "group-interleaved")) {
        // Megatron: P <= G <= M and M mod G == 0 or >= P. Each admissible residue R is one progression, G + R + G t.
        const int rest = R.value_or(0);
        if (rest < 0 || rest >= *G || (rest > 0 && rest < P))
            return fail(fmt::format("--residue {}: Megatron admits M mod G = 0 or P <= M mod G < G (P = {}, G = {})", rest, P, *G));
        spec.m0 = *G + rest, spec.step = *G;
        spec.precondition =
            name == "group-interleaved"
                ? fmt::format("M a multiple of G = {} (the generator admits every M >= 1; the other residues are other "
                              "progressions)", *G)
                : rest == 0 ? fmt::format("M a multiple of G = {} (Megatron admits P <= G <= M with M mod G = 0 or >= P; "
                                          "each residue is its own progression: --residue)", *G)
                            : fmt::format("M = {} mod G = {}, M >= G (Megatron admits M mod G = 0 or >= P = {})", rest, *G, P);
        check_step_program();
        return spec;
    }
    if (name == "dualpipe") {
        if (P % 2 != 0) return fail("dualpipe needs an even P");
        spec.m0 = 2 * P, spec.step = 2, spec.precondition = "P even, M even, M >= 2P";
    } else if (name == "dualpipev") {
        spec.m0 = 2 * P, spec.step = 1, spec.precondition = "M >= 2P";
    } else if (name == "1f1b") {
        spec.m0 = P, spec.step = 1, spec.precondition = "M >= P";
    } else if (name == "zb-h1") {
        spec.m0 = P, spec.step = 1, spec.precondition = "M >= P";
    } else if (name == "seq1f1b") {
        spec.m0 = family->step_program(params_at(1)).m_origin, spec.step = 1;
        spec.precondition = fmt::format("M >= ceil((P - 2 + k)/k) = {} (below it the warm-up is cut at M*k units)", spec.m0);
    } else if (name == "zb-h2") {
        spec.m0 = 2 * P, spec.step = 1, spec.precondition = "M >= 2P";
    } else if (auto zw = family_zone_word(name, P, spec.stages_per_rank)) {
        spec.m0 = zw->m0, spec.step = zw->step, spec.precondition = "M >= 1";
        spec.zones = std::make_shared<const FamilyZoneWord>(std::move(*zw));
    } else if (name == "interleaved-1f1b" || name == "zb1p") {
        // PyTorch runs max(1, M // P) rounds and needs M to be a multiple of them: M = 9 fails at P = 4, so the
        // admissible M are no arithmetic progression; every multiple of P is admissible.
        spec.m0 = P, spec.step = P;
        spec.precondition = "M a multiple of P (PyTorch needs max(1, M // P) to divide M; the other such M are not "
                            "an arithmetic progression)";
    } else if (name == "chimera") {
        if (P % 2 != 0) return fail("chimera needs an even P");
        spec.m0 = P, spec.step = P, spec.precondition = "P even, M a positive multiple of P";
    } else if (name == "v-min" || name == "v-half" || name == "1f1b-v" || name == "v-zb") {
        spec.m0 = 1, spec.step = 1;
        spec.precondition = "M >= 1 (every instance the reference's scheduler accepts)";
        spec.check_until_m = greedy_check_until(P);
        if (name == "v-zb") {
            spec.order_assumption = "order: v-zb ordered for its default costs F=I=W=1, comm=0, sizes F=1, I=1/2, "
                                    "limit 2P (its order depends on them; exact --costs order it for those)";
            spec.check_structure = [P, v] { return v_zb_structure_check(GenerateParams{P, 1, v}); };
        } else if (name == "1f1b-v") {
            spec.check_structure = [P] { return v1f1b_structure_check(P); };
        } else {
            spec.structure_lemma = kVGreedyLemma;
        }
    } else if (name == "zbv") {
        spec.m0 = 1, spec.step = 1, spec.precondition = "M >= 1 (below 2P - 1 PyTorch blanks the padding micro-batches)";
    } else {
        // Probe the generator for the first admissible M and a step that keeps it admissible.
        auto ok = [&](int M) {
            try {
                family->generate(params_at(M));
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
    check_step_program();
    return spec;
}

std::string prove_command(const FamilySpec& spec, const std::string& property, const std::string& flags) {
    std::string out = fmt::format("pipeproof prove {} -P {}", spec.name, spec.ranks);
    if (spec.stages_per_rank) out += fmt::format(" -V {}", *spec.stages_per_rank);
    if (spec.group_size) {
        out += fmt::format(" --group-size {}", *spec.group_size);
        if (spec.m0 % *spec.group_size) out += fmt::format(" --residue {}", spec.m0 % *spec.group_size);
    }
    if (family_takes_segments(spec.name)) out += fmt::format(" --segments {}", spec.segments);
    return out + flags + " --property " + property;
}

}  // namespace pp
