#pragma once
// A proof certificate (docs/certificates.md): what a PROVED of `pipeproof prove` rests on, written with
// `--certificate DIR` and re-derived by the independent checker (checker/, `pipeproof-check DIR`), which shares
// with the prover only this vocabulary and the file readers (formats/certificate_json.hpp). Plain data, no logic:
// the prover fills it, the checker believes none of its numbers without recomputing them.
//
// What a certificate carries (format version 1):
//   the claim       family, ranks, the property and the statement proved, the costs (exact) or the region
//   the word        the generator's order as a periodic word in the block count t (proofs/method.md §1): per rank
//                   prefix, block, suffix; M(t) = m_origin + step t
//   the potentials  super-steps sigma (block), alpha (prefix), beta (suffix) on the instance G_T (§3)
//   the window      k0, the cycle c and lambda with W(k0 + c) = W(k0) + c lambda (§4); at symbolic costs lambda
//                   is a linear form and the region's constraints are in the claim
//   the statement   bubble(M) = value for every admissible M >= from_m, the values below (at symbolic costs
//                   max-plus polynomials: the max of linear forms); or the peaks
//   the zone word   instead of the word for GPipe and Looped BFS: fixed parts and zones per rank (§1b); their
//                   timing (§4b) is not carried yet
//   the program     batched timing only: each rank's communication batches as a periodic word beside the slot
//                   word (proofs/method.md §2b)
//   obligations     SMT-LIB2 files, each expected unsat (re-run by the checker with z3 and cvc5)
//   not_carried     the steps of the proof this certificate does not carry (the checker then answers NOT CHECKED)
#include "model/costs.hpp"
#include "model/op.hpp"
#include "model/rational.hpp"
#include "model/schedule.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pp {

inline constexpr int kCertificateVersion = 1;

// Symbolic costs: a linear form's integer coefficients and a cost point, both in the order F, I, W, B, FB, comm
// (PyTorch's letters; B the full backward, FB an overlapped pair).
inline constexpr int kCertificateCostVars = 6;
using CertificateForm = std::array<std::int64_t, kCertificateCostVars>;
using CertificatePoint = std::array<Rational, kCertificateCostVars>;

// One constraint of the symbolic region:  a . x  rel  b,  rel one of ">=", ">", "=".
struct CertificateConstraint {
    CertificatePoint a{};
    Rational b{0};
    std::string rel = ">=";
};

struct CertificateWord {
    int m_origin = 0;        // M of the word's instance with t = 0 blocks
    int step = 1;            // M(t) = m_origin + step * t
    std::vector<int> delta;  // per pipeline: how much one block raises its micro-batch indices
    std::vector<std::vector<Slot>> prefix, block, suffix;  // per rank; block as at j = 0, suffix as at t = 0
};

// A zone word (GPipe, Looped BFS: proofs/method.md §1b): rank r's order for t blocks is
//     fixed[r][0] . zone_0(0..t-1) . fixed[r][1] . ... . zone_{K-1}(0..t-1) . fixed[r][K]
// where block j of an ascending zone (direction +1) raises pipeline p's micro-batch indices by j*delta[p], of a
// descending one (-1) by (t-1-j)*delta[p], and an end-anchored op of a fixed part by t*delta[p]; M(t) = m_origin +
// step t.
struct CertificateZoneWord {
    int m_origin = 0;
    int step = 1;
    std::vector<int> delta;      // per pipeline
    std::vector<int> direction;  // per zone
    std::vector<std::vector<std::vector<Slot>>> fixed;                        // [rank][part 0..K]
    std::vector<std::vector<std::vector<std::array<bool, 2>>>> end_anchored;  // [rank][part][slot]: per op of the slot
    std::vector<std::vector<std::vector<Slot>>> block;                        // [rank][zone 0..K-1], at raise 0
};

// Batched timing (timing_model "batched"): each rank's communication program, one batch per step, as a periodic
// word in t with its own split: prefix . block(0..t-1) . suffix(t), micro-batch indices of pipeline p raised by
// j*delta[p] in block j and t*delta[p] in the suffix. Step k runs slot k of the rank; steps past its last slot
// are trailing commits.
struct CertificateProgram {
    std::vector<int> delta;
    std::vector<std::vector<std::vector<P2POp>>> prefix, block, suffix;  // per rank, per step: the batch
};

struct CertificatePotentials {
    int T = 0;                                  // the instance G_T they were computed on
    std::vector<int> sigma;                     // per rank: block j is super-step j + sigma[r]
    std::vector<std::vector<int>> alpha, beta;  // per rank and prefix / suffix slot: alpha, t + beta
};

struct CertificateWindow {
    int T = 0;              // the instance simulated
    int k0 = 0, cycle = 1;
    Rational lambda{0};     // per block, at exact costs
    std::optional<CertificateForm> lambda_form;  // per block, at symbolic costs
};

struct CertificateBubble {  // bubble(M) = value for every admissible M >= from_m
    Rational value{0};
    int from_m = 0;
    std::vector<std::pair<int, Rational>> early;  // (M, bubble) for the admissible M below from_m
    // Symbolic costs: the value as the max of these forms, the early bubbles likewise, and a point of the region
    // where the bubble at the admissible M just below from_m differs from the value (from_m is the least).
    std::vector<CertificateForm> value_forms;
    std::vector<std::pair<int, std::vector<CertificateForm>>> early_forms;
    std::optional<CertificatePoint> differs_at;
};

struct CertificateMemory {
    std::vector<Rational> peaks;    // per rank, for every admissible M past the word's first instance
    std::vector<Rational> peaks_at_origin;  // per rank, at the word's first instance
    std::optional<Rational> bound;  // the bound proved, when one was asked
    // A word from a later origin: the peaks per rank at each admissible M below it (M, peaks), counted one by one.
    std::vector<std::pair<int, std::vector<Rational>>> early;
};

struct CertificateObligation {
    std::string name;
    std::string statement;
    std::string file;  // relative to the certificate's directory; expected answer: unsat
};

// How the generator's order was shown to be the periodic word for every M by a finite check instead of an argued
// structure lemma: "greedy-state-recurrence" (v-zb, schedules/v_zb.hpp): the greedy's whole state repeats from
// from_m with a period of period_m micro-batches; "sweep-state-recurrence" (1f1b-v, schedules/v1f1b.hpp): the same
// of its compaction sweep.
struct CertificateStructureCheck {
    std::string method;
    int from_m = 0;
    int period_m = 0;
};

struct Certificate {
    int version = kCertificateVersion;
    std::string tool;     // "pipeproof 0.5.0 (git ...)"
    std::string command;  // the command line that wrote it
    std::string family;
    int ranks = 0;
    std::optional<int> stages_per_rank;
    std::optional<int> group_size;       // Megatron's micro-batch group size G, for the families that take it
    // Seq1F1B's sequence segments per micro-batch: the generator's ops are segment units, and `costs` and `activations`
    // are per unit (1/k of a micro-batch's, equal segments).
    std::optional<int> segments;
    int family_m0 = 1, family_step = 1;  // the admissible M: family_m0 + family_step * k
    std::string property;                // bubble-constant | memory-bound | deadlock-free | dependencies
    std::string timing_model = "dataflow";
    std::optional<Costs> costs;          // exact costs; none: symbolic over `region`
    std::vector<std::string> region;     // the symbolic region's constraints, as printed
    std::vector<CertificateConstraint> region_constraints;  // the same, as numbers (symbolic costs)
    // Symbolic costs: a point of the region, the witness that it is not empty (a claim over an empty region says
    // nothing); the checker tests it against every constraint exactly. Optional: without it the checker looks for one.
    std::optional<CertificatePoint> region_point;
    ActivationModel activations{};
    // A family whose order depends on the costs (v-zb) is generated for `costs` and, when given, these sizes.
    bool ordered_for_costs = false;
    std::optional<ActivationModel> ordered_for_sizes;
    std::string verdict;                 // "PROVED"
    std::string statement;
    std::string structure_lemma;         // why the generator is the word for every M (proofs/method.md A1)
    std::optional<CertificateStructureCheck> structure_check;  // set when that is a finite check, re-run by the checker
    std::optional<CertificateWord> word;
    std::optional<CertificateZoneWord> zone_word;  // instead of `word` for the families whose order grows in zones
    std::optional<CertificateProgram> program;  // batched timing only
    std::optional<CertificatePotentials> potentials;
    std::optional<CertificateWindow> window;
    std::optional<CertificateBubble> bubble;
    std::optional<CertificateMemory> memory;
    std::vector<CertificateObligation> obligations;
    std::vector<std::string> not_carried;
};

}  // namespace pp
