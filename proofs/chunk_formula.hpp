#pragma once
// Symbolic chunk costs (issue 11): a slot's duration and exposed all-to-all time as piecewise-linear functions
// of the per-layer component costs, the exact region where a pattern hides all EP communication, and
// counterexamples to claims such as "DualPipe hides all all-to-all".
//
// Variables: the 13 component costs of model/chunk_costs.hpp, one value per component type shared by every
// layer (per-layer costs are the same functions with more variables; not needed for the claims here),
// every one > 0, no contention (slowdown 0). Under a fixed pattern each component starts at
//   max(end of its stream predecessor, ends of its inputs),
// so the slot's duration is the longest path through data edges, pattern edges and stream-order edges:
//   duration = max over paths of (sum of the path's costs)   -- a max-plus polynomial, kept as its
// non-dominated linear forms (a form below another coefficient by coefficient never attains the maximum for
// positive costs). One path is the whole compute stream, C = the sum of the compute costs, and
//   exposed_comm = duration - C  (slot_timing.hpp: a stream idles only while it waits for the other),
// so all EP communication is hidden exactly when every form f satisfies f <= C: a conjunction of linear
// inequalities, each printed in the form "network side <= compute side".
//
// Proof (Z3, linear real arithmetic over every positive cost point): the exact timing -- each start an
// equality with its max, written with ite -- is encoded, and three queries must be unsat:
//   (a) duration != max(forms)          the formula is the timing
//   (b) region and exposed_comm > 0     inside the region nothing is exposed
//   (c) not region and exposed_comm = 0 outside it something is
// Components of cost 0 are absent from a slot (model/chunk_dag.hpp); the formula then bounds the duration
// from above (dropping a component only removes waits), which is why the variables are > 0.
#include "model/chunk_costs.hpp"
#include "model/overlap_pattern.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct ChunkForm {
    std::array<std::int64_t, kComponents> c{};
    Rational at(const ChunkCosts& costs) const;  // value at a uniform cost point (layer 0's costs)
    std::string str() const;                      // "attn_f + 2*mlp_i + ..."
    friend bool operator==(const ChunkForm&, const ChunkForm&) = default;
};

struct ChunkFormulaProof {
    std::string name, statement;
    bool holds = false;
    std::string smt2;
};

struct ChunkFormula {
    SlotKind kind = SlotKind::PairFB;
    PatternSpec pattern;
    int layers = 1;
    bool shared = false;                    // shared-expert variables included
    std::vector<ChunkForm> duration;        // duration = max of these
    ChunkForm compute;                      // the compute stream's total (one of the forms)
    std::vector<std::string> hidden_region; // "dispatch_f <= mlp_i + mlp_w", one per form other than compute
    std::vector<ChunkForm> region_forms;    // form - compute <= 0, parallel to hidden_region
    std::vector<ChunkFormulaProof> proofs;
    bool proved() const;
    Rational duration_at(const ChunkCosts& costs) const;
    bool hidden_at(const ChunkCosts& costs) const;
};

// Fixed patterns only (deepseek, megatron, serial, custom). Proves with Z3 when `prove` is set.
ChunkFormula derive_chunk_formula(SlotKind kind, const PatternSpec& pattern, int layers, bool shared, bool prove = true);
std::string format_chunk_formula(const ChunkFormula& formula);

// Chunk costs with one value per component type (layers, no slowdown, no pp) from a variable assignment.
ChunkCosts uniform_chunk_costs(int layers, const std::array<Rational, kComponents>& values);

// A positive integer cost point outside the hidden region (exposed_comm > 0 in the slot), found by Z3 with
// every cost in 1..bound, or nullopt when the region is everything.
std::optional<std::array<Rational, kComponents>> exposing_point(const ChunkFormula& formula, int bound = 8);

}  // namespace pp
