// The 8 steps of DeepSeek's DualPipe step() for one rank, written from the step table and hand traces in
// /work/shared/reference/dualpipe.md (section c) and checked against deepseek-ai/DualPipe @ 3da1bbe.
// Every micro-batch index in that table is a running counter per (phase, forward/backward), so the
// emitter below keeps those counters instead of evaluating each index formula; the formulas are
// repeated in the comments of each step as a cross-check.
#include "schedules/dualpipe_steps.hpp"

#include <deque>
#include <stdexcept>

namespace pp {
namespace {

constexpr int kP0 = 0;
constexpr int kP1 = 1;

// Emits ops of the two local phases with per-phase micro-batch counters and the reference's
// WeightGradStore: a FIFO with one entry per split backward, popped by each W.
class RankOrderEmitter {
public:
    explicit RankOrderEmitter(const DualPipeRank& rank) : rank_(rank) {}

    void forward(int phase) { slots_.push_back(Slot::single(next_forward(phase))); }
    void full_backward(int phase) { slots_.push_back(Slot::single(next_backward(phase, OpKind::B))); }
    // A zero-bubble backward: I now, its W deferred to the queue.
    void split_backward(int phase) {
        Op input_grad = next_backward(phase, OpKind::I);
        slots_.push_back(Slot::single(input_grad));
        Op weight = input_grad;
        weight.kind = OpKind::W;
        pending_weights_.push_back(weight);
    }
    // Pops the oldest deferred weight gradient (the reference asserts the queue is never empty here).
    void weight() {
        slots_.push_back(Slot::single(pending_weights_.front()));
        pending_weights_.pop_front();
    }
    // An overlapped F&B: the backward inside a pair always does its weight gradient inline (full B).
    void pair(int forward_phase, int backward_phase) {
        Op f = next_forward(forward_phase);
        Op b = next_backward(backward_phase, OpKind::B);
        slots_.push_back(Slot::pair(f, b));
    }

    std::vector<Slot> take() { return std::move(slots_); }

private:
    Op next_forward(int phase) { return op(OpKind::F, phase, forwards_[phase]++); }
    Op next_backward(int phase, OpKind kind) { return op(kind, phase, backwards_[phase]++); }
    Op op(OpKind kind, int phase, int microbatch) const {
        const PhaseLocation& where = rank_.phase[phase];
        return Op{kind, where.pipeline, where.stage, microbatch};
    }

    const DualPipeRank& rank_;
    std::array<int, 2> forwards_{0, 0};
    std::array<int, 2> backwards_{0, 0};
    std::deque<Op> pending_weights_;
    std::vector<Slot> slots_;
};

struct StepCounts {
    int far;      // n - h - 1: 0 exactly on the turn rank(s)
    int near;     // h + 1
    int steady;   // n4 = H - 2n + h + 1 (>= 1 because H >= 2n)
    bool turn;    // the rank where the two phases meet (DualPipe: h = n-1 on two ranks; V: r = P-1)
};

StepCounts step_counts(const DualPipeRank& r) {
    const int far = r.ranks_per_half - r.distance - 1;
    return {far, r.distance + 1, r.microbatches - 2 * r.ranks_per_half + r.distance + 1, far == 0};
}

// Step 1 "nF0": 2*far forwards of p0, micro-batches 0 .. 2far-1.
void step1_forwards(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < 2 * c.far; ++j) e.forward(kP0);
}

// Step 2 "nF0F1": h+1 rounds of F p0 (mb 2far+j), F p1 (mb j).
void step2_forward_pairs(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.near; ++j) {
        e.forward(kP0);
        e.forward(kP1);
    }
}

// Step 3 "nB1W1F1": far rounds of split B p1 (mb j), its own W right away (the queue holds only it),
// then F p1 (mb h+1+j).
void step3_zero_bubble_p1(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.far; ++j) {
        e.split_backward(kP1);
        e.weight();
        e.forward(kP1);
    }
}

// Step 4 "nF0B1F1B0", the steady state: n4 rounds of
//   (F p0 mb 2n-h-1+j ; B p1 mb n-h-1+j)  then  (F p1 mb n+j ; B p0 mb j).
// On the turn rank the first pair of round 0 runs unpaired, F p0 then B p1 ("to reduce the bubble":
// the other side of the turn is waiting for that F's output).
void step4_steady_pairs(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.steady; ++j) {
        if (j == 0 && c.turn) {
            e.forward(kP0);
            e.full_backward(kP1);
        } else {
            e.pair(kP0, kP1);
        }
        e.pair(kP1, kP0);
    }
}

// Step 5 "nB1F1B0": far rounds of B p1 (mb H-n+j), then (F p1 mb H-n+h+1+j ; B p0 mb H-2n+h+1+j).
void step5_drain_p0_forwards(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.far; ++j) {
        e.full_backward(kP1);
        e.pair(kP1, kP0);
    }
}

// Step 6 "nB1B0": h+1 rounds of backward p1 (mb H-h-1+j), backward p0 (mb H-n+j). The last h+1 of
// these 2(h+1) backwards are split (the reference switches at round (h+1)/2: before its p1 backward
// when h is odd, between p1 and p0 when h is even -- the same thing).
void step6_backward_pairs(RankOrderEmitter& e, const StepCounts& c) {
    const int total = 2 * c.near;
    int emitted = 0;
    auto backward = [&](int phase) {
        if (emitted++ >= total - c.near)
            e.split_backward(phase);
        else
            e.full_backward(phase);
    };
    for (int j = 0; j < c.near; ++j) {
        backward(kP1);
        backward(kP0);
    }
}

// Step 7 "nWB0": far rounds of W (oldest deferred first), then split B p0 (mb H-n+h+1+j).
void step7_weights_and_p0(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.far; ++j) {
        e.weight();
        e.split_backward(kP0);
    }
}

// Step 8 "nW": the h+1 weight gradients still queued, oldest first.
void step8_drain_weights(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.near; ++j) e.weight();
}

}  // namespace

std::vector<Slot> dualpipe_rank_order(const DualPipeRank& rank) {
    // The generators check the reference's preconditions; this guards the queue pops and counts.
    if (rank.ranks_per_half < 1 || rank.distance < 0 || rank.distance >= rank.ranks_per_half ||
        rank.microbatches < 2 * rank.ranks_per_half)
        throw std::invalid_argument("dualpipe_rank_order: needs 0 <= h < n and H >= 2n");
    const StepCounts counts = step_counts(rank);
    RankOrderEmitter emitter(rank);
    step1_forwards(emitter, counts);
    step2_forward_pairs(emitter, counts);
    step3_zero_bubble_p1(emitter, counts);
    step4_steady_pairs(emitter, counts);
    step5_drain_p0_forwards(emitter, counts);
    step6_backward_pairs(emitter, counts);
    step7_weights_and_p0(emitter, counts);
    step8_drain_weights(emitter, counts);
    return emitter.take();
}

}  // namespace pp
