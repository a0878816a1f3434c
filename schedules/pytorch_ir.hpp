#pragma once
// Shared by the generators that follow PyTorch's schedule IR: a rank's list is a row of cells, each an
// op or an idle cell (PyTorch's None). The conversion keeps the idle cells as Schedule::gaps so that a
// PyTorch CSV writer can reproduce the reference files cell for cell.
#include "schedules/registry.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

using Cell = std::optional<Op>;       // std::nullopt = an idle cell (None)
using RankCells = std::vector<Cell>;  // one rank's row, left to right

inline Op op_at(OpKind kind, int stage, int microbatch) { return Op{kind, 0, stage, microbatch}; }

// A rank's row from its step program at t (schedules/step_program.hpp): the slots (single ops) as cells, Idle
// tokens as Nones.
RankCells step_program_cells(const RankStepProgram& program, int t);

// Slots in row order; gaps are recorded only when keep_gaps is set and some row has an idle cell.
Schedule schedule_from_cells(Placement placement, const std::vector<RankCells>& rows, std::string source,
                             bool keep_gaps);

// P >= 1 and M >= 1; PyTorch has no message for these, ours names the family.
void require_ranks_and_microbatches(const GenerateParams& params, const std::string& family);
// Single-stage families accept no V or V = 1.
void require_one_stage_per_rank(const GenerateParams& params, const std::string& family);
// V for the multi-stage families; PyTorch's visualizer defaults to 2 stages per rank.
int stages_per_rank_or_default(const GenerateParams& params, const std::string& family);

// "gpipe(P=4,M=8)" / "zb1p(P=2,V=2,M=8)"
std::string schedule_label(const std::string& family, int ranks, int microbatches, std::optional<int> v = {});

}  // namespace pp
