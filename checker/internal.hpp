#pragma once
// What the checker's steps share (checker/check.hpp lists the files). Everything here is the checker's own.
#include "checker/check.hpp"
#include "model/schedule.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pp::check {

[[noreturn]] void reject(const std::string& step, const std::string& reason);

// ---- word.cpp

enum class Part : std::uint8_t { Prefix, Block, Suffix };
struct Place {
    Part part = Part::Prefix;
    int rank = 0;
    int index = 0;  // inside prefix, block or suffix
    int block = 0;  // j, for block slots
};

// The generator's instance at M (the registry family of the certificate, at its P, V and costs).
Schedule generate(const Certificate& c, int microbatches);
// The word's instance with t blocks, on the placement of its instance at t = 0 (`base`).
Schedule instantiate(const CertificateWord& w, const Placement& base, int t);
// Every slot's place, in the numbering of Graph (rank by rank, in order).
std::vector<Place> places(const CertificateWord& w, int t);
// "" when a and b hold the same slots on every rank, in the same order, else the first difference.
std::string first_difference(const Schedule& a, const Schedule& b);
// The slot with every op's micro-batch raised by k·delta of its pipeline.
Slot shifted(Slot slot, const std::vector<int>& delta, int k);
// Lemma 1 (proofs/method.md §1): words agreeing up to this t agree for every t.
int agreement_horizon(const CertificateWord& w);
// The instance at M, for the steps after `word`: the word's where that step compared it with the generator's (up to
// Lemma 1's horizon; cheaper to build), else the generator's.
Schedule instance_at(const Certificate& c, const Placement& base, int microbatches);
// The word's instance with t blocks; under batched timing with the program word's instance attached.
Schedule word_instance(const Certificate& c, const Placement& base, int t);

// ---- step_program.cpp

// Lemma 2 on the family's step program (ScheduleFamily::step_program), executed by the checker's own interpreter:
// one growing loop per rank whose one iteration raises the whole state (counters, queued W's) by the word's deltas,
// and the word that gives equal to the certificate's (Lemma 1). Run for every family that has a step program, whether
// or not the certificate names the check (when it does, it must name this one). Returns what was checked.
std::string check_step_program(const Certificate& c, const Placement& base);

// ---- zone_word.cpp

// The certificate's zone word against the family's zone program and its generator (proofs/method.md §1b): the
// program's output positions are the word's, and the two agree slot for slot on enough instances that the affine
// micro-batch indices of both are one for every t. Returns what was checked.
std::string check_zone_word(const Certificate& c);

// ---- graph.cpp

struct Pred {
    std::uint32_t from;
    bool cross_rank;  // pays comm
    bool data;        // a data dependency (else the rank's order)
};
struct Graph {
    std::vector<std::uint32_t> rank;       // per slot
    std::vector<std::vector<Pred>> preds;  // per slot
    std::vector<std::uint32_t> topo;       // a topological order; shorter than the slots when there is a cycle
    bool acyclic() const { return topo.size() == rank.size(); }
};
// The dependency graph of one instance: slots in rank order; F(s-1,m) -> F(s,m), F(last,m) -> I/B(last,m),
// I/B(s+1,m) -> I/B(s,m), I(s,m) -> W(s,m) within each pipeline, and each rank's order. Rejects an op on a rank
// that does not hold its stage, or a pair that is not one F and one backward.
Graph build_graph(const Schedule& s, const std::string& step);
void sort_topologically(Graph& g);  // g.topo from g.preds

// ---- batched.cpp

// The generic rule (docs/model.md): the batch before slot k holds the sends of slot k-1's outputs, then the receives
// of slot k's inputs; a trailing commit after the last slot sends what is left.
CommProgram generic_program(const Schedule& s);
// Batched timing as a longest-path graph: the schedule's own program (Schedule::comm_program) or the generic rule,
// checked consistent.
Graph build_batched_graph(const Schedule& s, const std::string& step);
// The timing graph of the certificate's model: dataflow, or batched.
Graph timing_graph(const Certificate& c, const Schedule& s, const std::string& step);
// The program word's instance with t blocks beside the slot word's: step k runs slot k, later steps are trailing.
CommProgram program_instance(const CertificateProgram& p, const CertificateWord& w, int t);
// The step `program`: the program word against the generator's program up to its Lemma 1 horizon; returns what was
// checked and sets T0 to the batched graph's stability bound (proofs/method.md §2b) joined with the dataflow one.
std::string check_program(const Certificate& c, int& T0);

struct Timing {
    std::vector<Rational> end;   // per slot
    Rational makespan{0};
    std::vector<Rational> busy;  // per rank
    Rational bubble{0};          // the largest idle (makespan - busy) of a rank
};
// Exact dataflow timing: a slot starts when its rank's previous slot has ended and its inputs have arrived
// (comm later across ranks); at 0 without predecessors.
Timing simulate(const Schedule& s, const Graph& g, const Costs& costs, const std::string& step);
Rational slot_duration(const Slot& slot, const Placement& placement, const Costs& costs);
// Every slot in the numbering of Graph (rank by rank, in order); rank_start, when given, gets each rank's first id.
std::vector<const Slot*> slots_of(const Schedule& s, std::vector<std::uint32_t>* rank_start = nullptr);

// ---- structure.cpp

struct Derived {
    int T0 = 1;
    int head_end = 0, k_inv = 0, tau = 0, lag = 1, T_struct = 0;
};
int stable_from(const CertificateWord& w);  // rejects a pipeline with block ops that does not grow
int super_step(const CertificatePotentials& p, const Place& place, int t);
// Every edge of G_t goes to the same or a later super-step, and past the head at most `lag` later.
// (The graph is the certificate's timing model's: dataflow or batched.)
void check_potentials(const Certificate& c, const Schedule& instance, int t, const Derived* derived);
// head_end, k_inv, tau, lag, T_struct from the potentials on G_T.
Derived derive(const Certificate& c, const Schedule& instance_T, int T0);

// ---- statement.cpp

// The exact window and the bubble statement; returns a description of what was re-derived.
std::string check_window(const Certificate& c, const Placement& base, const Derived& d, int& t_periodic);
std::string check_bubble(const Certificate& c, const Placement& base, int t_periodic);
std::string check_memory(const Certificate& c);
// Live activations along one part of a rank's order, from 0: the peak right after a slot's allocations, and the net
// change (F allocates at its start; I, W and B release at their ends; each stash at its stage's scale).
struct LiveProfile {
    Rational peak{0}, net{0};
    bool any = false;
};
LiveProfile live_profile(const std::vector<Slot>& part, const ActivationModel& activations);
// The block slots of super-steps k0 - lag + 1 .. k0 in G_T: (rank, index, block j, slot ids in blocks j and j + c).
struct WindowPair {
    int rank, index, block;
    std::uint32_t at, later;
};
std::vector<WindowPair> window_pairs(const Certificate& c, const Derived& d, const std::string& step);

// ---- cone.cpp

// A linear form's values on the cone's rays (at most kMaxRays of them): fixed room, so that copying the terms of a
// max-plus polynomial allocates nothing.
inline constexpr size_t kMaxRays = 16;
struct RayValues {
    std::array<std::int64_t, kMaxRays> v{};
    std::uint8_t n = 0;
    size_t size() const { return n; }
    std::int64_t& operator[](size_t k) { return v[k]; }
    const std::int64_t& operator[](size_t k) const { return v[k]; }
    const std::int64_t* begin() const { return v.data(); }
    const std::int64_t* end() const { return v.data() + n; }
    friend bool operator==(const RayValues& a, const RayValues& b) {
        return a.n == b.n && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator<(const RayValues& a, const RayValues& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
};

// The symbolic region (its constraints as stated) and the extreme rays of its homogeneous closure.
struct Cone {
    std::vector<CertificateConstraint> constraints;
    std::vector<CertificateForm> rays;
    RayValues values(const CertificateForm& form) const;  // on every ray
    bool contains(const CertificatePoint& point) const;                  // every constraint, exactly
};
Cone cone_of(const std::vector<CertificateConstraint>& constraints, const std::string& step);
// A point satisfying every constraint exactly: the certificate's (`given`, tested against every constraint), else
// one found by scaling the sum of the rays; rejects at `step` when there is none.
CertificatePoint point_inside(const Cone& cone, const std::string& step, const std::optional<CertificatePoint>& given);

// ---- maxplus.cpp

struct Term {
    CertificateForm form;
    RayValues values;  // on the cone's rays
};
// The max of its forms; after prune() no form is <= another on every ray, and the terms are in a canonical order.
struct Poly {
    std::vector<Term> terms;
    static Poly of(const CertificateForm& form, const Cone& cone);
    static Poly of(const std::vector<CertificateForm>& forms, const Cone& cone);  // pruned
    void add(const CertificateForm& form, const RayValues& values);  // + form, to every term
    void prune();
    bool same_function(const Poly& other) const;  // equal ray values term by term (sufficient, not necessary)
    Rational eval(const CertificatePoint& point) const;
};
CertificateForm slot_form(const Slot& slot);  // F, I, W, B, or FB for a pair
std::string readable_form(const CertificateForm& f);                 // "3*F + 3*B"
std::string readable_poly(const std::vector<CertificateForm>& forms);  // "max(F, 2*W)", or the one form
struct SymbolicTiming {
    std::vector<Poly> end;              // per slot
    std::vector<CertificateForm> busy;  // per rank
    Poly makespan, bubble;
    size_t taken = 0;  // slots whose end time was taken (SymbolicReference, SymbolicPeriod), not recomputed
};
// Another instance already timed, whose end times the simulation may take where the recurrence provably gives the
// same function (equal, or plus `shift`; maxplus.cpp, same_recurrence): slot (r, i) against the reference's (r, i),
// or, for the slots past the reference's length, against the one as many slots earlier.
struct SymbolicReference {
    const Schedule* schedule = nullptr;
    const Graph* graph = nullptr;
    const SymbolicTiming* timing = nullptr;
    CertificateForm shift{};
};
// Within one instance: slot i of rank r against slot i - slots[r] (one period of the rank earlier), plus shift.
struct SymbolicPeriod {
    std::vector<std::uint32_t> slots;
    CertificateForm shift{};
};
SymbolicTiming simulate_symbolic(const Schedule& s, const Graph& g, const Cone& cone, const std::string& step,
                                 const SymbolicReference* ref = nullptr, const SymbolicPeriod* period = nullptr);

// Equalities of polynomials that the ray values do not settle, written as one SMT-LIB2 file (conjunctions of
// linear inequalities, each expected unsat) and answered by every solver of the options.
class SmtQueries {
public:
    explicit SmtQueries(const Cone& cone);
    void equal(const std::string& what, const Poly& a, const Poly& b, const CertificateForm& shift);  // a = b + shift
    std::string run(const std::string& step, const CheckOptions& options) const;  // rejects unless all unsat

private:
    Cone cone_;
    std::string text_;
    std::set<std::string> asked_;
    size_t by_weights_ = 0;
    std::vector<std::string> what_;
};

// ---- dominance.cpp

// f <= max(others) on the cone, shown by convex weights on the rays found by an exact simplex and re-checked.
bool below_max_on_cone(const Term& f, const std::vector<Term>& others);

// ---- statement_symbolic.cpp

std::string check_window_symbolic(const Certificate& c, const Placement& base, const Derived& d, const Cone& cone,
                                  const CheckOptions& options, int& t_periodic);
std::string check_bubble_symbolic(const Certificate& c, const Placement& base, const Cone& cone, const CheckOptions& options,
                                  int t_periodic);

// ---- coverage.cpp

// Every op of the word's instance exactly once (a W for every I), for every t >= 0: by induction on t.
std::string check_coverage(const CertificateWord& w, const Placement& base);

// ---- the steps of a check (check.cpp, search.cpp)

// Runs named steps in order and records each one's detail and time. A step that throws Rejected, or any other
// exception (reported as "could not be re-derived"), ends the run: `run` records it as the failing step.
class StepLog {
public:
    template <class Steps>
    CheckReport run(Steps&& steps) {
        try {
            steps();
        } catch (const Rejected& r) {
            report_.steps.push_back({r.step, r.reason, false, seconds()});
        }
        return report_;
    }
    template <class F>
    void step(const std::string& name, F&& body) {
        started_ = std::chrono::steady_clock::now();
        try {
            std::string detail = body();
            report_.steps.push_back({name, std::move(detail), true, seconds()});
        } catch (const Rejected& r) {
            throw Rejected{r.step == name || r.step.empty() ? name : name + " (" + r.step + ")", r.reason};
        } catch (const std::exception& e) {
            throw Rejected{name, std::string("could not be re-derived: ") + e.what()};
        }
    }

private:
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(); }
    CheckReport report_;
    std::chrono::steady_clock::time_point started_;
};

// An exact number as an SMT-LIB2 term: "3", "(- 3)", "(/ 7 2)" (maxplus.cpp).
std::string rational_text(const Rational& r);

// ---- search.cpp (for the tests: the checker's view of a search instance, the ops and limit of `schedule`)

// The largest bound the checker derives by arithmetic alone (longest chain, rank loads with thresholds).
Rational search_arithmetic_bound(const Schedule& schedule, const CheckOptions& options);
// The checker's SMT-LIB2 model "some schedule ends before `bound`", whole or relaxed to one rank.
std::string search_model_query(const Schedule& schedule, const Rational& bound, const CheckOptions& options,
                               std::optional<int> only_rank);

// ---- solvers.cpp

struct SolverAnswer {
    std::string solver;
    std::vector<std::string> answers;  // one per (check-sat)
    std::string error;                 // not run, killed, or output it could not read
    double seconds = 0;
};
SolverAnswer run_solver(const std::string& solver, const std::filesystem::path& file, double seconds, int queries);
// Both solvers answer unsat to every query of `file`; rejects otherwise, naming the solver and its answer.
std::string require_unsat(const std::string& step, const std::filesystem::path& file, int queries, const CheckOptions& options);

}  // namespace pp::check
