#pragma once
// Per-chunk time of one micro-batch through one model block, and the simulator costs derived from it.
// Estimates (the planner says so): either the user's measured chunk costs scaled by layers per block, or
// FLOPs at an assumed MFU:
//   forward  per token per layer: 2 N_active / L (matmuls) + 2 s h (causal attention scores and values)
//   input-gradient backward:      2 N_active / L + 4 s h  (attention backward is all input-gradient)
//   weight-gradient backward:     2 N_active / L
// i.e. the usual 6 N per token for F + I + W, plus attention.
// Communication from bandwidths only (no latency, no congestion):
//   EP all-to-all per MoE layer, dispatch + combine: 2 x tokens x top_k x hidden x 2 bytes x (EP-1)/EP,
//   over the inter-node link when EP spans more than one node, paid again by the input-gradient backward;
//   pipeline P2P per hop: tokens x hidden x 2 bytes, inter-node when a stage's GPUs fill a node.
// Schedules without F&B pairs expose the all-to-all inside F and I. In an overlapped pair the
// all-to-all of one op hides under the other's compute (DualPipe's claim, taken as ideal):
//   pair = max(F + I + W compute, both all-to-alls), unless the user measured FB.
//
// Data-parallel gradient all-reduce, once per step (ring: 2 (n-1)/n x bytes over the slowest link of the
// ring): dense gradients over the DP replicas, expert gradients over the DP x TP / EP replicas of a shard;
// inter-node when the ring's GPUs fill more than a node. Overlap as in Megatron's --overlap-grad-reduce:
// reduction starts bucket by bucket during the rank's last backward, so one block's backward (I + W) of
// it is hidden and the rest is added to the step.
#include "model/costs.hpp"
#include "planner/memory_model.hpp"
#include "planner/plan_spec.hpp"

#include <optional>

namespace pp::plan {

struct ChunkCosts {  // seconds, one micro-batch through one block
    double F = 0, I = 0, W = 0;       // compute
    double all_to_all = 0;            // EP dispatch + combine, per F and again per I
    double p2p = 0;                   // one pipeline hop
    std::optional<double> measured_pair;
    bool measured = false;            // from chunk-costs rather than FLOPs
};

ChunkCosts chunk_costs(const PlanRequest& request, int pp, int blocks_total);
// One layer's costs (a block of one layer, no pipeline hop): what the plan reports as its op-cost estimate.
ChunkCosts per_layer_costs(const PlanRequest& request);

struct GradientReduce {
    double seconds = 0;   // the whole all-reduce
    double hidden = 0;    // under the last backward
    double exposed() const { return seconds > hidden ? seconds - hidden : 0; }
};

// The all-reduce hides under the last backward: with sequence segments, the last segment's, 1/segments of it.
GradientReduce gradient_reduce(const PlanRequest& request, const ParameterMemory& params, int data_parallel,
                               const ChunkCosts& chunk, int segments = 1);

// Costs for the simulator in microseconds (exact to 0.1 us). overlapped_pairs: the family runs F&B pairs.
Costs simulator_costs(const ChunkCosts& chunk, bool overlapped_pairs);

}  // namespace pp::plan
