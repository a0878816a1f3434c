// The heuristic phases of the search: library warm starts, greedy portfolio, local and suffix search, the
// periodic block (solver/search_driver.hpp).
#include "solver/search_driver.hpp"

namespace pp::search_detail {

void SearchDriver::take_warm_starts() {
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

void SearchDriver::run_greedy_portfolio(double share) {
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
void SearchDriver::improve_incumbent(double share) {
    const auto orders = orders_of(inst_, *result_.schedule);
    if (!orders || stopped()) return;
    phase("local search");
    const GreedySchedule g = iterated_local_search(inst_, *orders, share_of_remaining(share), options_.seed, stop_flag());
    if (g.ok && offer(schedule_from_starts(inst_, g.start, g.partner), "local-search(" + result_.origin + ")"))
        log("local search: " + text(result_.value));
}

// Local search of the incumbent's last `want` ops, the rest frozen (greedy_improve.hpp,
// improve_suffix): each move is timed over the suffix alone, and the kicks stay in it, so the search
// digs where the gap is (DualPipe P=8 M=16 cap 8: 797831 -> 797230 where the whole-instance search
// had converged; V P=16 M=1024 cap 32: ZBV's cool-down to the bound).
void SearchDriver::run_suffix_search(size_t want, double share) {
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

// The incumbent's steady state as a block (periodic.hpp, block_from_starts), when it passes the
// block check; nothing otherwise. The check simulates enough periods to overlap every stash fully,
// quadratic in that count: a block spread over more than 1024 periods is not read off (a real
// steady state spans a round trip, a few periods).
std::optional<PeriodicBlock> SearchDriver::block_read_off_incumbent() const {
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

int SearchDriver::periods_to_check(const PeriodicBlock& b) {
    Ticks reach = 0;
    for (const Ticks& o : b.offset) reach = std::max(reach, o);
    const Ticks periods = (reach / b.period) * Ticks(2) + Ticks(4);
    return periods > Ticks(1 << 20) ? 1 << 20 : static_cast<int>(periods.to_int64());
}

// The periodic block (periodic.hpp), anchored on the rank of the analytic bound, re-checked by
// simulating it op by op; the schedule repeating it from micro-batch 0 is verified and offered. A
// block read off the incumbent at the least integer period >= T* needs no solver; one above it
// leaves Z3 only the periods below its own.
void SearchDriver::run_periodic() {
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

}  // namespace pp::search_detail
