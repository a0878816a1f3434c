#include "schedules/zb_hand.hpp"

namespace pp {

RankCells zb_hand_rank_cells(int ranks, int microbatches, int rank, int warmup_factor) {
    const int P = ranks, M = microbatches, r = rank, c = warmup_factor;
    const int warmup = c * (P - 1 - r);
    const int w_lag = c * r;
    RankCells row;
    int f = 0, w = 0;
    while (f < warmup) row.push_back(op_at(OpKind::F, r, f++));
    for (int i = 0; i < M; ++i) {
        if (f < M) row.push_back(op_at(OpKind::F, r, f++));
        row.push_back(op_at(OpKind::I, r, i));
        if (i >= w_lag) row.push_back(op_at(OpKind::W, r, w++));
    }
    while (w < M) row.push_back(op_at(OpKind::W, r, w++));
    return row;
}

}  // namespace pp
