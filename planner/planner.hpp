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
// A step takes the simulated makespan (the DP gradient reduction is assumed hidden and not counted).
#include "model/rational.hpp"
#include "planner/cost_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/plan_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp::plan {

struct PlanOption {
    std::string family;
    int pp = 0, dp = 0, microbatches = 0;
    std::optional<int> stages_per_rank;
    int blocks = 0, blocks_held = 0, copies = 0;  // placement: model blocks, worst rank's share, copies per block

    ChunkCosts chunk;                 // estimated per-chunk costs (seconds)
    double step_seconds = 0;          // simulated makespan
    Rational bubble_fraction{0};      // exact, for the chunk costs
    double worst_idle_seconds = 0;
    Rational peak_stashes{0};         // exact, worst rank

    ParameterMemory params;           // per GPU
    double weights_gb = 0, state_gb = 0, activations_gb = 0, total_gb = 0;
    double single_copy_weights_gb = 0;  // the same PP with one copy of each block (1F1B's layout)
    bool fits = false;

    double gpu_hours_per_million_tokens = 0;
    double tokens_per_second = 0;

    std::string label() const;        // "dualpipe PP=16 M=120"
};

struct PlanResult {
    PlanRequest request;
    std::vector<PlanOption> options;  // best first
    std::vector<std::string> skipped; // why a (PP, family) was not considered
    bool any_fits() const;
};

PlanResult make_plan(const PlanRequest& request);

// Weights per GPU (GB) of a family's placement at a given PP: for exercise-style questions ("what does
// DualPipe's 2x copy cost?") without running the whole plan.
ParameterMemory family_parameters(const PlanRequest& request, const std::string& family, int pp, int microbatches);

}  // namespace pp::plan
