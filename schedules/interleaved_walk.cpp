#include "schedules/interleaved_walk.hpp"

#include <algorithm>
#include <deque>
#include <map>

namespace pp {

int interleaved_rounds(int ranks, int microbatches) { return std::max(1, microbatches / ranks); }

namespace {

// Micro-batch numbers are per-stage counters in emission order.
struct StageCounter {
    std::map<int, int> next;
    int take(int stage) { return next[stage]++; }
};

}  // namespace

RankCells interleaved_rank_cells(const InterleavedShape& shape, int rank) {
    const int P = shape.ranks, V = shape.stages_per_rank, M = shape.microbatches, r = rank;
    const int per_round = M / interleaved_rounds(P, M);
    const int total = V * M;  // forwards (and backwards) on this rank

    // Warm-up forwards: the last rank needs (V-1) rounds' worth before its first backward; every hop
    // further from the last rank adds 2 (1F1B: the forward out and the backward back) or 1 (ZB1P).
    const int hop = shape.zero_bubble ? 1 : 2;
    const int warmup = std::min((V - 1) * per_round + hop * (P - 1 - r), total);
    const int steady = total - warmup;
    // Idle cells after the warm-up: upstream aligns the first backward of every rank in lock-step time;
    // ZB1P uses P-1-r. Upstream emits them while issuing the last warm-up op, so none when warmup == 0.
    const int pad_after_warmup =
        shape.zero_bubble ? P - 1 - r : std::max(0, V * P + 2 * (P - 1 - r) - warmup - r);

    auto forward_stage = [&](int k) { return (k / per_round) % V * P + r; };
    auto backward_stage = [&](int k) { return (V - 1 - (k - warmup) / per_round % V) * P + r; };
    const OpKind backward_kind = shape.zero_bubble ? OpKind::I : OpKind::B;

    RankCells row(r, std::nullopt);
    StageCounter f_count, b_count;
    std::deque<Op> pending_w;  // ZB1P: weight grads wait FIFO in backward order

    auto forward = [&](int k) {
        int s = forward_stage(k);
        row.push_back(op_at(OpKind::F, s, f_count.take(s)));
    };
    auto backward = [&](int k) {
        int s = backward_stage(k);
        Op op = op_at(backward_kind, s, b_count.take(s));
        row.push_back(op);
        if (!shape.zero_bubble) return;
        pending_w.push_back(op_at(OpKind::W, s, op.microbatch));
        // ZB1P delays the W's by r backwards ("num_1f1b_microbatches = rank"): the I's travel upstream
        // sooner and the owed W's fill the drain.
        if (k - warmup >= r) {
            row.push_back(pending_w.front());
            pending_w.pop_front();
        }
    };

    for (int k = 0; k < warmup + steady + warmup; ++k) {
        if (k < warmup) {
            forward(k);
            if (k == warmup - 1) row.insert(row.end(), pad_after_warmup, std::nullopt);
        } else if (k < warmup + steady) {
            forward(k);
            backward(k);
        } else {
            if (!shape.zero_bubble) row.push_back(std::nullopt);  // cool-down: lock-step with the others
            backward(k);
        }
    }
    for (const Op& w : pending_w) row.push_back(w);
    return row;
}

}  // namespace pp
