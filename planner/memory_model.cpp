#include "planner/memory_model.hpp"

#include <algorithm>

namespace pp::plan {

ParameterMemory parameters_per_gpu(const ModelSpec& model, const TrainingSpec& training, int blocks_held, int blocks_total,
                                   int copies) {
    const double share = static_cast<double>(blocks_held) / static_cast<double>(blocks_total);
    const double dense = (1.0 - model.expert_share) * model.total_params;
    const double experts = model.expert_share * model.total_params;
    ParameterMemory m;
    m.dense = dense * share / training.tp;
    // Experts: the GPU's blocks, sharded over EP; without duplication the copies share one sharding.
    const double expert_copies = training.duplicate_experts ? 1.0 : static_cast<double>(std::max(copies, 1));
    m.experts = experts * share / training.ep / expert_copies;
    return m;
}

ParameterMemory parameters_per_gpu(const ModelSpec& model, const TrainingSpec& training, const Placement& placement) {
    int held = 0;
    for (int r = 0; r < placement.ranks; ++r) held = std::max(held, static_cast<int>(placement.blocks_on_rank(r).size()));
    const auto copies = placement.copies_per_block();
    const int most = copies.empty() ? 1 : *std::max_element(copies.begin(), copies.end());
    return parameters_per_gpu(model, training, held, placement.blocks(), most);
}

double training_state_bytes(const ParameterMemory& params, const TrainingSpec& training, int data_parallel) {
    const double n = params.total();
    return n * (training.bytes_per_param + training.grad_bytes_per_param +
                training.optimizer_bytes_per_param / std::max(data_parallel, 1));
}

double stash_bytes(const ModelSpec& model, const TrainingSpec& training, int blocks_total) {
    const double per_token_layer = training.activation_bytes_per_token_layer.value_or(34.0 * model.hidden);
    const double tokens = static_cast<double>(training.microbatch_size) * training.sequence_length;
    const double layers = static_cast<double>(model.layers) / blocks_total;
    return per_token_layer * tokens * layers / training.tp;
}

}  // namespace pp::plan
