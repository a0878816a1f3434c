#pragma once
// Component costs of an MoE chunk from the model and the cluster (issue 11), and how much EP all-to-all each
// schedule family exposes with them -- the part of `pipeproof plan` that says whether DualPipe's overlap
// actually hides the expert-parallel communication at the recommended PP/EP.
//
// Estimates, every one printed by chunk_assumptions():
//   parameters   non-expert N_d = total x (1 - expert share), spread evenly over the layers; one shared
//                expert per MoE layer the size of one routed expert (routed active per token / top-k);
//                attention = the rest of N_d per layer; routed active per token per MoE layer
//                A_r = (active - N_d) / MoE layers
//   FLOPs        per token per layer: attn_f = 2 x attention params + 2 s h (causal scores and values),
//                attn_i = 2 x attention params + 4 s h, attn_w = 2 x attention params; mlp_f = mlp_i = mlp_w =
//                2 A_r; shared_f = shared_i = shared_w = 2 x shared params; at the cluster's peak x MFU x TP
//   all-to-all  per MoE layer and micro-batch: tokens x top-k x hidden x bytes x (EP-1)/EP, over the
//                inter-node link when EP spans more than one node, else intra-node; bytes: dispatch_f FP8 (1),
//                combine_f BF16 (2), combine_b FP8 (1, the activation gradient before the down-projection),
//                dispatch_b BF16 (2) -- DeepSeek-V3 §3.3. No node-limited-routing discount, no latency, no
//                congestion, EP and PP traffic do not share bandwidth.
//   layers       a block holds layers/blocks layers; the chunk model takes L = that rounded (at least 1)
//                and scales every component so the block's total is kept; dense layers (no experts) are
//                spread evenly: each layer's all-to-all and routed-expert costs are scaled by MoE layers /
//                layers.
//   pp           the P2P of one micro-batch's activation (tokens x hidden x 2 bytes) over the inter-node link
//                when a stage's GPUs fill a node.
// Times are microseconds, exact to 0.1 us.
#include "model/chunk_costs.hpp"
#include "planner/plan_spec.hpp"

#include <string>
#include <vector>

namespace pp::plan {

pp::ChunkCosts component_costs(const PlanRequest& request, int pp, int blocks_total);
std::vector<std::string> chunk_assumptions(const PlanRequest& request);

struct FamilyExposure {
    std::string family;
    int pp = 0, microbatches = 0, blocks = 0;
    std::string chunk_text;                 // the chunk costs used (per block)
    Rational makespan{0}, bubble_fraction{0};
    Rational exposed_max{0}, network_max{0};  // per rank, worst
    Rational exposed_total{0}, network_total{0};
    std::string error;                      // when the family could not be evaluated
};

// Every family of `families` at this PP and M, pattern deepseek (pairs interleave as Figure 4; lone ops
// expose their own all-to-all), exact simulation of the generated schedule.
std::vector<FamilyExposure> ep_exposure(const PlanRequest& request, int pp, int microbatches, const std::vector<std::string>& families);

// The plan's "EP all-to-all" section for the recommended PP (empty for a model without experts or EP = 1).
std::string ep_exposure_text(const PlanRequest& request, int pp, int microbatches);

}  // namespace pp::plan
