#include "schedules/pytorch_ir.hpp"

namespace pp {

Schedule schedule_from_cells(Placement placement, const std::vector<RankCells>& rows, std::string source,
                             bool keep_gaps) {
    Schedule schedule;
    schedule.placement = std::move(placement);
    schedule.source = std::move(source);
    bool any_gap = false;
    std::vector<std::vector<int>> gaps;
    for (const RankCells& row : rows) {
        std::vector<Slot> slots;
        std::vector<int> rank_gaps{0};
        for (const Cell& cell : row) {
            if (!cell) {
                ++rank_gaps.back();
                any_gap = true;
                continue;
            }
            slots.push_back(Slot::single(*cell));
            rank_gaps.push_back(0);
        }
        schedule.ranks.push_back(std::move(slots));
        gaps.push_back(std::move(rank_gaps));
    }
    if (keep_gaps && any_gap) schedule.gaps = std::move(gaps);
    return schedule;
}

RankCells step_program_cells(const RankStepProgram& program, int t) {
    struct Cells : StepObserver {
        RankCells row;
        void token(const StepToken& token, const Slot* slot) override {
            if (slot) row.push_back(slot->ops[0]);
            else if (token.kind == StepTokenKind::Idle) row.push_back(std::nullopt);
        }
    } cells;
    run_step_program(program, t, &cells);
    return std::move(cells.row);
}

void require_ranks_and_microbatches(const GenerateParams& params, const std::string& family) {
    if (params.ranks < 1)
        throw GenerateError(family + " needs at least one rank (P >= 1), but got P=" + std::to_string(params.ranks) +
                            ".");
    if (params.microbatches < 1)
        throw GenerateError(family + " needs at least one micro-batch (M >= 1), but got M=" +
                            std::to_string(params.microbatches) + ".");
}

void require_one_stage_per_rank(const GenerateParams& params, const std::string& family) {
    if (params.stages_per_rank && *params.stages_per_rank != 1)
        throw GenerateError(family + " places one stage on each rank, but got V=" +
                            std::to_string(*params.stages_per_rank) + ".");
}

int stages_per_rank_or_default(const GenerateParams& params, const std::string& family) {
    int v = params.stages_per_rank.value_or(2);
    if (v < 1) throw GenerateError(family + " needs at least one stage per rank (V >= 1), but got V=" +
                                   std::to_string(v) + ".");
    return v;
}

std::string schedule_label(const std::string& family, int ranks, int microbatches, std::optional<int> v) {
    std::string label = family + "(P=" + std::to_string(ranks);
    if (v) label += ",V=" + std::to_string(*v);
    return label + ",M=" + std::to_string(microbatches) + ")";
}

}  // namespace pp
