#include "solver/greedy.hpp"

#include "limits/deadline.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

namespace pp {
namespace {

int kind_slot(OpKind kind) { return kind == OpKind::F ? 0 : kind == OpKind::I ? 1 : 2; }

// Largest number of stages of one pipeline on one rank: what one micro-batch can hold there at once.
int units_per_microbatch(const Instance& inst) {
    int most = 1;
    const Placement& pl = inst.problem.placement;
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int r = 0; r < pl.ranks; ++r) most = std::max(most, static_cast<int>(pl.stages_on_rank(p, r).size()));
    return most;
}

// The state of one greedy run.
class ListScheduler {
public:
    ListScheduler(const Instance& inst, const GreedyRule& rule, const std::vector<Ticks>& tail)
        : inst_(inst), rule_(rule), tail_(tail), never_(inst.horizon + 1) {
        const size_t n = inst.size();
        pending_.resize(n);
        ready_.assign(n, 0);
        for (size_t t = 0; t < n; ++t) pending_[t] = static_cast<int>(inst.in_edges[t].size());
        released_.assign(inst.ranks, {});
        for (size_t t = 0; t < n; ++t)
            if (pending_[t] == 0) released_[inst.tasks[t].rank].push_back(static_cast<int>(t));
        free_at_.assign(inst.ranks, 0);
        live_.assign(inst.ranks, 0);
        cap_.assign(inst.ranks, std::numeric_limits<std::int64_t>::max());
        const auto counter = memory_counter(inst);
        if (counter) memory_ = *counter;
        for (int r = 0; r < inst.ranks; ++r) {
            if (counter) cap_[r] = counter->cap;
            if (rule.staircase >= 0)
                cap_[r] = std::min(cap_[r], memory_.alloc * std::max(units_per_microbatch(inst), inst.ranks - r + rule.staircase));
        }
        const Placement& pl = inst.problem.placement;
        for (int p = 0; p < pl.pipeline_count(); ++p) {
            mb_base_.push_back(static_cast<int>(weights_left_.size()));
            for (int m = 0; m < pl.pipelines[p].microbatches; ++m) weights_left_.push_back(pl.pipelines[p].stages());
        }
        result_.start.assign(n, 0);
        result_.end.assign(n, 0);
        result_.partner.assign(n, -1);
        result_.rule = rule;
    }

    GreedySchedule run() {
        for (size_t done = 0; done < inst_.size();) {
            limits::poll("running a greedy list scheduler");
            int rank = -1;
            Ticks when = never_;
            for (int r = 0; r < inst_.ranks; ++r) {
                const Ticks t = earliest_start(r);
                if (t < when) when = t, rank = r;
            }
            if (rank < 0) return result_;  // deadlock: no rank can ever start anything
            const int task = pick(rank, when, -1);
            int other = -1;
            if (rule_.pair && inst_.is_pairable(task)) {
                other = pick(rank, when, task);
                if (other >= 0 && *inst_.pair >= unpaired_cost(task) + unpaired_cost(other)) other = -1;
            }
            const Ticks end = when + (other >= 0 ? *inst_.pair : inst_.tasks[task].duration);
            start(task, when, end, other);
            if (other >= 0) start(other, when, end, task);
            done += other >= 0 ? 2 : 1;
            if (other >= 0 && inst_.fused_pairs()) {
                // F&B: the backward's W is absorbed: a zero-length task at the end of the unit.
                const int input = inst_.tasks[task].op.kind == OpKind::I ? task : other;
                start(inst_.weight_of(input), end, end, -1);
                ++done;
            }
            free_at_[rank] = end;
        }
        result_.objective = objective_of(inst_, result_.end);
        result_.ok = true;
        return result_;
    }

private:
    // What a pair member costs outside a pair; with F&B the I brings its W along.
    Ticks unpaired_cost(int task) const {
        Ticks d = inst_.tasks[task].duration;
        if (inst_.fused_pairs() && inst_.tasks[task].op.kind == OpKind::I) d += inst_.tasks[inst_.weight_of(task)].duration;
        return d;
    }

    bool opens_microbatch(int task) const {
        const Op& op = inst_.tasks[task].op;
        return op.kind == OpKind::F && op.stage == 0;
    }

    // The earliest time a new micro-batch may enter, given the completions known so far.
    Ticks admission_time() const {
        if (rule_.inflight_cap <= 0) return 0;
        const long needed = static_cast<long>(started_) - rule_.inflight_cap + 1;
        if (needed <= 0) return 0;
        if (static_cast<long>(completions_.size()) < needed) return never_;
        return completions_[needed - 1];
    }

    bool memory_allows(int rank, int task) const {
        return inst_.tasks[task].op.kind != OpKind::F || live_[rank] + memory_.alloc <= cap_[rank];
    }

    Ticks available(int rank, int task) const {
        if (!memory_allows(rank, task)) return never_;
        Ticks t = std::max(ready_[task], free_at_[rank]);
        if (opens_microbatch(task)) t = std::max(t, admission_time());
        return t;
    }

    Ticks earliest_start(int rank) const {
        Ticks best = never_;
        for (int t : released_[rank]) best = std::min(best, available(rank, t));
        return best;
    }

    auto priority(int task) const {
        const Op& op = inst_.tasks[task].op;
        const int stage_key = rule_.later_stage_first ? -op.stage : static_cast<int>(op.stage);
        const Ticks tail_key = rule_.longest_tail_first ? -tail_[task] : 0;
        return std::make_tuple(tail_key, rule_.kind_priority[kind_slot(op.kind)], stage_key, op.microbatch, op.pipeline);
    }

    // Best task of the rank available at `when`; with `partner_of` >= 0, the best pairable task of the
    // other kind (an I for an F, an F for an I).
    int pick(int rank, Ticks when, int partner_of) const {
        int best = -1;
        for (int t : released_[rank]) {
            if (t == partner_of || available(rank, t) > when) continue;
            if (partner_of >= 0) {
                if (!inst_.is_pairable(t) || inst_.tasks[t].op.kind == inst_.tasks[partner_of].op.kind) continue;
                // Both allocate only through F; the pair's F must fit.
                if (inst_.tasks[t].op.kind == OpKind::F && !memory_allows(rank, t)) continue;
            }
            if (best < 0 || priority(t) < priority(best)) best = t;
        }
        return best;
    }

    void start(int task, Ticks when, Ticks end, int partner) {
        const Task& t = inst_.tasks[task];
        result_.start[task] = when;
        result_.end[task] = end;
        result_.partner[task] = partner;
        auto& list = released_[t.rank];
        list.erase(std::find(list.begin(), list.end(), task));
        live_[t.rank] += memory_.change(t.op.kind);  // a release at its end, which is before the rank's next start
        if (t.op.kind == OpKind::W) {
            int& left = weights_left_[mb_base_[t.op.pipeline] + t.op.microbatch];
            if (--left == 0) completions_.insert(std::upper_bound(completions_.begin(), completions_.end(), end), end);
        }
        if (opens_microbatch(task)) ++started_;
        for (int e : inst_.out_edges[task]) {
            const auto& edge = inst_.edges[e];
            ready_[edge.to] = std::max(ready_[edge.to], end + edge.lag);
            if (--pending_[edge.to] == 0) released_[inst_.tasks[edge.to].rank].push_back(edge.to);
        }
    }

    const Instance& inst_;
    const GreedyRule& rule_;
    const std::vector<Ticks>& tail_;
    const Ticks never_;  // later than any time a list schedule reaches
    std::vector<int> pending_;
    std::vector<Ticks> ready_;
    std::vector<std::vector<int>> released_;
    std::vector<Ticks> free_at_;
    MemoryCounter memory_;  // whole stashes when there is no cap (cap_ is then unlimited)
    std::vector<std::int64_t> live_, cap_;
    std::vector<int> mb_base_, weights_left_;
    std::vector<Ticks> completions_;  // sorted end times of finished micro-batches
    size_t started_ = 0;
    GreedySchedule result_;
};

}  // namespace

std::string GreedyRule::name() const {
    std::string text;
    if (longest_tail_first) text += "tail,";
    std::array<char, 3> order{};
    for (int k = 0; k < 3; ++k) order[kind_priority[k]] = "FIW"[k];
    text += std::string(order.begin(), order.end());
    text += later_stage_first ? ",late-stage" : ",early-stage";
    if (inflight_cap > 0) text += ",inflight=" + std::to_string(inflight_cap);
    if (staircase >= 0) text += ",staircase+" + std::to_string(staircase);
    if (pair) text += ",pairs";
    return text;
}

GreedySchedule run_greedy(const Instance& inst, const GreedyRule& rule, const std::vector<Ticks>& tail) {
    return ListScheduler(inst, rule, tail).run();
}

std::vector<GreedyRule> greedy_portfolio(const Instance& inst) {
    std::vector<GreedyRule> rules;
    const int orders[6][3] = {{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}};  // F,I,W ranks
    bool multi_stage = false;
    for (int r = 0; r < inst.ranks; ++r) {
        int held = 0;
        for (int p = 0; p < inst.problem.placement.pipeline_count(); ++p)
            held += static_cast<int>(inst.problem.placement.stages_on_rank(p, r).size());
        multi_stage = multi_stage || held > 1;
    }
    std::vector<int> caps = {0};
    if (const auto counter = memory_counter(inst)) {
        const int safe = static_cast<int>(std::max<std::int64_t>(1, counter->cap / counter->alloc / units_per_microbatch(inst)));
        if (safe < inst.problem.placement.total_microbatches()) caps.push_back(safe);
    }
    for (int cap : caps)
        for (const auto& order : orders)
            for (bool late : {true, false}) {
                if (!late && !multi_stage) continue;
                GreedyRule rule;
                std::copy(order, order + 3, rule.kind_priority);
                rule.later_stage_first = late;
                rule.inflight_cap = cap;
                rules.push_back(rule);
            }
    for (bool late : {true, false}) {
        if (!late && !multi_stage) continue;
        for (int cap : caps) {
            GreedyRule rule;
            rule.longest_tail_first = true;
            rule.kind_priority[0] = 1, rule.kind_priority[1] = 0;  // I before F on equal tails
            rule.later_stage_first = late;
            rule.inflight_cap = cap;
            rules.push_back(rule);
        }
    }
    // 1F1B-like staircases: rank r keeps at most P - r + k activations (ZB-H1 is k = 0 per stage).
    const int P = inst.ranks;
    for (int extra : {0, P / 2, P, 2 * P})
        for (int first : {0, 1}) {
            GreedyRule rule;
            rule.kind_priority[0] = first == 0 ? 0 : 1;
            rule.kind_priority[1] = first == 0 ? 1 : 0;
            rule.staircase = extra;
            rule.inflight_cap = caps.back();
            rules.push_back(rule);
        }
    if (inst.pairs_allowed()) {
        const size_t plain = rules.size();
        for (size_t k = 0; k < plain; ++k) {
            GreedyRule rule = rules[k];
            rule.pair = true;
            rules.push_back(rule);
        }
    }
    return rules;
}

GreedySchedule best_greedy(const Instance& inst, const TaskBounds& bounds, std::chrono::steady_clock::time_point deadline,
                           int* rules_run, const std::atomic<bool>* stop) {
    GreedySchedule best;
    int count = 0;
    // The safe rule (last cap, F first) runs first so that a schedule exists even on a tight deadline.
    std::vector<GreedyRule> rules = greedy_portfolio(inst);
    std::stable_partition(rules.begin(), rules.end(), [&](const GreedyRule& r) { return r.inflight_cap > 0; });
    for (const GreedyRule& rule : rules) {
        if (count > 0 && best.ok && (std::chrono::steady_clock::now() > deadline || (stop && stop->load()))) break;
        GreedySchedule s = run_greedy(inst, rule, bounds.tail);
        ++count;
        if (s.ok && (!best.ok || s.objective < best.objective)) best = std::move(s);
    }
    if (rules_run) *rules_run = count;
    return best;
}

}  // namespace pp
