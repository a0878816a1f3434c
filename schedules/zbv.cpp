// ZB-V, as PyTorch's ScheduleZBVZeroBubble builds its pipeline_order (schedules.py,
// _calculate_single_rank_operations; summarised in shared/reference/pytorch-schedules.md §2.2; the
// schedule is the Zero Bubble paper's ZB-V, arXiv 2401.10241 §6). V map with exactly two stages per rank:
// rank r holds the down-leg stage s0 = r and the up-leg stage s1 = 2P-1-r. Rank r, after r idle cells:
//   (2(P-r)-1) x F(s0);  r x [F(s1), F(s0)];  (P-r) x [F(s1), I(s1), W(s1)];
//   while F(s1) lags F(s0) or F(s0) is unfinished: [F(s0) if any left], I(s0), W(s0), F(s1), I(s1), W(s1);
//   r x [I(s0), I(s1)];  (P-r) x [I(s0), W(s0)];  then the pending W(s1), then the pending W(s0).
// Upstream runs this with n = max(2P-1, M) micro-batches and then blanks every op with micro-batch >= M,
// so small M leaves holes (and trailing empty cells); all of them are kept in Schedule::gaps. From M = 2P-1 on the
// same order runs as a step program (zbv_rank_program); the loops above still order the smaller M.
// Precondition: V == 2, else "ZBV requires exactly 2 stages per rank, but got V." (no V given means 2).
//
// Bubble: zero when F = I = W and M >= 2P-1 (the paper's claim; unequal costs leave bubbles, which is why
// the authors also ship a greedy ZB-V). Memory: at most 2P chunk stashes (half a stage each) on every rank,
// i.e. the same activation memory as 1F1B (P stage stashes).
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

#include <algorithm>

namespace pp {

namespace {

RankCells zbv_rank_cells(int P, int M, int r) {
    const int n = std::max(2 * P - 1, M);
    const int s0 = r, s1 = 2 * P - 1 - r;
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    RankCells row(r, std::nullopt);
    auto emit = [&](OpKind kind, int stage, int mb) { row.push_back(op_at(kind, stage, mb)); };

    for (int i = 0; i < 2 * (P - r) - 1; ++i) emit(OpKind::F, s0, f0++);
    for (int i = 0; i < r; ++i) {
        emit(OpKind::F, s1, f1++);
        emit(OpKind::F, s0, f0++);
    }
    for (int i = 0; i < P - r; ++i) {
        emit(OpKind::F, s1, f1++);
        emit(OpKind::I, s1, b1);
        emit(OpKind::W, s1, b1++);
    }
    while (f1 < f0 || f0 < n) {
        if (f0 < n) emit(OpKind::F, s0, f0++);
        emit(OpKind::I, s0, b0);
        emit(OpKind::W, s0, b0++);
        emit(OpKind::F, s1, f1++);
        emit(OpKind::I, s1, b1);
        emit(OpKind::W, s1, b1++);
    }
    int w0 = b0, w1 = b1;  // weight grads still owed after the steady phase
    for (int i = 0; i < r; ++i) {
        emit(OpKind::I, s0, b0++);
        emit(OpKind::I, s1, b1++);
    }
    for (int i = 0; i < P - r; ++i) {
        emit(OpKind::I, s0, b0++);
        emit(OpKind::W, s0, w0++);
    }
    while (w1 < b1) emit(OpKind::W, s1, w1++);
    while (w0 < b0) emit(OpKind::W, s0, w0++);

    for (Cell& cell : row)  // upstream's max(2P-1, M) padding micro-batches become holes
        if (cell && cell->microbatch >= M) cell.reset();
    return row;
}

// Rank r from M = 2P-1 on (n = M, nothing blanked) as a step program, M = 2P-1 + t: the `while` loop runs
// M - 2P + r + 1 = r + t rounds with an F(s0) (the growing loop) and then P - r - 1 without; every index a running
// counter, every W the oldest of its stage.
RankStepProgram zbv_rank_program(int P, int r) {
    const int s0 = 0, s1 = 1;  // phases: the down-leg stage r and the up-leg stage 2P-1-r
    std::vector<StepToken> head(static_cast<size_t>(r), idle());
    for (int i = 0; i < 2 * (P - r) - 1; ++i) head.push_back(forward(s0));
    for (int i = 0; i < r; ++i) head.insert(head.end(), {forward(s1), forward(s0)});
    for (int i = 0; i < P - r; ++i) head.insert(head.end(), {forward(s1), input_backward(s1), weight_of(s1)});
    return StepProgramBuilder({StepPhase{0, r}, StepPhase{0, 2 * P - 1 - r}})
        .once(head)
        .repeat(r, {forward(s0), input_backward(s0), weight_of(s0), forward(s1), input_backward(s1), weight_of(s1)}, 1)
        .repeat(P - r - 1, {input_backward(s0), weight_of(s0), forward(s1), input_backward(s1), weight_of(s1)})
        .repeat(r, {input_backward(s0), input_backward(s1)})
        .repeat(P - r, {input_backward(s0), weight_of(s0)})
        .repeat(r, {weight_of(s1)})
        .repeat(r, {weight_of(s0)})
        .take();
}

}  // namespace

FamilyStepProgram step_program_zbv(const GenerateParams& params) {
    const int P = params.ranks;
    FamilyStepProgram program{2 * P - 1, 1, {}};
    for (int r = 0; r < P; ++r) program.ranks.push_back(zbv_rank_program(P, r));
    return program;
}

Schedule generate_zbv(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "ZBV");
    const int P = params.ranks, M = params.microbatches;
    const int V = params.stages_per_rank.value_or(2);
    if (V != 2) throw GenerateError("ZBV requires exactly 2 stages per rank, but got " + std::to_string(V) + ".");

    std::vector<RankCells> rows;
    for (int r = 0; r < P; ++r)
        rows.push_back(M >= 2 * P - 1 ? step_program_cells(zbv_rank_program(P, r), M - (2 * P - 1)) : zbv_rank_cells(P, M, r));
    return schedule_from_cells(Placement::single(P, v_stage_map(P, 2 * P), M), rows, schedule_label("zbv", P, M, 2),
                               true);
}

}  // namespace pp
