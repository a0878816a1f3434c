#pragma once
// The per-rank op order of DeepSeek's DualPipe step() (deepseek-ai/DualPipe @ 3da1bbe), shared by
// DualPipe and DualPipeV: DualPipeV(P, M) is exactly the first half of DualPipe(2P, 2M) (ranks r < P)
// once the pipeline tag is dropped, so both are the same 8 steps over a rank's two local phases.
//
// Vocabulary (see /work/shared/reference/dualpipe.md, section c):
//   n  ranks per half               DualPipe: P/2          DualPipeV: P
//   h  distance from the outer end  DualPipe: min(r,P-1-r) DualPipeV: r
//   H  micro-batches per phase      DualPipe: M/2          DualPipeV: M
//   p0 the rank's local phase whose pipeline starts nearer this rank (stage h),
//   p1 the other one (stage 2n-1-h); far = n-h-1 is 0 exactly on the turn rank(s).
#include "model/op.hpp"
#include "model/schedule.hpp"
#include "schedules/step_program.hpp"

#include <array>
#include <vector>

namespace pp {

// Where one local phase lives: the pipeline and the stage (position along that pipeline) on this rank.
// prev_rank / next_rank: the ranks holding the neighbouring stages of that pipeline, which this phase
// receives activations from and sends them to (gradients the other way); -1 at the ends of the pipeline
// and where the neighbour lives on this rank (DualPipeV's turn), since the reference skips those.
struct PhaseLocation {
    int pipeline = 0;
    int stage = 0;
    int prev_rank = -1;
    int next_rank = -1;
};

struct DualPipeRank {
    int ranks_per_half = 0;  // n
    int distance = 0;        // h, 0 <= h < n
    int microbatches = 0;    // H, at least 2n (the reference's num_chunks >= 2 * num_ranks)
    std::array<PhaseLocation, 2> phase{};  // p0, p1
};

// The 8 steps as a step program (schedules/step_program.hpp) over phases p0, p1, with H = 2n + t: only step 4's
// trip count grows. `microbatches` is not read.
RankStepProgram dualpipe_step_program(const DualPipeRank& rank);

// The rank's slots in execution order: F, B (full), I + later W (FIFO), and (F;B) overlapped pairs.
std::vector<Slot> dualpipe_rank_order(const DualPipeRank& rank);

// The same slots with the reference's communication order (dualpipe.md section d): the P2P ops queued
// by the reference's _recv_forward / _send_forward / _recv_backward / _send_backward calls, cut into the
// batches that each _commit_and_wait_comm launches (before every compute and every W, and once at the
// end). comm[k].slot == k for every slot; a last step with slot -1 holds the final commit, if not empty.
struct DualPipeRankProgram {
    std::vector<Slot> slots;
    std::vector<CommStep> comm;
};
DualPipeRankProgram dualpipe_rank_program(const DualPipeRank& rank);

}  // namespace pp
