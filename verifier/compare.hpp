#pragma once
// One row of `pipeproof compare` (and of the HTML report): a schedule's timing, bubble, memory and
// parameter figures under given costs and timing model, all exact.
//
// Definitions (times in cost units):
//   makespan          end of the last compute
//   idle per rank     makespan - the rank's busy time (absolute); bubble = the largest
//   bubble fraction   total idle / (ranks x makespan); GPU utilisation = 1 - bubble fraction
//   ZB bubble rate    the Zero Bubble paper's (ICLR 2024, efficiency.py) definition: (T - W) / T, where T is
//                     the largest per-rank span (last end - first start; P2P latency included, since it is
//                     part of the timing) and W = M(F+B+W) in the paper, i.e. the compute a rank does. Here W
//                     is the largest busy time of a rank -- the work it actually does, an overlapped pair at
//                     its pair cost -- which is the paper's value for every schedule without pairs and keeps
//                     the rate in [0, 1) for schedules with them (T >= that rank's span >= its busy time); the
//                     paper's "nothing overlapped" work would make it negative when pairs are cheaper than
//                     their parts (DualPipe).
//   peak activations  per rank, in ActivationModel units (order-based, verifier/memory.hpp); with
//                     model-share costs, in units of one 1/P share of the model (a stage's stash times the
//                     stage share below)
//   stage share       with CompareOptions::model_share_costs: the costs given are those of a 1/P share of the
//                     model (one stage of 1F1B on P ranks); a placement that cuts the model into S blocks runs
//                     each stage at P/S of them (interleaved with V stages per rank: 1/V; ZBV, DualPipeV: 1/2;
//                     DualPipe, Chimera: 1, two copies of P blocks), so every schedule trains the same model
//   parameters        model blocks held per rank (one block = one stage's weights of a single-copy
//                     layout; DualPipe's "2x" = 2 blocks per rank against 1F1B's 1 at the same number of
//                     stages), the fraction of the model per rank, and how many ranks hold each block
//   GPU-hours         given tokens per micro-batch N and seconds per cost unit u: one step processes
//                     (total micro-batches) x N tokens and occupies P GPUs for makespan x u seconds, so
//                     GPU-hours per million tokens = P x makespan x u / 3600 x 10^6 / (M N)
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "verifier/batched.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct CompareOptions {
    CommModel comm_model = CommModel::Dataflow;
    bool model_share_costs = false;  // costs are per 1/P of the model, scaled to each stage's share (above)
    BatchedOptions batched{};
    ActivationModel activations{};
    std::optional<std::int64_t> tokens_per_microbatch;  // both or neither give the cost figures
    std::optional<Rational> seconds_per_unit;
};

struct CompareRow {
    std::string name;  // Schedule::source
    int ranks = 0;
    int microbatches = 0;  // total over all pipelines
    CommModel comm_model = CommModel::Dataflow;
    bool attached_comm_program = false;  // batched: the generator's reference order, not the generic rule
    Rational stage_share{1};             // P / blocks with model-share costs, else 1
    Costs stage_costs;                   // the per-stage costs the schedule was timed with

    Rational makespan{0};
    std::vector<Rational> busy_per_rank, idle_per_rank, span_per_rank;
    Rational worst_idle{0};
    Rational bubble_fraction{0};
    Rational utilisation{0};

    Rational zb_span{0};        // T
    Rational zb_work{0};        // W
    Rational zb_bubble_rate{0};

    std::vector<Rational> peak_activations;
    std::vector<int> blocks_per_rank;
    std::vector<Rational> model_fraction_per_rank;
    std::vector<int> copies_per_block;
    int blocks = 0;

    std::optional<Rational> tokens_per_second;
    std::optional<Rational> gpu_hours_per_million_tokens;
};

// The stage share P / blocks of a placement (1 for 1F1B, DualPipe, Chimera; 1/V for V stages per rank).
Rational stage_share(const Placement& placement);
// Every duration scaled by `share` (the P2P latency is not: a micro-batch's activation has the same size).
Costs scaled_costs(const Costs& costs, const Rational& share);

// Throws SimulationError if the schedule cannot be timed under the chosen model (deadlock, inconsistent
// communication program) and std::invalid_argument for non-positive tokens or time unit. The caller
// verifies the schedule first.
CompareRow compare_schedule(const Schedule& schedule, const Costs& costs, const CompareOptions& options = {});

}  // namespace pp
