#pragma once
// Warm starts that use the whole memory cap (issue 13): the Zero Bubble paper's hand schedules ZB-H1 and
// ZB-H2 (schedules/zb_hand.hpp) with rank r's W's lagging further behind its I's, as far as the cap allows.
//
// Why: in ZB-H1/ZB-H2 every rank peaks at c(P-1)+1 live activations (c = 1, 2), so a cap above that is
// left unused. At P=32 M=256 cap 64 (ZB-H2 peaks at 63) the span is set by one path: the last rank runs
// every F and I of micro-batch 1..255 and the W's the cap forces before F(255) without a pause, the
// input gradient of micro-batch 255 returns to rank 0 without waiting, and rank 0 ends with that one W.
// ZB-H2 runs one W more on the last rank before F(255) (the cap of 63 forces it), so it ends one W
// later. Lagging every W of ranks 1..P-1 by one more micro-batch (peak 64) removes that W from the path;
// rank 0 keeps W right after its I so that W(0,254) still fits before the last input gradient arrives.
// The result (span 12345799) equals the rank-load bound there: optimal.
//
// Rank r of a variant: c(P-1-r) warm-up forwards, then per micro-batch i: F (while forwards remain), I,
// and W(i - lag_r) once i >= lag_r, the owed W's at the end; peak = warm-up + lag_r + 1. The variants:
// c in {1, 2}; lag_r = c r + e on ranks 1..P-1 with e in {0, the largest the cap allows}; on rank 0
// lag 0 or e. They are heuristics: the search verifies (with the cap) and re-times each before use.
#include "model/schedule.hpp"
#include "solver/search_instance.hpp"

#include <string>
#include <vector>

namespace pp {

struct NamedSchedule {
    std::string origin;  // "zb-hand(c=2,lag+1,rank0 lag 0)"
    Schedule schedule;
};

// Empty unless the placement is one pipeline with stage r on rank r and there is a memory cap.
std::vector<NamedSchedule> cap_filled_warm_starts(const Instance& inst);

}  // namespace pp
