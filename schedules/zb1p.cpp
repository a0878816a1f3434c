// ZB1P, as PyTorch's ScheduleInterleavedZeroBubble builds its pipeline_order (schedules.py,
// _calculate_single_rank_operations + _get_1f1b_rank_ops(enable_zero_bubble=True) +
// _add_bubbles_to_actions; summarised in shared/reference/pytorch-schedules.md §2.2). The walk is the
// interleaved one (interleaved_walk.cpp) with three changes: warm-up min((V-1)m + (P-1-r), MV) (one
// per hop instead of two), P-1-r idle cells after it and none in the cool-down, and backwards split into
// I and W, where every I after the first r steady ones is followed by the oldest pending W (FIFO), the
// leftovers at the end. Then the lock-step bubble pass: all ranks advance one cell per step and an F of
// stage s > 0 whose F of stage s-1 was not placed in an earlier step waits behind an inserted idle cell.
// Upstream's backward test in that pass looks for FULL_BACKWARD, which ZB never emits, so backwards are
// never padded; we reproduce that. Every idle cell (padding and inserted) is kept in Schedule::gaps, so
// the rows equal PyTorch's compute_only CSV (e.g. conformance/pytorch/zb1p_2rank_2stagep_compute.csv,
// written in 2024 letters where B means our I).
// Precondition: M mod R == 0 with R = max(1, floor(M/P)), else
//   "Zero bubble requires the number of microbatches to be a multiple of the number of rounds (R),
//    but got M."
//
// Bubble: for V = 1 the order equals the Zero Bubble paper's ZB-H1 (see zb_h1.cpp): span - M(F+I+W) =
// (P-1)(F+I-W) with no comm, i.e. a third of 1F1B's bubble when F = I = W. Memory: warm-up plus the W lag
// of r gives every rank a peak of min((V-1)m + P, MV) chunk stashes (each 1/V of a stage).
#include "schedules/families.hpp"
#include "schedules/interleaved_walk.hpp"

#include <stdexcept>

namespace pp {

namespace {

// PyTorch's _add_bubbles_to_actions, restricted to what it actually tests (forward dependencies).
std::vector<RankCells> add_forward_bubbles(const std::vector<RankCells>& rows, int stages, int microbatches) {
    std::vector<std::vector<bool>> forward_done(stages, std::vector<bool>(microbatches, false));
    std::vector<RankCells> out(rows.size());
    std::vector<size_t> next(rows.size(), 0);
    for (;;) {
        bool active = false, progress = false;
        std::vector<Op> placed;  // visible to the others only from the next step on
        for (size_t r = 0; r < rows.size(); ++r) {
            if (next[r] >= rows[r].size()) continue;
            active = true;
            const Cell& head = rows[r][next[r]];
            bool waits = head && head->kind == OpKind::F && head->stage > 0 &&
                         !forward_done[head->stage - 1][head->microbatch];
            if (waits) {
                out[r].push_back(std::nullopt);
                continue;
            }
            out[r].push_back(head);
            if (head && head->kind == OpKind::F) placed.push_back(*head);
            ++next[r];
            progress = true;
        }
        if (!active) return out;
        // Upstream would spin forever here; the orders we generate never get stuck.
        if (!progress) throw std::logic_error("zb1p bubble pass: no rank can advance");
        for (const Op& f : placed) forward_done[f.stage][f.microbatch] = true;
    }
}

}  // namespace

Schedule generate_zb1p(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Zero bubble");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Zero bubble");
    const int rounds = interleaved_rounds(P, M);
    if (M % rounds != 0)
        throw GenerateError(
            "Zero bubble requires the number of microbatches to be a multiple of the number of rounds (" +
            std::to_string(rounds) + "), but got " + std::to_string(M) + ".");

    const std::vector<RankCells> rows = add_forward_bubbles(interleaved_rows({P, V, M, true}), P * V, M);
    return schedule_from_cells(Placement::single(P, loop_stage_map(P, P * V), M), rows,
                               schedule_label("zb1p", P, M, V), true);
}

// The order before the bubble pass, which only inserts idle cells.
FamilyStepProgram step_program_zb1p(const GenerateParams& params) {
    return interleaved_step_program({params.ranks, stages_per_rank_or_default(params, "Zero bubble"), 0, true});
}

}  // namespace pp
