#pragma once
// proofs/ — the prover (statements for every M: periodic words, super-steps, max-plus timing, claims and
// formulas) beside its catalogue of what is proved (catalogue/*.md, method.md). Uses verifier/, schedules/,
// model/.
//
// `pipeproof prove`: statements about a schedule family at fixed P for EVERY admissible micro-batch count.
//
// Method (details and soundness argument in proofs/method.md):
//   1. The family is a periodic word in the block count t (proofs/maxplus.hpp): fitted from the generator's
//      output, compared with it for t = 0..T_check (T_check large enough that two periodic words agreeing there
//      agree for all t), and tied to the generator for all t by the family's structure lemma (its loops have
//      trip counts affine in M with one loop of slope 1; without such a lemma the verdict is UNKNOWN).
//   2. Super-step potentials make every edge of every G_t go forward; cycles, timing and memory are then
//      decided on finitely many instances plus one periodic window.
//   3. Timing: the window of super-steps after k0 repeats shifted by c*lambda (exact simulation, or the symbolic
//      max-plus polynomials compared exactly on the cost region / by Z3); the base cases by simulation.
#include "model/certificate.hpp"
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "proofs/maxplus.hpp"
#include "proofs/symbolic.hpp"
#include "proofs/zone_word.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pp {

// The structure lemma of a family established by a finite check of its generator (v-zb: schedules/v_zb.hpp).
struct StructureCheck {
    std::string lemma;       // what was checked (empty: the check failed)
    std::string failure;     // why, when it failed
    int check_until_m = 0;   // compare the fitted word with the generator up to here, so that Lemma 1 ties the two
    std::optional<CertificateStructureCheck> record;
    // When the check establishes a periodic word of its own (a step program): its shift per pipeline, which the
    // fitted word must share for Lemma 1 to tie the two. Empty otherwise.
    std::vector<int> delta;
};

// A family at fixed P as a function of M; M ranges over m0, m0 + step, m0 + 2*step, ...
struct FamilySpec {
    std::string name;
    int ranks = 0;
    std::optional<int> stages_per_rank;  // V, when the family takes it
    std::optional<int> group_size;       // Megatron's G (--group-size), for the families that take it
    // Seq1F1B's sequence segments per micro-batch. `generate` then returns the segment units as plain micro-batches
    // (Schedule::segments = 1): the caller proves at 1/k of the op costs and stash sizes per unit (equal segments),
    // which is what the units run at.
    int segments = 1;
    int m0 = 0, step = 1;
    std::string precondition;
    std::function<Schedule(int M)> generate;
    // Why the generator's order is a periodic word for every admissible M (empty: not established).
    std::string structure_lemma;
    // Otherwise, a check that establishes it (run by the prover once the word is fitted); null: none. Both speak about
    // `generate` as family_spec sets it (a step program's check is about the generator that runs that program): a
    // caller that replaces `generate` must clear them unless the new generator has the same structure.
    std::function<StructureCheck()> check_structure;
    // Families whose order grows in several places (GPipe, Looped BFS): the zone word written out from the generator
    // (proofs/zone_word.hpp); null for the others, whose periodic word is fitted.
    std::shared_ptr<const FamilyZoneWord> zones;
    // The fitted word is compared op for op with the generator for every M up to at least this (0: only as far as
    // lemma 1 needs): the greedy families' lemmas are argued, and a long check backs them.
    int check_until_m = 0;
    // The family orders for the costs it is timed at (v-zb): the order the prover works on, stated as an
    // assumption; order_family_for_costs re-binds `generate` to exact costs.
    std::string order_assumption;
    int microbatches(int t) const { return m0 + step * t; }
};
// The registry family at P (and V, the stages per rank, for the families that take it: interleaved-1f1b, zb1p,
// looped-bfs; their default is 2; and G, Megatron's group size, for interleaved-1f1b and combined-1f1b, whose
// admissible M are then the multiples of G); nullopt (with the reason) when P, V or G is not admissible or the
// family is unknown.
// Megatron's order (G given) on the M with M mod G = `residue` (0 by default; P <= residue < G otherwise).
// seq1f1b only with `segments` given (the caller then scales costs and sizes by 1/k: FamilySpec::segments).
std::optional<FamilySpec> family_spec(const std::string& name, int ranks, std::string* why = nullptr,
                                      std::optional<int> stages_per_rank = std::nullopt,
                                      std::optional<int> group_size = std::nullopt,
                                      std::optional<int> segments = std::nullopt,
                                      std::optional<int> residue = std::nullopt);
// The command that proves `property` of `spec` again: "pipeproof prove seq1f1b -P 4 --segments 3 --property
// bubble-constant" (V, G, Megatron's residue and k named when the spec has them; `flags`, e.g. " --model batched",
// go before the property; costs and assumptions are the caller's to add).
std::string prove_command(const FamilySpec& spec, const std::string& property, const std::string& flags = "");

// For a family whose order depends on the costs (ScheduleFamily::orders_for_costs: v-zb): generate it for these
// exact costs (and activation sizes, when given) and say so in order_assumption. No effect on the other families.
void order_family_for_costs(FamilySpec& spec, const Costs& costs, const std::optional<ActivationModel>& sizes);

enum class Property { BubbleConstant, Dependencies, DeadlockFree, MemoryBound };
const char* property_name(Property property);
std::optional<Property> parse_property(const std::string& name);

enum class Verdict { Proved, Refuted, Unknown };
const char* verdict_name(Verdict verdict);

struct ProveOptions {
    Property property = Property::BubbleConstant;
    TimingModel model = TimingModel::Dataflow;
    std::optional<Costs> costs;               // exact costs; nullopt = symbolic over `region`
    std::optional<CostRegion> region;         // default: CostRegion::standard(false)
    ActivationModel activations{};
    std::optional<Rational> memory_bound;     // memory-bound: the bound to prove (else: the exact peaks)
    std::string emit_dir;                     // write SMT-LIB2 obligations here when not empty
    int samples = 3;                          // symbolic: interior sample points used to find the window
    // bubble-constant: the statement is "bubble(M) = b for every admissible M >= M0" with the least M0 found
    // (values below it listed). With from_m, M0 is fixed to it: a counterexample at M >= from_m refutes.
    std::optional<int> from_m;
};

struct Obligation {
    std::string name;
    std::string statement;
    std::string method;   // how it was discharged
    bool holds = true;
    double seconds = 0;
    std::string file;     // SMT-LIB2 file, when emitted
};

struct Counterexample {
    int ranks = 0;
    int microbatches = 0;
    std::optional<int> other_microbatches;  // for "bubble(M) != bubble(M')"
    std::optional<CostPoint> costs;
    std::string what;                        // one paragraph
    std::optional<Schedule> schedule;        // the instance, for timelines and re-checks
    // Batched timing: "comm-deadlock" / "comm-mismatch" when the blocking P2P program cannot run at any M >=
    // for_every_m_from (the bubble is undefined there), with the recurring witness (proofs/method.md §2c);
    // "comm-growth" when bubble(M) >= comm * (affine count of waiting batches) is proved; empty otherwise.
    std::string kind;
    std::optional<int> for_every_m_from;
    std::vector<std::string> witness;
};

struct RankIdle {
    // idle_r(M) for M = m0 + step * t, t >= t_from: value(t_from + (t - t_from) mod cycle) + slope * ((t - t_from) div cycle)
    // Symbolic mode: idle_r(t) = makespan(t) - busy_r(t), the makespans shared by all ranks (ProofResult::
    // makespan_symbolic; idle_symbolic() materialises one).
    std::vector<LinForm> busy_symbolic;   // per base t (0..t_end-1), symbolic mode
    std::vector<Rational> exact;          // per base t, exact mode
    LinForm slope_form;                   // symbolic: idle growth per block (0 when bubble constant)
    Rational slope{0};                    // exact: idle growth per block
};

struct ProofResult {
    Verdict verdict = Verdict::Unknown;
    std::string family;
    int ranks = 0;
    std::optional<int> stages_per_rank;
    std::optional<int> group_size;  // Megatron's G, when the statement is for its tunable order
    std::string statement;
    std::vector<std::string> assumptions;
    std::vector<Obligation> obligations;
    std::optional<Counterexample> counterexample;
    std::string missing;  // UNKNOWN: what is missing
    std::string summary;  // the proved fact in one line (e.g. the bubble value)
    // Data for `formula` and the catalogue.
    int m_origin = 0, step = 1;
    int t_periodic = 0, cycle = 1;
    std::vector<RankIdle> idle;
    std::vector<MaxPoly> makespan_symbolic;  // per base t, symbolic mode
    std::optional<CostRegion> region;        // symbolic mode: the region, rays computed
    std::optional<MaxPoly> bubble_symbolic;
    std::optional<Rational> bubble_exact;
    // bubble-constant, when the bubble is eventually constant: the least admissible M0 from which it is b, and
    // the values below it (M, value; exact costs also in early_exact, symbolic costs in early_symbolic).
    int constant_from_m = 0;
    std::vector<std::pair<int, std::string>> early_bubbles;
    std::vector<Rational> early_exact;
    std::vector<MaxPoly> early_symbolic;
    std::vector<Rational> peaks;  // memory-bound: per rank, for every M > m0 (and M = m0 in peaks_at_origin)
    std::vector<Rational> peaks_at_origin;
    int peaks_from_m = 0;         // memory-bound: `peaks` is every rank's peak at every admissible M >= this
    std::optional<PeriodicWord> word;
    std::optional<PeriodicStructure> structure;
    // What the proof rests on, for `prove --certificate` (model/certificate.hpp): the phases fill its word,
    // potentials, window and peaks, or say what it does not carry; finish_certificate adds the claim.
    Certificate certificate;
};

// The certificate of a PROVED result: the claim (family, P, property, costs or region, statement), the SMT-LIB2
// obligations the proof wrote (file names relative to `dir`, where --emit put them), and the parts the phases
// filled. `tool` and `command` are the caller's.
Certificate finish_certificate(const ProofResult& result, const FamilySpec& family, const ProveOptions& options,
                               const std::string& dir);

ProofResult prove(const FamilySpec& family, const ProveOptions& options);
// Rank r's idle time at base case t of a symbolic proof: makespan(t) - busy_r(t).
MaxPoly idle_symbolic(const ProofResult& result, int rank, int t);
std::string format_proof(const ProofResult& result, bool deepseek_basis = true);
// The same in a basis' letters: the proved bubble wherever it appears is rewritten into them, and a line says
// which letters are used (the obligations' own working stays in DeepSeek's letters, and says so).
std::string format_proof(const ProofResult& result, Basis basis);
// A symbolic value the prover wrote as text in DeepSeek's letters ("6*F - 6*W + 6*B", "max(3*F, 3*B - 3*W)"),
// rewritten into `basis`' letters (B = I + W); text it cannot read comes back marked "[DeepSeek's letters]".
std::string deepseek_text_in(const std::string& text, Basis basis);

// Helpers shared with refute / formula / the catalogue.
// Exact bubble (largest idle) and per-rank idle of one schedule.
struct ExactTiming {
    Rational makespan{0}, bubble{0};
    std::vector<Rational> idle, busy;
};
ExactTiming exact_timing(const Schedule& schedule, const Costs& costs);

}  // namespace pp
