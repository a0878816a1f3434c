// GPipe, as PyTorch's ScheduleGPipe runs it (torch/distributed/pipelining/schedules.py,
// _step_microbatches; summarised in shared/reference/pytorch-schedules.md §2.2): every rank runs the
// forwards of micro-batches 0..M-1, then their full backwards 0..M-1. One stage per rank, stage r on rank r.
// No precondition on M: current main accepts M < P (the M >= P guard of PR #144702 lives only in 1F1B).
//
// The IR's padding (r leading Nones, 3(P-1-r) Nones before the backwards) is a drawing aid that main
// drops again (_add_reduce_grad), and single-stage schedules have no CSV writer, so no gaps are kept.
//
// Bubble (uniform F, B, no comm): makespan (M+P-1)(F+B), i.e. a bubble fraction of (P-1)/(M+P-1).
// Memory: every rank holds all M activation stashes at the turn from forwards to backwards.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

namespace pp {

// Rank r at M = 1 + t: two runs that grow with M, `for mb < M: F(r, mb)` and `for mb < M: B(r, mb)` -- a zone
// program (schedules/step_program.hpp), whose zone word the prover derives from it.
FamilyStepProgram zone_program_gpipe(const GenerateParams& params) {
    const int P = params.ranks;
    FamilyStepProgram program{1, 1, {}};
    for (int r = 0; r < P; ++r)
        program.ranks.push_back(StepProgramBuilder({StepPhase{0, r}})
                                    .repeat(1, {forward(0)}, /*slope=*/1)
                                    .repeat(1, {full_backward(0)}, /*slope=*/1)
                                    .take());
    return program;
}

Schedule generate_gpipe(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "GPipe");
    require_one_stage_per_rank(params, "GPipe");
    const int P = params.ranks, M = params.microbatches;
    return schedule_from_step_program(zone_program_gpipe(params), Placement::single(P, loop_stage_map(P, P), M), M,
                                      schedule_label("gpipe", P, M));
}

}  // namespace pp
