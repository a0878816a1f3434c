#include "verifier/chunk_best.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace pp {
namespace {

// Branch and bound over canonical sequences (see the header), in integer ticks.
class BranchAndBound {
public:
    BranchAndBound(const SlotDag& dag, std::uint64_t budget) : dag_(dag), n_(dag.node_count()), budget_(budget) {
        TimeScale scale;
        for (const auto& node : dag.nodes) scale.include(node.cost);
        scale_ = scale;
        for (const auto& node : dag.nodes) {
            d_.push_back(scale.to_ticks(node.cost));
            stream_.push_back(static_cast<int>(node.stream()));
            remaining_[static_cast<size_t>(stream_.back())] += d_.back();
        }
        tail_.assign(static_cast<size_t>(n_), -1);
        for (int v = 0; v < n_; ++v) tail_of(v);
        placed_.assign(static_cast<size_t>(n_), false);
        end_.assign(static_cast<size_t>(n_), 0);
        placed_preds_.assign(static_cast<size_t>(n_), 0);
    }

    void set_incumbent(Ticks value, std::vector<int> sequence) {
        best_ = value;
        best_seq_ = std::move(sequence);
    }

    void run() { dfs(0, 0); }

    bool complete() const { return !aborted_; }
    std::uint64_t nodes() const { return nodes_; }
    const std::vector<int>& best_sequence() const { return best_seq_; }

private:
    const SlotDag& dag_;
    int n_;
    std::uint64_t budget_;
    TimeScale scale_;
    std::vector<Ticks> d_, tail_, end_;
    std::vector<int> stream_, placed_preds_, seq_, best_seq_;
    std::vector<bool> placed_;
    std::array<Ticks, kStreams> free_{}, remaining_{};
    Ticks last_start_ = -1;
    int last_stream_ = kStreams;
    Ticks best_ = 0;
    std::uint64_t nodes_ = 0;
    bool aborted_ = false;

    Ticks tail_of(int v) {
        if (tail_[static_cast<size_t>(v)] >= 0) return tail_[static_cast<size_t>(v)];
        Ticks longest = 0;
        for (int w : dag_.succ[static_cast<size_t>(v)]) longest = std::max(longest, tail_of(w));
        return tail_[static_cast<size_t>(v)] = d_[static_cast<size_t>(v)] + longest;
    }

    Ticks start_of(int v) const {
        Ticks start = free_[static_cast<size_t>(stream_[static_cast<size_t>(v)])];
        for (int p : dag_.pred[static_cast<size_t>(v)]) start = std::max(start, end_[static_cast<size_t>(p)]);
        return start;
    }

    void dfs(int count, Ticks makespan) {
        if (aborted_) return;
        if (++nodes_ > budget_) {
            aborted_ = true;
            return;
        }
        if (count == n_) {
            if (makespan < best_) set_incumbent(makespan, seq_);
            return;
        }
        Ticks bound = makespan;
        for (size_t s = 0; s < kStreams; ++s)
            if (remaining_[s] > 0) bound = std::max(bound, std::max(free_[s], last_start_) + remaining_[s]);
        struct Candidate {
            Ticks start;
            int stream, node;
        };
        std::vector<Candidate> candidates;
        for (int v = 0; v < n_; ++v) {
            if (placed_[static_cast<size_t>(v)] ||
                placed_preds_[static_cast<size_t>(v)] != static_cast<int>(dag_.pred[static_cast<size_t>(v)].size()))
                continue;
            const Ticks start = start_of(v);
            bound = std::max(bound, std::max(start, last_start_) + tail_[static_cast<size_t>(v)]);
            const int s = stream_[static_cast<size_t>(v)];
            if (start > last_start_ || (start == last_start_ && s > last_stream_)) candidates.push_back({start, s, v});
        }
        if (bound >= best_) return;
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            return a.start != b.start ? a.start < b.start : a.stream < b.stream;
        });
        for (const Candidate& c : candidates) {
            const size_t v = static_cast<size_t>(c.node), s = static_cast<size_t>(c.stream);
            const Ticks saved_free = free_[s], saved_last = last_start_;
            const int saved_stream = last_stream_;
            placed_[v] = true;
            end_[v] = c.start + d_[v];
            free_[s] = end_[v];
            remaining_[s] -= d_[v];
            last_start_ = c.start;
            last_stream_ = c.stream;
            for (int w : dag_.succ[v]) ++placed_preds_[static_cast<size_t>(w)];
            seq_.push_back(c.node);
            dfs(count + 1, std::max(makespan, end_[v]));
            seq_.pop_back();
            for (int w : dag_.succ[v]) --placed_preds_[static_cast<size_t>(w)];
            last_start_ = saved_last;
            last_stream_ = saved_stream;
            remaining_[s] += d_[v];
            free_[s] = saved_free;
            placed_[v] = false;
            if (aborted_ || best_ <= makespan) return;
        }
    }
};

StreamOrder lists_of(const SlotDag& dag, const std::vector<int>& sequence) {
    StreamOrder order;
    for (int v : sequence) order.lists[static_cast<size_t>(dag.nodes[static_cast<size_t>(v)].stream())].push_back(v);
    return order;
}

std::vector<int> sequence_of(const SlotDag& dag, const StreamOrder& order, const SlotTimeline& timeline) {
    std::vector<int> seq;
    for (const auto& list : order.lists) seq.insert(seq.end(), list.begin(), list.end());
    std::sort(seq.begin(), seq.end(), [&](int a, int b) {
        const auto& ta = timeline.times[static_cast<size_t>(a)];
        const auto& tb = timeline.times[static_cast<size_t>(b)];
        if (!(ta.start == tb.start)) return ta.start < tb.start;
        return dag.nodes[static_cast<size_t>(a)].stream() < dag.nodes[static_cast<size_t>(b)].stream();
    });
    return seq;
}

bool better(const SlotTimeline& a, const SlotTimeline& b) {
    if (!(a.duration == b.duration)) return a.duration < b.duration;
    return a.exposed_comm < b.exposed_comm;
}

// Every linear extension of one stream's nodes under reachability, each passed to `visit`; false from
// `visit` stops the walk.
void linear_extensions(const std::vector<int>& nodes, const std::vector<std::vector<bool>>& reach,
                       const std::function<bool(const std::vector<int>&)>& visit) {
    std::vector<int> current;
    std::vector<bool> used(nodes.size(), false);
    bool stop = false;
    std::function<void()> rec = [&] {
        if (stop) return;
        if (current.size() == nodes.size()) {
            stop = !visit(current);
            return;
        }
        for (size_t i = 0; i < nodes.size() && !stop; ++i) {
            if (used[i]) continue;
            bool free = true;
            for (size_t j = 0; j < nodes.size() && free; ++j)
                if (!used[j] && j != i && reach[static_cast<size_t>(nodes[j])][static_cast<size_t>(nodes[i])]) free = false;
            if (!free) continue;
            used[i] = true;
            current.push_back(nodes[i]);
            rec();
            current.pop_back();
            used[i] = false;
        }
    };
    rec();
}

}  // namespace

StreamOrder data_only(const StreamOrder& order) {
    StreamOrder plain;
    plain.lists = order.lists;
    return plain;
}

BestOrder best_order_exhaustive(const SlotDag& dag, const Rational& slowdown, const BestSearchOptions& options) {
    BestOrder best;
    best.order = data_only(pattern_order(PatternKind::DeepSeek, dag));
    best.timeline = time_slot(dag, best.order, slowdown);
    if (slowdown == Rational(0)) {
        best.method = "branch and bound over canonical orders";
        BranchAndBound search(dag, options.node_budget);
        TimeScale scale;
        for (const auto& node : dag.nodes) scale.include(node.cost);
        search.set_incumbent(scale.to_ticks(best.timeline.duration), sequence_of(dag, best.order, best.timeline));
        search.run();
        best.complete = search.complete();
        best.nodes = search.nodes();
        best.order = lists_of(dag, search.best_sequence());
        best.timeline = time_slot(dag, best.order, slowdown);
        return best;
    }
    best.method = "enumeration of stream orders";
    const size_t n = dag.nodes.size();
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t v = 0; v < n; ++v) {
        std::vector<int> stack(dag.succ[v].begin(), dag.succ[v].end());
        while (!stack.empty()) {
            const int w = stack.back();
            stack.pop_back();
            if (reach[v][static_cast<size_t>(w)]) continue;
            reach[v][static_cast<size_t>(w)] = true;
            for (int x : dag.succ[static_cast<size_t>(w)]) stack.push_back(x);
        }
    }
    std::array<std::vector<int>, kStreams> stream_nodes;
    for (size_t v = 0; v < n; ++v) stream_nodes[static_cast<size_t>(dag.nodes[v].stream())].push_back(static_cast<int>(v));
    std::vector<std::vector<int>> compute_orders;
    bool over = false;
    linear_extensions(stream_nodes[0], reach, [&](const std::vector<int>& order) {
        compute_orders.push_back(order);
        over = compute_orders.size() > options.node_budget;
        return !over;
    });
    best.complete = !over;
    if (over) return best;
    linear_extensions(stream_nodes[1], reach, [&](const std::vector<int>& network) {
        for (const auto& compute : compute_orders) {
            if (++best.nodes > options.node_budget) {
                best.complete = false;
                return false;
            }
            StreamOrder order;
            order.lists[0] = compute;
            order.lists[1] = network;
            if (check_order(dag, order)) continue;
            SlotTimeline timeline = time_slot(dag, order, slowdown);
            if (better(timeline, best.timeline)) best.order = order, best.timeline = std::move(timeline);
        }
        return true;
    });
    return best;
}

}  // namespace pp
