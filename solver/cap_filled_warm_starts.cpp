#include "solver/cap_filled_warm_starts.hpp"

#include "schedules/pytorch_ir.hpp"

#include <algorithm>
#include <set>

namespace pp {
namespace {

// One pipeline, stage r on rank r, every micro-batch in it: the placement the hand schedules are for.
bool one_stage_per_rank(const Placement& pl) {
    if (pl.pipeline_count() != 1 || pl.pipelines[0].stages() != pl.ranks) return false;
    for (int s = 0; s < pl.ranks; ++s)
        if (pl.rank_of(0, s) != s) return false;
    return true;
}

// Rank r of the hand schedule with warm-up `warmup` and W lag `lag` (schedules/zb_hand.cpp with both free).
RankCells hand_row(int r, int M, int warmup, int lag) {
    RankCells row;
    int f = 0, w = 0;
    while (f < std::min(warmup, M)) row.push_back(op_at(OpKind::F, r, f++));
    for (int i = 0; i < M; ++i) {
        if (f < M) row.push_back(op_at(OpKind::F, r, f++));
        row.push_back(op_at(OpKind::I, r, i));
        if (i >= lag) row.push_back(op_at(OpKind::W, r, w++));
    }
    while (w < M) row.push_back(op_at(OpKind::W, r, w++));
    return row;
}

}  // namespace

std::vector<NamedSchedule> cap_filled_warm_starts(const Instance& inst) {
    std::vector<NamedSchedule> out;
    const Placement& pl = inst.problem.placement;
    if (!inst.cap || !one_stage_per_rank(pl)) return out;
    const int P = pl.ranks, M = pl.pipelines[0].microbatches, L = *inst.cap;
    std::set<std::pair<int, std::vector<int>>> seen;  // (c, lag per rank): c sets the warm-ups
    for (int c : {1, 2}) {
        // ZB-H1/H2 peak at c(P-1)+1 on every rank; e more lag keeps every rank within the cap.
        const int extra = std::min(M, L - (c * (P - 1) + 1));
        if (extra < 0) continue;
        for (int e : {0, extra})
            for (int rank0 : {0, e}) {
                std::vector<int> lag(P);
                for (int r = 0; r < P; ++r) lag[r] = c * r + (r == 0 ? rank0 : e);
                if (!seen.insert({c, lag}).second) continue;
                std::vector<RankCells> rows;
                for (int r = 0; r < P; ++r) rows.push_back(hand_row(r, M, c * (P - 1 - r), lag[r]));
                const std::string name = "zb-hand(c=" + std::to_string(c) + ",lag+" + std::to_string(e) +
                                         ",rank0 lag " + std::to_string(rank0) + ")";
                out.push_back({name, schedule_from_cells(pl, rows, name, false)});
            }
    }
    return out;
}

}  // namespace pp
