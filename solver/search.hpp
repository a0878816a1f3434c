#pragma once
// solver/ — the Z3 search for optimal schedules: encodings, lower bounds, greedy portfolio, certificates.
// Uses verifier/ (every candidate is re-verified and re-timed), schedules/ and model/.
//
// Optimal schedule search (issue 2): the best schedule for a placement, costs and memory cap, with a
// proven lower bound.
//
//   1. memory floor: a cap below it is infeasible (certificate: memory_floor).
//   2. analytic lower bound (lower_bound.hpp) and upper bound: the best of the given warm starts
//      (generated schedules; one over the cap is also tried with each rank's excess forwards postponed
//      until a W frees room, cap_repair.hpp), the Zero Bubble hand schedules with their W's lagging as
//      far as the cap allows (cap_filled_warm_starts.hpp), the Zero Bubble paper's own automatic scheduling
//      heuristic (zb_auto_schedule.hpp, 1F1B placement) and the greedy portfolio (greedy.hpp).
//   3. if they differ: Z3, one fresh context per bound (windows depend on it): probe the lower bound
//      first (a quarter of the remaining time), then prove or improve the incumbent by bisection.
//      Time-indexed encoding when the quantised horizon is small, disjunctive difference logic otherwise.
//      When no exact encoding fits the whole instance (large M): the periodic block (periodic.hpp,
//      throughput certificate) repeated from micro-batch 0 as one more warm start, then cool-down
//      windows (z3_window.hpp): Z3 re-places the incumbent's last ops under the proven bound.
//   4. every schedule is re-verified (verify, with the memory cap) and re-timed (simulate) before it
//      counts; the value reported is the simulator's.
//
// The search space: F, I, W (split backward), one op or one pair at a time per rank; with --overlap the
// pairs are DeepSeek's F&B (an F with a fused full backward, its W absorbed) or F&I (search_instance.hpp).
// Warm starts outside it (a fused B cheaper than I + W, a pair of the other kind) are rewritten into it
// or not used, so that "optimal" is a claim about this space only.
#include "model/schedule.hpp"
#include "solver/lower_bound.hpp"
#include "solver/periodic.hpp"
#include "solver/search_instance.hpp"
#include "solver/search_monitor.hpp"
#include "solver/z3_encoding.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pp {

enum class SearchStatus { Optimal, Feasible, Infeasible, Unknown };
const char* search_status_name(SearchStatus status);  // "OPTIMAL", ...

enum class SearchEngine { Auto, TimeIndexed, Disjunctive, None };

struct WarmStart {
    std::string origin;  // "generator:zb-h1", "file:x.txt"
    Schedule schedule;
};

struct SearchOptions {
    double time_limit = 60;            // seconds for the whole search, encoding builds included
    std::optional<Clock::time_point> started;  // when the time limit started (default: the call)
    SearchEngine engine = SearchEngine::Auto;
    bool want_proof = false;           // keep the final UNSAT query as SMT-LIB2
    bool strengthen = true;            // same-rank load windows
    unsigned seed = 0;
    size_t max_time_indexed_variables = 300000;
    size_t max_disjunctive_variables = 60000;
    bool relaxations = true;           // exact one-rank relaxations for the lower bound (rank_relaxation.hpp)
    size_t max_relaxation_variables = 400000;
    std::vector<WarmStart> warm_starts;
    // Mirror-symmetric queries (mirror_symmetry.hpp) on instances the mirror maps onto themselves, with
    // an exact engine: an upper-bound engine; an unsat is reported as a bound on that class only.
    bool mirror = true;
    // Periodic block (periodic.hpp): the best steady state with its throughput certificate, and the
    // schedule that repeats it from micro-batch 0, whose cool-down the windows then re-solve. Always on
    // when no exact encoding fits the whole instance (large M); this asks for it on every instance.
    bool periodic = false;
    // Watching and stopping (search_monitor.hpp): `progress` gets every new best schedule, bound and
    // phase, and the current state every `progress_interval` seconds; once `*stop` is true the search
    // ends with the best schedule so far (set it from a signal handler: the store is signal-safe).
    std::function<void(const SearchProgress&)> progress;
    double progress_interval = 2;
    const std::atomic<bool>* stop = nullptr;
};

struct Z3Call {
    Ticks bound = 0;  // simulator ticks
    Z3Answer answer = Z3Answer::Unknown;
    std::string engine, reason;
    size_t variables = 0, constraints = 0;
    double build_seconds = 0, solve_seconds = 0;
};

struct SearchResult {
    SearchStatus status = SearchStatus::Unknown;
    Objective objective = Objective::Makespan;
    std::optional<Schedule> schedule;  // verified, within the cap
    std::string origin;                // where it came from: generator, greedy rule, z3
    TimeScale scale;                   // simulator ticks
    Ticks quantum = 1;                 // ticks per unit of the encodings
    Ticks value = 0;                   // objective of the schedule (simulator), ticks
    Ticks makespan = 0;                // simulator makespan, ticks
    Ticks simulator_span = 0;          // max over ranks of last end - first start (simulator), ticks
    Ticks lower_bound = 0;             // proven, ticks
    LowerBound analytic;               // the analytic bound and its argument (quantised units)
    std::vector<FormulaBound> formulas;  // closed forms that apply (quantised units)
    std::string lower_bound_kind;      // "rank-load", "critical-path", "empty-window", "z3-unsat", ...
    std::string lower_bound_argument;  // for empty-window / z3-unsat: what was shown
    std::optional<MemoryFloor> infeasible;
    std::string proof_smt2;            // UNSAT query "objective <= proof_bound" (want_proof)
    Ticks proof_bound = -1;            // ticks; -1 when there is no SMT-LIB2 proof
    std::string proof_engine;
    bool proof_plain_windows = false;  // its windows follow from its own clauses (else: same-rank loads too)
    std::vector<Z3Call> calls;
    std::vector<std::string> log;      // one line per step
    size_t tasks = 0;
    int greedy_rules = 0;
    Ticks greedy_value = -1;           // best greedy value, ticks
    std::string best_warm_start;       // origin of the best warm start, if any
    Ticks warm_start_value = -1;
    double seconds = 0;
    bool stopped = false;              // ended early by a stop request
    std::optional<PeriodicBlock> periodic;  // when computed (SearchOptions::periodic, or large M)
    Ticks periodic_value = -1;         // the repeated block from micro-batch 0, simulator ticks
    // Shown by Z3 with the starts of mirrored tasks tied (mirror_symmetry.hpp): no mirror-symmetric
    // schedule has value below mirror_bound (ticks; -1: not shown). Not a lower bound on the instance.
    Ticks mirror_bound = -1;
    std::string mirror_argument;

    Rational units(Ticks ticks) const { return scale.to_units(ticks); }
};

// Ends by options.time_limit plus hard_stop_grace(time_limit) at the latest (the grace lets a phase verify
// the schedule it just found); a stop request (options.stop or the process's) ends it as soon as the running
// step looks, within a few hundred milliseconds.
SearchResult search(const SearchProblem& problem, const SearchOptions& options);
// A tenth of the limit, between 0.5 s and 5 s.
double hard_stop_grace(double time_limit);

// The objective of a verified schedule under the problem's costs (ticks), or nullopt with a reason when
// it does not verify (including the memory cap) or lies outside the search space.
struct Evaluation {
    bool ok = false;
    std::string problem;
    Ticks value = 0, makespan = 0, simulator_span = 0;
};
Evaluation evaluate_schedule(const Instance& inst, Schedule& schedule);

}  // namespace pp
