// The greedy of zbv_greedy.py shared by v-min and v-half (v_greedy.hpp says what it is). Names follow
// tests/data/v-families/ALGORITHMS.md: WFILL = put_w, PEAK = mem_of_stage, SQUEEZE = eager_execution_time,
// IMPROVE = reorder.
//
// Kinds, per rank: 0 = F c0, 1 = F c1, 2 = I c1, 3 = I c0; then either one un-split W list (4: the j-th W of a
// rank belongs to its j-th backward in slot order, either chunk) or two (4 = W c1, 5 = W c0). lists[k][mb] is
// the integer slot of micro-batch mb; a rank holds at most one op per slot.
#include "schedules/v_greedy.hpp"

#include "limits/deadline.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace pp {
namespace {

using Lists = std::vector<std::vector<int>>;  // one rank: per kind, the slot of each micro-batch

constexpr int kFc0 = 0, kFc1 = 1, kIc1 = 2, kIc0 = 3, kW = 4;

bool is_backward_kind(int k) { return k == kIc1 || k == kIc0; }

// The reference's `max(x[-1] for x in lists)` over the first `count` lists (every list is increasing).
int last_slot(const Lists& lists, size_t count) {
    int last = -1;
    for (size_t k = 0; k < count && k < lists.size(); ++k)
        if (!lists[k].empty()) last = std::max(last, lists[k].back());
    return last;
}

// kind_at[t] = the kind at slot t, -1 when t is free, over slots 0..last.
void kinds_by_slot(const Lists& lists, size_t count, int last, std::vector<signed char>& kind_at) {
    kind_at.assign(static_cast<size_t>(last) + 1, -1);
    for (size_t k = 0; k < count && k < lists.size(); ++k)
        for (int t : lists[k]) {
            if (t < 0 || t > last) continue;
            if (kind_at[t] >= 0) throw std::logic_error("v-family greedy: two ops in one slot");
            kind_at[t] = static_cast<signed char>(k);
        }
}

// WFILL: the weight gradients into the free slots. Walk t = 0..last (last slot of kinds 0-3): a backward at t owes
// one W (queue 0 unsplit; split: queue 0 for I c1, queue 1 for I c0); a free t takes one owed W, queue 0 first.
// What is still owed goes after `last`, queue 0 then queue 1.
Lists wfill(Lists lists, bool split) {
    lists.resize(4);
    const int last = last_slot(lists, 4);
    std::vector<signed char> kind_at;
    kinds_by_slot(lists, 4, last, kind_at);
    lists.resize(split ? 6 : 5);
    int owed[2] = {0, 0};
    int t = 0;
    for (; t <= last; ++t) {
        if (kind_at[t] >= 0) {
            if (is_backward_kind(kind_at[t])) ++owed[split ? kind_at[t] - kIc1 : 0];
            continue;
        }
        for (int q = 0; q < 2; ++q)
            if (owed[q] > 0) {
                lists[kW + q].push_back(t);
                --owed[q];
                break;
            }
    }
    t = std::max(last, 0);  // Python's loop variable after `for t in range(last + 1)`
    for (int q = 0; q < 2; ++q)
        for (; owed[q] > 0; --owed[q]) lists[kW + q].push_back(++t);
    return lists;
}

// PEAK: walk t = 0..last; F +1, I 0 (and one W owed), an explicit W -1; without a W list a free slot retires one
// owed W. The largest running total.
int peak(const Lists& lists, std::vector<signed char>& kind_at) {
    const bool explicit_w = lists.size() > 4;
    const int last = last_slot(lists, lists.size());
    kinds_by_slot(lists, lists.size(), last, kind_at);
    int current = 0, highest = 0, owed = 0;
    for (int t = 0; t <= last; ++t) {
        const int k = kind_at[t];
        if (k >= 0) {
            current += k == kFc0 || k == kFc1 ? 1 : k >= kW ? -1 : 0;
            if (is_backward_kind(k)) ++owed;
        } else if (!explicit_w && owed > 0) {
            --current;
            --owed;
        }
        highest = std::max(highest, current);
    }
    return highest;
}

// PEAK of one rank under the tentative moves of IMPROVE, without walking the whole rank each time (the walk made
// the greedy cubic in P): the running total after each slot in a segment tree (range add, range max), kept up to
// date as ops move earlier.
//   With a W list (every op's memory delta at its own slot), moving an op from `from` to `to` adds its delta on
//   [to, from).
//   Without (a free slot retires an owed W), the state is (total, owed) after each slot; a move re-walks from `to`
//   until, past `from`, the state is again the one of the placement before the move: nothing differs after that.
class RankMemory {
public:
    explicit RankMemory(const Lists& lists) : explicit_w_(lists.size() > 4) {
        const int last = last_slot(lists, lists.size());
        kinds_by_slot(lists, lists.size(), last, kind_at_);
        size_ = static_cast<int>(kind_at_.size());
        total_.assign(size_, 0);
        owed_.assign(size_, 0);
        int current = 0, owed = 0;
        for (int t = 0; t < size_; ++t) {
            step(kind_at_[t], current, owed);
            total_[t] = current;
            owed_[t] = owed;
        }
        tree_max_.assign(4 * static_cast<size_t>(std::max(size_, 1)), 0);
        tree_add_.assign(tree_max_.size(), 0);
        if (size_ > 0) build(1, 0, size_ - 1);
    }

    // The rank's peak if the op of `kind` at `from` ran at the free slot `to` < from instead.
    int peak_if_moved(int kind, int from, int to) const {
        int highest = std::max(0, range_max(0, to - 1));
        if (explicit_w_)
            return std::max({highest, range_max(to, from - 1) + delta(kind), range_max(from, size_ - 1)});
        int current = to > 0 ? total_at(to - 1) : 0, owed = to > 0 ? owed_[to - 1] : 0;
        for (int t = to; t < size_; ++t) {
            step(t == to ? kind : t == from ? -1 : kind_at_[t], current, owed);
            highest = std::max(highest, current);
            if (t >= from && current == total_at(t) && owed == owed_[t]) return std::max(highest, range_max(t + 1, size_ - 1));
        }
        return highest;
    }

    void move(int kind, int from, int to) {
        kind_at_[from] = -1;
        kind_at_[to] = static_cast<signed char>(kind);
        if (explicit_w_) {
            if (delta(kind) != 0) add(1, 0, size_ - 1, to, from - 1, delta(kind));
            return;
        }
        int current = to > 0 ? total_at(to - 1) : 0, owed = to > 0 ? owed_[to - 1] : 0;
        for (int t = to; t < size_; ++t) {
            step(kind_at_[t], current, owed);
            const int before = total_[t];
            if (t >= from && current == before && owed == owed_[t]) return;
            if (current != before) add(1, 0, size_ - 1, t, t, current - before);
            total_[t] = current;
            owed_[t] = owed;
        }
    }

private:
    static int delta(int kind) { return kind == kFc0 || kind == kFc1 ? 1 : kind >= kW ? -1 : 0; }
    // One slot of PEAK's walk: an op adds its delta (a backward owes a W); without a W list a free slot retires one.
    void step(int kind, int& current, int& owed) const {
        if (kind >= 0) {
            current += delta(kind);
            if (is_backward_kind(kind)) ++owed;
        } else if (!explicit_w_ && owed > 0) {
            --current;
            --owed;
        }
    }
    int total_at(int t) const { return total_[t]; }  // without a W list, where total_ is kept current

    void build(size_t node, int lo, int hi) {
        if (lo == hi) {
            tree_max_[node] = total_[lo];
            return;
        }
        const int mid = (lo + hi) / 2;
        build(2 * node, lo, mid);
        build(2 * node + 1, mid + 1, hi);
        tree_max_[node] = std::max(tree_max_[2 * node], tree_max_[2 * node + 1]);
    }
    void add(size_t node, int lo, int hi, int from, int to, int d) {
        if (to < lo || hi < from) return;
        if (from <= lo && hi <= to) {
            tree_max_[node] += d;
            tree_add_[node] += d;
            return;
        }
        const int mid = (lo + hi) / 2;
        add(2 * node, lo, mid, from, to, d);
        add(2 * node + 1, mid + 1, hi, from, to, d);
        tree_max_[node] = tree_add_[node] + std::max(tree_max_[2 * node], tree_max_[2 * node + 1]);
    }
    int max_of(size_t node, int lo, int hi, int from, int to) const {
        if (to < lo || hi < from) return kNone;
        if (from <= lo && hi <= to) return tree_max_[node];
        const int mid = (lo + hi) / 2;
        const int best = std::max(max_of(2 * node, lo, mid, from, to), max_of(2 * node + 1, mid + 1, hi, from, to));
        return best == kNone ? kNone : best + tree_add_[node];
    }
    // The largest running total over slots [from, to]; kNone when the range is empty.
    int range_max(int from, int to) const {
        if (from > to || size_ == 0) return kNone;
        return max_of(1, 0, size_ - 1, from, to);
    }

    static constexpr int kNone = -(1 << 29);
    bool explicit_w_;
    int size_ = 0;
    std::vector<signed char> kind_at_;
    std::vector<int> total_;               // running totals (kept current without a W list; the tree always is)
    std::vector<int> owed_;                // W's owed after each slot (without a W list)
    std::vector<int> tree_max_, tree_add_;
};

struct SlotOp {
    int slot, rank, kind, mb;
};

// Every op in increasing (slot, rank, kind, mb) order (a rank holds one op per slot): a counting sort by slot.
std::vector<SlotOp> ops_by_slot(const std::vector<Lists>& slots) {
    int last = -1;
    size_t count = 0;
    for (const Lists& rank : slots) {
        last = std::max(last, last_slot(rank, rank.size()));
        for (const auto& list : rank) count += list.size();
    }
    std::vector<size_t> first(static_cast<size_t>(last) + 2, 0);
    for (const Lists& rank : slots)
        for (const auto& list : rank)
            for (int t : list) ++first[t + 1];
    for (size_t t = 1; t < first.size(); ++t) first[t] += first[t - 1];
    std::vector<SlotOp> ops(count);
    for (int s = 0; s < static_cast<int>(slots.size()); ++s)
        for (int k = 0; k < static_cast<int>(slots[s].size()); ++k)
            for (int mb = 0; mb < static_cast<int>(slots[s][k].size()); ++mb) {
                const int t = slots[s][k][mb];
                ops[first[t]++] = {t, s, k, mb};
            }
    return ops;  // ranks were visited in increasing order, so equal slots keep rank order
}

// The n-th smallest (0-based) of the union of two increasing lists.
int nth_of_two(const std::vector<int>& a, const std::vector<int>& b, size_t n) {
    if (n >= a.size() + b.size()) throw std::logic_error("v-family greedy: a W without its backward");
    // i elements from a and n + 1 - i from b make the n + 1 smallest.
    size_t lo = n + 1 > b.size() ? n + 1 - b.size() : 0, hi = std::min(n + 1, a.size());
    while (lo < hi) {
        const size_t i = (lo + hi) / 2, j = n + 1 - i;
        if (j > 0 && i < a.size() && b[j - 1] > a[i])
            lo = i + 1;
        else
            hi = i;
    }
    const size_t i = lo, j = n + 1 - i;
    if (i == 0) return b[j - 1];
    if (j == 0) return a[i - 1];
    return std::max(a[i - 1], b[j - 1]);
}

// SQUEEZE at unit costs and no latency: each op, in increasing (slot, rank, kind, mb) order, starts when the
// previous op of its rank and its dependencies have ended. Returns the start times (compacted integer slots).
// Dependencies of (s, k, mb): F c0 and I c1 on rank s-1; F c1 and I c0 on rank s+1; kinds 1-3 the previous kind
// of the same micro-batch on the same rank; the previous micro-batch of the same kind.
std::vector<Lists> squeeze(const std::vector<Lists>& slots) {
    const int P = static_cast<int>(slots.size());
    std::vector<Lists> end(P);
    for (int s = 0; s < P; ++s) {
        end[s].resize(slots[s].size());
        for (size_t k = 0; k < slots[s].size(); ++k) end[s][k].assign(slots[s][k].size(), -1);
    }
    std::vector<int> rank_end(P, 0);
    auto done = [&](int s, int k, int mb) {
        const int e = end.at(s).at(k).at(mb);
        if (e < 0) throw std::logic_error("v-family greedy: a dependency is evaluated after its successor");
        return e;
    };
    std::vector<Lists> start = end;
    for (const auto& [slot, s, k, mb] : ops_by_slot(slots)) {
        int ready = rank_end[s];
        if ((k == kFc0 || k == kIc1) && s > 0) ready = std::max(ready, done(s - 1, k, mb));
        if ((k == kFc1 || k == kIc0) && s + 1 < P) ready = std::max(ready, done(s + 1, k, mb));
        if (k > 0 && k < kW) ready = std::max(ready, done(s, k - 1, mb));
        if (mb > 0) ready = std::max(ready, done(s, k, mb - 1));
        end[s][k][mb] = ready + 1;
        start[s][k][mb] = ready;
        rank_end[s] = ready + 1;
    }
    return start;
}

// IMPROVE: visit the ops in increasing (slot, rank, kind, mb) order and move each to the earliest free slot after
// its dependencies where the rank's peak stays within the largest peak of any rank at the start -- except the
// steady phase (from the first I c0 on rank 0 to the first last-micro-batch F c0 on any rank, both included) and,
// in the pass without W's, the warm-up before it, which stay. Then the compacted slots.
std::vector<Lists> improve(std::vector<Lists> slots, bool with_w, int M) {
    const int P = static_cast<int>(slots.size());
    if (with_w)
        for (Lists& rank : slots) rank = wfill(std::move(rank), false);
    std::vector<signed char> scratch;
    int limit = 0;
    for (const Lists& rank : slots) limit = std::max(limit, peak(rank, scratch));
    std::vector<RankMemory> memory;
    for (const Lists& rank : slots) memory.emplace_back(rank);

    std::vector<std::vector<char>> used(P);
    for (int s = 0; s < P; ++s) used[s].assign(static_cast<size_t>(last_slot(slots[s], slots[s].size())) + 1, 0);
    const std::vector<SlotOp> visit = ops_by_slot(slots);  // in the order at the start of the pass

    int phase = 0;
    for (const auto& [original, s, k, mb] : visit) {
        limits::poll("generating v-min or v-half");  // a run's time limit (search's warm starts) stops it
        int& slot = slots[s][k][mb];
        if (phase == 0 && k == kIc0 && s == 0) phase = 1;
        if (phase == 1) {
            if (k == kFc0 && mb == M - 1) phase = 2;
            used[s].at(slot) = 1;
            continue;
        }
        if (phase == 0 && !with_w) {
            used[s].at(slot) = 1;
            continue;
        }
        int after = -1;  // the latest slot among the dependencies, at their current values
        if ((k == kFc0 || k == kIc1) && s > 0) after = std::max(after, slots[s - 1][k][mb]);
        if ((k == kFc1 || k == kIc0) && s + 1 < P) after = std::max(after, slots[s + 1][k][mb]);
        if (k > 0 && k < kW) after = std::max(after, slots[s][k - 1][mb]);
        if (k == kW) after = std::max(after, nth_of_two(slots[s][kIc1], slots[s][kIc0], mb));  // the mb-th backward
#ifdef PP_V_GREEDY_CHECK
        if (k == kW) {
            std::vector<int> backward = slots[s][kIc1];
            backward.insert(backward.end(), slots[s][kIc0].begin(), slots[s][kIc0].end());
            std::sort(backward.begin(), backward.end());
            if (backward.at(mb) != nth_of_two(slots[s][kIc1], slots[s][kIc0], mb)) throw std::logic_error("nth_of_two");
        }
#endif
        if (mb > 0) after = std::max(after, slots[s][k][mb - 1]);
        // The first free slot after the dependencies where the rank's peak stays within the limit.
        for (int t = after + 1; t < original; ++t) {
            if (used[s].at(t)) continue;
            const int tentative = memory[s].peak_if_moved(k, original, t);
#ifdef PP_V_GREEDY_CHECK  // the incremental peak against the plain walk
            slot = t;
            if (tentative != peak(slots[s], scratch)) throw std::logic_error("v-family greedy: incremental peak differs");
            slot = original;
#endif
            if (tentative <= limit) {
                slot = t;
                memory[s].move(k, original, t);
                break;
            }
        }
        used[s].at(slot) = 1;
    }
    if (!with_w)
        for (Lists& rank : slots) rank = wfill(std::move(rank), false);
    return squeeze(slots);
}

void drop_w(std::vector<Lists>& slots) {
    for (Lists& rank : slots) rank.resize(4);
}

}  // namespace

VOrder zbv_greedy_order(const VPattern& pattern, int M) {
    const int P = static_cast<int>(pattern.size());
    std::vector<Lists> slots(P, Lists(4));
    for (int s = 0; s < P; ++s)
        for (int k = 0; k < 4; ++k)
            for (int mb = 0; mb < M; ++mb) slots[s][k].push_back(pattern[s][k] + 6 * mb);

    slots = improve(std::move(slots), true, M);
    drop_w(slots);
    slots = improve(std::move(slots), false, M);
    drop_w(slots);

    static constexpr VOp kOps[6] = {{OpKind::F, 0, 0}, {OpKind::F, 1, 0}, {OpKind::I, 1, 0},
                                    {OpKind::I, 0, 0}, {OpKind::W, 1, 0}, {OpKind::W, 0, 0}};
    VOrder order(P);
    for (int s = 0; s < P; ++s) {
        const Lists final_slots = wfill(std::move(slots[s]), true);
        std::vector<std::tuple<int, int, int>> ops;  // slot, kind, mb
        for (int k = 0; k < 6; ++k)
            for (size_t mb = 0; mb < final_slots[k].size(); ++mb) ops.emplace_back(final_slots[k][mb], k, static_cast<int>(mb));
        std::sort(ops.begin(), ops.end());
        for (const auto& [slot, k, mb] : ops) {
            VOp op = kOps[k];
            op.microbatch = mb;
            order[s].push_back(op);
        }
    }
    return order;
}

}  // namespace pp
