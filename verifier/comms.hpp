#pragma once
// Point-to-point communication of a PyTorch-style schedule (one pipeline, PyTorch's global stages):
//   * lowering a compute-only order to SEND/RECV actions as PyTorch's _add_send_recv does,
//   * PyTorch's lock-step dry run of such a program (_simulate_comms_compute), extended to pairs and
//     UNSHARD/RESHARD/REDUCE_GRAD,
//   * checks of a compute_comms program: SEND/RECV order per rank pair, missing RECVs, deadlock.
// A stage whose neighbour lives on the same rank hands tensors over in memory: no SEND/RECV.
#include "model/schedule.hpp"
#include "verifier/verify.hpp"

#include <string>
#include <vector>

namespace pp {

// PyTorch's _merge_bw: drops the bubbles and fuses every I immediately followed by the W of the same
// (stage, micro-batch) into one full backward B. The result has no gaps and no action list.
Schedule merge_bw(const Schedule& schedule);

// PyTorch's _add_send_recv on the schedule's slots (its action list, if any, is ignored). Rounds visit the
// ranks in ascending order and look at each rank's head: a bubble (from `gaps`) is consumed, delaying the
// rank by one round; a ready compute slot is emitted with a SEND after every half that feeds another rank,
// and the matching RECV is appended to the peer's list at once. Compute entries refer to the schedule's
// slots. Throws std::runtime_error("Malformed compute schedule, can't schedule sends/recvs ...") when a
// round makes no progress, std::invalid_argument for more than one pipeline.
std::vector<std::vector<RankAction>> lower_send_recv(const Schedule& schedule);

struct LockStepResult {
    bool completed = false;
    int steps = 0;  // length of the longest per-rank timeline (PyTorch's unit-test metric)
    std::vector<int> blocked_position_per_rank;  // action index of each rank's blocked head; -1 when done
    std::string message;                         // empty when completed
};

// PyTorch's _simulate_comms_compute over Schedule::actions: every step each unfinished rank runs its head
// if ready (ranks ascending), then idle ranks retry once (so a lower rank can use what a higher rank did in
// the same step). A RECV waits for the matching SEND on the peer rank; a SEND for its compute; a compute
// for its RECV or the producing op on the same rank. Pairs are ready when both halves are;
// UNSHARD/RESHARD/REDUCE_GRAD are always ready and take a step. Throws std::invalid_argument without actions.
LockStepResult simulate_comms_lockstep(const Schedule& schedule_with_actions);

// For schedules with actions: CommMismatch (per ordered rank pair, the SEND sequence differs from the
// receiver's RECV sequence; the first divergence of each pair is reported), CommMissing (a compute whose
// input comes from another rank has no RECV earlier on its rank) and CommDeadlock (the lock-step run gets
// stuck; only checked when the sequences are consistent, since the dry run matches messages by identity
// and would otherwise describe a program that is not the one the ranks run). Empty without actions.
std::vector<Violation> check_comms(const Schedule& schedule);

}  // namespace pp
