#pragma once
// The Zero Bubble paper's handcrafted schedules ZB-H1 and ZB-H2 (Qi et al., ICLR 2024, §3 and Fig. 3),
// in the form the authors' bubble-rate script times them (sail-sg/zero-bubble-pipeline-parallelism,
// efficiency.py, get_hand_schedule with warmup_c = 1 or 2). Single pipeline, stage r on rank r, backward
// split into I (the paper's "B") and W. Rank r:
//   c(P-1-r) warm-up forwards;
//   for each micro-batch i: F (while forwards remain), I, and W -- but only once i >= c·r, so the W's
//   of rank r lag c·r backwards behind;
//   the c·r owed W's at the end.
// c = 1 is ZB-H1 (1F1B's warm-up, W's fill the drain), c = 2 is ZB-H2 (twice the warm-up fills the
// fill bubble too; the last rank defers its W's to the end so the backwards reach rank 0 sooner).
// As a step program (I queues its W, W runs the oldest: the W's follow the I's in order), at M = m_origin + t:
//   F x c(P-1-r);  (F, I) x c·r;  (F, I, W) x (m_origin - c(P-1) + t);  (I, W) x c(P-1-r);  W x c·r.
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"

namespace pp {

// Needs m_origin >= c(P-1) so that the warm-up and the owed W's fit; the generators check stricter bounds.
FamilyStepProgram zb_hand_step_program(int ranks, int m_origin, int warmup_factor);
// The generator: the program run at M (>= m_origin), one stage per rank.
Schedule zb_hand_schedule(int ranks, int microbatches, int m_origin, int warmup_factor, const std::string& label);

}  // namespace pp
