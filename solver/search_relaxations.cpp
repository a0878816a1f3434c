// Relaxation phases of the search: one- and two-rank relaxations, cool-down windows, mirror-symmetric
// schedules (solver/search_driver.hpp).
#include "solver/search_driver.hpp"

namespace pp::search_detail {

// Exact one-rank relaxations (rank_relaxation.hpp), ranks with the highest rank-load bound first:
// a query at the proven bound tells whether the rank can help at all (sat: go to the next rank);
// if it cannot meet it, bisect between the bound and the incumbent on that rank's problem.
void SearchDriver::run_rank_relaxations(double share) {
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
void SearchDriver::run_completion(double share) {
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
void SearchDriver::run_windows(const Schedule base, const std::string& origin, double share) {
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

std::string SearchDriver::relaxation_argument(int rank, const RankSubproblem& sub, Ticks bound) const {
    return "rank " + std::to_string(rank) + " alone cannot meet " + text(bound * inst_.quantum) +
           " (Z3, disjunctive encoding of its one-rank relaxation): its " + std::to_string(sub.inst.size()) +
           " ops, each inside its window for that bound (longest paths and same-rank loads), " +
           std::to_string(sub.inst.edges.size()) +
           " precedence delays through the other ranks (longest paths, least durations), one op at a time" +
           (inst_.cap ? ", at most " + std::to_string(*inst_.cap) + " live activations" : std::string()) +
           ", have no schedule (solver/rank_relaxation.hpp)";
}

// Mirror-symmetric schedules (mirror_symmetry.hpp), descending from the incumbent: each sat is a
// better schedule; the first unsat says the incumbent is the best of that class, which is reported
// as such and never taken for a lower bound (DualPipe P=6 M=12 cap 6: 593548 -> 592947, the best
// symmetric; P=8 M=16 cap 8: 797230 is the best symmetric).
void SearchDriver::run_mirror(double share) {
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

}  // namespace pp::search_detail
