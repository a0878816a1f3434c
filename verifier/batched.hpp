#pragma once
// Timing under blocking communication batches, the way DeepSeek's DualPipe reference executes a schedule
// (/work/shared/reference/dualpipe.md section d), as opposed to the dataflow model of verifier/simulate.hpp.
//
// Every rank runs a communication program (model/schedule.hpp CommProgram): before each of its slots --
// every compute, every W -- it commits one batch of P2P sends and receives (dist.batch_isend_irecv) and
// waits for all of it; after the last slot a final commit flushes what is still queued. The generic rule
// puts into the batch before slot k the sends of slot k-1's outputs (in the slot's op order: a pair's
// activation, then its gradient) and then the receives of slot k's inputs (the F input, then the backward's
// output-gradient). DualPipe and DualPipeV carry their reference's own program instead (prefetches,
// held-back sends, turn-rank deviations), attached by the generators.
//
// Rendezvous semantics. P2P messages between two ranks pair up in posting order (NCCL matches by order
// only), so the i-th send from a to b meets the i-th receive on b from a. A rank posts batch k when its
// previous slot ends (batch 0 at time 0). An operation completes once its counterpart has been posted too
// -- in the peer's current or an earlier batch -- plus the P2P latency (Costs::comm); a batch completes when
// all its operations have, and an empty batch costs nothing. The slot starts when its batch completes.
// Hence every slot starts no earlier than under dataflow (its inputs were sent after their producers
// ended), and strictly later when a rank must wait for a peer to post.
//
// Not every schedule can run this way. With the generic rule, ZB-H2, ZBV, and interleaved 1F1B / looped
// BFS / ZB1P with V >= 2 deadlock (two ranks each blocked on a send the other receives only later) or
// mismatch (one channel carries activations and gradients in an order the receiver does not expect); so
// does DualPipe without the reference's own order (deadlock at P = 2, 4, where the reference's step-3
// receive breaks the cycle; a mismatched channel from P = 6 on). check_comm_program reports these;
// simulate_batched refuses them.
#include "model/costs.hpp"
#include "model/dag.hpp"
#include "model/schedule.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

enum class CommModel { Dataflow, Batched };
const char* comm_model_name(CommModel model);                 // "dataflow" | "batched"
std::optional<CommModel> parse_comm_model(std::string_view name);

// The generic rule above, for any schedule (single- or multi-pipeline). Transfers between stages on the
// same rank are local: no P2P op.
CommProgram generic_comm_program(const Schedule& schedule);

struct BatchedOptions {
    bool use_attached_program = true;  // false: the generic rule even when the schedule carries a program
};

// The program batched timing runs: the schedule's own (Schedule::comm_program) if it has one and the
// options allow it, else the generic rule.
CommProgram batched_program(const Schedule& schedule, const BatchedOptions& options = {});
bool uses_attached_program(const Schedule& schedule, const BatchedOptions& options = {});

// Checks of a program against its schedule, as violations (verifier/verify.hpp):
//   CommMismatch  steps that do not list the rank's slots in order; an op addressed to a rank that does
//                 not hold the neighbouring stage; a send of a tensor not yet computed on that rank; per
//                 ordered rank pair, a send sequence that differs from the receiver's receive sequence
//                 (first divergence per pair);
//   CommMissing   a compute whose input lives on another rank but was not received in this or an earlier
//                 batch;
//   CommDeadlock  the rendezvous never completes (checked only when the sequences match); the witness
//                 names, per stuck rank, the batch it waits in and what it waits for.
// Positions are step indices of the rank's program.
std::vector<Violation> check_comm_program(const Schedule& schedule, const CommProgram& program);

// Batched timing. Throws SimulationError when check_comm_program reports anything. The Simulation has the
// same meaning as for dataflow: slot start/end, makespan = last compute end, idle = makespan - busy,
// per-rank span, peak activations (order-based), and a critical path whose steps are either the rank's
// previous slot or the slot after which a peer posted the batch this one waited for.
Simulation simulate_batched(const Schedule& schedule, const ScheduleGraph& graph, const CommProgram& program,
                            const Costs& costs, const ActivationModel& activations = {});
Simulation simulate_batched(const Schedule& schedule, const Costs& costs, const ActivationModel& activations = {},
                            const BatchedOptions& options = {});

// Either model; the graph is the schedule's (build_schedule_graph).
Simulation simulate_model(CommModel model, const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                          const ActivationModel& activations = {}, const BatchedOptions& options = {});

// dualpipe.md's notation: "sA1.0>2" sends stage 1's micro-batch-0 activation to rank 2, "rG3r.0<0" receives
// from rank 0 the gradient computed by the backward of stage 3 of pipeline 1 ("r"; "@k" for k > 1).
std::string format_p2p(const P2POp& op);
std::string format_batch(const std::vector<P2POp>& batch);  // "{sA1.0>2,rA0.1<0}"

}  // namespace pp
