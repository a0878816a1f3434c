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

namespace {

// Where the walk's stages sit as phases: phase v is local stage v (stage v·P + r).
std::vector<StepPhase> interleaved_phases(int P, int V, int r) {
    std::vector<StepPhase> phases;
    for (int v = 0; v < V; ++v) phases.push_back(StepPhase{0, v * P + r});
    return phases;
}

// Rank r's walk at M = m_origin + P·t (per_round = P), cut into a fixed head, a loop of V·P steady steps that
// grows with t, and a fixed tail. The steady step k runs F of local stage (k / P) mod V and the backward of
// V-1 - ((k - warmup) / P) mod V, both periodic in k with period V·P, so every iteration of the loop is the same
// tokens; ZB1P's W's are popped from step warmup + r on, so the loop starts there.
RankStepProgram interleaved_rank_program(const InterleavedShape& shape, int m_origin, int r) {
    const int P = shape.ranks, V = shape.stages_per_rank, total = V * m_origin, period = V * P;
    const int hop = shape.zero_bubble ? 1 : 2;
    const int warmup = (V - 1) * P + hop * (P - 1 - r);
    const int pad_after_warmup = shape.zero_bubble ? P - 1 - r : std::max(0, V * P + 2 * (P - 1 - r) - warmup - r);
    auto forward_phase = [&](int k) { return (k / P) % V; };
    auto backward_phase = [&](int k) { return V - 1 - ((k - warmup) / P) % V; };
    auto backward = [&](int k) { return shape.zero_bubble ? input_backward(backward_phase(k)) : full_backward(backward_phase(k)); };
    const int w_from = warmup + (shape.zero_bubble ? r : 0);  // the first steady step that pops a W
    auto steady = [&](int k) {
        std::vector<StepToken> step{forward(forward_phase(k)), backward(k)};
        if (shape.zero_bubble && k >= w_from) step.push_back(weight());
        return step;
    };
    std::vector<StepToken> head(static_cast<size_t>(r), idle()), loop, tail;
    for (int k = 0; k < warmup; ++k) head.push_back(forward(forward_phase(k)));
    if (warmup > 0) head.insert(head.end(), static_cast<size_t>(pad_after_warmup), idle());
    for (int k = warmup; k < w_from; ++k) for (const StepToken& token : steady(k)) head.push_back(token);
    for (int k = w_from; k < w_from + period; ++k) for (const StepToken& token : steady(k)) loop.push_back(token);
    // The steady steps left at t = 0 (k from w_from to total), then the cool-down: in the walk they follow the
    // loop's iterations at k + period·t, the same tokens since both phases repeat with the period.
    for (int k = w_from; k < total; ++k) for (const StepToken& token : steady(k)) tail.push_back(token);
    for (int k = total; k < total + warmup; ++k) {
        if (!shape.zero_bubble) tail.push_back(idle());  // cool-down: lock-step with the others
        tail.push_back(backward(k));
        if (shape.zero_bubble) tail.push_back(weight());
    }
    if (shape.zero_bubble) tail.insert(tail.end(), static_cast<size_t>(r), weight());  // the owed W's
    return StepProgramBuilder(interleaved_phases(P, V, r)).once(head).repeat(0, loop, 1).once(tail).take();
}

}  // namespace

FamilyStepProgram interleaved_step_program(const InterleavedShape& shape) {
    const int P = shape.ranks, V = shape.stages_per_rank;
    const int hop = shape.zero_bubble ? 1 : 2;
    // The warm-up (V-1)P + hop(P-1-r) is never cut to V·M from M = m_origin on.
    const int m_origin = (V - 1) * P + hop * (P - 1) <= V * P ? P : 2 * P;
    FamilyStepProgram program{m_origin, P, {}};
    for (int r = 0; r < P; ++r) program.ranks.push_back(interleaved_rank_program(shape, m_origin, r));
    return program;
}

std::vector<RankCells> interleaved_rows(const InterleavedShape& shape) {
    const int P = shape.ranks, M = shape.microbatches;
    std::vector<RankCells> rows;
    const FamilyStepProgram program = interleaved_step_program(shape);
    if (M >= program.m_origin && (M - program.m_origin) % P == 0) {
        for (const RankStepProgram& rank : program.ranks) rows.push_back(step_program_cells(rank, (M - program.m_origin) / P));
    } else {
        for (int r = 0; r < P; ++r) rows.push_back(interleaved_rank_cells(shape, r));
    }
    return rows;
}

}  // namespace pp
