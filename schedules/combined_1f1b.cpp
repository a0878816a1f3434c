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
// P > 1 (Megatron requires virtual pipeline stages, V >= 2): stages on the loop map (stage c*P + r on rank
// r), micro-batch groups of G = P (microbatch_group_size_per_vp_stage's default). The virtual order lists,
// per group, every chunk c = 0..V-1 and inside it the group's micro-batches; the last group takes the rest.
// Forward k runs (micro-batch, chunk) = table[k]; backward k runs table[k] with chunk V-1-c. Rank r runs
//   w = min(2(P-r-1) + (V-1)G + 1, MV) forwards, then pairs (forward k+w ; backward k), then the last w
//   backwards alone.
// The "+1" makes the two halves of every pair independent (Megatron: "to ensure the forward and backward
// computations are independent in all 1f1b steps"); without it rank P-1's first pair would hold the
// forward and the backward of the same micro-batch and stage.
// Preconditions, with Megatron's reasons: P > 1 needs V >= 2 ("requires virtual pipeline parallelism");
// G = P <= M; M mod P must be 0 (a last group of fewer than P micro-batches "introduces dependency bubbles"
// and is refused).
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"

#include <algorithm>
#include <utility>

namespace pp {
namespace {

// Megatron's get_schedule_table: (micro-batch, chunk) per virtual micro-batch id.
std::vector<std::pair<int, int>> schedule_table(int microbatches, int chunks, int group) {
    std::vector<std::pair<int, int>> table;
    for (int first = 0; first < microbatches; first += group) {
        const int last = first + group >= microbatches ? microbatches : first + group;
        for (int c = 0; c < chunks; ++c)
            for (int mb = first; mb < last; ++mb) table.emplace_back(mb, c);
    }
    return table;
}

}  // namespace

Schedule generate_combined_1f1b(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "combined 1F1B");
    const int P = params.ranks, M = params.microbatches;
    const int V = params.stages_per_rank.value_or(P == 1 ? 1 : 2);
    if (P == 1 && V != 1) throw GenerateError("combined 1F1B without pipeline parallelism (P = 1) has one stage (V = 1)");
    if (P > 1 && V < 2)
        throw GenerateError("combined 1F1B with pipeline_model_parallel_size > 1 requires virtual pipeline parallelism "
                            "(V >= 2 model chunks per rank)");
    const int G = P;  // microbatch_group_size_per_vp_stage defaults to the pipeline size
    if (P > 1 && G > M)
        throw GenerateError("The number of contiguous micro-batches in a virtual pipeline stage should range in [PP=" +
                            std::to_string(P) + " , M=" + std::to_string(M) + "]");
    if (P > 1 && M % G != 0)
        throw GenerateError("The remainder of M (the total micro-batches) divided by N (number of contiguous micro-batches in a "
                            "virtual pipeline stage) should be 0, or larger than or equal to the pipeline-parallel size, but it is " +
                            std::to_string(M % G) + ".");

    Schedule schedule;
    schedule.placement = Placement::single(P, loop_stage_map(P, P * V), M);
    schedule.ranks.assign(static_cast<size_t>(P), {});
    schedule.source = schedule_label("combined-1f1b", P, M, P > 1 ? std::optional<int>(V) : std::nullopt);
    const auto table = schedule_table(M, V, P > 1 ? G : M);
    const int total = M * V;
    for (int r = 0; r < P; ++r) {
        const int warmup = P == 1 ? 1 : std::min(2 * (P - r - 1) + (V - 1) * G + 1, total);
        auto forward = [&](int k) { return op_at(OpKind::F, table[static_cast<size_t>(k)].second * P + r, table[static_cast<size_t>(k)].first); };
        auto backward = [&](int k) {
            return op_at(OpKind::B, (V - 1 - table[static_cast<size_t>(k)].second) * P + r, table[static_cast<size_t>(k)].first);
        };
        auto& slots = schedule.ranks[static_cast<size_t>(r)];
        for (int k = 0; k < warmup; ++k) slots.push_back(Slot::single(forward(k)));
        for (int k = 0; k + warmup < total; ++k) slots.push_back(Slot::pair(forward(k + warmup), backward(k)));
        for (int k = std::max(0, total - warmup); k < total; ++k) slots.push_back(Slot::single(backward(k)));
    }
    return schedule;
}

}  // namespace pp
