// Looped BFS, as PyTorch's ScheduleLoopedBFS builds its pipeline_order (schedules.py,
// _calculate_single_rank_operations; summarised in shared/reference/pytorch-schedules.md §2.2):
// V stages per rank on the loop map; rank r runs, after r idle cells, all forwards (micro-batches
// 0..M-1) of each local stage in ascending order, then 2(P-1-r) idle cells, then all full backwards of
// each local stage in *descending* order, micro-batches also descending M-1..0. No precondition.
// PyTorch's idle cells are kept as gaps.
//
// Bubble (per-chunk costs F/V, B/V, no comm, M >= P): makespan M(F+B) + (P-1)(F+B)/V -- the forward
// wave of a chunk never waits once M >= P. Memory: like GPipe, every rank holds all M·V chunk stashes
// (= M stage stashes) at the turn.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

namespace pp {

// Rank r at M = 1 + t: r idle cells, a growing run of forwards per local stage (phase `local` is stage
// local*P + r), 2(P-1-r) idle cells, then a growing run of backwards per local stage from V-1 down, each counting
// its micro-batches down from M-1 -- a zone program (schedules/step_program.hpp).
FamilyStepProgram zone_program_looped_bfs(const GenerateParams& params) {
    const int P = params.ranks;
    const int V = stages_per_rank_or_default(params, "Looped BFS");
    FamilyStepProgram program{1, 1, {}};
    for (int r = 0; r < P; ++r) {
        std::vector<StepPhase> phases;
        for (int local = 0; local < V; ++local) phases.push_back(StepPhase{0, local * P + r});
        StepProgramBuilder rank(std::move(phases));
        rank.repeat(r, {idle()});
        for (int local = 0; local < V; ++local) rank.repeat(1, {forward(local)}, /*slope=*/1);
        rank.repeat(2 * (P - 1 - r), {idle()});
        for (int local = V - 1; local >= 0; --local) rank.repeat(1, {counted_down(full_backward(local))}, /*slope=*/1);
        program.ranks.push_back(rank.take());
    }
    return program;
}

Schedule generate_looped_bfs(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Looped BFS");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Looped BFS");
    return schedule_from_step_program(zone_program_looped_bfs(params), Placement::single(P, loop_stage_map(P, P * V), M),
                                      M, schedule_label("looped-bfs", P, M, V));
}

}  // namespace pp
