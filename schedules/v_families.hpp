#pragma once
// Shared by the V-shaped families of sail-sg/zero-bubble-pipeline-parallelism ("Pipeline Parallelism with
// Controllable Memory", NeurIPS 2024) -- v-min, v-half (v_min.cpp, v_half.cpp, their common greedy in
// v_greedy.cpp), v-zb (v_zb.cpp) and 1f1b-v (v1f1b.cpp): an op as the reference names it (letter, micro-batch,
// chunk) and the schedule its per-rank orders make on our V placement.
//
// Placement: each node of the reference carries layer_group_idx = P*chunk + (rank if chunk == 0 else P-1-rank),
// so chunk 0 of rank r is stage r (the descending leg) and chunk 1 is stage 2P-1-r (the ascending leg): our V map,
// as schedules/zbv.cpp. Letters: the reference's F, B, W, BW are our F, I, W, B.
#include "schedules/registry.hpp"

#include <string>
#include <vector>

namespace pp {

struct VOp {
    OpKind kind = OpKind::F;
    int chunk = 0;       // 0: stage r, 1: stage 2P-1-r
    int microbatch = 0;
};
using VOrder = std::vector<std::vector<VOp>>;  // per rank, in execution order

// What the four families accept: P >= 1, M >= 1 and V unset or 2 (GenerateError naming `family` otherwise).
// The reference's scheduler functions accept every P >= 1 and M >= 1 (P = 1: two stages on one rank); its
// runtime asserts P > 1 (megatron/training runtime.py L1330), which is a statement about training, not the order.
void check_v_family(const GenerateParams& params, const std::string& family);

// The schedule of `order` on Placement::single(P, v_stage_map(P, 2P), M), no idle cells.
Schedule v_family_schedule(int ranks, int microbatches, const VOrder& order, std::string source);

}  // namespace pp
