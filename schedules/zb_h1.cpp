// ZB-H1, the Zero Bubble paper's first handcrafted schedule (Qi, Wan, Huang, Lin: "Zero Bubble Pipeline
// Parallelism", ICLR 2024, §3.1; order as timed by get_hand_schedule(warmup_c=1) in the authors' efficiency.py,
// see shared/reference/landscape.md §1.7). The order is in zb_hand.cpp: 1F1B's warm-up of P-1-r forwards,
// then F, I, W per micro-batch with rank r's W's lagging r backwards, the r owed W's at the end.
// It is also what PyTorch's ScheduleInterleavedZeroBubble produces for V = 1 (without its idle cells).
//
// Precondition: M >= P, as for 1F1B. (The order is well formed from M >= P-1; the authors' script
// asserts M >= 2P for every hand schedule, but that assert guards its H2 timing, not H1's order.)
//
// Bubble, no comm (asserted by the authors' script): span - M(F+I+W) = (P-1)(F+I-W), with
// span = max over ranks of (end of last op - start of first op); a third of 1F1B's (P-1)(F+I+W) when
// F = I = W. ICLR table (1.5B, P=8, c > 0): bubble rate .1585 / .1242 / .0674 at M = 24 / 32 / 64.
// Memory: every rank peaks at P activation stashes (released by W), 1F1B's peak, which in 1F1B only
// rank 0 reaches: the W lag of r keeps r more stashes alive on rank r.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/zb_hand.hpp"

namespace pp {

FamilyStepProgram step_program_zb_h1(const GenerateParams& params) {
    return zb_hand_step_program(params.ranks, params.ranks, 1);
}

Schedule generate_zb_h1(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "ZB-H1");
    require_one_stage_per_rank(params, "ZB-H1");
    const int P = params.ranks, M = params.microbatches;
    if (M < P)
        throw GenerateError("ZB-H1 requires at least as many micro-batches as stages (M >= P), but got M=" +
                            std::to_string(M) + ", P=" + std::to_string(P) + ".");

    return zb_hand_schedule(P, M, P, 1, schedule_label("zb-h1", P, M));
}

}  // namespace pp
