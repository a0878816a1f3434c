// Batched timing of a family whose blocking P2P program cannot run: a rendezvous deadlock or a mismatched channel
// that lies in the part of the program every larger instance repeats, hence recurs at every M >= M_d; the bubble
// is then undefined from M_d on and the statement is REFUTED for every M0 (proofs/method.md §2c).
#include "proofs/prover.hpp"

#include "proofs/batched_failure.hpp"
#include "verifier/batched.hpp"

#include <fmt/format.h>

namespace pp {

// The first problem verify's program check finds (kind and message), or "" when the program runs.
std::string program_problem(const Schedule& s) {
    const auto problems = check_comm_program(s, batched_program(s));
    if (problems.empty()) return "";
    std::string text = std::string(violation_name(problems.front().kind)) + ": " + problems.front().message;
    for (const auto& w : problems.front().witness) text += "\n    " + w;
    return text;
}

std::string comm_failure_summary(int m_d, int m_w, RecurringCommFailure::Kind kind) {
    const char* what = kind == RecurringCommFailure::Kind::Deadlock ? "deadlocks" : "pairs a send with the wrong receive";
    if (m_d == m_w)
        return fmt::format("no batched timing for any M >= {}: the blocking P2P program {} there (the bubble is undefined)",
                           m_d, what);
    return fmt::format("no batched timing for any M >= {}: the blocking P2P program cannot run there (the bubble is "
                       "undefined): from M = {} on it {} in the part every larger M repeats, M = {}..{} fail one by one",
                       m_d, m_w, what, m_d, m_w - 1);
}

std::optional<std::reference_wrapper<ProofResult>> Prover::settle_comm_failure() {
    const auto t0 = std::chrono::steady_clock::now();
    // Without a program word (its fit failed) only the generic program is handled: its batch k reads slots k-1 and
    // k only, so the slot word's heads are heads of the program too.
    const bool generic = !uses_attached_program(inst(0));
    if (!program_word && !generic) return std::nullopt;
    const int horizon =
        program_word ? std::max({T_check, program_check_horizon(*program_word), batched_T0}) + 2 : T_check + 4;
    int first_bad = -1;
    for (int t = 0; t <= horizon && first_bad < 0; ++t) {
        if (!program_problem(inst(t)).empty()) first_bad = t;
        if (t > 4) cache.erase(t);
    }
    if (first_bad < 0) return std::nullopt;  // the program runs on every instance the proof looks at
    // A failure in the stable head (or tail) of some instance t_w: it recurs for every t >= t_w.
    std::optional<RecurringCommFailure> found;
    int t_w = first_bad;
    for (; t_w <= horizon + 8; ++t_w) {
        const Schedule s = word->instantiate(t_w);
        if (program_word) {
            found = recurring_comm_failure(s, program_word->instantiate(*word, t_w), *program_word, t_w);
        } else {
            std::vector<int> heads;
            for (int r = 0; r < word->ranks(); ++r)
                heads.push_back(static_cast<int>(word->prefix[r].size() + word->block[r].size() * static_cast<size_t>(t_w)));
            found = recurring_comm_failure_in_heads(s, generic_comm_program(s), heads);
        }
        if (found) break;
    }
    if (!found) {
        unknown(fmt::format("batched timing: the blocking P2P program cannot run at M = {} ({}), but no failure "
                            "inside the part of the program that larger M repeat was found up to M = {}; the "
                            "prover cannot say whether it fails for every larger M",
                            M(first_bad), program_problem(inst(first_bad)), M(horizon + 8)));
        return std::ref(res);
    }
    const std::string method =
        program_word
            ? fmt::format("found in the program word's instance at t = {} inside each rank's {}, which every larger "
                          "instance repeats verbatim (same ops, same posting counts, so the same pairings and waits; "
                          "proofs/method.md §2c); the program word is the generator's program for every M by the "
                          "comm-program-structure obligation",
                          t_w,
                          found->from_end ? "last |suffix| + t|block| batches (the tail, raised by t*delta)"
                                          : "first |prefix| + t|block| batches")
            : fmt::format("found in the generic program of the slot word's instance at t = {} inside each rank's first "
                          "|prefix| + t|block| batches: the generic rule's batch k reads slots k-1 and k only, and "
                          "those slots are the same in every larger instance, so the batches, pairings and waits are "
                          "too (proofs/method.md §2c); the slot word is the generator's order for every M by the "
                          "order-structure obligation",
                          t_w);
    return std::ref(refute_recurring_failure(*found, t_w, method, t0));
}

ProofResult& Prover::refute_recurring_failure(const RecurringCommFailure& failure, int t_w, const std::string& method,
                                              std::chrono::steady_clock::time_point t0) {
    const RecurringCommFailure* found = &failure;
    res.missing.clear();  // an earlier phase may have said what it could not fit; the refutation does not need it
    const std::string kind = recurring_failure_name(found->kind);
    std::string witness;
    for (const auto& line : found->witness) witness += "\n    " + line;
    add("comm-failure-recurs",
        fmt::format("for every t >= {} (M >= {}) the blocking P2P program has a rendezvous {}: {}", t_w, M(t_w),
                    found->kind == RecurringCommFailure::Kind::Deadlock ? "deadlock (a cycle of batches each waiting "
                                                                          "for the next)"
                                                                        : "mismatch (a channel's n-th send is not its "
                                                                          "n-th receive)",
                    witness),
        method, true, seconds_since(t0));
    // The least M_d: walk down while the generator's own program still fails; spot-check larger M directly.
    const auto t1 = std::chrono::steady_clock::now();
    int t_d = t_w;
    while (t_d > 0 && !program_problem(inst(t_d - 1)).empty()) --t_d;
    std::vector<int> spot{t_w, t_w + 1, t_w + 3, t_w + 10};
    std::string spot_text;
    for (int t : spot) {
        const std::string bad = program_problem(inst(t));
        if (bad.empty()) {
            // The argument says this cannot happen; a disagreement is a bug somewhere, never a verdict.
            add("comm-failure-instances", fmt::format("the generator's program fails at M = {}", M(t)),
                "check_comm_program (verifier/batched.cpp) found no failure", false, seconds_since(t1));
            return unknown(fmt::format("batched timing: the recurring-failure argument and the program check disagree "
                                       "at M = {}",
                                       M(t)));
        }
        spot_text += (spot_text.empty() ? "" : ", ") + std::to_string(M(t));
        cache.erase(t);
    }
    add("comm-failure-instances",
        fmt::format("the generator's blocking program fails at every M = {}..{} (each checked) and at M = {}; {}",
                    M(t_d), M(t_w), spot_text,
                    t_d > 0 ? fmt::format("it runs at M = {}", M(t_d - 1)) : std::string("M = ") + std::to_string(M(0)) +
                                                                                 " is the first admissible M"),
        "check_comm_program on the generator's own program (the rendezvous run of verifier/batched.cpp, independent "
        "of the witness search)",
        true, seconds_since(t1));
    // The counterexample: the first failing instance at or after --from-M.
    const int at = std::max(t_d, t_from());
    Counterexample cx;
    cx.ranks = family.ranks;
    cx.microbatches = M(at);
    cx.kind = "comm-" + kind;
    cx.for_every_m_from = M(t_d);
    cx.witness = found->witness;
    cx.what = fmt::format("the blocking P2P batches (verifier/batched.hpp) cannot run at any M >= {}: the bubble is "
                          "undefined there, so no M0 exists. At M = {}: {}\n  recurring witness (stable part of the "
                          "program at M = {}):{}",
                          M(t_d), M(at), program_problem(inst(at)), M(t_w), witness);
    cx.schedule = inst(at);
    res.summary = comm_failure_summary(M(t_d), M(t_w), found->kind);
    if (!lemma_ok) {
        // Only a single instance is certain without the structure lemma; it still refutes the statement at M >= X.
        cx.what += "\n  (for every M only as far as the generator is its periodic word: no structure lemma)";
    }
    return refuted(std::move(cx));
}

}  // namespace pp
