// ZB-H2, the Zero Bubble paper's second handcrafted schedule (Qi, Wan, Huang, Lin: "Zero Bubble Pipeline
// Parallelism", ICLR 2024, §3.1; order as timed by get_hand_schedule(warmup_c=2) in the authors'
// efficiency.py, see shared/reference/landscape.md §1.7). The order is in zb_hand.cpp: 2(P-1-r) warm-up
// forwards, then F, I, W per micro-batch with rank r's W's lagging 2r backwards, the 2r owed W's at the end.
//
// Precondition: M >= 2P, the authors' assert in get_hand_schedule (the order itself is well formed from
// M >= 2(P-1)).
//
// Bubble, with p2p latency c on every hop (asserted by the authors' script):
// span - M(F+I+W) = (P-1)(F+I+2c-2W), span = max over ranks of (end of last op - start of first op) --
// zero when F+I+2c = 2W. ICLR table (1.5B, P=8): bubble rate .1083 / .0837 / .0444 at M = 24 / 32 / 64.
// Memory: about twice 1F1B's -- every rank peaks at 2P-1 activation stashes (released by W).
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/zb_hand.hpp"

namespace pp {

FamilyStepProgram step_program_zb_h2(const GenerateParams& params) {
    return zb_hand_step_program(params.ranks, 2 * params.ranks, 2);
}

Schedule generate_zb_h2(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "ZB-H2");
    require_one_stage_per_rank(params, "ZB-H2");
    const int P = params.ranks, M = params.microbatches;
    if (M < 2 * P)
        throw GenerateError("ZB-H2 requires at least twice as many micro-batches as stages (M >= 2P), but got M=" +
                            std::to_string(M) + ", P=" + std::to_string(P) + ".");

    return zb_hand_schedule(P, M, 2 * P, 2, schedule_label("zb-h2", P, M));
}

}  // namespace pp
