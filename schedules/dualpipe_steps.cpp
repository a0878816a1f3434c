// The 8 steps of DeepSeek's DualPipe step() for one rank, written from the step table and hand traces in
// /work/shared/reference/dualpipe.md (section c) and checked against deepseek-ai/DualPipe @ 3da1bbe.
// Every micro-batch index in that table is a running counter per (phase, forward/backward), so the steps are
// a step program (schedules/step_program.hpp): loops of tokens with no index in them; the index formulas are
// repeated in the comments of each step as a cross-check. Only step 4's trip count grows with H.
#include "schedules/dualpipe_steps.hpp"

#include "schedules/step_program.hpp"

#include <stdexcept>

namespace pp {
namespace {

constexpr int kP0 = 0;
constexpr int kP1 = 1;
using K = StepTokenKind;

struct StepCounts {
    int far;   // n - h - 1: 0 exactly on the turn rank(s)
    int near;  // h + 1
    bool turn; // the rank where the two phases meet (DualPipe: h = n-1 on two ranks; V: r = P-1)
};

StepCounts step_counts(const DualPipeRank& r) {
    const int far = r.ranks_per_half - r.distance - 1;
    return {far, r.distance + 1, far == 0};
}

// Step 1 "nF0": 2*far forwards of p0, micro-batches 0 .. 2far-1.
void step1_forwards(StepProgramBuilder& b, const StepCounts& c) { b.repeat(2 * c.far, {forward(kP0)}); }

// Step 2 "nF0F1": h+1 rounds of F p0 (mb 2far+j), F p1 (mb j).
// Communication (dualpipe.md section d): the input of each F p0 is received one compute early (queued
// before the loop and after every F p0, so it rides in the batch of the following F p1; the last one feeds
// step 4's first F p0). Other ranks queue the F p0 output after the F p1; the turn rank sends it at once
// (the other side of the turn needs it for its own F p1) and holds back the output of its last F p1.
void step2_forward_pairs(StepProgramBuilder& b, const StepCounts& c) {
    b.once({comm(K::RecvForward, kP0)});
    if (c.turn) {
        b.repeat(c.near - 1, {forward(kP0, false, true), comm(K::RecvForward, kP0), forward(kP1, true, true)});
        b.once({forward(kP0, false, true), comm(K::RecvForward, kP0), forward(kP1, true, false)});
    } else {
        b.repeat(c.near, {forward(kP0, false, false), comm(K::RecvForward, kP0), forward(kP1, true, true),
                          comm(K::SendForward, kP0)});
    }
}

// Step 3 "nB1W1F1": far rounds of split B p1 (mb j), its own W right away (the queue holds only it),
// then F p1 (mb h+1+j).
// The input of that F p1 is received right after the B, so the W's commit waits for it (and for the
// B's gradient send) before the W runs.
void step3_zero_bubble_p1(StepProgramBuilder& b, const StepCounts& c) {
    b.repeat(c.far, {input_backward(kP1), comm(K::RecvForward, kP1), weight(), forward(kP1, false)});
}

// Step 4 "nF0B1F1B0", the steady state: n4 = H - 2n + h + 1 rounds of
//   (F p0 mb 2n-h-1+j ; B p1 mb n-h-1+j)  then  (F p1 mb n+j ; B p0 mb j),
// the first round apart, the other h + t (t = H - 2n) the growing loop.
// On the turn rank the first pair of round 0 runs unpaired, F p0 then B p1 ("to reduce the bubble":
// the other side of the turn is waiting for that F's output).
// Communication: the first F p0 was prefetched in step 2. On the turn rank the held-back F p1 output is
// queued after the unpaired F p0, together with the B p1's gradient receive; the F p0 output and the
// B p1 gradient then go with the next pair's receives.
void step4_steady_pairs(StepProgramBuilder& b, const StepCounts& c) {
    if (c.turn)
        b.once({forward(kP0, false, false), comm(K::SendForward, kP1), full_backward(kP1, true, false),
                comm(K::SendForward, kP0), comm(K::SendBackward, kP1), overlapped(kP1, kP0)});
    else
        b.once({overlapped(kP0, kP1, false), overlapped(kP1, kP0)});
    b.repeat(c.near - 1, {overlapped(kP0, kP1), overlapped(kP1, kP0)}, /*slope=*/1);
}

// Step 5 "nB1F1B0": far rounds of B p1 (mb H-n+j), then (F p1 mb H-n+h+1+j ; B p0 mb H-2n+h+1+j).
void step5_drain_p0_forwards(StepProgramBuilder& b, const StepCounts& c) {
    b.repeat(c.far, {full_backward(kP1), overlapped(kP1, kP0)});
}

// Step 6 "nB1B0": h+1 rounds of backward p1 (mb H-h-1+j), backward p0 (mb H-n+j). The last h+1 of
// these 2(h+1) backwards are split (the reference switches at round (h+1)/2: before its p1 backward
// when h is odd, between p1 and p0 when h is even -- the same thing).
void step6_backward_pairs(StepProgramBuilder& b, const StepCounts& c) {
    std::vector<StepToken> body;
    for (int k = 0; k < 2 * c.near; ++k) {
        const int phase = k % 2 == 0 ? kP1 : kP0;
        body.push_back(k >= c.near ? input_backward(phase) : full_backward(phase));
    }
    b.once(std::move(body));
}

// Step 7 "nWB0": far rounds of W (oldest deferred first), then split B p0 (mb H-n+h+1+j).
void step7_weights_and_p0(StepProgramBuilder& b, const StepCounts& c) { b.repeat(c.far, {weight(), input_backward(kP0)}); }

// Step 8 "nW": the h+1 weight gradients still queued, oldest first.
void step8_drain_weights(StepProgramBuilder& b, const StepCounts& c) { b.repeat(c.near, {weight()}); }

// DeepSeek's communication calls, from the tokens as they run. The compute wrappers mirror _forward_chunk,
// _backward_chunk, _forward_backward_chunk and _weight_chunk (queue receives, commit, compute, queue sends);
// the comm tokens are the bare queueing calls the reference makes between wrappers. Every queueing call names
// its tensor by a running counter per phase, as the reference's current_{send,recv}_{f,b}_chunk_id do; calls
// towards a missing or same-rank neighbour are no-ops there and here. A commit launches everything queued so
// far: the batch of the next compute. The backward inside a pair always does its weight gradient inline.
class CommRecorder : public StepObserver {
public:
    explicit CommRecorder(const DualPipeRank& rank) : rank_(rank) {}

    void token(const StepToken& t, const Slot*) override {
        switch (t.kind) {
            case K::F:
                if (t.recv) recv_forward(t.phase);
                commit();
                if (t.send) send_forward(t.phase);
                break;
            case K::B:
            case K::I:  // a split backward always receives and sends
                if (t.recv || t.kind == K::I) recv_backward(t.phase);
                commit();
                if (t.send || t.kind == K::I) send_backward(t.phase);
                break;
            case K::W:
            case K::WeightOf: commit(); break;
            case K::Pair:
                if (t.recv) recv_forward(t.phase);
                recv_backward(t.backward_phase);
                commit();
                send_forward(t.phase);
                send_backward(t.backward_phase);
                break;
            case K::RecvForward: recv_forward(t.phase); break;
            case K::SendForward: send_forward(t.phase); break;
            case K::RecvBackward: recv_backward(t.phase); break;
            case K::SendBackward: send_backward(t.phase); break;
            case K::Idle: break;
        }
    }

    // The final _commit_and_wait_comm of step(); an empty commit is a no-op in the reference.
    std::vector<CommStep> take() {
        if (!queued_.empty()) comm_.push_back(CommStep{std::move(queued_), -1});
        return std::move(comm_);
    }

private:
    // _commit_and_wait_comm before the compute: the batch of slot number `computes_`.
    void commit() {
        comm_.push_back(CommStep{std::move(queued_), computes_++});
        queued_.clear();
    }
    // _recv_forward: the activation of the previous stage, from prev_rank.
    void recv_forward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.prev_rank >= 0)
            queued_.push_back(P2POp{false, true, at.pipeline, at.stage - 1, recv_forward_[phase]++, at.prev_rank});
    }
    // _send_forward: this stage's activation, to next_rank.
    void send_forward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.next_rank >= 0)
            queued_.push_back(P2POp{true, true, at.pipeline, at.stage, send_forward_[phase]++, at.next_rank});
    }
    // _recv_backward: the gradient computed by the next stage's backward, from next_rank.
    void recv_backward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.next_rank >= 0)
            queued_.push_back(P2POp{false, false, at.pipeline, at.stage + 1, recv_backward_[phase]++, at.next_rank});
    }
    // _send_backward: this stage's input gradient, to prev_rank.
    void send_backward(int phase) {
        const PhaseLocation& at = rank_.phase[phase];
        if (at.prev_rank >= 0)
            queued_.push_back(P2POp{true, false, at.pipeline, at.stage, send_backward_[phase]++, at.prev_rank});
    }

    const DualPipeRank& rank_;
    std::array<int, 2> recv_forward_{0, 0}, send_forward_{0, 0}, recv_backward_{0, 0}, send_backward_{0, 0};
    int computes_ = 0;
    std::vector<P2POp> queued_;
    std::vector<CommStep> comm_;
};

void check_shape(const DualPipeRank& rank) {
    // The generators check the reference's preconditions; this guards the queue pops and counts.
    if (rank.ranks_per_half < 1 || rank.distance < 0 || rank.distance >= rank.ranks_per_half ||
        rank.microbatches < 2 * rank.ranks_per_half)
        throw std::invalid_argument("dualpipe_rank_order: needs 0 <= h < n and H >= 2n");
}

}  // namespace

RankStepProgram dualpipe_step_program(const DualPipeRank& rank) {
    const StepCounts counts = step_counts(rank);
    StepProgramBuilder b({StepPhase{rank.phase[kP0].pipeline, rank.phase[kP0].stage},
                          StepPhase{rank.phase[kP1].pipeline, rank.phase[kP1].stage}});
    step1_forwards(b, counts);
    step2_forward_pairs(b, counts);
    step3_zero_bubble_p1(b, counts);
    step4_steady_pairs(b, counts);
    step5_drain_p0_forwards(b, counts);
    step6_backward_pairs(b, counts);
    step7_weights_and_p0(b, counts);
    step8_drain_weights(b, counts);
    return b.take();
}

DualPipeRankProgram dualpipe_rank_program(const DualPipeRank& rank) {
    check_shape(rank);
    CommRecorder recorder(rank);
    DualPipeRankProgram out;
    out.slots = run_step_program(dualpipe_step_program(rank), rank.microbatches - 2 * rank.ranks_per_half, &recorder);
    out.comm = recorder.take();
    return out;
}

std::vector<Slot> dualpipe_rank_order(const DualPipeRank& rank) { return dualpipe_rank_program(rank).slots; }

}  // namespace pp
