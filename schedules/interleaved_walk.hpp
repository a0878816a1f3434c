#pragma once
// The per-rank walk shared by PyTorch's ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble
// (both call the same helper upstream, _get_1f1b_rank_ops). Stages are on the loop map (stage s on rank
// s mod P); micro-batches go round in groups of m = M / R, R = max(1, floor(M/P)) "rounds", and each rank
// cycles through its V local stages every m micro-batches (depth first).
#include "schedules/pytorch_ir.hpp"

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

}  // namespace pp
