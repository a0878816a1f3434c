#pragma once
// planner/ — cluster and model in, recommended pipeline strategy out. Uses verifier/, schedules/, model/.
//
// `pipeproof plan`: for every PP degree the GPUs allow and every candidate schedule family, generate the
// schedule (schedules/registry.hpp), time it with the exact simulator under the estimated chunk costs
// (planner/cost_model.hpp), and size its memory (planner/memory_model.hpp). Options are ranked by
// GPU-hours per million tokens among those that fit in GPU memory, then by memory.
//
// Layout: GPUs = PP x DP x TP; EP groups are formed inside the DP x TP GPUs of one pipeline position, so
// EP <= DP x TP. Each pipeline runs M = global batch / (DP x micro-batch size) micro-batches per step.
// A step takes the simulated makespan plus the exposed part of the DP gradient all-reduce
// (planner/cost_model.hpp). Only options that fit in GPU memory are recommended; when none does, the
// plan says what would (full activation recomputation, ZeRO-2/3, or more GPUs -- found by re-planning).
#include "model/rational.hpp"
#include "planner/cost_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/plan_spec.hpp"
#include "schedules/registry.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pp::plan {

struct PlanOption {
    std::string family;
    int pp = 0, dp = 0, microbatches = 0;
    std::optional<int> stages_per_rank;
    int segments = 1;  // Seq1F1B's sequence segments per micro-batch (1 otherwise)
    int blocks = 0, blocks_held = 0, copies = 0;  // placement: model blocks, worst rank's share, copies per block

    ChunkCosts chunk;                 // estimated per-chunk costs (seconds)
    double makespan_seconds = 0;      // simulated pipeline makespan
    GradientReduce gradient_reduce;   // DP all-reduce, once per step
    double step_seconds = 0;          // makespan + exposed all-reduce
    Rational bubble_fraction{0};      // exact, for the chunk costs
    double worst_idle_seconds = 0;
    Rational peak_stashes{0};         // exact, worst rank

    ParameterMemory params;           // per GPU
    double weights_gb = 0, state_gb = 0, activations_gb = 0, total_gb = 0;
    double grads_gb = 0, optimizer_gb = 0;  // parts of state_gb
    double single_copy_weights_gb = 0;  // the same PP with one copy of each block (1F1B's layout)
    bool fits = false;

    double gpu_hours_per_million_tokens = 0;
    double tokens_per_second = 0;

    // The M the global batch implies, when the family's precondition refused it and the nearest M it accepts
    // was evaluated instead (a different global batch: said wherever the option is printed).
    std::optional<int> requested_microbatches;
    std::string label() const;        // "dualpipe PP=16 M=120"
};

// When nothing fits: memory of the least-memory option under remedies, and the smallest larger cluster
// (the same GPUs per node, 2x, 4x, ... 16x) whose plan has an option that fits.
struct NothingFits {
    size_t least = 0;              // index into PlanResult::options
    double with_recompute_gb = 0;  // activations: one stash per rank (full recomputation)
    double with_zero2_gb = 0;      // gradients sharded over DP too
    double with_zero3_gb = 0;      // weights as well
    std::optional<int> gpus_that_fit;
    std::string option_that_fits;  // its label and memory
};

struct PlanResult {
    PlanRequest request;
    std::vector<PlanOption> options;  // best first (fitting ones first)
    std::vector<std::string> skipped; // why a (PP, family) was not considered
    std::optional<NothingFits> nothing_fits;
    bool any_fits() const;
};

PlanResult make_plan(const PlanRequest& request);
// One step-time model per run (issue 31): the chunk model (attention, all-to-all and MLP on a compute and a
// network stream, DeepSeek's overlap pattern) for an MoE model with EP > 1 and no measured op costs -- so
// the ranking and the EP all-to-all section time the same schedules the same way; the op model (each
// op's all-to-all fully exposed) otherwise.
bool uses_chunk_model(const PlanRequest& request);
// A family refused at M (DualPipe: M even and >= 2P, ...) is evaluated at the nearest M it accepts, below first
// at equal distance, within 4P + 64; nullopt when none.
std::optional<std::pair<int, Schedule>> nearest_valid_microbatches(const ScheduleFamily& generator, int pp, int m,
                                                                   std::optional<int> v);
// "chunk model (...)" or "op model (...)": printed with every plan.
std::string step_time_model(const PlanRequest& request);

// Weights per GPU (GB) of a family's placement at a given PP: for exercise-style questions ("what does
// DualPipe's 2x copy cost?") without running the whole plan.
ParameterMemory family_parameters(const PlanRequest& request, const std::string& family, int pp, int microbatches);

}  // namespace pp::plan
