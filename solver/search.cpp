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
#include <cmath>
#include <cstdio>

namespace pp {
namespace {

Ticks ceil_div(Ticks a, Ticks b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Does a slot's pair match the pairs the search forms? (F&B: F with a fused B; F&I: F with an I.)
bool pair_in_space(const Instance& inst, const Slot& slot) {
    if (!inst.pairs_allowed()) return false;
    return slot.ops[1].kind == (inst.fused_pairs() ? OpKind::B : OpKind::I);
}

// An unpaired fused B is inside the search space when it costs at least I + W (then I immediately
// followed by W does as well); a pair must be of the kind the search forms.
std::string outside_search_space(const Instance& inst, const Schedule& s) {
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) {
            if (slot.is_pair() && !pair_in_space(inst, slot))
                return inst.pairs_allowed() ? std::string("pairs an F with ") + kind_letter(slot.ops[1].kind) +
                                                  " while the search pairs " + pair_kind_name(inst.problem.pair_kind)
                                            : "has overlapped pairs and no --overlap cost";
            if (slot.is_pair()) continue;
            const Op& op = slot.ops[0];
            if (op.kind != OpKind::B) continue;
            const auto& c = inst.problem.costs.of_block(inst.problem.placement.block_of(op.pipeline, op.stage));
            if (c.full_backward() < c.I + c.W) return "uses a fused B cheaper than I + W";
        }
    return "";
}

// The nearest schedule inside the search space: an unpaired fused B becomes I immediately followed by
// W; a pair of the wrong kind becomes what the search can form (F&B -> F&I then W, F&I -> F then I,
// any pair without --overlap -> its ops one after the other: the F first, or with backward_first the
// backward first, which frees an activation before the F takes one -- the order a tight cap needs).
Schedule into_search_space(const Instance& inst, const Schedule& s, bool backward_first = false) {
    Schedule out = s;
    out.gaps.clear();
    for (auto& slots : out.ranks) {
        std::vector<Slot> split;
        for (const Slot& slot : slots) {
            if (slot.is_pair() && pair_in_space(inst, slot)) {
                split.push_back(slot);
                continue;
            }
            const Op* backward = nullptr;
            for (const Op& op : slot)
                if (op.kind == OpKind::B || op.kind == OpKind::I) backward = &op;
            if (!backward || (!slot.is_pair() && backward->kind == OpKind::I)) {
                split.push_back(slot);
                continue;
            }
            const Op i{OpKind::I, backward->pipeline, backward->stage, backward->microbatch};
            const Op w{OpKind::W, backward->pipeline, backward->stage, backward->microbatch};
            if (slot.is_pair() && inst.pairs_allowed() && !inst.fused_pairs()) {
                split.push_back(Slot::pair(slot.ops[0], i));
            } else if (slot.is_pair() && backward_first) {
                split.push_back(Slot::single(i));
                if (backward->kind == OpKind::B) split.push_back(Slot::single(w));
                split.push_back(Slot::single(slot.ops[0]));
                continue;
            } else {
                if (slot.is_pair()) split.push_back(Slot::single(slot.ops[0]));
                split.push_back(Slot::single(i));
            }
            if (backward->kind == OpKind::B) split.push_back(Slot::single(w));
        }
        slots = std::move(split);
    }
    return out;
}

bool needs_rewrite(const Instance& inst, const Schedule& s) {
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) {
            if (slot.is_pair() ? !pair_in_space(inst, slot) : slot.ops[0].kind == OpKind::B) return true;
        }
    return false;
}

// A duration from seconds; beyond 10^9 s (32 years) a limit is no limit, and the conversion would overflow.
Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::clamp(s, 0.0, 1e9)));
}

class Driver {
public:
    Driver(const SearchProblem& problem, const SearchOptions& options)
        : problem_(problem), options_(options), t0_(options.started.value_or(Clock::now())),
          deadline_(t0_ + seconds(options.time_limit)),
          monitor_(options.progress, options.progress_interval, options.stop, t0_) {}

    // Every phase keeps to its share of the time. One that overruns it anyway (a single heuristic step or
    // bound on a huge instance, an encoding build) is cut at the hard deadline, hard_stop_grace() after the
    // limit, and the answer is what was established before: the best verified schedule and the best bound.
    SearchResult run() {
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

private:
    SearchResult run_phases() {
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
    void take_quick_bounds() {
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

    std::string text(Ticks ticks) const { return format_rational(inst_.scale.to_units(ticks)); }

    bool stopped() const { return monitor_.stop_requested() || limits::stop_requested(); }
    const std::atomic<bool>* stop_flag() const { return monitor_.stop_flag(); }

    // The state the progress reports show (search_monitor.hpp).
    void report(const std::string& event) {
        SearchProgress p;
        p.phase = phase_;
        p.scale = inst_.scale;
        p.best = result_.schedule ? result_.value : -1;
        p.bound = lower_ * inst_.quantum;
        p.best_origin = result_.origin;
        monitor_.update(p, event);
    }
    void phase(const std::string& name) {
        phase_ = name;
        report("");
    }
    void log(const std::string& line) {
        char stamp[32];
        std::snprintf(stamp, sizeof stamp, "[%.2fs] ", seconds_since(t0_));
        result_.log.push_back(stamp + line);
    }

    // The incumbent value in quantised units, rounded up (a query at T asks for value <= T * quantum).
    Ticks upper_units() const { return ceil_div(result_.value, inst_.quantum); }
    bool proven_optimal() const { return result_.schedule && lower_ >= upper_units(); }

    bool offer(Schedule schedule, const std::string& origin) {
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

    void take_warm_starts() {
        phase("library schedules");
        std::vector<WarmStart> starts;
        for (const WarmStart& w : options_.warm_starts) {
            if (!same_placement(w.schedule.placement, inst_.problem.placement)) continue;
            starts.push_back(w);
            const bool rewrite = needs_rewrite(inst_, w.schedule);
            if (rewrite) starts.push_back({w.origin + "+split", into_search_space(inst_, w.schedule)});
            // Under a cap: the split that frees before it allocates, and, when some forward still
            // exceeds the cap, that order repaired (cap_repair.hpp).
            if (!inst_.cap || inst_.pairs_allowed()) continue;
            Schedule in_space = rewrite ? into_search_space(inst_, w.schedule, true) : w.schedule;
            const std::string name = w.origin + (rewrite ? "+split(backward first)" : "");
            if (auto repaired = repaired_to_cap(in_space, *inst_.cap))
                starts.push_back({name + "+cap-repair", std::move(*repaired)});
            else if (rewrite)
                starts.push_back({name, std::move(in_space)});
        }
        for (NamedSchedule& n : cap_filled_warm_starts(inst_)) starts.push_back({"cap-filled " + n.origin, std::move(n.schedule)});
        // The Zero Bubble paper's own heuristic (zb_auto_schedule.hpp), best of its variants, under this cap (it
        // applies to the 1F1B placement without pairs): on P=32 M=256 cap 64 it is the optimum at once.
        if (auto z = zb_auto_schedule(inst_, deadline_)) starts.push_back({z->origin, std::move(z->schedule)});
        for (const WarmStart& w : starts) {
            if (result_.schedule && (stopped() || Clock::now() >= deadline_)) {
                log("time is up: the remaining library schedules are not evaluated");
                break;
            }
            Schedule s = w.schedule;
            const std::string outside = outside_search_space(inst_, s);
            if (!outside.empty()) {
                log(w.origin + ": not used (" + outside + ")");
                continue;
            }
            const Evaluation e = evaluate_schedule(inst_, s);
            if (e.ok && (result_.warm_start_value < 0 || e.value < result_.warm_start_value))
                result_.warm_start_value = e.value, result_.best_warm_start = w.origin;
            if (offer(std::move(s), w.origin)) log(w.origin + ": " + text(result_.value));
        }
    }

    // A deadline for one phase; it leaves room to verify and time the schedule that phase returns.
    Clock::time_point share_of_remaining(double share) const {
        const auto now = Clock::now();
        const auto end = deadline_ - 2 * evaluation_time_;
        if (now >= end) return now;
        return now + std::chrono::duration_cast<Clock::duration>((end - now) * share);
    }

    // Cheap test before any window is built: can either encoding be small enough at all?
    bool exact_engine_may_fit() const {
        if (inst_.size() <= options_.max_time_indexed_variables / 2) return true;
        Windows none;
        return !inst_.pairs_allowed() && disjunctive_variables(inst_, none) <= options_.max_disjunctive_variables;
    }

    void run_greedy_portfolio(double share) {
        phase("greedy");
        const auto greedy_deadline = share_of_remaining(share);
        const GreedySchedule g = best_greedy(inst_, bounds_, greedy_deadline, &result_.greedy_rules, stop_flag());
        if (!g.ok) return;
        result_.greedy_value = g.objective * inst_.quantum;
        log("greedy " + g.rule.name() + ": " + text(result_.greedy_value) + " (best of " +
            std::to_string(result_.greedy_rules) + " rules)");
        offer(schedule_from_starts(inst_, g.start, g.partner), "greedy:" + g.rule.name());
    }

    // Local search from the incumbent's orders (greedy_improve.hpp), on a share of the remaining time.
    void improve_incumbent(double share) {
        const auto orders = orders_of(inst_, *result_.schedule);
        if (!orders || stopped()) return;
        phase("local search");
        const GreedySchedule g = iterated_local_search(inst_, *orders, share_of_remaining(share), options_.seed, stop_flag());
        if (g.ok && offer(schedule_from_starts(inst_, g.start, g.partner), "local-search(" + result_.origin + ")"))
            log("local search: " + text(result_.value));
    }

    // The ops of about the last 2P micro-batches: at large M the gap sits in the cool-down.
    size_t cool_down_ops() const {
        size_t stages = 0;
        for (const Pipeline& line : inst_.problem.placement.pipelines) stages += line.stage_rank.size();
        return 2 * static_cast<size_t>(inst_.ranks) * 3 * stages;
    }

    // Local search of the incumbent's last `want` ops, the rest frozen (greedy_improve.hpp,
    // improve_suffix): each move is timed over the suffix alone, and the kicks stay in it, so the search
    // digs where the gap is (DualPipe P=8 M=16 cap 8: 797831 -> 797230 where the whole-instance search
    // had converged; V P=16 M=1024 cap 32: ZBV's cool-down to the bound).
    void run_suffix_search(size_t want, double share) {
        if (proven_optimal() || stopped() || !result_.schedule) return;
        want = std::min(want, inst_.size());
        if (want == 0) return;
        const auto orders = orders_of(inst_, *result_.schedule);
        if (!orders) return;
        const GreedySchedule g = time_orders(inst_, *orders);
        if (!g.ok) return;
        std::vector<Ticks> starts = g.start;
        std::nth_element(starts.begin(), starts.begin() + (want - 1), starts.end(), std::greater<Ticks>());
        const Ticks from = starts[want - 1];
        phase("local search of the last " + std::to_string(want) + " ops");
        const GreedySchedule better =
            improve_suffix(inst_, *orders, from, share_of_remaining(share), options_.seed, stop_flag());
        if (better.ok && offer(schedule_from_starts(inst_, better.start, better.partner), "suffix-search(" + result_.origin + ")"))
            log("local search of the last " + std::to_string(want) + " ops: " + text(result_.value));
    }

    SearchEngine pick_engine(Ticks bound) const {
        if (options_.engine != SearchEngine::Auto) return options_.engine;
        const Windows w = windows_for_bound(inst_, bounds_, bound, false);  // sizes only: skip the load pass
        if (w.empty_task >= 0 || time_indexed_variables(inst_, w) <= options_.max_time_indexed_variables)
            return SearchEngine::TimeIndexed;
        if (!inst_.pairs_allowed() && disjunctive_variables(inst_, w) <= options_.max_disjunctive_variables)
            return SearchEngine::Disjunctive;
        return SearchEngine::None;
    }

    // What every query of the search shares: its bound, the seed, the deadline, and the stop request.
    Z3Query z3_query(Ticks bound, Clock::time_point deadline) {
        Z3Query q;
        q.bound = bound;
        q.seed = options_.seed;
        q.deadline = deadline;
        q.stop = options_.stop;
        return q;
    }

    Z3Outcome query(SearchEngine engine, Ticks bound, Clock::time_point deadline, bool strengthen) {
        Z3Query q = z3_query(bound, deadline);
        q.strengthen = strengthen;
        q.keep_smt2 = options_.want_proof;
        phase("z3 " + std::string(engine == SearchEngine::TimeIndexed ? "time-indexed" : "disjunctive") + " <= " +
              text(bound * inst_.quantum));
        q.max_variables = engine == SearchEngine::TimeIndexed ? options_.max_time_indexed_variables
                                                               : options_.max_disjunctive_variables;
        const TaskBounds& b = strengthen ? bounds_ : plain_bounds_;
        // The idle-budget cuts (rank_budget.hpp) go with the strengthened windows: both are implied by
        // lemmas, not by the formula's own clauses, so a plain query (the emitted proof) has neither.
        // DualPipe P=8 M=16 cap 8: "<= 797229" is unsat with them (490 s), undecided without (540 s).
        if (strengthen && engine == SearchEngine::Disjunctive) q.budgets = &budgets_;
        Z3Outcome out = engine == SearchEngine::TimeIndexed ? solve_time_indexed(inst_, b, q) : solve_disjunctive(inst_, b, q);
        record_call(bound, out, "");
        return out;
    }

    void record_call(Ticks bound, const Z3Outcome& out, const std::string& what) {
        Z3Call call{bound * inst_.quantum, out.answer, out.engine, out.reason, out.variables, out.constraints,
                    out.build_seconds, out.solve_seconds};
        result_.calls.push_back(call);
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.2f s", out.build_seconds + out.solve_seconds);
        log("z3 " + out.engine + what + " makespan" + std::string(problem_.objective == Objective::Span ? "/span" : "") +
            " <= " + text(bound * inst_.quantum) + ": " + z3_answer_name(out.answer) +
            (out.reason.empty() ? "" : " (" + out.reason + ")") + ", " + std::to_string(out.variables) + " vars, " +
            seconds);
    }

    // Exact one-rank relaxations (rank_relaxation.hpp), ranks with the highest rank-load bound first:
    // a query at the proven bound tells whether the rank can help at all (sat: go to the next rank);
    // if it cannot meet it, bisect between the bound and the incumbent on that rank's problem.
    void run_rank_relaxations(double share) {
        if (inst_.pairs_allowed() || proven_optimal() || stopped()) return;
        const auto until = share_of_remaining(share);
        std::vector<int> order(inst_.ranks);
        for (int r = 0; r < inst_.ranks; ++r) order[r] = r;
        const auto& per_rank = result_.analytic.per_rank;
        if (per_rank.size() == order.size())
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return per_rank[a] > per_rank[b]; });
        for (int r : order) {
            if (proven_optimal() || stopped() || Clock::now() >= until) return;
            const size_t n = inst_.rank_tasks[r].size();  // the disjunctive size, before building anything
            if (n + n * (n - 1) / 2 > options_.max_relaxation_variables) {
                log("rank " + std::to_string(r) + " relaxation: too large (" + std::to_string(n) + " ops), skipped");
                continue;
            }
            const RankSubproblem sub = rank_subproblem(inst_, r);
            Ticks lo = lower_, hi = upper_units() - 1;
            for (bool first = true; lo <= hi && !stopped() && Clock::now() < until; first = false) {
                const Ticks bound = first ? lo : lo + (hi - lo) / 2;
                phase("rank " + std::to_string(r) + " relaxation <= " + text(bound * inst_.quantum));
                const Windows w = windows_for_bound(inst_, bounds_, bound, options_.strengthen);
                Z3Query q = z3_query(bound, until);
                q.keep_smt2 = options_.want_proof;
                q.max_variables = options_.max_relaxation_variables;
                const std::vector<RankBudget> budget{budgets_.empty() ? RankBudget{} : budgets_[r]};
                // The rank keeps all its ops: its idle budget holds as it is. Only with a few seconds to
                // spend: with the cuts (sums) Z3 overruns its timeout by up to about half a second.
                if (until - Clock::now() >= std::chrono::seconds(5)) q.budgets = &budget;
                const Z3Outcome out = solve_rank_subproblem(sub, w, q);
                record_call(bound, out, " (rank " + std::to_string(r) + ")");
                if (out.answer == Z3Answer::Unsat) {
                    proven_above(bound, out, relaxation_argument(r, sub, bound));
                    lo = bound + 1;
                } else if (out.answer == Z3Answer::Sat) {
                    if (first) break;  // this rank alone does not rule out the proven bound
                    hi = bound - 1;
                } else {
                    break;
                }
            }
        }
    }

    // Relaxation-guided completion (pinned_completion.hpp) at the proven bound: the two-rank relaxation of
    // the rank with the highest bound and its busier neighbour (unsat proves the bound), then the full
    // problem with that rank pinned where the relaxation put it (sat: a schedule at the bound).
    void run_completion(double share) {
        if (inst_.pairs_allowed() || inst_.problem.objective != Objective::Makespan || proven_optimal() || stopped()) return;
        const auto& per_rank = result_.analytic.per_rank;
        if (per_rank.size() != static_cast<size_t>(inst_.ranks) || inst_.ranks < 2) return;
        const int r = static_cast<int>(std::max_element(per_rank.begin(), per_rank.end()) - per_rank.begin());
        int neighbour = -1;
        for (int n : {r - 1, r + 1})
            if (n >= 0 && n < inst_.ranks && (neighbour < 0 || per_rank[n] > per_rank[neighbour])) neighbour = n;
        const auto until = share_of_remaining(share);
        if (until - Clock::now() < std::chrono::seconds(5)) return;  // two Z3 calls: not worth less
        const Ticks bound = lower_;
        const Windows w = windows_for_bound(inst_, bounds_, bound, options_.strengthen);
        if (disjunctive_variables(inst_, w) > options_.max_disjunctive_variables) {
            log("relaxation-guided completion: the full encoding is too large, skipped");
            return;
        }
        phase("completion: ranks " + std::to_string(r) + "+" + std::to_string(neighbour) + " <= " + text(bound * inst_.quantum));
        Z3Query q = z3_query(bound, until);
        q.max_variables = options_.max_disjunctive_variables;
        q.keep_smt2 = options_.want_proof;  // the relaxation's query, should it be unsat
        const CompletionOutcome out = complete_from_relaxation(inst_, w, budgets_, r, neighbour, q, 0.5);
        const std::string ranks = "ranks " + std::to_string(r) + "+" + std::to_string(neighbour);
        record_call(bound, out.relaxation, " (" + ranks + " relaxation)");
        if (out.relaxation.answer == Z3Answer::Unsat) {
            proven_above(bound, out.relaxation,
                         ranks + " alone cannot meet " + text(bound * inst_.quantum) +
                             " (Z3, disjunctive encoding of their relaxation with idle-budget cuts): their " +
                             std::to_string(out.relaxation_tasks) +
                             " ops inside their windows for that bound, with the precedence delays through the "
                             "other ranks, one op at a time per rank and the memory cap, have no schedule "
                             "(solver/subset_relaxation.hpp, solver/rank_budget.hpp)");
            return;
        }
        if (out.completion.answer == Z3Answer::Skipped) return;
        if (out.pinned != Z3Answer::Sat && out.completion.engine == "order-completion")
            log("relaxation-guided completion: rank " + std::to_string(r) + " pinned at the relaxation's times: " +
                z3_answer_name(out.pinned) + "; its order only:");
        record_call(bound, out.completion, " (rank " + std::to_string(r) + (out.completion.engine == "order-completion" ? " order" : " pinned") + ")");
        if (out.completion.answer == Z3Answer::Sat) accept_model(bound, out.completion);
    }

    // Cool-down windows (z3_window.hpp): keep the incumbent's ops up to a time and let Z3 re-place the
    // rest under "objective <= proven bound"; the window grows (about 250, 500, ... free ops) while Z3
    // shows that it cannot reach the bound (which proves nothing about the bound itself).
    void run_windows(const Schedule base, const std::string& origin, double share) {
        if (inst_.pairs_allowed() || proven_optimal() || stopped()) return;
        phase("cool-down windows");
        if (windows_.est.empty() || windows_bound_ != lower_)
            windows_ = windows_for_bound(inst_, bounds_, lower_, options_.strengthen), windows_bound_ = lower_;
        const Windows& w = windows_;
        if (w.empty_task >= 0) return;
        const auto end = share_of_remaining(share);
        for (size_t size = 250; size <= 4000 && !proven_optimal() && !stopped(); size *= 2) {
            const auto orders = orders_of(inst_, base);
            if (!orders) return;
            const GreedySchedule g = time_orders(inst_, *orders);
            if (!g.ok) return;
            std::vector<Ticks> starts = g.start;
            std::sort(starts.begin(), starts.end(), std::greater<Ticks>());
            if (size >= starts.size()) return;
            const Ticks from = starts[size - 1];
            const std::vector<bool> free_task = ops_from(g.start, from);
            const size_t n = static_cast<size_t>(std::count(free_task.begin(), free_task.end(), true));
            const auto until = size >= 2000 ? end : Clock::now() + (end - Clock::now()) / 2;
            if (until - Clock::now() < std::chrono::milliseconds(500)) return;
            Z3Query q = z3_query(lower_, until);
            q.max_variables = options_.max_disjunctive_variables;
            phase("cool-down window of " + std::to_string(n) + " ops <= " + text(lower_ * inst_.quantum));
            const Z3Outcome out = solve_window(inst_, w, g.start, free_task, q);
            record_call(lower_, out, " (the last " + std::to_string(n) + " ops of " + origin + ")");
            if (out.answer == Z3Answer::Sat) {
                Schedule s = schedule_from_starts(inst_, out.start, out.partner);
                const Evaluation e = evaluate_schedule(inst_, s);
                if (!e.ok || e.value > lower_ * inst_.quantum) {
                    log("internal error: the window model does not re-time within the bound (" +
                        (e.ok ? text(e.value) : e.problem) + ")");
                    return;
                }
                offer(std::move(s), "z3 cool-down window(" + origin + ")");
                return;
            }
            if (out.answer != Z3Answer::Unsat) return;
        }
    }

    // The incumbent's steady state as a block (periodic.hpp, block_from_starts), when it passes the
    // block check; nothing otherwise. The check simulates enough periods to overlap every stash fully,
    // quadratic in that count: a block spread over more than 1024 periods is not read off (a real
    // steady state spans a round trip, a few periods).
    std::optional<PeriodicBlock> block_read_off_incumbent() const {
        if (!result_.schedule) return std::nullopt;
        const auto orders = orders_of(inst_, *result_.schedule);
        if (!orders) return std::nullopt;
        const GreedySchedule g = time_orders(inst_, *orders);
        if (!g.ok) return std::nullopt;
        PeriodicBlock b = block_from_starts(inst_, g.start, &bounds_.head);
        if (!b.found || periods_to_check(b) > 2 * 1024 + 4 || !check_periodic_block(inst_, b, periods_to_check(b)).empty())
            return std::nullopt;
        return b;
    }

    static int periods_to_check(const PeriodicBlock& b) {
        Ticks reach = 0;
        for (const Ticks& o : b.offset) reach = std::max(reach, o);
        const Ticks periods = (reach / b.period) * Ticks(2) + Ticks(4);
        return periods > Ticks(1 << 20) ? 1 << 20 : static_cast<int>(periods.to_int64());
    }

    // The periodic block (periodic.hpp), anchored on the rank of the analytic bound, re-checked by
    // simulating it op by op; the schedule repeating it from micro-batch 0 is verified and offered. A
    // block read off the incumbent at the least integer period >= T* needs no solver; one above it
    // leaves Z3 only the periods below its own.
    void run_periodic() {
        if (inst_.pairs_allowed()) return;
        phase("periodic block");
        const std::optional<PeriodicBlock> read = block_read_off_incumbent();
        const Ticks least = read ? (read->bound.numerator() + read->bound.denominator() - Ticks(1)) / read->bound.denominator()
                                 : Ticks(0);
        PeriodicBlock b;
        if (read && read->period <= least) {
            b = *read;
        } else {
            const int below = read && read->period - least < Ticks(64) ? static_cast<int>((read->period - least).to_int64()) : 64;
            b = find_periodic_block(inst_, share_of_remaining(0.1), below, &bounds_.head, result_.analytic.rank,
                                    options_.stop);
            if (!b.found && read) b = *read;
        }
        if (b.found && read && b.period == read->period && b.offset == read->offset)
            log("periodic block: read off the steady state of " + result_.origin + " (no solver call)");
        if (!b.found) {
            log("periodic block: none (" + b.reason + ")");
            result_.periodic = std::move(b);
            return;
        }
        const std::string bad = check_periodic_block(inst_, b, periods_to_check(b));
        if (!bad.empty()) {
            log("internal error: the periodic block fails its own check (" + bad + ")");
            return;
        }
        const bool optimal = Rational(b.period) == b.bound;
        log("periodic block: period " + text(b.period * inst_.quantum) + " per micro-batch" +
            (inst_.problem.placement.pipeline_count() > 1 ? " (of each pipeline)" : "") + ", throughput bound " +
            format_rational(b.bound * Rational(inst_.quantum) / Rational(inst_.scale.ticks_per_unit)) +
            (optimal ? " (throughput-optimal: " : " (gap; ") + b.bound_argument + ")" +
            (b.anchored_rank >= 0 ? ", rank " + std::to_string(b.anchored_rank) + " starts at its head" : ""));
        Schedule s = schedule_from_starts(inst_, periodic_starts(inst_, b), std::vector<int>(inst_.size(), -1));
        const Evaluation e = evaluate_schedule(inst_, s);
        if (!e.ok) {
            log("internal error: the repeated periodic block does not verify (" + e.problem + ")");
        } else {
            result_.periodic_value = e.value;
            log("periodic block repeated from micro-batch 0: " + text(e.value));
            periodic_schedule_ = s;
            offer(std::move(s), "periodic block");
        }
        result_.periodic = std::move(b);
    }

    std::string relaxation_argument(int rank, const RankSubproblem& sub, Ticks bound) const {
        return "rank " + std::to_string(rank) + " alone cannot meet " + text(bound * inst_.quantum) +
               " (Z3, disjunctive encoding of its one-rank relaxation): its " + std::to_string(sub.inst.size()) +
               " ops, each inside its window for that bound (longest paths and same-rank loads), " +
               std::to_string(sub.inst.edges.size()) +
               " precedence delays through the other ranks (longest paths, least durations), one op at a time" +
               (inst_.cap ? ", at most " + std::to_string(*inst_.cap) + " live activations" : std::string()) +
               ", have no schedule (solver/rank_relaxation.hpp)";
    }

    // Records what an UNSAT at `bound` proves.
    void proven_above(Ticks bound, const Z3Outcome& out, const std::string& argument = "") {
        if (bound + 1 <= lower_) return;
        lower_ = bound + 1;
        report("new bound");
        const bool window = out.reason.rfind("empty window", 0) == 0;
        result_.lower_bound_kind = window ? "empty-window" : out.engine == "rank-relaxation" ? "rank-relaxation"
                                   : out.engine == "subset-relaxation" ? "subset-relaxation" : "z3-unsat";
        result_.lower_bound_argument =
            window ? "no schedule has objective <= " + text(bound * inst_.quantum) + ": " + out.reason
            : !argument.empty() ? argument
                                : "Z3 (" + out.engine + " encoding) proved that no schedule has objective <= " +
                                      text(bound * inst_.quantum);
        if (!window && options_.want_proof) {
            result_.proof_smt2 = out.smt2;
            result_.proof_bound = bound * inst_.quantum;
            result_.proof_engine = out.engine;
            result_.proof_plain_windows = !options_.strengthen;
        }
    }

    // Mirror-symmetric schedules (mirror_symmetry.hpp), descending from the incumbent: each sat is a
    // better schedule; the first unsat says the incumbent is the best of that class, which is reported
    // as such and never taken for a lower bound (DualPipe P=6 M=12 cap 6: 593548 -> 592947, the best
    // symmetric; P=8 M=16 cap 8: 797230 is the best symmetric).
    void run_mirror(double share) {
        if (proven_optimal() || stopped()) return;
        const std::optional<MirrorMap> mirror = mirror_map(inst_);
        if (!mirror) return;  // not a mirrored placement: nothing to say
        const std::vector<int> tied = tied_starts(*mirror);
        const auto until = share_of_remaining(share);
        while (!proven_optimal() && !stopped() && Clock::now() < until) {
            const Ticks bound = upper_units() - 1;
            const Windows w = windows_for_bound(inst_, bounds_, bound, options_.strengthen);
            if (disjunctive_variables(inst_, w) > options_.max_disjunctive_variables) return;
            Z3Query q = z3_query(bound, until);
            q.budgets = &budgets_;
            q.tied = &tied;
            phase("z3 mirror-symmetric <= " + text(bound * inst_.quantum));
            Z3Outcome out = solve_disjunctive_in(inst_, w, q);
            out.engine = "disjunctive, mirror-symmetric";
            record_call(bound, out, "");
            if (out.answer == Z3Answer::Sat) {
                if (!accept_model(bound, out, "z3 mirror-symmetric")) return;
                continue;
            }
            if (out.answer == Z3Answer::Unsat) {
                result_.mirror_bound = (bound + 1) * inst_.quantum;
                result_.mirror_argument =
                    "Z3 (disjunctive encoding, start of every task tied to its mirror's: pipeline 0 <-> 1, rank r <-> " +
                    std::string("its mirror) proved that no mirror-symmetric schedule has objective <= ") +
                    text(bound * inst_.quantum) + "; asymmetric schedules are not covered";
                log("no mirror-symmetric schedule below " + text(result_.mirror_bound) +
                    " (a bound on that class, not on the instance)");
            }
            return;
        }
    }

    // Returns false when the model contradicts the encoding (it never should).
    bool accept_model(Ticks bound, const Z3Outcome& out, const std::string& origin = "z3") {
        Schedule s = schedule_from_starts(inst_, out.start, out.partner);
        const Evaluation e = evaluate_schedule(inst_, s);
        if (!e.ok || e.value > bound * inst_.quantum) {
            log("internal error: the Z3 model does not re-time within the bound (" +
                (e.ok ? text(e.value) : e.problem) + "); stopping");
            return false;
        }
        offer(std::move(s), origin);
        return true;
    }

    // Bound tightening: probe the lower bound first (a quarter of the time), then bisect. A query that
    // runs out of time says nothing; the next one asks for less (halfway to the incumbent). When the
    // gap is small, the proof is the bottleneck, so the incumbent is attacked directly (value - 1).
    void run_z3() {
        bool probed = false;
        Ticks undecided = -1;  // the last bound whose query ran out of time
        Ticks settle_failed = -1;  // the last "<= incumbent - 1" that ran out of time
        while (!proven_optimal() && Clock::now() < deadline_ && !stopped()) {
            const Ticks hi = upper_units();  // a schedule with value <= hi * quantum is known
            const bool small_gap = hi - lower_ <= std::max<Ticks>(2, hi / 500);
            Ticks bound;
            double share = 0.5;
            const bool settle = small_gap && settle_failed != hi - 1;
            if (settle) {
                // Settle the incumbent first: with a gap this small a bisection step buys little, and
                // "<= incumbent - 1" was the easier unsat where the bound was short (DualPipe P=6 cap 6:
                // 43 s against 104 s for the probe at the bound; P=8 cap 8: 490 s against 418 s + 490 s).
                // A sat answer is a better incumbent, and the next round asks below that one.
                bound = hi - 1;
                share = probed || bound <= lower_ ? 1.0 : 0.75;
                if (bound <= lower_) probed = true;
            } else if (!probed) {
                bound = lower_, share = small_gap ? 1.0 : 0.25, probed = true;
            } else if (small_gap) {
                return;  // "<= incumbent - 1" ran out of time, and so did the probe at the bound
            } else if (undecided >= 0) {
                if (undecided >= hi - 1) return;
                bound = undecided + std::max<Ticks>(1, (hi - undecided) / 2);
            } else {
                bound = lower_ + (hi - 1 - lower_) / 2;
            }
            if (bound >= hi - 1 && !settle) share = 1.0;
            const SearchEngine engine = pick_engine(bound);
            if (engine == SearchEngine::None) {
                log("no exact engine fits this bound (encodings too large)");
                return;
            }
            const auto until = share_of_remaining(share);
            if (probed && result_.calls.size() > 0 && until - Clock::now() < std::chrono::milliseconds(500)) {
                log("too little time left for another solver call");
                return;
            }
            const Z3Outcome out = query(engine, bound, until, options_.strengthen);
            if (out.answer == Z3Answer::Unsat) {
                proven_above(bound, out);
                undecided = -1;
            } else if (out.answer == Z3Answer::Sat) {
                if (!accept_model(bound, out)) return;
                undecided = -1;
            } else if (out.answer == Z3Answer::Skipped) {
                return;
            } else {
                undecided = bound;
                if (settle) settle_failed = bound;
            }
        }
    }

    // The proof to emit: "objective <= value - 1" (or "<= lower bound - 1" when a gap remains) with
    // windows from plain longest paths, which follow from the clauses in the file itself. A query that
    // used the same-rank load windows is kept only when the plain one cannot be shown in time.
    void finalize_proof() {
        if (!options_.want_proof || !result_.schedule) return;
        const Ticks bound = (proven_optimal() ? upper_units() : lower_) - 1;
        if (bound < 0 || Clock::now() >= deadline_) return;
        if (result_.proof_bound == bound * inst_.quantum && result_.proof_plain_windows) return;
        if (plain_bounds_.head.empty()) plain_bounds_ = compute_task_bounds(inst_, false);
        const Windows w = windows_for_bound(inst_, plain_bounds_, bound, false);
        if (w.empty_task >= 0) {
            const auto chain = critical_path_smt2(inst_, plain_bounds_, w.empty_task, bound);
            if (chain) {
                result_.proof_smt2 = *chain;
                result_.proof_bound = bound * inst_.quantum;
                result_.proof_engine = "critical-path";
                result_.proof_plain_windows = true;
            }
            log("the longest paths alone rule out " + text(bound * inst_.quantum) +
                (chain ? ": the SMT-LIB2 proof is that chain" : ": no SMT-LIB2 query needed"));
            return;
        }
        SearchEngine engine = options_.engine == SearchEngine::Auto ? SearchEngine::TimeIndexed : options_.engine;
        if (engine == SearchEngine::None) return;
        if (engine == SearchEngine::TimeIndexed && time_indexed_variables(inst_, w) > options_.max_time_indexed_variables)
            engine = SearchEngine::Disjunctive;
        if (engine == SearchEngine::Disjunctive &&
            (inst_.pairs_allowed() || disjunctive_variables(inst_, w) > options_.max_disjunctive_variables))
            return;
        const auto budget = std::chrono::microseconds(static_cast<long long>(std::max(1.0, 0.25 * options_.time_limit) * 1e6));
        const Z3Outcome out = query(engine, bound, std::min(deadline_, Clock::now() + budget), false);
        if (out.answer == Z3Answer::Unsat && out.reason.empty()) {
            result_.proof_smt2 = out.smt2;
            result_.proof_bound = bound * inst_.quantum;
            result_.proof_engine = out.engine;
            result_.proof_plain_windows = true;
        }
    }

    SearchResult finish() {
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

}  // namespace

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
    if (!(inst.problem.activations == ActivationModel{})) schedule.activation_sizes = inst.problem.activations;
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

SearchResult search(const SearchProblem& problem, const SearchOptions& options) { return Driver(problem, options).run(); }

}  // namespace pp
