// Megatron-Core's "combined 1F1B" (EP all-to-all overlap, --overlap-moe-expert-parallel-comm): the
// interleaved 1F1B order with one more warm-up forward, so that every steady-state step runs the forward of
// one micro-batch and the backward of another as an overlapped F&B pair (their layers then interleave on a
// compute and a communication stream: the `megatron` overlap pattern, model/overlap_pattern.hpp).
//
// Sources (NVIDIA/Megatron-LM, read at d98e8a64dd; summarised in notes/moe-overlap-research.md §2):
//   megatron/core/pipeline_parallel/schedules.py  get_pp_rank_microbatches (warm-up count),
//     get_schedule_table (virtual micro-batch order), the steady loop "forward_k = k + num_warmup"
//   megatron/core/pipeline_parallel/combined_1f1b.py  PP = 1: F0, (F1+B0), ..., (F(M-1)+B(M-2)), B(M-1)
//   docs/user-guide/features/moe_a2a_overlap.md ("Combined 1F1B: Expert-Parallel All-to-All Overlap"):
//     the PP=1 phase table, and "the overlap schedule moves one additional forward microbatch into warmup".
//
// P = 1: the table above (no pipeline; V must be 1).
// P > 1 (Megatron requires virtual pipeline stages, V >= 2): Megatron's tunable interleaved order
// (schedules/megatron_tunable.cpp: stages on the loop map, micro-batch groups of G, G = --group-size, default P =
// microbatch_group_size_per_vp_stage's default) with overlap_moe_expert_parallel_comm on: rank r runs
//   w = min(2(P-r-1) + (V-1)G + 1, MV) forwards, then pairs (forward k+w ; backward k), then the last w
//   backwards alone.
// The "+1" makes the two halves of every pair independent (Megatron: "to ensure the forward and backward
// computations are independent in all 1f1b steps"); without it rank P-1's first pair would hold the
// forward and the backward of the same micro-batch and stage.
// Preconditions, with Megatron's reasons: P > 1 needs V >= 2 ("requires virtual pipeline parallelism");
// P <= G <= M; M mod G is 0 or at least P (a last group of fewer than P micro-batches "introduces dependency
// bubbles" and is refused). At G = P that is: M a positive multiple of P. P = 1 has no groups (no --group-size).
#include "schedules/families.hpp"
#include "schedules/megatron_tunable.hpp"
#include "schedules/pytorch_ir.hpp"

namespace pp {

// P > 1: Megatron's tunable order with the overlap, for M = 3G + G·t. P = 1 (combined_1f1b_schedule_for_no_pipelining):
// F0, (F1+B0), ..., (F(M-1)+B(M-2)), B(M-1), for M = 1 + t.
FamilyStepProgram step_program_combined_1f1b(const GenerateParams& params) {
    const int P = params.ranks;
    if (P > 1)
        return megatron_step_program({P, params.stages_per_rank.value_or(2), group_size_or_default(params), params.microbatches, true});
    FamilyStepProgram program{1, 1, {}};
    program.ranks.push_back(
        StepProgramBuilder({StepPhase{0, 0}}).once({forward(0)}).repeat(0, {overlapped(0, 0)}, 1).once({full_backward(0)}).take());
    return program;
}

Schedule generate_combined_1f1b(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "combined 1F1B");
    const int P = params.ranks, M = params.microbatches;
    const int V = params.stages_per_rank.value_or(P == 1 ? 1 : 2);
    if (P == 1 && V != 1) throw GenerateError("combined 1F1B without pipeline parallelism (P = 1) has one stage (V = 1)");
    if (P == 1 && params.group_size)
        throw GenerateError("combined 1F1B without pipeline parallelism (P = 1) has no micro-batch groups: --group-size "
                            "applies when P > 1");
    if (P > 1 && V < 2)
        throw GenerateError("combined 1F1B with pipeline_model_parallel_size > 1 requires virtual pipeline parallelism "
                            "(V >= 2 model chunks per rank)");
    const std::string label = schedule_label("combined-1f1b", P, M, P > 1 ? std::optional<int>(V) : std::nullopt);
    if (P > 1) {
        const int G = group_size_or_default(params);
        return megatron_tunable_schedule({P, V, G, M, true}, params.group_size ? group_label(label, G) : label);
    }
    return schedule_from_step_program(step_program_combined_1f1b(params), Placement::single(1, loop_stage_map(1, 1), M), M,
                                      label);
}

}  // namespace pp
