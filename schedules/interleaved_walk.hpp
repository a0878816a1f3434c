#pragma once
// The per-rank walk shared by PyTorch's ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble
// (both call the same helper upstream, _get_1f1b_rank_ops). Stages are on the loop map (stage s on rank
// s mod P); micro-batches go round in groups of m = M / R, R = max(1, floor(M/P)) "rounds", and each rank
// cycles through its V local stages every m micro-batches (depth first).
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

namespace pp {

struct InterleavedShape {
    int ranks = 1;            // P
    int stages_per_rank = 1;  // V
    int microbatches = 1;     // M
    bool zero_bubble = false; // ZB1P: I/W split, hop factor 1, no cool-down padding
};

int interleaved_rounds(int ranks, int microbatches);  // R = max(1, floor(M / P))

// Rank r's row, including PyTorch's padding Nones (before the ZB1P bubble pass).
RankCells interleaved_rank_cells(const InterleavedShape& shape, int rank);

// The same walk as step programs (schedules/step_program.hpp) for M = m_origin + P·t, where every round holds P
// micro-batches and the warm-up is not cut short by M: m_origin = P, or 2P for interleaved 1F1B when rank 0's
// warm-up (V-1)P + 2(P-1) exceeds V·P. Its Idle tokens are the walk's Nones. `shape.microbatches` is not read.
FamilyStepProgram interleaved_step_program(const InterleavedShape& shape);
// The rows at M: the step program's where M is one of its M, else the walk's.
std::vector<RankCells> interleaved_rows(const InterleavedShape& shape);

}  // namespace pp
