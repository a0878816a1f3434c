// Optimal schedule search: the order of the phases and the answer (solver/search.hpp, search_driver.hpp).
#include "solver/search_driver.hpp"

#include <cstdio>

namespace pp::search_detail {

// Every phase keeps to its share of the time. One that overruns it anyway (a single heuristic step or
// bound on a huge instance, an encoding build) is cut at the hard deadline, hard_stop_grace() after the
// limit, and the answer is what was established before: the best verified schedule and the best bound.
SearchResult SearchDriver::run() {
    const limits::ScopedDeadline hard(limits::Deadline::at(deadline_ + seconds(hard_stop_grace(options_.time_limit))));
    try {
        return run_phases();
    } catch (const limits::Expired& e) {
        log("cut short (" + e.what + "): the answer is what was established before");
        result_.status = !result_.schedule ? SearchStatus::Unknown
                         : proven_optimal() ? SearchStatus::Optimal
                                            : SearchStatus::Feasible;
        return finish();
    }
}

SearchResult SearchDriver::run_phases() {
    result_.objective = problem_.objective;
    if (problem_.memory_limit) {
        const MemoryFloor floor = memory_floor(problem_.placement);
        if (*problem_.memory_limit < Rational(floor.units) * problem_.activations.forward_alloc) {
            result_.status = SearchStatus::Infeasible;
            result_.infeasible = floor;
            result_.lower_bound_kind = "memory-floor";
            result_.lower_bound_argument = floor.explanation;
            log("memory cap " + format_rational(*problem_.memory_limit) + " is below the floor " +
                std::to_string(floor.units) + ": infeasible");
            return finish();
        }
    }
    inst_ = build_instance(problem_);
    result_.scale = inst_.scale;
    result_.quantum = inst_.quantum;
    result_.tasks = inst_.size();
    phase("bounds");
    take_quick_bounds();
    bounds_ = compute_task_bounds(inst_, options_.strengthen);
    if (!options_.strengthen) plain_bounds_ = bounds_;
    result_.analytic = analytic_lower_bound(inst_, bounds_);
    budgets_ = rank_budgets(inst_, bounds_);
    if (result_.analytic.value >= lower_) {  // it is never below the busiest rank's load; ties go to it
        lower_ = result_.analytic.value;
        result_.lower_bound_kind = result_.analytic.kind;
        result_.lower_bound_argument = result_.analytic.derivation;
    }
    report("new bound");
    log("instance: " + std::to_string(inst_.size()) + " tasks, time unit " +
        format_rational(inst_.to_units(1)) + ", analytic lower bound " + text(lower_ * inst_.quantum) + " (" +
        result_.analytic.kind + ")");

    take_warm_starts();
    // Without an exact engine the heuristics get all the time. With the time-indexed one they get a
    // sixth; the disjunctive one rarely decides instances of a few hundred tasks with large
    // durations (z3-lessons §2), so local search gets half there.
    const SearchEngine engine = options_.engine == SearchEngine::None || !exact_engine_may_fit() ? SearchEngine::None
                                : result_.schedule ? pick_engine(upper_units() - 1)
                                                   : SearchEngine::Auto;
    const bool exact = engine != SearchEngine::None;
    if ((options_.periodic || (!exact && options_.engine != SearchEngine::None)) && !stopped() && !proven_optimal())
        run_periodic();
    // Without an exact engine, but with windows (z3_window.hpp) and the suffix search still to come, a tenth.
    const double search_share = options_.engine == SearchEngine::None ? 1.0
                                : !exact                            ? 0.1
                                : engine == SearchEngine::Disjunctive && inst_.size() > 200 ? 0.5
                                                                                            : 0.15;
    if (!proven_optimal()) run_greedy_portfolio(exact ? 0.2 : 0.5);
    if (result_.schedule && !proven_optimal()) improve_incumbent(search_share);
    // With an exact engine to come, suffixes of the last half, third and quarter of the ops (each
    // stops after 300 kicks without progress, so small instances return long before their share).
    if (exact)
        for (size_t part : {2, 3, 4}) run_suffix_search(inst_.size() / part, 0.1);
    if (exact && options_.mirror && result_.schedule) run_mirror(0.5);
    if (!result_.schedule) {
        result_.status = SearchStatus::Unknown;
        log("no schedule found");
        return finish();
    }
    if (proven_optimal()) {
        log("incumbent equals the lower bound: optimal without a solver call");
    } else if (stopped()) {
        // nothing more to do: the best schedule so far and its certified gap
    } else if (exact || options_.engine != SearchEngine::None) {
        if (options_.relaxations) run_rank_relaxations(0.3);
        if (options_.relaxations && !proven_optimal() && !stopped()) run_completion(exact ? 0.5 : 0.4);
        if (proven_optimal() || stopped()) {
        } else if (exact) {
            run_z3();
        } else {
            log("no exact engine fits this instance (encodings too large): heuristics, bounds, relaxations and "
                "cool-down windows only");
            // A cool-down window keeps everything before it, so the repeated block's windows are
            // worth time only when its warm-up is no worse than the incumbent's (value no higher).
            // Windows of the incumbent first (they close the 1F1B placement at P=16 M=1024 from the
            // greedy schedule; their unsat answers are quick), then the suffix search (it closes the
            // V map there from ZBV), then windows of what it found.
            const bool block_windows = periodic_schedule_ && result_.origin != "periodic block" &&
                                       result_.periodic_value <= result_.value;
            if (result_.schedule) run_windows(*result_.schedule, result_.origin, 0.5);
            const Ticks before_suffix = result_.value;
            run_suffix_search(cool_down_ops(), 0.7);
            if (!proven_optimal() && result_.value < before_suffix)
                run_windows(*result_.schedule, result_.origin, block_windows ? 0.6 : 1.0);
            if (!proven_optimal() && block_windows) run_windows(*periodic_schedule_, "periodic block", 1.0);
        }
    }
    if (!stopped()) finalize_proof();
    result_.status = proven_optimal() ? SearchStatus::Optimal : SearchStatus::Feasible;
    return finish();
}

// Linear-time bounds first, so that a search cut short on a huge instance still answers with one: the
// busiest rank's load (its ops run one at a time) and the closed forms that apply (lower_bound.hpp).
void SearchDriver::take_quick_bounds() {
    for (int r = 0; r < inst_.ranks; ++r) {
        Ticks load = 0;
        for (int t : inst_.rank_tasks[r]) load += min_occupancy(inst_, t);
        if (load > lower_) {
            lower_ = load;
            result_.lower_bound_kind = "rank-load";
            result_.lower_bound_argument = "rank " + std::to_string(r) + " runs its " +
                                           std::to_string(inst_.rank_tasks[r].size()) +
                                           " ops one at a time: at least " + text(load * inst_.quantum);
        }
    }
    result_.formulas = formula_bounds(inst_);
    for (const FormulaBound& f : result_.formulas)
        if (f.value > lower_) {
            lower_ = f.value;
            result_.lower_bound_kind = "formula";
            result_.lower_bound_argument = f.name + ": " + f.derivation;
        }
    report("new bound");
}

// The state the progress reports show (search_monitor.hpp).
void SearchDriver::report(const std::string& event) {
    SearchProgress p;
    p.phase = phase_;
    p.scale = inst_.scale;
    p.best = result_.schedule ? result_.value : -1;
    p.bound = lower_ * inst_.quantum;
    p.best_origin = result_.origin;
    monitor_.update(p, event);
}

void SearchDriver::phase(const std::string& name) {
    phase_ = name;
    report("");
}

void SearchDriver::log(const std::string& line) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%.2fs] ", seconds_since(t0_));
    result_.log.push_back(stamp + line);
}

bool SearchDriver::offer(Schedule schedule, const std::string& origin) {
    const auto before = Clock::now();
    const Evaluation e = evaluate_schedule(inst_, schedule);
    evaluation_time_ = std::max(evaluation_time_, Clock::now() - before);
    if (!e.ok) {
        log(origin + ": not used (" + e.problem + ")");
        return false;
    }
    if (result_.schedule && e.value >= result_.value) return false;
    schedule.gaps.clear();  // explicit idle cells of a generator say nothing about our timing
    result_.schedule = std::move(schedule);
    result_.origin = origin;
    result_.value = e.value;
    result_.makespan = e.makespan;
    result_.simulator_span = e.simulator_span;
    report("new best");
    return true;
}

// A deadline for one phase; it leaves room to verify and time the schedule that phase returns.
Clock::time_point SearchDriver::share_of_remaining(double share) const {
    const auto now = Clock::now();
    const auto end = deadline_ - 2 * evaluation_time_;
    if (now >= end) return now;
    return now + std::chrono::duration_cast<Clock::duration>((end - now) * share);
}

// Cheap test before any window is built: can either encoding be small enough at all?
bool SearchDriver::exact_engine_may_fit() const {
    if (inst_.size() <= options_.max_time_indexed_variables / 2) return true;
    Windows none;
    return !inst_.pairs_allowed() && disjunctive_variables(inst_, none) <= options_.max_disjunctive_variables;
}

// The ops of about the last 2P micro-batches: at large M the gap sits in the cool-down.
size_t SearchDriver::cool_down_ops() const {
    size_t stages = 0;
    for (const Pipeline& line : inst_.problem.placement.pipelines) stages += line.stage_rank.size();
    return 2 * static_cast<size_t>(inst_.ranks) * 3 * stages;
}

SearchResult SearchDriver::finish() {
    if (result_.status != SearchStatus::Infeasible) {
        result_.lower_bound = lower_ * inst_.quantum;
        if (result_.schedule && result_.lower_bound > result_.value) {
            // Never expected: a bound above a verified schedule means a bug in a bound or the encoding.
            log("internal error: lower bound " + text(result_.lower_bound) + " exceeds the verified value " +
                text(result_.value));
            result_.lower_bound = result_.value;
            result_.status = SearchStatus::Feasible;
            result_.lower_bound_kind = "internal-error";
        }
    }
    result_.seconds = seconds_since(t0_);
    result_.stopped = stopped();
    if (result_.stopped) {
        monitor_.acknowledge_stop();
        log("stopped on request: the best schedule so far and its certified gap");
    }
    phase("done");
    report(search_status_name(result_.status));
    return std::move(result_);
}

}  // namespace pp::search_detail

namespace pp {

const char* search_status_name(SearchStatus status) {
    switch (status) {
        case SearchStatus::Optimal: return "OPTIMAL";
        case SearchStatus::Feasible: return "FEASIBLE";
        case SearchStatus::Infeasible: return "INFEASIBLE";
        case SearchStatus::Unknown: return "UNKNOWN";
    }
    return "UNKNOWN";
}

Evaluation evaluate_schedule(const Instance& inst, Schedule& schedule) {
    Evaluation e;
    if (!same_placement(schedule.placement, inst.problem.placement)) {
        e.problem = "a different placement";
        return e;
    }
    schedule.costs = inst.problem.costs;
    schedule.memory_limit = inst.problem.memory_limit;  // exact, as given
    ActivationModel written = inst.problem.activations;  // a file's activation-sizes line has no per-stage sizes
    written.stage_scale.clear();
    if (!(written == ActivationModel{})) schedule.activation_sizes = written;
    const ScheduleGraph graph = build_schedule_graph(schedule);
    VerifyOptions vo;
    vo.memory_limit = schedule.memory_limit;
    vo.activations = inst.problem.activations;
    const VerifyReport report = verify(schedule, graph, vo);
    if (!report.ok()) {
        e.problem = std::string(violation_name(report.violations.front().kind)) + ": " + report.violations.front().message;
        return e;
    }
    const Simulation sim = simulate(schedule, graph, inst.problem.costs);
    e.makespan = sim.makespan;
    for (int r = 0; r < inst.ranks; ++r) {
        const RankTiming& t = sim.ranks[r];
        e.simulator_span = std::max(e.simulator_span, t.last_end - t.first_start);
        if (inst.problem.objective == Objective::Span)
            e.value = std::max(e.value, t.last_end - inst.to_ticks(inst.earliest_rank_start[r]));
    }
    if (inst.problem.objective == Objective::Makespan) e.value = sim.makespan;
    e.ok = true;
    return e;
}

double hard_stop_grace(double time_limit) { return std::clamp(0.1 * time_limit, 0.5, 5.0); }

SearchResult search(const SearchProblem& problem, const SearchOptions& options) { return search_detail::SearchDriver(problem, options).run(); }

}  // namespace pp
