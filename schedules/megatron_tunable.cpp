// Megatron-Core's tunable interleaved 1F1B (--microbatch-group-size-per-virtual-pipeline-stage G, default P).
//
// Source: NVIDIA/Megatron-LM, megatron/core/pipeline_parallel/schedules.py (read at d98e8a64dd):
//   get_schedule_table(M, V, G)     the virtual micro-batch order: micro-batches in groups of G, the last one
//                                   holding the rest (M mod G of them, or G); per group, every chunk c = 0..V-1
//                                   and inside it the group's micro-batches in order. table[k] = (micro-batch, chunk).
//   get_pp_rank_microbatches        warm-up forwards on rank r: w = 2(P-r-1) + (V-1)G, + 1 with
//                                   overlap_moe_expert_parallel_comm (combined 1F1B), at most MV.
//   forward_backward_pipelining_with_interleaving  the walk: forwards 0..w-1; then for k = 0..MV-w-1 forward
//                                   k+w and backward k; then backwards MV-w..MV-1. Forward k runs table[k]; backward
//                                   k runs table[k]'s micro-batch on chunk V-1-c (get_model_chunk_id(k, forward=
//                                   False)); with the overlap each steady (forward, backward) is one call of
//                                   combined_1f1b_schedule_for_interleaved_pipelining: one overlapped F&B slot.
//   megatron/core/transformer/cuda_graphs.py convert_schedule_table_to_order writes the same walk as +/- chunk ids.
// Chunk c of rank r is virtual stage c*P + r (the loop map). Megatron's docstring, PP=2, VP=2, G=3, M=5: the
// forward micro-batches run 0 1 2 0 1 2 3 4 3 4 on chunks 0 0 0 1 1 1 0 0 1 1 (tests/test_megatron_tunable.cpp).
//
// Preconditions, Megatron's own (the first statements of forward_backward_pipelining_with_interleaving):
//   P <= G <= M            ValueError "The number of contiguous micro-batches in a virtual pipeline stage should
//                          range in [PP=P , M=M]"  (so M >= P; G < P is refused)
//   M mod G == 0 or >= P   RuntimeError "The remainder of M ... should be 0, or larger than or equal to the
//                          pipeline-parallel size, but it is R. ..."
// and from the configuration: the interleaved schedule needs P > 1 (megatron/training/arguments.py) and V >= 2
// (V = 1 is run by forward_backward_pipelining_without_interleaving, where G plays no part).
//
// G = P is Megatron's default. When M is a multiple of P it is also PyTorch's ScheduleInterleaved1F1B order (rounds
// of P micro-batches, the same warm-up); in general PyTorch's order with R = max(1, floor(M/P)) rounds is this one
// at G = M/R for every M >= P PyTorch accepts (tests/test_megatron_tunable.cpp checks both, ops without PyTorch's
// idle cells).
#include "schedules/megatron_tunable.hpp"

#include "schedules/pytorch_ir.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace pp {
namespace {

// get_schedule_table: (micro-batch, chunk) per virtual micro-batch id.
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

void require_megatron_group_size(int P, int G, int M) {
    if (G > M || G < P)
        throw GenerateError("The number of contiguous micro-batches in a virtual pipeline stage should range in [PP=" +
                            std::to_string(P) + " , M=" + std::to_string(M) + "] (the group size, Megatron's "
                            "microbatch_group_size_per_vp_stage, --group-size, is " + std::to_string(G) + ")");
    const int rest = M % G;
    if (0 < rest && rest < P)
        throw GenerateError("The remainder of M (the total micro-batches) divided by N (number of contiguous micro-batches in a "
                            "virtual pipeline stage) should be 0, or larger than or equal to the pipeline-parallel size, but it is " +
                            std::to_string(rest) + " (M=" + std::to_string(M) + ", group size " + std::to_string(G) + ", P=" +
                            std::to_string(P) + ").");
}

std::string group_label(const std::string& label, int group_size) {
    const auto at = label.rfind(",M=");
    if (at == std::string::npos) return label;
    return label.substr(0, at) + ",G=" + std::to_string(group_size) + label.substr(at);
}

int group_size_or_default(const GenerateParams& params) {
    const int G = params.group_size.value_or(params.ranks);
    if (G < 1) throw GenerateError("--group-size must be at least 1, but got " + std::to_string(G) + ".");
    return G;
}

FamilyStepProgram megatron_step_program(const MegatronTunableShape& shape) {
    const int P = shape.ranks, V = shape.stages_per_rank, G = shape.group_size;
    const int rest = shape.microbatches > 0 && G > 0 ? shape.microbatches % G : 0, m_origin = 3 * G + rest;
    require_megatron_group_size(P, G, m_origin);
    const auto table = schedule_table(m_origin, V, G);
    const int total = m_origin * V, period = V * G;
    FamilyStepProgram program{m_origin, G, {}};
    for (int r = 0; r < P; ++r) {
        std::vector<StepPhase> chunks;
        for (int c = 0; c < V; ++c) chunks.push_back(StepPhase{0, c * P + r});
        const int warmup = 2 * (P - r - 1) + (V - 1) * G + (shape.overlap ? 1 : 0);
        auto forward_chunk = [&](int k) { return table[static_cast<size_t>(k)].second; };
        auto backward_chunk = [&](int k) { return V - 1 - table[static_cast<size_t>(k)].second; };
        auto steady = [&](int k, std::vector<StepToken>& out) {
            if (shape.overlap) {
                out.push_back(overlapped(forward_chunk(k + warmup), backward_chunk(k)));
            } else {
                out.push_back(forward(forward_chunk(k + warmup)));
                out.push_back(full_backward(backward_chunk(k)));
            }
        };
        std::vector<StepToken> head, block, tail;
        for (int k = 0; k < warmup; ++k) head.push_back(forward(forward_chunk(k)));
        for (int k = 0; k < period; ++k) steady(k, block);
        for (int k = 0; k + warmup < total; ++k) steady(k, tail);
        for (int k = total - warmup; k < total; ++k) tail.push_back(full_backward(backward_chunk(k)));
        program.ranks.push_back(StepProgramBuilder(chunks).once(head).repeat(0, block, 1).once(tail).take());
    }
    return program;
}

Schedule megatron_tunable_schedule(const MegatronTunableShape& shape, std::string label) {
    const int P = shape.ranks, V = shape.stages_per_rank, G = shape.group_size, M = shape.microbatches;
    require_megatron_group_size(P, G, M);
    if (M >= 3 * G + M % G)  // the program's M (for M's residue modulo G)
        return schedule_from_step_program(megatron_step_program(shape), Placement::single(P, loop_stage_map(P, P * V), M),
                                          M, std::move(label));
    Schedule schedule;
    schedule.placement = Placement::single(P, loop_stage_map(P, P * V), M);
    schedule.ranks.assign(static_cast<size_t>(P), {});
    schedule.source = std::move(label);
    const auto table = schedule_table(M, V, G);
    const int total = M * V;
    for (int r = 0; r < P; ++r) {
        const int warmup = std::min(2 * (P - r - 1) + (V - 1) * G + (shape.overlap ? 1 : 0), total);
        auto forward = [&](int k) {
            const auto [mb, c] = table[static_cast<size_t>(k)];
            return op_at(OpKind::F, c * P + r, mb);
        };
        auto backward = [&](int k) {
            const auto [mb, c] = table[static_cast<size_t>(k)];
            return op_at(OpKind::B, (V - 1 - c) * P + r, mb);
        };
        auto& slots = schedule.ranks[static_cast<size_t>(r)];
        for (int k = 0; k < warmup; ++k) slots.push_back(Slot::single(forward(k)));
        for (int k = 0; k + warmup < total; ++k) {
            if (shape.overlap) {
                slots.push_back(Slot::pair(forward(k + warmup), backward(k)));
            } else {
                slots.push_back(Slot::single(forward(k + warmup)));
                slots.push_back(Slot::single(backward(k)));
            }
        }
        for (int k = std::max(0, total - warmup); k < total; ++k) slots.push_back(Slot::single(backward(k)));
    }
    return schedule;
}

}  // namespace pp
