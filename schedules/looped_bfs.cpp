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

namespace pp {

Schedule generate_looped_bfs(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Looped BFS");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Looped BFS");

    std::vector<RankCells> rows(P);
    for (int r = 0; r < P; ++r) {
        RankCells& row = rows[r];
        row.assign(r, std::nullopt);
        for (int local = 0; local < V; ++local)
            for (int mb = 0; mb < M; ++mb) row.push_back(op_at(OpKind::F, local * P + r, mb));
        row.insert(row.end(), 2 * (P - 1 - r), std::nullopt);
        for (int local = V - 1; local >= 0; --local)
            for (int mb = M - 1; mb >= 0; --mb) row.push_back(op_at(OpKind::B, local * P + r, mb));
    }
    return schedule_from_cells(Placement::single(P, loop_stage_map(P, P * V), M), rows,
                               schedule_label("looped-bfs", P, M, V), true);
}

}  // namespace pp
