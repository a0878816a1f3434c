#pragma once
// What `pipeproof plan` is asked about: the cluster, the model and the training run. Every field can be
// set by name ("gpus", "inter-node-gbps", ...) from a flag or from a config file of `key = value` lines,
// so both paths share one parser; presets fill in a known model first.
#include "model/chunk_costs.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pp::plan {

struct ClusterSpec {
    int gpus = 0;
    int gpus_per_node = 8;
    double intra_node_gbps = 400;   // GB/s per GPU inside a node (NVLink class)
    double inter_node_gbps = 50;    // GB/s per GPU between nodes (400 Gb/s InfiniBand)
    double gpu_tflops = 989;        // dense BF16 peak (H100/H800 SXM)
    double mfu = 0.4;               // achieved fraction of peak in compute (FLOP-based estimate only)
    double gpu_memory_gb = 80;
};

struct ModelSpec {
    std::string name;
    int layers = 0;
    int hidden = 0;
    double total_params = 0;        // all parameters, experts included
    double active_params = 0;       // per token (MoE); 0 = total_params
    double expert_share = 0;        // fraction of total_params in routed experts (sharded by EP)
    int moe_layers = -1;            // layers with routed experts; -1 = all layers when expert_share > 0
    int top_k = 8;                  // experts per token (all-to-all volume)
    double active() const { return active_params > 0 ? active_params : total_params; }
    int moe_layer_count() const { return moe_layers >= 0 ? moe_layers : (expert_share > 0 ? layers : 0); }
};

// Per-chunk costs measured by the user, in milliseconds for one micro-batch through `layers` layers.
struct MeasuredChunk {
    double F = 0, I = 0, W = 0;
    std::optional<double> FB;       // an overlapped F&B pair; default: F + I + W (no overlap gain)
    int layers = 1;
};

struct TrainingSpec {
    int sequence_length = 4096;
    int global_batch = 0;           // sequences per optimizer step
    int microbatch_size = 1;        // sequences per micro-batch
    int tp = 1;                     // tensor parallel degree (divides dense weights, activations, compute)
    int ep = 1;                     // expert parallel degree (divides routed experts)
    double bytes_per_param = 2;     // weights (BF16)
    double grad_bytes_per_param = 2;
    double optimizer_bytes_per_param = 12;  // FP32 master + Adam moments, sharded over DP (ZeRO-1)
    bool duplicate_experts = false; // DualPipe's 2nd copy also duplicates expert shards (default: it does not)
    std::optional<double> activation_bytes_per_token_layer;  // default 34 * hidden (no recomputation)
    std::optional<MeasuredChunk> chunk;                      // op-costs-ms; else the FLOP-based estimate
    // chunk-costs: measured component costs in ms (the chunk syntax of every other command), one average
    // layer per `layers`; the plan then times every option with the chunk model at these costs.
    std::optional<ChunkCosts> components;
};

struct PlanRequest {
    ClusterSpec cluster;
    ModelSpec model;
    TrainingSpec training;
    // Empty: every family of the library (`pipeproof list`), less the excluded ones.
    std::vector<std::string> families;
    std::vector<std::string> excluded_families;
    std::optional<int> segments;    // Seq1F1B's sequence segments per micro-batch k (default 2), when seq1f1b is priced
    std::vector<int> pp_degrees;    // empty: every power of two that divides the GPUs
    int top = 6;                    // options to report
};

struct PlanSpecError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Sets one field by its flag name (without "--"). Numbers accept suffixes K, M, B, T ("671B") and
// exponents ("70e9"). Throws PlanSpecError naming the key on a bad value or an unknown key.
void apply_setting(PlanRequest& request, std::string_view key, std::string_view value);

// Applies settings in order, except that presets go first so that explicit values refine them.
void apply_settings(PlanRequest& request, const std::vector<std::pair<std::string, std::string>>& settings);

// `key = value` lines; '#' starts a comment; keys as the flags. Throws PlanSpecError with the line number.
std::vector<std::pair<std::string, std::string>> parse_plan_config(std::string_view text);

// Presets: "dense-70b" (Llama-2/3 70B shape) and "deepseek-v3" (671B MoE); see plan_spec.cpp.
void apply_preset(PlanRequest& request, std::string_view name);
std::vector<std::string> preset_names();

// Every key apply_setting knows, with a one-line help text (for `plan --help` and errors).
const std::vector<std::pair<std::string, std::string>>& setting_keys();

// The families the plan considers: --families, else every family of the library, less --exclude-families.
std::vector<std::string> candidate_families(const PlanRequest& request);

// Checks that the request is complete and consistent; throws PlanSpecError.
void validate(const PlanRequest& request);

}  // namespace pp::plan
