#pragma once
// Refuting claims about exposed EP communication (issue 11), e.g. "DualPipe hides all all-to-all":
//   pipeproof refute --claim 'exposed_comm == 0' dualpipe -P 2..8 --chunk-costs symbolic
// The claim (proofs/chunk_claim.hpp: claim.hpp's grammar of comparisons, + - * /, &&, ||, !, without function calls) may use
//   exposed_comm   all ranks' exposed all-to-all time in the schedule (verifier/chunk_derive.hpp)
//   network_comm   all ranks' all-to-all time;   exposed_comm_max   the worst rank's exposed time
//   pair_exposed, pair_time    the F&B slot's exposed time and duration under the pattern
//   makespan, bubble           of the schedule timed with the derived costs
//   P, M, and the component costs attn_f ... shared_w (one value per component type, every layer)
// Candidate cost points, in this order: every cost 1; the point Z3 finds outside the pattern's hidden
// region for the F&B pair (chunk_formula.hpp); a compute-heavy point (compute 4, network 1) inside it. For
// each P of the range (ascending) and the first admissible M values, the claim is evaluated exactly on the
// generated schedule; the first point where it is false is the counterexample (re-checked by the exact slot
// timer and simulator that computed it). No counterexample among the candidates is UNDECIDED, not a proof.
#include "model/schedule.hpp"
#include "proofs/chunk_formula.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pp {

struct ChunkRefuteOptions {
    int p_lo = 2, p_hi = 2;
    std::optional<std::pair<int, int>> m_range;
    PatternSpec pattern;
    int layers = 1;
    bool shared = false;
    int steps = 2;  // admissible M values per P when no M range is given
};

struct ChunkRefuteResult {
    bool refuted = false;
    std::string claim, family;
    int P = 0, M = 0;
    std::optional<ChunkCosts> costs;
    std::vector<std::pair<std::string, std::string>> values;  // every name the claim uses, at the counterexample
    std::optional<Schedule> schedule;
    std::vector<std::string> notes;
    size_t instances = 0, points = 0;
};

// Throws ClaimError for a claim that does not parse or uses an unknown name, std::invalid_argument for a
// family that generates nothing in the range.
ChunkRefuteResult refute_chunk_claim(const std::string& family, const std::string& claim, const ChunkRefuteOptions& options);

}  // namespace pp
