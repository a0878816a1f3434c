// Phase 1: the generator's order as a periodic word prefix . block^t . suffix, fitted from three instances and
// compared op for op far enough that it is fixed for all t (proofs/method.md lemma 1); under batched timing
// the P2P program as a periodic word too, and the stability of its timing graph.
#include "proofs/prover.hpp"

#include "verifier/batched.hpp"

#include <fmt/format.h>

namespace pp {

bool Prover::establish_word() {
    const auto t0 = std::chrono::steady_clock::now();
    std::string failure;
    const int origins = std::max(2, max_origin_shift(family.ranks) - shifted);
    word = given_word;
    for (int origin = 0; origin <= origins && !word; ++origin) {
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
    int check_until_m = family.check_until_m;
    structure_lemma = family.structure_lemma;
    if (structure_lemma.empty() && family.check_structure) {
        const StructureCheck check = family.check_structure();
        const auto& record = check.record;
        if (check.lemma.empty()) {
            structure_failure = check.failure;
        } else if (!check.delta.empty() && check.delta != word->delta) {
            structure_failure = "the step program's word shifts its pipelines by other amounts than the fitted word";
        } else if (record && ((record->method == "step-program" ? record->period_m != family.step
                                                                  : record->period_m % family.step != 0) ||
                              (record->from_m - M(0)) % family.step != 0)) {
            // A step program is the word itself; a state recurrence may repeat every few steps (one periodic word
            // per residue class, each tied to the fitted word by Lemma 1 up to check_until_m).
            structure_failure = fmt::format("the structure check runs at M = {} + {}t, the word at M = {} + {}t",
                                            record->from_m, record->period_m, M(0), family.step);
        } else {
            structure_lemma = check.lemma;
            check_until_m = std::max(check_until_m, check.check_until_m);
            res.certificate.structure_check = check.record;
        }
    }
    while (M(T_check) < check_until_m) ++T_check;
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
    lemma_ok = !structure_lemma.empty();
    res.certificate.structure_lemma = structure_lemma;
    std::vector<int> lu, lv, lw;
    for (int r = 0; r < word->ranks(); ++r) {
        lu.push_back(static_cast<int>(word->prefix[r].size()));
        lv.push_back(static_cast<int>(word->block[r].size()));
        lw.push_back(static_cast<int>(word->suffix[r].size()));
    }
    std::string method = fmt::format(
        "{} M = {}, {}, {}; equal op for op to the generator for t = 0..{} (M <= {}), which fixes it for "
        "every t among periodic words with these block lengths (proofs/method.md, lemma 1). ",
        given_word ? "re-cut where the super-step potentials need it (proofs/word_rotation.hpp), its instances at"
                   : "fitted from",
        M(0), M(1), M(2), T_check, M(T_check));
    method += lemma_ok ? "The generator is a periodic word for every M: " + structure_lemma
                       : "NOT established beyond M = " + std::to_string(M(T_check)) +
                             (structure_failure.empty() ? ": no structure lemma for this family."
                                                        : ": its structure check failed: " + structure_failure + ".");
    std::string deltas;
    for (int d : word->delta) deltas += (deltas.empty() ? "" : ",") + std::to_string(d);
    add("order-structure",
        fmt::format("for every t >= 0, rank r runs prefix_r . block_r(0..t-1) . suffix_r(t) at M = {} + {}t; "
                    "|prefix| = {}, |block| = {}, |suffix| = {}; a block adds ({}) micro-batches per pipeline",
                    family.m0, family.step, join_ints(lu), join_ints(lv), join_ints(lw), deltas),
        method, true, seconds_since(t0));
    return true;
}

bool Prover::batched_comm_may_be_positive() const {
    return options.costs ? options.costs->comm != Rational(0) : finished_region().may_be_positive(CostVar::comm);
}

bool Prover::establish_batched() {
    const auto t0 = std::chrono::steady_clock::now();
    const bool attached = uses_attached_program(inst(0));
    const ProgramFit fit =
        fit_program_word(*word, batched_program(inst(0)), batched_program(inst(1)), batched_program(inst(2)));
    if (!fit.word) {
        res.missing = "batched timing: the communication program is not a periodic word in M: " + fit.failure;
        return false;
    }
    program_word = fit.word;
    res.certificate.program = CertificateProgram{program_word->delta, program_word->prefix, program_word->block, program_word->suffix};
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
bool Prover::check_batched_classes(int up_to) {
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

}  // namespace pp
