// Interleaved 1F1B, as PyTorch's ScheduleInterleaved1F1B builds its pipeline_order
// (schedules.py, _calculate_single_rank_operations + _get_1f1b_rank_ops; summarised in
// shared/reference/pytorch-schedules.md §2.2). The walk itself is in interleaved_walk.cpp:
// V stages per rank on the loop map, rounds R = max(1, floor(M/P)) of m = M/R micro-batches; rank r runs
// min((V-1)m + 2(P-1-r), MV) warm-up forwards, then "F then B" pairs, then the remaining backwards.
// Precondition (any V >= 1): M mod R == 0, else PyTorch's ValueError text
//   "Interleaved 1F1B requires the number of microbatches to be a multiple of the number of rounds (R),
//    but got M."
// so every M < 2P and every multiple of P is accepted. PyTorch's idle cells are kept as gaps (the class
// is a PipelineScheduleMulti and writes them as empty CSV cells).
//
// Bubble (Megatron, uniform per-chunk costs F/V and B/V, no comm, M a multiple of P):
// makespan M(F+B) + (P-1)(F+B)/V. Memory: rank r holds up to min((V-1)m + 2(P-1-r) + 1, MV) chunk
// stashes, each 1/V of a stage's activations; rank 0 the most, (V-1)m + 2P - 1 of them.
//
// With --group-size G (GenerateParams::group_size): Megatron-Core's tunable order instead
// (schedules/megatron_tunable.cpp, microbatch_group_size_per_vp_stage = G), direct, without idle cells; it needs
// P >= 2, V >= 2, P <= G <= M and M mod G == 0 or >= P, as Megatron does.
#include "schedules/families.hpp"
#include "schedules/interleaved_walk.hpp"
#include "schedules/megatron_tunable.hpp"

namespace pp {

Schedule generate_interleaved_1f1b(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Interleaved 1F1B");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Interleaved 1F1B");
    if (params.group_size) {
        const int G = group_size_or_default(params);
        if (P < 2)
            throw GenerateError("Megatron's interleaved schedule (--group-size) needs pipeline-model-parallel size P > 1, "
                                "but got P=" + std::to_string(P) + ".");
        if (V < 2)
            throw GenerateError("Megatron runs V = 1 without interleaving (forward_backward_pipelining_without_interleaving), "
                                "where the group size plays no part: --group-size needs V >= 2 (use 1f1b for V = 1).");
        return megatron_tunable_schedule({P, V, G, M, false}, group_label(schedule_label("interleaved-1f1b", P, M, V), G));
    }
    const int rounds = interleaved_rounds(P, M);
    if (M % rounds != 0)
        throw GenerateError(
            "Interleaved 1F1B requires the number of microbatches to be a multiple of the number of rounds (" +
            std::to_string(rounds) + "), but got " + std::to_string(M) + ".");

    return schedule_from_cells(Placement::single(P, loop_stage_map(P, P * V), M), interleaved_rows({P, V, M, false}),
                               schedule_label("interleaved-1f1b", P, M, V), true);
}

// PyTorch's order; with --group-size G Megatron's (for M a multiple of G).
FamilyStepProgram step_program_interleaved_1f1b(const GenerateParams& params) {
    const int V = stages_per_rank_or_default(params, "Interleaved 1F1B");
    if (params.group_size) return megatron_step_program({params.ranks, V, *params.group_size, params.microbatches, false});
    return interleaved_step_program({params.ranks, V, 0, false});
}

}  // namespace pp
