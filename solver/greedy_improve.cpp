#include "solver/greedy_improve.hpp"

#include "solver/lower_bound.hpp"

#include <algorithm>
#include <random>

namespace pp {
namespace {

// ASAP times plus the sum of the end times of the F's and I's: the tie-breaker that lets a move make
// room without yet shortening the schedule. W's are left out on purpose. A W feeds nothing but memory,
// and under a tight cap an optimum runs W's late (V map P=5, M=10, cap 10: stage 4 defers W(4,0) past
// F(4,7)); with every end counted, each move that defers a W looked worse, and the search stopped
// F - I + 2comm above the optimum there. Without them it reaches the proven bound on V P=5 M=10 and
// P=8 M=16 (ZB 1.5B costs) within a minute (docs/search.md, "Reproducible figures").
struct Timing {
    bool ok = false;
    Ticks objective = 0, end_sum_without_w = 0;
};

// ASAP timing of per-rank orders, of every op or of a suffix: the ops of each rank that start at or
// after `from` in a timed schedule, with every earlier op frozen at its time. The suffix is closed under
// successors (a dependency or a rank's next op starts no earlier than its predecessor), so re-ordering
// inside it leaves the prefix as it was: each evaluation costs the suffix, not the instance (M = 1024
// has 100 000 ops, its cool-down a few thousand).
class OrderTimer {
public:
    explicit OrderTimer(const Instance& inst) : OrderTimer(inst, std::vector<Ticks>(inst.size(), 0), 0) {}

    OrderTimer(const Instance& inst, const std::vector<Ticks>& start, Ticks from) : inst_(inst), end_(inst.size()) {
        free_.assign(inst.size(), false);
        for (size_t t = 0; t < inst.size(); ++t) {
            end_[t] = start[t] + inst.tasks[t].duration;
            if (start[t] >= from) free_[t] = true, tasks_.push_back(static_cast<int>(t));
        }
        release_.assign(inst.size(), 0);
        base_indegree_.assign(inst.size(), 0);
        for (int t : tasks_)
            for (int e : inst.in_edges[t]) {
                const auto& edge = inst.edges[e];
                if (free_[edge.from]) ++base_indegree_[t];
                else release_[t] = std::max(release_[t], end_[edge.from] + edge.lag);
            }
        rank_free_at_.assign(inst.ranks, 0);
        live_before_.assign(inst.ranks, 0);
        for (size_t t = 0; t < inst.size(); ++t) {
            if (free_[t]) continue;
            const int r = inst.tasks[t].rank;
            rank_free_at_[r] = std::max(rank_free_at_[r], end_[t]);
            const OpKind kind = inst.tasks[t].op.kind;
            if (const auto counter = memory_counter(inst)) live_before_[r] += counter->change(kind);
        }
        indegree_.resize(inst.size());
        start_.resize(inst.size());
        next_on_rank_.assign(inst.size(), -1);
        queue_.reserve(tasks_.size());
    }

    // orders[r]: the free tasks of rank r (all of them, or its suffix), each exactly once.
    Timing time(const std::vector<std::vector<int>>& orders) {
        for (int t : tasks_) indegree_[t] = base_indegree_[t], start_[t] = release_[t];
        queue_.clear();
        for (int r = 0; r < inst_.ranks; ++r) {
            const auto& order = orders[r];
            for (size_t k = 0; k < order.size(); ++k) {
                next_on_rank_[order[k]] = k + 1 < order.size() ? order[k + 1] : -1;
                if (k > 0) ++indegree_[order[k]];
                else start_[order[k]] = std::max(start_[order[k]], rank_free_at_[r]);
            }
        }
        for (int t : tasks_)
            if (indegree_[t] == 0) queue_.push_back(t);
        Timing timing;
        for (size_t head = 0; head < queue_.size(); ++head) {
            const int t = queue_[head];
            end_[t] = start_[t] + inst_.tasks[t].duration;
            if (inst_.tasks[t].op.kind != OpKind::W) timing.end_sum_without_w += end_[t];
            auto relax = [&](int to, Ticks ready) {
                start_[to] = std::max(start_[to], ready);
                if (--indegree_[to] == 0) queue_.push_back(to);
            };
            for (int e : inst_.out_edges[t]) relax(inst_.edges[e].to, end_[t] + inst_.edges[e].lag);
            if (next_on_rank_[t] >= 0) relax(next_on_rank_[t], end_[t]);
        }
        if (queue_.size() != tasks_.size()) return timing;  // deadlock
        if (!memory_ok(orders)) return timing;
        timing.objective = objective_of(inst_, end_);
        timing.ok = true;
        return timing;
    }

    bool is_free(int t) const { return free_[t]; }
    const std::vector<Ticks>& start() const { return start_; }
    const std::vector<Ticks>& end() const { return end_; }

private:
    bool memory_ok(const std::vector<std::vector<int>>& orders) const {
        const auto counter = memory_counter(inst_);
        if (!counter) return true;
        for (int r = 0; r < inst_.ranks; ++r) {
            if (!inst_.rank_needs_cardinality[r]) continue;  // memory edges already hold it
            std::int64_t live = live_before_[r];
            for (int t : orders[r]) {
                const OpKind kind = inst_.tasks[t].op.kind;
                live += counter->change(kind);
                if (kind == OpKind::F && live > counter->cap) return false;
            }
        }
        return true;
    }

    const Instance& inst_;
    std::vector<bool> free_;
    std::vector<int> tasks_, base_indegree_, indegree_, next_on_rank_, queue_;
    std::vector<std::int64_t> live_before_;
    std::vector<Ticks> release_, rank_free_at_, start_, end_;
};

bool better(const Timing& a, const Timing& b) {
    return a.objective < b.objective || (a.objective == b.objective && a.end_sum_without_w < b.end_sum_without_w);
}

void move(std::vector<int>& order, size_t from, size_t to) {
    if (from < to) std::rotate(order.begin() + from, order.begin() + from + 1, order.begin() + to + 1);
    else std::rotate(order.begin() + to, order.begin() + from, order.begin() + from + 1);
}

std::vector<std::vector<int>> orders_by_start(const Instance& inst, const GreedySchedule& g) {
    std::vector<std::vector<int>> orders(inst.ranks);
    for (int r = 0; r < inst.ranks; ++r) {
        orders[r] = inst.rank_tasks[r];
        std::sort(orders[r].begin(), orders[r].end(), [&](int a, int b) {
            return g.start[a] != g.start[b] ? g.start[a] < g.start[b] : inst.topo_position[a] < inst.topo_position[b];
        });
    }
    return orders;
}

// First-improvement descent over single moves of up to max_shift places, for either timer (the whole
// instance, or a suffix with the prefix frozen). Leaves the best orders in `orders`.
template <class Timer>
Timing descend(Timer& timer, std::vector<std::vector<int>>& orders, std::chrono::steady_clock::time_point deadline,
               int max_shift, const std::atomic<bool>* stop) {
    const auto over = [&] { return std::chrono::steady_clock::now() >= deadline || (stop && stop->load()); };
    Timing best = timer.time(orders);
    if (!best.ok) return best;
    for (bool improved = true; improved && !over();) {
        improved = false;
        for (auto& order : orders) {
            for (size_t from = 0; from < order.size(); ++from) {
                for (int shift = -max_shift; shift <= max_shift; ++shift) {
                    const long to = static_cast<long>(from) + shift;
                    if (shift == 0 || to < 0 || to >= static_cast<long>(order.size())) continue;
                    if (over()) return best;
                    move(order, from, static_cast<size_t>(to));
                    const Timing t = timer.time(orders);
                    if (t.ok && better(t, best)) {
                        best = t;
                        improved = true;
                        break;  // keep the move; continue with the op now at `from`
                    }
                    move(order, static_cast<size_t>(to), from);
                }
            }
        }
    }
    return best;
}

// The iterated searches' perturbation: four random moves of up to 16 places, each undone when it
// leaves the orders invalid (deadlock or memory).
void kick(std::vector<std::vector<int>>& orders, std::mt19937& rng, OrderTimer& timer) {
    for (int k = 0; k < 4; ++k) {
        auto& order = orders[rng() % orders.size()];
        if (order.size() < 2) continue;
        const size_t from = rng() % order.size();
        const long shift = static_cast<long>(rng() % 33) - 16;
        const long to = std::clamp<long>(static_cast<long>(from) + shift, 0, static_cast<long>(order.size()) - 1);
        move(order, from, static_cast<size_t>(to));
        if (!timer.time(orders).ok) move(order, static_cast<size_t>(to), from);
    }
}

}  // namespace

std::optional<std::vector<std::vector<int>>> orders_of(const Instance& inst, const Schedule& schedule) {
    std::vector<std::vector<int>> orders(inst.ranks);
    if (static_cast<int>(schedule.ranks.size()) != inst.ranks) return std::nullopt;
    for (int r = 0; r < inst.ranks; ++r)
        for (const Slot& slot : schedule.ranks[r]) {
            if (slot.is_pair()) return std::nullopt;
            const Op& op = slot.ops[0];
            if (op.kind == OpKind::B) {
                const int i = inst.task_of({OpKind::I, op.pipeline, op.stage, op.microbatch});
                const int w = inst.task_of({OpKind::W, op.pipeline, op.stage, op.microbatch});
                if (i < 0 || w < 0) return std::nullopt;
                orders[r].push_back(i);
                orders[r].push_back(w);
                continue;
            }
            const int t = inst.task_of(op);
            if (t < 0) return std::nullopt;
            orders[r].push_back(t);
        }
    return orders;
}

GreedySchedule time_orders(const Instance& inst, const std::vector<std::vector<int>>& orders) {
    OrderTimer timer(inst);
    const Timing t = timer.time(orders);
    GreedySchedule g;
    g.ok = t.ok;
    if (!t.ok) return g;
    g.start = timer.start();
    g.end = timer.end();
    g.partner.assign(inst.size(), -1);
    g.objective = t.objective;
    return g;
}

GreedySchedule improve_by_moves(const Instance& inst, std::vector<std::vector<int>> orders,
                                std::chrono::steady_clock::time_point deadline, int max_shift,
                                const std::atomic<bool>* stop) {
    OrderTimer timer(inst);
    if (!descend(timer, orders, deadline, max_shift, stop).ok) return {};
    return time_orders(inst, orders);
}

GreedySchedule iterated_local_search(const Instance& inst, std::vector<std::vector<int>> orders,
                                     std::chrono::steady_clock::time_point deadline, unsigned seed,
                                     const std::atomic<bool>* stop) {
    const auto over = [&] { return std::chrono::steady_clock::now() >= deadline || (stop && stop->load()); };
    GreedySchedule best = improve_by_moves(inst, orders, deadline, 6, stop);
    if (!best.ok) return best;
    for (int shift : {16, 48}) {
        if (over()) return best;
        const GreedySchedule g = improve_by_moves(inst, orders_by_start(inst, best), deadline, shift, stop);
        if (g.ok && g.objective <= best.objective) best = g;
    }
    std::mt19937 rng(seed);
    OrderTimer timer(inst);
    // Stop early once kicks keep failing: small instances converge in milliseconds.
    for (int failures = 0; failures < 300 && !over(); ++failures) {
        auto kicked = orders_by_start(inst, best);
        kick(kicked, rng, timer);
        const GreedySchedule g = improve_by_moves(inst, kicked, deadline, 6, stop);
        if (g.ok && g.objective < best.objective) best = g, failures = -1;
    }
    return best;
}

GreedySchedule improve_suffix(const Instance& inst, const std::vector<std::vector<int>>& orders, Ticks from,
                              std::chrono::steady_clock::time_point deadline, unsigned seed,
                              const std::atomic<bool>* stop) {
    const auto over = [&] { return std::chrono::steady_clock::now() >= deadline || (stop && stop->load()); };
    const GreedySchedule timed = time_orders(inst, orders);
    if (!timed.ok) return timed;
    OrderTimer timer(inst, timed.start, from);
    std::vector<std::vector<int>> prefix(inst.ranks), suffix(inst.ranks);
    for (int r = 0; r < inst.ranks; ++r)
        for (int t : orders[r]) (timer.is_free(t) ? suffix : prefix)[r].push_back(t);
    Timing best = descend(timer, suffix, deadline, 6, stop);
    if (!best.ok) return timed;
    for (int shift : {16, 48})
        if (!over()) best = descend(timer, suffix, deadline, shift, stop);
    std::mt19937 rng(seed);
    for (int failures = 0; failures < 300 && !over(); ++failures) {
        auto kicked = suffix;
        kick(kicked, rng, timer);
        const Timing t = descend(timer, kicked, deadline, 6, stop);
        if (t.ok && t.objective < best.objective) best = t, suffix = std::move(kicked), failures = -1;
    }
    std::vector<std::vector<int>> whole = prefix;
    for (int r = 0; r < inst.ranks; ++r) whole[r].insert(whole[r].end(), suffix[r].begin(), suffix[r].end());
    return time_orders(inst, whole);
}

}  // namespace pp
