#pragma once
// The search driver (solver/search.hpp): one object per search, holding what every phase shares -- the
// instance, its bounds, the incumbent and the proven lower bound -- with the phases split by what they do:
//   search.cpp              the order of the phases, the quick bounds, offering a schedule, the answer
//   search_space.cpp        warm starts rewritten into the search space (F, I, W and the pairs it forms)
//   search_heuristics.cpp   library warm starts, greedy portfolio, local and suffix search, periodic block
//   search_exact.cpp        the Z3 queries on the whole instance: probe, bisection, the emitted proof
//   search_relaxations.cpp  one- and two-rank relaxations, cool-down windows, mirror-symmetric schedules
// Internal to solver/: callers use solver/search.hpp.
#include "solver/search.hpp"
#include "limits/deadline.hpp"
#include "solver/cap_filled_warm_starts.hpp"
#include "solver/cap_repair.hpp"
#include "solver/greedy.hpp"
#include "solver/greedy_improve.hpp"
#include "solver/mirror_symmetry.hpp"
#include "solver/pinned_completion.hpp"
#include "solver/rank_budget.hpp"
#include "solver/rank_relaxation.hpp"
#include "solver/search_certificate.hpp"
#include "solver/z3_window.hpp"
#include "solver/zb_auto_schedule.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace pp::search_detail {

inline Ticks ceil_div(Ticks a, Ticks b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// A duration from seconds; beyond 10^9 s (32 years) a limit is no limit, and the conversion would overflow.
inline Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::clamp(s, 0.0, 1e9)));
}

// Why a schedule lies outside the search space ("" when inside): a fused B cheaper than I + W, a pair the
// search does not form.
std::string outside_search_space(const Instance& inst, const Schedule& s);
// The nearest schedule inside the search space (search_space.cpp says how each slot is rewritten).
Schedule into_search_space(const Instance& inst, const Schedule& s, bool backward_first = false);
bool needs_rewrite(const Instance& inst, const Schedule& s);

class SearchDriver {
public:
    SearchDriver(const SearchProblem& problem, const SearchOptions& options)
        : problem_(problem), options_(options), t0_(options.started.value_or(Clock::now())),
          deadline_(t0_ + seconds(options.time_limit)),
          monitor_(options.progress, options.progress_interval, options.stop, t0_) {}

    // Every phase keeps to its share of the time. One that overruns it anyway (a single heuristic step or
    // bound on a huge instance, an encoding build) is cut at the hard deadline, hard_stop_grace() after the
    // limit, and the answer is what was established before: the best verified schedule and the best bound.
    SearchResult run();

private:
    SearchResult run_phases();

    // Linear-time bounds first, so that a search cut short on a huge instance still answers with one: the
    // busiest rank's load (its ops run one at a time) and the closed forms that apply (lower_bound.hpp).
    void take_quick_bounds();

    std::string text(Ticks ticks) const { return format_rational(inst_.scale.to_units(ticks)); }

    bool stopped() const { return monitor_.stop_requested() || limits::stop_requested(); }

    const std::atomic<bool>* stop_flag() const { return monitor_.stop_flag(); }

    // The state the progress reports show (search_monitor.hpp).
    void report(const std::string& event);

    void phase(const std::string& name);

    void log(const std::string& line);

    // The incumbent value in quantised units, rounded up (a query at T asks for value <= T * quantum).
    Ticks upper_units() const { return ceil_div(result_.value, inst_.quantum); }

    bool proven_optimal() const { return result_.schedule && lower_ >= upper_units(); }

    bool offer(Schedule schedule, const std::string& origin);

    void take_warm_starts();

    // A deadline for one phase; it leaves room to verify and time the schedule that phase returns.
    Clock::time_point share_of_remaining(double share) const;

    // Cheap test before any window is built: can either encoding be small enough at all?
    bool exact_engine_may_fit() const;

    void run_greedy_portfolio(double share);

    // Local search from the incumbent's orders (greedy_improve.hpp), on a share of the remaining time.
    void improve_incumbent(double share);

    // The ops of about the last 2P micro-batches: at large M the gap sits in the cool-down.
    size_t cool_down_ops() const;

    // Local search of the incumbent's last `want` ops, the rest frozen (greedy_improve.hpp,
    // improve_suffix): each move is timed over the suffix alone, and the kicks stay in it, so the search
    // digs where the gap is (DualPipe P=8 M=16 cap 8: 797831 -> 797230 where the whole-instance search
    // had converged; V P=16 M=1024 cap 32: ZBV's cool-down to the bound).
    void run_suffix_search(size_t want, double share);

    SearchEngine pick_engine(Ticks bound) const;

    // What every query of the search shares: its bound, the seed, the deadline, and the stop request.
    Z3Query z3_query(Ticks bound, Clock::time_point deadline);

    Z3Outcome query(SearchEngine engine, Ticks bound, Clock::time_point deadline, bool strengthen);

    void record_call(Ticks bound, const Z3Outcome& out, const std::string& what);

    // Exact one-rank relaxations (rank_relaxation.hpp), ranks with the highest rank-load bound first:
    // a query at the proven bound tells whether the rank can help at all (sat: go to the next rank);
    // if it cannot meet it, bisect between the bound and the incumbent on that rank's problem.
    void run_rank_relaxations(double share);

    // Relaxation-guided completion (pinned_completion.hpp) at the proven bound: the two-rank relaxation of
    // the rank with the highest bound and its busier neighbour (unsat proves the bound), then the full
    // problem with that rank pinned where the relaxation put it (sat: a schedule at the bound).
    void run_completion(double share);

    // Cool-down windows (z3_window.hpp): keep the incumbent's ops up to a time and let Z3 re-place the
    // rest under "objective <= proven bound"; the window grows (about 250, 500, ... free ops) while Z3
    // shows that it cannot reach the bound (which proves nothing about the bound itself).
    void run_windows(const Schedule base, const std::string& origin, double share);

    // The incumbent's steady state as a block (periodic.hpp, block_from_starts), when it passes the
    // block check; nothing otherwise. The check simulates enough periods to overlap every stash fully,
    // quadratic in that count: a block spread over more than 1024 periods is not read off (a real
    // steady state spans a round trip, a few periods).
    std::optional<PeriodicBlock> block_read_off_incumbent() const;

    static int periods_to_check(const PeriodicBlock& b);

    // The periodic block (periodic.hpp), anchored on the rank of the analytic bound, re-checked by
    // simulating it op by op; the schedule repeating it from micro-batch 0 is verified and offered. A
    // block read off the incumbent at the least integer period >= T* needs no solver; one above it
    // leaves Z3 only the periods below its own.
    void run_periodic();

    std::string relaxation_argument(int rank, const RankSubproblem& sub, Ticks bound) const;

    // Records what an UNSAT at `bound` proves.
    void proven_above(Ticks bound, const Z3Outcome& out, const std::string& argument = "");

    // Mirror-symmetric schedules (mirror_symmetry.hpp), descending from the incumbent: each sat is a
    // better schedule; the first unsat says the incumbent is the best of that class, which is reported
    // as such and never taken for a lower bound (DualPipe P=6 M=12 cap 6: 593548 -> 592947, the best
    // symmetric; P=8 M=16 cap 8: 797230 is the best symmetric).
    void run_mirror(double share);

    // Returns false when the model contradicts the encoding (it never should).
    bool accept_model(Ticks bound, const Z3Outcome& out, const std::string& origin = "z3");

    // Bound tightening: probe the lower bound first (a quarter of the time), then bisect. A query that
    // runs out of time says nothing; the next one asks for less (halfway to the incumbent). When the
    // gap is small, the proof is the bottleneck, so the incumbent is attacked directly (value - 1).
    void run_z3();

    // The proof to emit: "objective <= value - 1" (or "<= lower bound - 1" when a gap remains) with
    // windows from plain longest paths, which follow from the clauses in the file itself. A query that
    // used the same-rank load windows is kept only when the plain one cannot be shown in time.
    void finalize_proof();

    SearchResult finish();

    const SearchProblem& problem_;
    const SearchOptions& options_;
    Clock::time_point t0_, deadline_;
    SearchMonitor monitor_;
    std::string phase_ = "start";
    Instance inst_;
    std::optional<Schedule> periodic_schedule_;
    Windows windows_;  // for the proven bound windows_bound_, once computed (cool-down windows)
    Ticks windows_bound_ = -1;
    TaskBounds bounds_, plain_bounds_;  // with and without the same-rank load strengthening
    std::vector<RankBudget> budgets_;   // idle-budget cuts per rank (rank_budget.hpp)
    Ticks lower_ = 0;  // proven lower bound, quantised units
    Clock::duration evaluation_time_{};  // the longest verify + simulate so far
    SearchResult result_;
};

}  // namespace pp::search_detail
