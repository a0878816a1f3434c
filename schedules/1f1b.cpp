// 1F1B, as PyTorch's Schedule1F1B *executes* it (Schedule1F1B._step_microbatches; summarised in
// shared/reference/pytorch-schedules.md §2.2): rank r runs w = min(M, P-r) warm-up forwards, then
// alternates "backward first" -- B0, Fw, B1, Fw+1, ... -- until every forward is issued, then the
// remaining w backwards. One stage per rank (stage r on rank r).
// Precondition (PipelineScheduleSingle / Schedule1F1B): M >= P, else
//   "Number of microbatches (M) must be greater than or equal to the number of stages (P)."
//
// Why not the IR: Schedule1F1B._get_pipeline_order (PR #155935, June 2025) numbers the last rank's
// forwards 1..M ("3F1 3B0 3F2 ... 3F8 3B7" for P=4, M=8: no F0, and F8 is out of range), so anything that
// consumes the IR sees a backward before its forward. The runtime never uses that IR; it runs
// F0 B0 F1 B1 ... F(M-1) B(M-1) on the last rank, which is what we generate. Ranks 0..P-2 agree with the IR.
// The IR's padding Nones are a drawing aid (dropped in main), so no gaps are kept.
//
// Bubble (uniform F, B, no comm): makespan (M+P-1)(F+B); with comm c on every hop the Zero Bubble
// authors' model gives more (their 1F1B column of the ICLR table). Memory: rank r holds at most
// min(M, P-r) activation stashes -- P on rank 0.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

namespace pp {

// Rank r at M = P + t: P - r warm-up forwards, r + t rounds of (B, F), then the P - r backwards left.
FamilyStepProgram step_program_1f1b(const GenerateParams& params) {
    const int P = params.ranks;
    FamilyStepProgram program{P, 1, {}};
    for (int r = 0; r < P; ++r)
        program.ranks.push_back(StepProgramBuilder({StepPhase{0, r}})
                                    .repeat(P - r, {forward(0)})
                                    .repeat(r, {full_backward(0), forward(0)}, /*slope=*/1)
                                    .repeat(P - r, {full_backward(0)})
                                    .take());
    return program;
}

Schedule generate_1f1b(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "1F1B");
    require_one_stage_per_rank(params, "1F1B");
    const int P = params.ranks, M = params.microbatches;
    if (M < P)
        throw GenerateError("Number of microbatches (" + std::to_string(M) +
                            ") must be greater than or equal to the number of stages (" + std::to_string(P) + ").");
    return schedule_from_step_program(step_program_1f1b(params), Placement::single(P, loop_stage_map(P, P), M), M,
                                      schedule_label("1f1b", P, M));
}

}  // namespace pp
