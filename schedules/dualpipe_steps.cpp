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
//
// It also records the reference's communication: the compute wrappers mirror _forward_chunk,
// _backward_chunk, _forward_backward_chunk and _weight_chunk (queue receives, commit, compute, queue
// sends), and recv_forward / send_forward / send_backward are the bare queueing calls the reference
// makes between wrappers. Every queueing call names its tensor by a running counter per phase, as the
// reference's current_{send,recv}_{f,b}_chunk_id do; calls towards a missing or same-rank neighbour are
// no-ops there and here. A commit launches everything queued so far: the batch of the next compute.
class RankOrderEmitter {
public:
    explicit RankOrderEmitter(const DualPipeRank& rank) : rank_(rank) {}

    // _forward_chunk(phase, recv, send)
    void forward(int phase, bool recv = true, bool send = true) {
        if (recv) recv_forward(phase);
        run(Slot::single(next_forward(phase)));
        if (send) send_forward(phase);
    }
    // _backward_chunk(phase, enable_zb=False, recv, send): a full backward.
    void full_backward(int phase, bool recv = true, bool send = true) {
        if (recv) recv_backward(phase);
        run(Slot::single(next_backward(phase, OpKind::B)));
        if (send) send_backward(phase);
    }
    // _backward_chunk(phase, enable_zb=True): a zero-bubble backward, I now, its W deferred to the queue.
    void split_backward(int phase) {
        recv_backward(phase);
        Op input_grad = next_backward(phase, OpKind::I);
        run(Slot::single(input_grad));
        Op weight = input_grad;
        weight.kind = OpKind::W;
        pending_weights_.push_back(weight);
        send_backward(phase);
    }
    // _weight_chunk: commit, then pop the oldest deferred weight gradient (the reference asserts the
    // queue is never empty here).
    void weight() {
        run(Slot::single(pending_weights_.front()));
        pending_weights_.pop_front();
    }
    // _forward_backward_chunk(forward_phase, backward_phase, recv0): an overlapped F&B; the backward
    // inside a pair always does its weight gradient inline (full B).
    void pair(int forward_phase, int backward_phase, bool recv_forward_input = true) {
        if (recv_forward_input) recv_forward(forward_phase);
        recv_backward(backward_phase);
        Op f = next_forward(forward_phase);
        Op b = next_backward(backward_phase, OpKind::B);
        run(Slot::pair(f, b));
        send_forward(forward_phase);
        send_backward(backward_phase);
    }

    // _recv_forward: the activation of the previous stage, from prev_rank.
    void recv_forward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.prev_rank < 0) return;
        queued_.push_back(P2POp{false, true, at.pipeline, at.stage - 1, recv_forward_[phase]++, at.prev_rank});
    }
    // _send_forward: this stage's activation, to next_rank.
    void send_forward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.next_rank < 0) return;
        queued_.push_back(P2POp{true, true, at.pipeline, at.stage, send_forward_[phase]++, at.next_rank});
    }
    // _recv_backward: the gradient computed by the next stage's backward, from next_rank.
    void recv_backward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.next_rank < 0) return;
        queued_.push_back(P2POp{false, false, at.pipeline, at.stage + 1, recv_backward_[phase]++, at.next_rank});
    }
    // _send_backward: this stage's input gradient, to prev_rank.
    void send_backward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.prev_rank < 0) return;
        queued_.push_back(P2POp{true, false, at.pipeline, at.stage, send_backward_[phase]++, at.prev_rank});
    }

    // The final _commit_and_wait_comm of step(); an empty commit is a no-op in the reference.
    DualPipeRankProgram take() {
        if (!queued_.empty()) comm_.push_back(CommStep{std::move(queued_), -1});
        return {std::move(slots_), std::move(comm_)};
    }

private:
    // _commit_and_wait_comm, then the compute.
    void run(const Slot& slot) {
        comm_.push_back(CommStep{std::move(queued_), static_cast<int>(slots_.size())});
        queued_.clear();
        slots_.push_back(slot);
    }
    Op next_forward(int phase) { return op(OpKind::F, phase, forwards_[phase]++); }
    Op next_backward(int phase, OpKind kind) { return op(kind, phase, backwards_[phase]++); }
    Op op(OpKind kind, int phase, int microbatch) const {
        const PhaseLocation& where = rank_.phase[phase];
        return Op{kind, where.pipeline, where.stage, microbatch};
    }

    const DualPipeRank& rank_;
    std::array<int, 2> forwards_{0, 0};
    std::array<int, 2> backwards_{0, 0};
    std::array<int, 2> recv_forward_{0, 0}, send_forward_{0, 0}, recv_backward_{0, 0}, send_backward_{0, 0};
    std::deque<Op> pending_weights_;
    std::vector<Slot> slots_;
    std::vector<P2POp> queued_;
    std::vector<CommStep> comm_;
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
// Communication (dualpipe.md section d): the input of each F p0 is received one compute early (queued
// before the loop and after every F p0, so it rides in the batch of the following F p1; the last one feeds
// step 4's first F p0). Other ranks queue the F p0 output after the F p1; the turn rank sends it at once
// (the other side of the turn needs it for its own F p1) and holds back the output of its last F p1.
void step2_forward_pairs(RankOrderEmitter& e, const StepCounts& c) {
    e.recv_forward(kP0);
    for (int j = 0; j < c.near; ++j) {
        e.forward(kP0, /*recv=*/false, /*send=*/c.turn);
        e.recv_forward(kP0);
        e.forward(kP1, /*recv=*/true, /*send=*/!c.turn || j < c.near - 1);
        if (!c.turn) e.send_forward(kP0);
    }
}

// Step 3 "nB1W1F1": far rounds of split B p1 (mb j), its own W right away (the queue holds only it),
// then F p1 (mb h+1+j).
// The input of that F p1 is received right after the B, so the W's commit waits for it (and for the
// B's gradient send) before the W runs.
void step3_zero_bubble_p1(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.far; ++j) {
        e.split_backward(kP1);
        e.recv_forward(kP1);
        e.weight();
        e.forward(kP1, /*recv=*/false);
    }
}

// Step 4 "nF0B1F1B0", the steady state: n4 rounds of
//   (F p0 mb 2n-h-1+j ; B p1 mb n-h-1+j)  then  (F p1 mb n+j ; B p0 mb j).
// On the turn rank the first pair of round 0 runs unpaired, F p0 then B p1 ("to reduce the bubble":
// the other side of the turn is waiting for that F's output).
// Communication: the first F p0 was prefetched in step 2. On the turn rank the held-back F p1 output is
// queued after the unpaired F p0, together with the B p1's gradient receive; the F p0 output and the
// B p1 gradient then go with the next pair's receives.
void step4_steady_pairs(RankOrderEmitter& e, const StepCounts& c) {
    for (int j = 0; j < c.steady; ++j) {
        if (j == 0 && c.turn) {
            e.forward(kP0, /*recv=*/false, /*send=*/false);
            e.send_forward(kP1);
            e.full_backward(kP1, /*recv=*/true, /*send=*/false);
            e.send_forward(kP0);
            e.send_backward(kP1);
        } else {
            e.pair(kP0, kP1, /*recv_forward_input=*/j > 0);
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

DualPipeRankProgram dualpipe_rank_program(const DualPipeRank& rank) {
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

std::vector<Slot> dualpipe_rank_order(const DualPipeRank& rank) { return dualpipe_rank_program(rank).slots; }

}  // namespace pp
