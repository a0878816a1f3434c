#include "solver/lower_bound.hpp"

#include "limits/deadline.hpp"
#include "solver/cool_down_bound.hpp"
#include "solver/span_memory_bound.hpp"
#include "solver/warm_up_chain_bound.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace pp {
namespace {

// "No path": below every real value (heads, tails and deliveries are never negative).
const Ticks kNone{-(std::int64_t{1} << 60)};

}  // namespace

// Computed one rank at a time with bitsets over that rank's tasks only: n * n_r bits per rank.
std::vector<std::vector<int>> same_rank_relatives(const Instance& inst, bool ancestors) {
    const size_t n = inst.size();
    std::vector<std::vector<int>> result(n);
    std::vector<int> local(n, -1);
    std::vector<int> order = inst.topo_order;
    if (!ancestors) std::reverse(order.begin(), order.end());
    for (int r = 0; r < inst.ranks; ++r) {
        const auto& mine = inst.rank_tasks[r];
        if (mine.empty()) continue;  // a relaxation may keep no task of a rank (and bits[] would be empty)
        for (size_t k = 0; k < mine.size(); ++k) local[mine[k]] = static_cast<int>(k);
        const size_t words = (mine.size() + 63) / 64;
        std::vector<std::uint64_t> bits(n * words, 0);
        for (int t : order) {
            limits::poll("computing same-rank ancestors for the lower bound");
            std::uint64_t* row = &bits[static_cast<size_t>(t) * words];
            const auto& edges = ancestors ? inst.in_edges[t] : inst.out_edges[t];
            for (int e : edges) {
                const int other = ancestors ? inst.edges[e].from : inst.edges[e].to;
                const std::uint64_t* from = &bits[static_cast<size_t>(other) * words];
                for (size_t w = 0; w < words; ++w) row[w] |= from[w];
                if (inst.tasks[other].rank == r) row[local[other] / 64] |= std::uint64_t{1} << (local[other] % 64);
            }
        }
        for (int t : mine) {
            const std::uint64_t* row = &bits[static_cast<size_t>(t) * words];
            for (size_t k = 0; k < mine.size(); ++k)
                if (row[k / 64] >> (k % 64) & 1) result[t].push_back(mine[k]);
        }
        for (int t : mine) local[t] = -1;
    }
    return result;
}

namespace {

std::string op_text(const Instance& inst, int task) { return describe_op(inst.tasks[task].op); }

std::string units_text(const Instance& inst, Ticks value) { return format_rational(inst.to_units(value)); }

// Walks the head explanation back to a source, one line per step.
std::vector<std::string> head_chain(const Instance& inst, const TaskBounds& b, int task) {
    std::vector<std::string> chain;
    for (int t = task; t >= 0 && chain.size() < 4096;) {
        if (b.head_load_count[t] > 0) {
            const int from = b.head_load_task[t];
            chain.push_back(op_text(inst, t) + " starts >= " + units_text(inst, b.head[t]) + ": " +
                            std::to_string(b.head_load_count[t]) + " of its same-rank ancestors cannot start before " +
                            units_text(inst, b.head[from]) + " (" + op_text(inst, from) + ") and run before it, " +
                            units_text(inst, b.head[t] - b.head[from]) + " in total");
            t = from;
            continue;
        }
        const int e = b.head_edge[t];
        if (e < 0) {
            chain.push_back(op_text(inst, t) + " starts >= " + units_text(inst, b.head[t]));
            break;
        }
        const auto& edge = inst.edges[e];
        chain.push_back(op_text(inst, t) + " starts >= " + units_text(inst, b.head[t]) + " (after " +
                        op_text(inst, edge.from) + (edge.lag != 0 ? " + comm" : "") +
                        (edge.why == Why::Fifo ? ", FIFO" : edge.why == Why::Memory ? ", memory cap" : "") + ")");
        t = edge.from;
    }
    return chain;
}

std::vector<std::string> tail_chain(const Instance& inst, const TaskBounds& b, int task) {
    std::vector<std::string> chain;
    for (int t = task; t >= 0 && chain.size() < 4096;) {
        if (b.tail_load_count[t] > 0) {
            const int to = b.tail_load_task[t];
            chain.push_back("after " + op_text(inst, t) + " at least " + units_text(inst, b.tail[t]) + ": " +
                            std::to_string(b.tail_load_count[t]) + " of its same-rank descendants run after it, " +
                            units_text(inst, b.tail[t] - b.tail[to]) + " in total, and after the last of them (" +
                            op_text(inst, to) + ") at least " + units_text(inst, b.tail[to]) + " more");
            t = to;
            continue;
        }
        const int e = b.tail_edge[t];
        if (e < 0) {
            chain.push_back("after " + op_text(inst, t) + " at least " + units_text(inst, b.tail[t]));
            break;
        }
        const auto& edge = inst.edges[e];
        chain.push_back("after " + op_text(inst, t) + " at least " + units_text(inst, b.tail[t]) + " (" +
                        op_text(inst, edge.to) + (edge.lag != 0 ? " + comm" : "") + " follows)");
        t = edge.to;
    }
    return chain;
}

// max over (a, b) of a + sum{occ : head >= a, delivery >= b} + b over one rank's tasks.
struct Threshold {
    Ticks value = kNone, a = 0, load = 0, b = 0;
    int count = 0, a_task = -1, b_task = -1;
};

// For the tasks inserted so far, in a fixed order of positions: max over inserted j of (sum of the values
// added at inserted positions <= j) + delivery(j), with the leftmost j that attains it. A segment tree with
// lazy range adds: inserting at x adds its load to every position from x on, then makes x count.
class PrefixLoadMax {
public:
    explicit PrefixLoadMax(size_t n) : n_(n), max_(4 * n + 4), lazy_(4 * n + 4), arg_(4 * n + 4, -1) {}

    // Inserts position x with its delivery; `prefix` is the load of inserted positions <= x, x included.
    void insert(size_t x, const Ticks& load, const Ticks& delivery, const Ticks& prefix) {
        add(1, 0, n_ - 1, x, load);
        activate(1, 0, n_ - 1, x, prefix + delivery);
    }
    bool any() const { return arg_[1] >= 0; }
    const Ticks& max() const { return max_[1]; }
    int arg() const { return arg_[1]; }

private:
    void apply(size_t node, const Ticks& v) {
        lazy_[node] += v;
        if (arg_[node] >= 0) max_[node] += v;
    }
    void push(size_t node) {
        if (lazy_[node] == 0) return;
        apply(2 * node, lazy_[node]);
        apply(2 * node + 1, lazy_[node]);
        lazy_[node] = 0;
    }
    void pull(size_t node) {
        const size_t l = 2 * node, r = 2 * node + 1;
        // Leftmost maximum: the left child wins ties.
        if (arg_[l] >= 0 && (arg_[r] < 0 || max_[l] >= max_[r])) max_[node] = max_[l], arg_[node] = arg_[l];
        else if (arg_[r] >= 0) max_[node] = max_[r], arg_[node] = arg_[r];
        else arg_[node] = -1;
    }
    void add(size_t node, size_t lo, size_t hi, size_t from, const Ticks& v) {
        if (hi < from) return;
        if (lo >= from) return apply(node, v);
        push(node);
        const size_t mid = (lo + hi) / 2;
        add(2 * node, lo, mid, from, v);
        add(2 * node + 1, mid + 1, hi, from, v);
        pull(node);
    }
    void activate(size_t node, size_t lo, size_t hi, size_t x, const Ticks& value) {
        if (lo == hi) {
            max_[node] = value;
            arg_[node] = static_cast<int>(x);
            return;
        }
        push(node);
        const size_t mid = (lo + hi) / 2;
        if (x <= mid) activate(2 * node, lo, mid, x, value);
        else activate(2 * node + 1, mid + 1, hi, x, value);
        pull(node);
    }

    size_t n_;
    std::vector<Ticks> max_, lazy_;
    std::vector<int> arg_;
};

// Sums over positions <= x (Fenwick tree).
template <class T>
class PrefixSums {
public:
    explicit PrefixSums(size_t n) : tree_(n + 1, T(0)) {}
    void add(size_t x, const T& v) {
        for (size_t i = x + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
    }
    T upto(size_t x) const {
        T sum(0);
        for (size_t i = x + 1; i > 0; i -= i & (~i + 1)) sum += tree_[i];
        return sum;
    }

private:
    std::vector<T> tree_;
};

// Thresholds a in descending order of head (ties taken together); for each, the tasks with head >= a in
// descending order of delivery (ties in the order they arrived), and every prefix of that order. The first
// (a, prefix) that attains the maximum is the witness. O(n log n): the prefixes are a PrefixLoadMax.
Threshold rank_threshold(const Instance& inst, const std::vector<int>& tasks, const std::vector<Ticks>& head,
                         const std::vector<Ticks>& delivery) {
    std::vector<int> by_head;
    for (int t : tasks)
        if (delivery[t] != kNone) by_head.push_back(t);
    std::sort(by_head.begin(), by_head.end(), [&](int x, int y) { return head[x] > head[y]; });
    Threshold best;
    if (by_head.empty()) return best;
    // Position of each task in delivery order; among equal deliveries, the one inserted first comes first.
    std::vector<size_t> order(by_head.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return delivery[by_head[x]] > delivery[by_head[y]]; });
    std::vector<size_t> position(by_head.size());
    for (size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
    PrefixLoadMax tree(by_head.size());
    PrefixSums<Ticks> load(by_head.size());
    PrefixSums<int> count(by_head.size());
    for (size_t k = 0; k < by_head.size(); ++k) {
        limits::poll("computing the rank-load lower bound");
        const int t = by_head[k];
        const size_t x = position[k];
        const Ticks occupancy = min_occupancy(inst, t);
        load.add(x, occupancy);
        count.add(x, 1);
        tree.insert(x, occupancy, delivery[t], load.upto(x));
        if (k + 1 < by_head.size() && head[by_head[k + 1]] == head[t]) continue;  // take all ties
        const Ticks value = head[t] + tree.max();
        if (value > best.value) {
            const size_t j = static_cast<size_t>(tree.arg());
            const int b_task = by_head[order[j]];
            best = {value, head[t], load.upto(j), delivery[b_task], count.upto(j), t, b_task};
        }
    }
    return best;
}

// Least time from the end of a task to the end of the last op on rank r (kNone: no path to r).
std::vector<Ticks> deliveries_to_rank(const Instance& inst, int r, const std::vector<std::vector<int>>& same_rank_desc) {
    std::vector<Ticks> q(inst.size(), kNone);
    for (auto it = inst.topo_order.rbegin(); it != inst.topo_order.rend(); ++it) {
        const int t = *it;
        limits::poll("computing the rank-load lower bound");
        Ticks best = inst.tasks[t].rank == r ? 0 : kNone;
        for (int e : inst.out_edges[t]) {
            const auto& edge = inst.edges[e];
            if (q[edge.to] == kNone) continue;
            best = std::max(best, edge.lag + min_duration(inst, edge.to) + q[edge.to]);
        }
        if (inst.tasks[t].rank == r && !same_rank_desc.empty()) {
            std::vector<int> desc = same_rank_desc[t];
            std::sort(desc.begin(), desc.end(), [&](int x, int y) { return q[x] > q[y]; });
            Ticks load = 0;
            for (int d : desc) load += min_occupancy(inst, d), best = std::max(best, load + q[d]);
        }
        q[t] = best;
    }
    return q;
}

// The ranks whose span bound gets its own delivery pass: all of them while P passes over the tasks stay within
// kSpanDeliveryVisits, else as many as fit (at least 2), evenly spaced from rank 0 to rank P-1.
constexpr std::uint64_t kSpanDeliveryVisits = 5'000'000;
std::vector<bool> span_delivery_ranks(const Instance& inst) {
    const int P = inst.ranks;
    const std::uint64_t n = std::max<std::uint64_t>(inst.size(), 1);
    const int fit = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(P), std::max<std::uint64_t>(2, kSpanDeliveryVisits / n)));
    if (fit >= P) return std::vector<bool>(P, true);
    std::vector<bool> chosen(P, false);
    for (int k = 0; k < fit; ++k) chosen[static_cast<size_t>(static_cast<std::int64_t>(k) * (P - 1) / (fit - 1))] = true;
    return chosen;
}

}  // namespace

Ticks min_duration(const Instance& inst, int task) {
    const Ticks d = inst.tasks[task].duration;
    return inst.is_pairable(task) || inst.is_absorbable(task) ? std::min(d, inst.pair_duration(task)) : d;
}

// A pair unit holds two tasks (F&I) or three (F&B: F, I and the absorbed W), so each member is charged
// at most an equal share of the unit: the shares of one unit never add up to more than its cost.
Ticks min_occupancy(const Instance& inst, int task) {
    const Ticks d = inst.tasks[task].duration;
    if (!inst.is_pairable(task) && !inst.is_absorbable(task)) return d;
    return std::min(d, *inst.pair / (inst.fused_pairs() ? 3 : 2));
}

TaskBounds compute_task_bounds(const Instance& inst, bool strengthen, size_t max_tasks, std::uint64_t max_pairs) {
    const size_t n = inst.size();
    TaskBounds b;
    b.head.assign(n, 0);
    b.tail.assign(n, 0);
    b.head_edge.assign(n, -1);
    b.tail_edge.assign(n, -1);
    b.head_load_count.assign(n, 0);
    b.tail_load_count.assign(n, 0);
    b.head_load_task.assign(n, -1);
    b.tail_load_task.assign(n, -1);
    std::uint64_t pairs = 0;
    for (const auto& mine : inst.rank_tasks) pairs += static_cast<std::uint64_t>(mine.size()) * mine.size();
    b.strengthened = strengthen && n <= max_tasks && pairs <= max_pairs;

    std::vector<std::vector<int>> relatives;
    if (b.strengthened) relatives = same_rank_relatives(inst, true);
    for (int t : inst.topo_order) {
        limits::poll("computing the earliest starts (heads)");
        for (int e : inst.in_edges[t]) {
            const auto& edge = inst.edges[e];
            const Ticks value = b.head[edge.from] + min_duration(inst, edge.from) + edge.lag;
            if (value > b.head[t]) b.head[t] = value, b.head_edge[t] = e;
        }
        if (!b.strengthened) continue;
        std::vector<int>& anc = relatives[t];
        std::sort(anc.begin(), anc.end(), [&](int x, int y) { return b.head[x] > b.head[y]; });
        Ticks load = 0;
        for (size_t k = 0; k < anc.size(); ++k) {
            load += min_occupancy(inst, anc[k]);
            if (b.head[anc[k]] + load > b.head[t])
                b.head[t] = b.head[anc[k]] + load, b.head_load_count[t] = static_cast<int>(k + 1), b.head_load_task[t] = anc[k];
        }
    }
    if (b.strengthened) relatives = same_rank_relatives(inst, false);
    for (auto it = inst.topo_order.rbegin(); it != inst.topo_order.rend(); ++it) {
        const int t = *it;
        limits::poll("computing the least times to the end (tails)");
        for (int e : inst.out_edges[t]) {
            const auto& edge = inst.edges[e];
            const Ticks value = edge.lag + min_duration(inst, edge.to) + b.tail[edge.to];
            if (value > b.tail[t]) b.tail[t] = value, b.tail_edge[t] = e;
        }
        if (!b.strengthened) continue;
        std::vector<int>& desc = relatives[t];
        std::sort(desc.begin(), desc.end(), [&](int x, int y) { return b.tail[x] > b.tail[y]; });
        Ticks load = 0;
        for (size_t k = 0; k < desc.size(); ++k) {
            load += min_occupancy(inst, desc[k]);
            if (load + b.tail[desc[k]] > b.tail[t])
                b.tail[t] = load + b.tail[desc[k]], b.tail_load_count[t] = static_cast<int>(k + 1), b.tail_load_task[t] = desc[k];
        }
    }
    return b;
}

namespace {

// Memory-aware warm-up and cool-down bound for rank r (issue 13). Let a be the least head of an op of r and h the
// least head of an I or W of r. In [a, h) the rank can run only forwards, and at most `cap` of them
// start before its first W ends (each F allocates at its start; nothing is freed before a W ends,
// and no W ends before h): so it idles at least h - a - (the cap longest forwards of r) there. All
// ops of r with tail >= t run one at a time in [a, C - t]; when that set holds an I or a W, which
// cannot start before h, the idle interval lies inside, so C >= a + idle + load(set) + t.
void warm_up_bound(const Instance& inst, const TaskBounds& b, int r, LowerBound& best, std::vector<Ticks>& per_rank) {
    const auto& tasks = inst.rank_tasks[r];
    if (tasks.empty()) return;
    Ticks a = b.head[tasks[0]], h = -1;
    std::vector<Ticks> forwards;
    int first = tasks[0], first_backward = -1, last_forward = -1;
    for (int t : tasks) {
        if (b.head[t] < a) a = b.head[t], first = t;
        if (inst.tasks[t].op.kind == OpKind::F) forwards.push_back(inst.tasks[t].duration);
        else if (h < 0 || b.head[t] < h) h = b.head[t], first_backward = t;
    }
    if (h < 0) return;
    std::sort(forwards.begin(), forwards.end(), std::greater<Ticks>());
    Ticks fill = 0;
    for (size_t k = 0; k < forwards.size() && k < static_cast<size_t>(*inst.cap); ++k) fill += forwards[k];
    Ticks idle = std::max<Ticks>(0, h - a - fill);
    // The mirror image at the end: let g be the least tail of a forward of r (every F of r ends by
    // C - g). After C - g the rank runs only the I and W of the at most `cap` activations live then,
    // (cap) x (the longest I + W of r) at most, so it idles at least g - that in [C - g, C). The two
    // idle intervals are disjoint when h <= C - g, which a + load(r) - g >= h guarantees (C >= a +
    // load(r)); the end interval lies inside [a, C - t] only for t = 0, so it is counted then only.
    Ticks g = -1, backward = 0, total = 0;
    for (int t : tasks) {
        total += inst.tasks[t].duration;
        if (inst.tasks[t].op.kind == OpKind::F && (g < 0 || b.tail[t] < g)) g = b.tail[t], last_forward = t;
    }
    for (int t : tasks)
        if (inst.tasks[t].op.kind == OpKind::I) {
            const int w = inst.weight_of(t);
            backward = std::max(backward, inst.tasks[t].duration + (w >= 0 ? inst.tasks[w].duration : Ticks(0)));
        }
    const Ticks end_idle = g >= 0 && a + total - g >= h ? std::max<Ticks>(0, g - Ticks(*inst.cap) * backward) : Ticks(0);
    // The exact cool-down (cool_down_bound.hpp): for each forward f that may be the rank's last, the
    // least idle after it ends, plus the warm-up idle when f cannot end before h (then [a, h) lies before
    // end(f)); the least over the candidates holds whichever is last.
    Ticks cool_extra = -1, cool_idle = 0, cool_end = 0;
    int cool_forward = -1;
    for (const CoolDownIdle& c : cool_down_idle(inst, b, r)) {
        const bool before = b.head[c.last_forward] + inst.tasks[c.last_forward].duration >= h;
        const Ticks extra = (before ? idle : Ticks(0)) + c.idle;
        if (cool_forward < 0 || extra < cool_extra)
            cool_extra = extra, cool_idle = before ? idle : Ticks(0), cool_end = c.idle, cool_forward = c.last_forward;
    }
    const bool cool_wins = cool_forward >= 0 && cool_extra > idle + end_idle;
    if (idle <= 0 && end_idle <= 0 && !cool_wins) return;
    // the best tail threshold t: ops sorted by tail, descending; the set must hold an I or W
    std::vector<int> by_tail = tasks;
    std::sort(by_tail.begin(), by_tail.end(), [&](int x, int y) { return b.tail[x] > b.tail[y]; });
    Ticks load = 0, value = -1, best_load = 0, best_t = 0, best_idle = 0, best_end = 0;
    int count = 0, best_count = 0;
    bool has_backward = false;
    for (int t : by_tail) {
        load += inst.tasks[t].duration, ++count;
        has_backward = has_backward || inst.tasks[t].op.kind != OpKind::F;
        const bool at_end = b.tail[t] == 0;
        const Ticks warm = at_end && cool_wins ? cool_idle : has_backward ? idle : Ticks(0);
        const Ticks end = !at_end ? Ticks(0) : cool_wins ? cool_end : end_idle;
        if (a + warm + end + load + b.tail[t] > value)
            value = a + warm + end + load + b.tail[t], best_load = load, best_t = b.tail[t], best_count = count,
            best_idle = warm, best_end = end;
    }
    if (value > per_rank[r]) per_rank[r] = value;
    if (value <= best.value) return;
    best = LowerBound{};
    best.value = value;
    best.kind = "rank-load+memory";
    best.rank = r;
    best.a = a;
    best.load = best_load + best_idle + best_end;
    best.b = best_t;
    best.count = best_count;
    best.head_chain = head_chain(inst, b, first_backward);
    auto u = [&](const Ticks& v) { return units_text(inst, v); };
    best.derivation = "rank " + std::to_string(r) + ": its first op cannot start before " + u(a) + " (" +
                      op_text(inst, first) + ") and no I or W before " + u(h) + " (" + op_text(inst, first_backward) +
                      "); until then it can run only forwards, at most " + std::to_string(*inst.cap) +
                      " of them (the memory cap: nothing is freed before a W ends), " + u(fill) +
                      " at most, so it idles at least " + u(best_idle) + " there; " +
                      (best_end > 0 && cool_wins
                           ? "after its last forward (" + op_text(inst, cool_forward) +
                                 ") it runs only the I and W of the at most " + std::to_string(*inst.cap) +
                                 " activations then live, the returning input gradients of that micro-batch no earlier "
                                 "than their dependency paths allow and every op followed by its tail; the best such "
                                 "order (an exact one-machine programme, solver/cool_down_bound.hpp) idles at least " +
                                 u(best_end) + " after it; "
                           : std::string()) +
                      (best_end > 0 && !cool_wins ? "every forward of it ends at least " + u(g) + " before the end (" +
                                          op_text(inst, last_forward) + "), and after that it runs only the I and W of the at most " +
                                          std::to_string(*inst.cap) + " activations then live, " +
                                          u(Ticks(*inst.cap) * backward) + " at most, so it idles at least " + u(best_end) +
                                          " more at the end; "
                                    : std::string()) +
                      std::to_string(best_count) + " of its " + std::to_string(tasks.size()) +
                      " ops (those followed by at least " + u(best_t) + ") run one at a time for " + u(best_load) +
                      ": makespan >= " + u(a) + " + " + u(best_idle) + " + " + u(best_end) + " + " + u(best_load) +
                      " + " + u(best_t) + " = " + u(value);
}

}  // namespace

LowerBound analytic_lower_bound(const Instance& inst, const TaskBounds& b) {
    LowerBound best;
    best.kind = "none";
    const bool span = inst.problem.objective == Objective::Span;

    // Critical path (makespan only; for the span the per-rank threshold covers single tasks).
    if (!span)
        for (size_t t = 0; t < inst.size(); ++t) {
            const Ticks value = b.head[t] + min_duration(inst, static_cast<int>(t)) + b.tail[t];
            if (value > best.value) {
                best = LowerBound{};
                best.value = value;
                best.kind = "critical-path";
                best.task = static_cast<int>(t);
                best.rank = inst.tasks[t].rank;
            }
        }
    if (best.kind == "critical-path") {
        const int t = best.task;
        best.head_chain = head_chain(inst, b, t);
        best.tail_chain = tail_chain(inst, b, t);
        best.derivation = op_text(inst, t) + " cannot start before " + units_text(inst, b.head[t]) + ", takes " +
                          units_text(inst, min_duration(inst, t)) + ", and at least " + units_text(inst, b.tail[t]) +
                          " must follow its end: makespan >= " + units_text(inst, best.value);
    }

    std::vector<std::vector<int>> desc;
    if (span && b.strengthened) desc = same_rank_relatives(inst, false);
    std::vector<Ticks> per_rank(inst.ranks, 0);
    // For the span each rank needs its own pass over every task (what must still run on it after a task):
    // P passes of n tasks. Past a budget only evenly spaced ranks (0 and P-1 among them) get the pass; the others
    // count no work after their last op (delivery 0, a weaker but sound bound), so P = 500, M = 1000 (1.5M ops)
    // spends two passes (about 2 s) here, not the whole time limit.
    const std::vector<bool> full_pass = span ? span_delivery_ranks(inst) : std::vector<bool>();
    const std::vector<Ticks> no_delivery = span ? std::vector<Ticks>(inst.size(), 0) : std::vector<Ticks>();
    for (int r = 0; r < inst.ranks; ++r) {
        std::vector<Ticks> span_delivery;  // (for the makespan the tails, not copied: P copies of n is quadratic)
        if (span && full_pass[r]) span_delivery = deliveries_to_rank(inst, r, desc);
        const std::vector<Ticks>& delivery = !span ? b.tail : full_pass[r] ? span_delivery : no_delivery;
        const Threshold th = rank_threshold(inst, inst.rank_tasks[r], b.head, delivery);
        const Ticks origin = span ? inst.earliest_rank_start[r] : 0;
        if (th.value != kNone) per_rank[r] = th.value - origin;
        if (th.value == kNone || th.value - origin <= best.value) continue;
        best = LowerBound{};
        best.value = th.value - origin;
        best.kind = "rank-load";
        best.rank = r;
        best.a = th.a;
        best.load = th.load;
        best.b = th.b;
        best.count = th.count;
        best.head_chain = head_chain(inst, b, th.a_task);
        if (!span) best.tail_chain = tail_chain(inst, b, th.b_task);
        const bool all = th.count == static_cast<int>(inst.rank_tasks[r].size());
        best.derivation =
            "rank " + std::to_string(r) + ": " + (all ? "all " : "") + std::to_string(th.count) + " of its " +
            std::to_string(inst.rank_tasks[r].size()) + " ops " +
            (all ? "" : "(those that cannot start before " + units_text(inst, th.a) + " and are followed by at least " +
                            units_text(inst, th.b) + ") ") +
            "run one at a time for " + units_text(inst, th.load) + " in total; the first cannot start before " +
            units_text(inst, th.a) + " (" + op_text(inst, th.a_task) + "), and after the last ends at least " +
            units_text(inst, th.b) + (span ? " more passes on rank " + std::to_string(r) : " more passes") + ": " +
            (span ? "span >= " + units_text(inst, th.a) + " + " + units_text(inst, th.load) + " + " +
                        units_text(inst, th.b) + " - " + units_text(inst, origin) + " (earliest start of rank " +
                        std::to_string(r) + ") = "
                  : "makespan >= " + units_text(inst, th.a) + " + " + units_text(inst, th.load) + " + " +
                        units_text(inst, th.b) + " = ") +
            units_text(inst, best.value);
    }
    if (!span && inst.cap && !inst.pairs_allowed())
        for (int r = 0; r < inst.ranks; ++r) warm_up_bound(inst, b, r, best, per_rank);
    if (span)
        for (int r = 0; r < inst.ranks; ++r) span_memory_bound(inst, b, r, best, per_rank);
    warm_up_chain_bound(inst, b, best);  // a min over ranks' choices: it raises no per-rank bound
    best.per_rank = std::move(per_rank);
    return best;
}

std::vector<FormulaBound> formula_bounds(const Instance& inst) {
    std::vector<FormulaBound> out;
    const Placement& pl = inst.problem.placement;
    const int P = pl.ranks;
    if (pl.pipeline_count() != 1 || pl.pipelines[0].stages() != P || inst.pairs_allowed() ||
        inst.problem.objective != Objective::Makespan)
        return out;
    for (int s = 0; s < P; ++s)
        if (pl.rank_of(0, s) != s) return out;
    const int M = pl.pipelines[0].microbatches;
    auto first = [&](OpKind kind) { return inst.tasks[inst.task_of({kind, 0, 0, 0})].duration; };
    const Ticks F = first(OpKind::F), I = first(OpKind::I), W = first(OpKind::W), c = inst.comm;
    for (const Task& t : inst.tasks)
        if (t.duration != (t.op.kind == OpKind::F ? F : t.op.kind == OpKind::I ? I : W)) return out;
    const Ticks work = M * (F + I + W);
    auto u = [&](Ticks v) { return units_text(inst, v); };
    const std::string numbers = " with F=" + u(F) + ", I=" + u(I) + ", W=" + u(W) + ", comm=" + u(c) + ", P=" +
                                std::to_string(P) + ", M=" + std::to_string(M);
    out.push_back({"M(F+I+W) + (P-1)(F+comm)", work + (P - 1) * (F + c),
                   "the last rank's first op, F of stage P-1 for micro-batch 0, cannot start before the forward "
                   "has crossed P-1 ranks, (P-1)(F+comm); from then on the rank still has M(F+I+W) of work: " +
                       u(work + (P - 1) * (F + c)) + numbers});
    if (inst.cap && *inst.cap < M) {
        const Ticks L = *inst.cap;
        const Ticks front = std::max<Ticks>(0, P * F + (P - 1) * (I + 2 * c) - L * F);
        const Ticks end = std::max<Ticks>(0, (P - 1) * (F + I + 2 * c) - (L - 1) * (I + W));
        out.push_back(
            {"M(F+I+W) + max(0, PF + (P-1)(I+2comm) - L F) + max(0, (P-1)(F+I+2comm) - (L-1)(I+W))", work + front + end,
             "rank 0 (micro-batches in order per stage, which loses nothing): before I(0,0) it can only run its first L "
             "forwards (F(0,L) needs W(0,0) done), and I(0,0) cannot start before PF + (P-1)(I+2comm), the round trip of "
             "micro-batch 0, so it idles at least " + u(front) +
                 " there; after its last forward F(0,M-1) ends, I(0,M-1) is (P-1)(F+I+2comm) away and the only work "
                 "left to fill that wait is I and W of the at most L-1 other micro-batches it still holds, so it idles "
                 "at least " + u(end) + " more (the two windows are disjoint because M > L): makespan >= " +
                 u(work + front + end) + numbers + ", L=" + to_string(L)});
    }
    return out;
}

Windows restricted_windows(const Windows& full, const std::vector<int>& tasks) {
    Windows w;
    for (int t : tasks) {
        w.est.push_back(full.est[t]);
        w.lst.push_back(full.lst[t]);
        if (w.empty_task < 0 && w.lst.back() < w.est.back()) w.empty_task = static_cast<int>(w.est.size()) - 1;
    }
    return w;
}

Windows windows_for_bound(const Instance& inst, const TaskBounds& b, Ticks bound, bool strengthen) {
    const size_t n = inst.size();
    Windows w;
    w.est = b.head;
    std::vector<Ticks> latest_end(n);
    const bool span = inst.problem.objective == Objective::Span;
    std::vector<std::vector<int>> desc;
    if (strengthen && b.strengthened) desc = same_rank_relatives(inst, false);
    for (auto it = inst.topo_order.rbegin(); it != inst.topo_order.rend(); ++it) {
        const int t = *it;
        Ticks le = bound + (span ? inst.earliest_rank_start[inst.tasks[t].rank] : 0);
        if (!span) le = std::min(le, bound - b.tail[t]);
        for (int e : inst.out_edges[t]) {
            const auto& edge = inst.edges[e];
            le = std::min(le, latest_end[edge.to] - min_duration(inst, edge.to) - edge.lag);
        }
        if (!desc.empty()) {
            std::vector<int>& d = desc[t];
            std::sort(d.begin(), d.end(), [&](int x, int y) { return latest_end[x] < latest_end[y]; });
            Ticks load = 0;
            for (int x : d) load += min_occupancy(inst, x), le = std::min(le, latest_end[x] - load);
        }
        latest_end[t] = le;
    }
    w.lst.resize(n);
    for (size_t t = 0; t < n; ++t) {
        w.lst[t] = latest_end[t] - min_duration(inst, static_cast<int>(t));
        if (w.lst[t] < w.est[t] && w.empty_task < 0) w.empty_task = static_cast<int>(t);
    }
    return w;
}

Ticks objective_of(const Instance& inst, const std::vector<Ticks>& end) {
    if (inst.problem.objective == Objective::Makespan) {
        Ticks makespan = 0;
        for (Ticks e : end) makespan = std::max(makespan, e);
        return makespan;
    }
    Ticks span = 0;
    for (int r = 0; r < inst.ranks; ++r) {
        Ticks last = 0;
        for (int t : inst.rank_tasks[r]) last = std::max(last, end[t]);
        span = std::max(span, last - inst.earliest_rank_start[r]);
    }
    return span;
}

}  // namespace pp
