#pragma once
// A warm start over the memory cap, brought within it (issue 13): on each rank, a forward that would
// raise the live activations above the cap waits until enough W's have run, then goes in right after
// the W that frees its room; the waiting forwards keep their order. Nothing else moves.
//
// Why: DualPipe's order, split into F, I and W, peaks at P+1 activations on some ranks (P=8: 9), so at
// the 1F1B cap of P it was no warm start at all and the search started from Chimera's order (855762 at
// P=8 M=16 cap 8). Repaired, DualPipe's order verifies at 824640 and the local search from it reaches
// 798855 (from Chimera's: 807003). It is a heuristic: the search verifies and re-times what it returns
// (a postponed forward may starve another rank, deadlock, or -- on a rank that holds two stages of one
// micro-batch, as the V map's -- land after its own backward: then verify rejects it).
//
// Live activations per rank follow the order alone (F allocates at its start, W frees at its end, one
// op at a time), the memory model of verify; fused B's and pairs are split before (search_space.cpp).
#include "model/schedule.hpp"

#include <optional>

namespace pp {

// nullopt when no forward has to wait (the schedule already keeps the cap, or has nothing to repair).
std::optional<Schedule> repaired_to_cap(const Schedule& schedule, int cap);

}  // namespace pp
