#pragma once
// Megatron-Core's tunable interleaved 1F1B order (microbatch_group_size_per_vp_stage = G), shared by
// interleaved-1f1b --group-size G and combined-1f1b (the same order with one more warm-up forward and the
// steady-state forward and backward overlapped in one slot). The formula is in megatron_tunable.cpp.
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"

#include <string>

namespace pp {

struct MegatronTunableShape {
    int ranks = 2;               // P >= 2
    int stages_per_rank = 2;     // V >= 2 (Megatron's num_model_chunks)
    int group_size = 2;          // G (microbatch_group_size_per_vp_stage)
    int microbatches = 2;        // M
    bool overlap = false;        // overlap_moe_expert_parallel_comm: one more warm-up forward, F&B pairs
};

// Megatron's checks of forward_backward_pipelining_with_interleaving, with its messages (GenerateError):
// P <= G <= M, and M mod G == 0 or M mod G >= P.
void require_megatron_group_size(int ranks, int group_size, int microbatches);

// The order; `label` becomes Schedule::source. Checks the shape first.
Schedule megatron_tunable_schedule(const MegatronTunableShape& shape, std::string label);

// The order as a step program (schedules/step_program.hpp) for the M with M's residue R = M mod G (`shape.
// microbatches` is read only for it; 0 or P <= R < G, Megatron's rule), from M = 3G + R: three full groups, then the
// partial group of R, at the origin, so that the forward of each of the first V·G steady steps reads a full group
// (the warm-up is below (V + 2)G <= 2VG). One more group inserts V·G steady steps at the start of the steady phase
// and raises everything after them by G: the table of M + G is the table of M with one full group in front, and
// the partial group stays last.
FamilyStepProgram megatron_step_program(const MegatronTunableShape& shape);
// "interleaved-1f1b(P=4,V=2,M=8)" -> "interleaved-1f1b(P=4,V=2,G=4,M=8)".
std::string group_label(const std::string& label, int group_size);

// The group size given (checked >= 1), else P, Megatron's default.
int group_size_or_default(const GenerateParams& params);

}  // namespace pp
