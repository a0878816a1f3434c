#pragma once
// The prover's internal state, shared by the files that implement its phases (CaDiCaL keeps its `Internal`
// the same way: one struct, one file per concern). Not part of the public interface: use proofs/prove.hpp.
//
//   prover.cpp                  driver: which phases run for which property, verdicts, instance checks
//   prover_word.cpp             phase 1: the order (and, batched, the P2P program) as a periodic word
//   prover_super_steps.cpp      phase 2: super-step potentials; op coverage, dependencies, deadlock-freedom
//   prover_origin.cpp           a word that starts only after a few blocks: prove from there, settle the rest
//   prover_memory.cpp           activation peaks for every M
//   prover_bubble_exact.cpp     phase 3, exact costs: the periodic timing window and the base cases
//   prover_bubble_symbolic.cpp  phase 3, symbolic costs: the same over a cost region, Z3 where forms differ
//   prover_eventual.cpp         the bubble eventually constant: the least M0, the values below it
//   prover_zones.cpp            phase 3 for zone words (orders growing in several places: GPipe, Looped BFS)
//   prover_batched_failure.cpp  batched: a blocking program that deadlocks / mismatches for every M >= M_d
//   prover_zone_batched.cpp     batched zone words with comm > 0: a proved lower bound that grows with M
//   family_spec.cpp             the families' admissible M and structure lemmas
//   proof_text.cpp              the printed proof
#include "proofs/batched_failure.hpp"
#include "proofs/batched_graph.hpp"
#include "proofs/budget.hpp"
#include "proofs/prove.hpp"
#include "proofs/smt.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pp {

// A generator that settles into its periodic word only after a few blocks is proved from there on; more than
// this many blocks of transient (ZB-V pads to 2P - 1 micro-batches: 2P - 2 blocks) is more likely a family that is
// not periodic at all.
inline int max_origin_shift(int ranks) { return std::max(8, 2 * ranks + 2); }
// The longest period (in blocks) the window search tries after the usual cycles <= 4 fail.
inline constexpr int kLongCycle = 24;

double seconds_since(std::chrono::steady_clock::time_point t0);
std::string join_ints(const std::vector<int>& v);
// The first problem check_comm_program finds in the schedule's batched program (kind, message, witness), or "".
std::string program_problem(const Schedule& s);
// The one-line result of a program that cannot run from m_d on, its recurring witness found at m_w >= m_d.
std::string comm_failure_summary(int m_d, int m_w, RecurringCommFailure::Kind kind);
std::string costs_text(const CostPoint& p);
// A point strictly inside the region's cone of rays, weighted like interior_point, that also satisfies the
// constraints the cone leaves out (those with a constant term, such as F >= 2): sample points may turn into
// counterexamples, which must lie inside the stated assumptions.
std::optional<CostPoint> region_point(const CostRegion& region, const std::vector<std::int64_t>& weights);
// The bubble of one symbolically timed instance; appends its makespan and each rank's busy time to res.
MaxPoly symbolic_bubble(const SymbolicTiming& st, const CostRegion& region, ProofResult& res);

// Comparing the bubble of two instances (by block count): equal, different (at a cost point, when symbolic), or
// undecided (Z3 unknown).
struct BubbleComparison {
    enum Kind { Equal, Differ, Unknown } kind = Equal;
    std::optional<CostPoint> witness;
};
using BubbleCompare = std::function<BubbleComparison(int t_a, int t_b)>;
using BubbleText = std::function<std::string(int t)>;
// Refutes with bubble(M(t_a)) != bubble(M(t_b)) (at the witness, when symbolic); `why` explains the pair.
using BubbleDiffer = std::function<void(int t_a, int t_b, const std::optional<CostPoint>& witness, const std::string& why)>;

struct Prover {
    const FamilySpec& family;
    const ProveOptions& options;
    ProofResult res;
    std::map<int, Schedule> cache;
    std::optional<PeriodicWord> word;
    PeriodicStructure ps;
    bool lemma_ok = false;
    std::string structure_lemma;   // the family's, or what its structure check established
    std::string structure_failure;  // why the structure check failed
    int T_check = 0;
    // When the order is not one periodic word from the origin: the block count from which a word may start.
    int later_origin = 0;
    // How many blocks earlier provers in this chain have already moved the origin (bounds the recursion).
    int shifted = 0;
    // The word to use instead of fitting one (a re-cut of the previous prover's, word_rotation.hpp); it is compared
    // with the generator like a fitted one.
    std::optional<PeriodicWord> given_word;
    // Batched model: the communication program as a periodic word, the timing graph of the word's instances it
    // induces (empty for dataflow), and the t from which that graph's edge classes are fixed.
    std::optional<ProgramWord> program_word;
    TimingGraphOf graph_of;
    int batched_T0 = 0;
    bool comm_may_be_positive = false;

    Prover(const FamilySpec& f, const ProveOptions& o, int already_shifted = 0)
        : family(f), options(o), shifted(already_shifted) {}

    // ----- instances and bookkeeping (prover.cpp)
    bool batched() const { return options.model == TimingModel::Batched && options.property == Property::BubbleConstant; }
    int M(int t) const { return family.microbatches(t); }
    const Schedule& inst(int t) {
        auto it = cache.find(t);
        if (it == cache.end()) {
            budget::check("generating the instance M=" + std::to_string(family.microbatches(t)));
            it = cache.emplace(t, family.generate(family.microbatches(t))).first;
        }
        return it->second;
    }
    // The cost region of a symbolic proof: the assumptions given, or the standard ones; rays computed.
    CostRegion finished_region() const;
    // The timing graph of a generator instance: under batched timing its own program (attached or generic).
    ScheduleGraph instance_graph(const Schedule& s) const;
    ScheduleGraph word_graph(const Schedule& s, int t) const { return timing_graph(graph_of, s, t); }
    ExactTiming timing(const Schedule& s, const Costs& costs) const;

    void add(std::string name, std::string statement, std::string method, bool holds = true, double seconds = 0,
             std::string file = "") {
        res.obligations.push_back({std::move(name), std::move(statement), std::move(method), holds, seconds, std::move(file)});
        budget::check("going on after the obligation '" + res.obligations.back().name + "'");
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
    ProofResult& proved(std::string summary);
    // "bubble(M(a)) = x but bubble(M(b)) = y" at one cost point, with the instance that shows it.
    Counterexample bubble_counterexample(int a, const Rational& at_a, int b, const Rational& at_b, const CostPoint& costs,
                                         const Schedule& schedule);
    // A violation of `property` found by `verify` on the instance with t blocks.
    std::optional<Counterexample> check_instance(int t, Property property);
    // A deadlock that the infeasible potentials predict, found on a concrete instance.
    std::optional<Counterexample> find_deadlock(int up_to);

    // ----- the driver (prover.cpp)
    ProofResult run_guarded();
    ProofResult& run();
    ProofResult& refute_on_instances_or_unknown();

    // ----- phase 1: periodic word (prover_word.cpp)
    bool establish_word();
    void record_word();       // the word, into the certificate (prover.cpp)
    void record_zone_word();  // the zone word, into the certificate (prover.cpp)
    bool batched_comm_may_be_positive() const;
    bool establish_batched();
    bool check_batched_classes(int up_to);
    // Batched: when the blocking program fails on some instance, REFUTED for every M >= M_d from a failure in the
    // program's stable part (prover_batched_failure.cpp); nullopt when the program runs on every instance looked at.
    std::optional<std::reference_wrapper<ProofResult>> settle_comm_failure();
    // REFUTED from a failure found in the stable part of instance t_w (discharged by `method`): the least M_d from
    // which every instance fails, spot checks of larger M on the generator's own program, the counterexample.
    ProofResult& refute_recurring_failure(const RecurringCommFailure& failure, int t_w, const std::string& method,
                                          std::chrono::steady_clock::time_point t0);

    // ----- phase 2: super-steps and graph properties (prover_super_steps.cpp)
    bool establish_structure();
    bool prove_coverage();
    ProofResult& prove_graph_property();

    // ----- a later origin (prover_origin.cpp)
    // `recut`: the word the proof from M(k) on uses (else it fits its own).
    ProofResult& prove_from_later_origin(int k, std::optional<PeriodicWord> recut = std::nullopt);
    bool settle_early_bubbles(const ProofResult& sub, int k, std::string& method);
    std::string bubble_summary() const;  // "bubble = b for every admissible M >= M0" and the values below M0

    // ----- memory (prover_memory.cpp)
    ProofResult& prove_memory();

    // ----- phase 3: bubble (prover_bubble_exact.cpp, prover_bubble_symbolic.cpp)
    ProofResult& prove_bubble_exact(const Costs& costs);
    std::string window_smt_exact(const Costs& costs, const PeriodicTiming& pt);
    ProofResult& prove_bubble_symbolic();
    std::string window_smt_symbolic(const SymbolicTiming& st, int T, int k, int cycle, const LinForm& shift,
                                    const CostRegion& region);
    // Re-runs the exact proof at a concrete cost point; a refutation there refutes the symbolic statement.
    ProofResult& refute_at(const CostPoint& point, const std::string& where, bool unknown_if_holds = true);

    // ----- zone words (prover_zones.cpp)
    // order_checked: the zone word was already compared with the generator (prove_zone_batched did it).
    ProofResult& prove_zone_bubble(bool order_checked = false);
    ProofResult& prove_zone_memory();  // prover_memory.cpp: a zone whose blocks allocate more than they free
    void note_activation_sizes();      // the assumption line of a memory statement
    // Zone words: the timing graph (empty: dataflow; the batched timing graph under batched timing, comm = 0).
    std::function<ScheduleGraph(const Schedule&)> zone_graph_of;
    // Batched timing of a zone word: a failing program (as settle_comm_failure), or with comm > 0 possible the
    // proved bound bubble(M) >= comm * N_r(M), N_r affine and growing (prover_zone_batched.cpp).
    ProofResult& prove_zone_batched();

    // ----- eventually constant (prover_eventual.cpp)
    // The first block count t with M(t) >= --from-M (0 without it).
    int t_from() const;
    // With every slope 0 and the idle times periodic from t_periodic: true when the bubble is eventually constant
    // (res.constant_from_m, res.early_bubbles set; `method` says how), else res is REFUTED or UNKNOWN.
    bool settle_eventual(int t_periodic, int cycle, const BubbleCompare& compare, const BubbleText& text,
                         const BubbleDiffer& differ, std::string& method);
    // "; below M0: bubble(1) = .., .." (empty when M0 is the first admissible M).
    std::string early_text() const;
};

}  // namespace pp
