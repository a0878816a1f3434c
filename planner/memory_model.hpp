#pragma once
// Per-GPU memory of a pipeline layout: weights (with DualPipe's pipeline copies), training state, and
// activations. All figures are estimates in the sense that they follow the stated assumptions:
//
// Weights. The model's parameters split into routed experts (expert_share) and the rest ("dense":
// attention, embeddings, shared experts, dense layers), both spread evenly over the model blocks of the
// schedule's placement. A rank holding h of the placement's B blocks holds h/B of the dense weights
// (tensor parallelism divides that by TP); DualPipe holds 2 of P blocks, the README's "2x".
// Routed experts are sharded over EP GPUs. Assumption (default): the pipeline copy does not duplicate
// them -- the EP group that serves a block spans both ranks that hold it, so a GPU's expert share is the
// single-copy amount e*T/(P*EP) (DeepSeek-V3 report: the 2x "does not significantly increase the memory
// consumption since we use a large EP size"). With duplicate_experts the copy doubles them too.
//
// Training state. Weights at bytes_per_param, gradients at grad_bytes_per_param, optimizer state at
// optimizer_bytes_per_param sharded over the data-parallel replicas (ZeRO-1).
//
// Activations. One stash = one block's activations for one micro-batch:
// activation_bytes_per_token_layer (default 34*hidden: Korthikanti et al. 2022, BF16, attention scores
// not stored, no recomputation) x tokens per micro-batch x layers per block / TP. The peak number of
// stashes alive on a rank comes from the simulator (verifier/memory.hpp) for the generated schedule.
#include "model/placement.hpp"
#include "planner/plan_spec.hpp"

namespace pp::plan {

struct ParameterMemory {
    double dense = 0;    // parameters per GPU
    double experts = 0;  // parameters per GPU
    double total() const { return dense + experts; }
};

// blocks_held of blocks_total: the worst rank's share of the placement; copies: how many ranks hold a block.
ParameterMemory parameters_per_gpu(const ModelSpec& model, const TrainingSpec& training, int blocks_held, int blocks_total,
                                   int copies);
// The same, read off a placement (worst rank, most copies).
ParameterMemory parameters_per_gpu(const ModelSpec& model, const TrainingSpec& training, const Placement& placement);

// Weights, gradients and ZeRO-1-sharded optimizer state, in bytes, for one GPU.
double training_state_bytes(const ParameterMemory& params, const TrainingSpec& training, int data_parallel);

// Bytes of one activation stash (one block, one micro-batch).
double stash_bytes(const ModelSpec& model, const TrainingSpec& training, int blocks_total);

}  // namespace pp::plan
