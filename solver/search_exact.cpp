// The Z3 phases on the whole instance: engine choice, probe and bisection, the emitted proof
// (solver/search_driver.hpp).
#include "solver/search_driver.hpp"

#include <cstdio>

namespace pp::search_detail {

SearchEngine SearchDriver::pick_engine(Ticks bound) const {
    if (options_.engine != SearchEngine::Auto) return options_.engine;
    const Windows w = windows_for_bound(inst_, bounds_, bound, false);  // sizes only: skip the load pass
    if (w.empty_task >= 0 || time_indexed_variables(inst_, w) <= options_.max_time_indexed_variables)
        return SearchEngine::TimeIndexed;
    if (!inst_.pairs_allowed() && disjunctive_variables(inst_, w) <= options_.max_disjunctive_variables)
        return SearchEngine::Disjunctive;
    return SearchEngine::None;
}

// What every query of the search shares: its bound, the seed, the deadline, and the stop request.
Z3Query SearchDriver::z3_query(Ticks bound, Clock::time_point deadline) {
    Z3Query q;
    q.bound = bound;
    q.seed = options_.seed;
    q.deadline = deadline;
    q.stop = options_.stop;
    return q;
}

Z3Outcome SearchDriver::query(SearchEngine engine, Ticks bound, Clock::time_point deadline, bool strengthen) {
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

void SearchDriver::record_call(Ticks bound, const Z3Outcome& out, const std::string& what) {
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

// Records what an UNSAT at `bound` proves.
void SearchDriver::proven_above(Ticks bound, const Z3Outcome& out, const std::string& argument) {
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

// Returns false when the model contradicts the encoding (it never should).
bool SearchDriver::accept_model(Ticks bound, const Z3Outcome& out, const std::string& origin) {
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
void SearchDriver::run_z3() {
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
void SearchDriver::finalize_proof() {
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

}  // namespace pp::search_detail
