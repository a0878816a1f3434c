#pragma once
// A blocking P2P program (verifier/batched.hpp) that cannot run -- a rendezvous deadlock, or a channel whose
// n-th send is not the tensor its n-th receive expects -- found at one instance in a part of the program that
// every larger instance repeats verbatim, so that the failure recurs at every larger M (proofs/method.md §2c).
//
// Why a part recurs. For a program word (proofs/batched_graph.hpp) instantiated at t, rank r's first
// s_r(t) = |prefix_r| + t*|block_r| batches read from the start are the same for every t' >= t (block j is
// block(0) raised by j*delta whatever t is); call them the *stable head*. Within the heads nothing that decides
// a failure depends on t:
//   - the n-th send a->b and the n-th receive on b from a, when both lie in the heads, are the same ops at the
//     same steps in every larger instance (n counts posts before them, all inside the head);
//   - the rendezvous dependency graph (node (r,k) = rank r's batch k completes; it needs (r,k-1) and, for
//     each op, the peer's node before the batch holding the counterpart: verifier/batched.cpp Rendezvous)
//     restricted to the heads is therefore a subgraph of every larger instance's graph.
// A cycle in that subgraph is a cycle of every larger instance: those batches never complete (deadlock). A
// diverging send/receive pair in the heads diverges in every larger instance (mismatch). Symmetrically for the
// *stable tail*, read from the end (contents raised by t*delta): pairing by position from the end is fixed when
// the channel's sends and receives are equally many, and grow alike per block.
#include "model/schedule.hpp"
#include "proofs/batched_graph.hpp"
#include "proofs/maxplus.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

struct RecurringCommFailure {
    enum class Kind { Deadlock, Mismatch };
    Kind kind = Kind::Deadlock;
    bool from_end = false;           // found in the stable tail instead of the stable head
    std::vector<std::string> witness;  // the waiting cycle (one line per batch) or the diverging pair
};
const char* recurring_failure_name(RecurringCommFailure::Kind kind);  // "deadlock" | "mismatch"

// The stable head of each rank at t (steps, from the start) and the stable tail (steps, from the end).
std::vector<int> stable_head(const ProgramWord& pw, int t);
std::vector<int> stable_tail(const ProgramWord& pw, int t);

// A failure of `program` (the instance at t of `pw`, timing `schedule`) that lies entirely in the stable heads
// (or tails); nullopt when there is none there. The schedule only names the slots in the witness.
std::optional<RecurringCommFailure> recurring_comm_failure(const Schedule& schedule, const CommProgram& program,
                                                           const ProgramWord& pw, int t);
// The same with the stable heads given (per rank, steps from the start that every larger instance repeats
// verbatim) and no tails: for programs that are no program word (the generic program of a zone word).
std::optional<RecurringCommFailure> recurring_comm_failure_in_heads(const Schedule& schedule, const CommProgram& program,
                                                                    const std::vector<int>& heads);

}  // namespace pp
