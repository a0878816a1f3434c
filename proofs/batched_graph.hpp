#pragma once
// The batched timing model (verifier/batched.hpp) as a max-plus linear graph over slots, so that the prover's
// periodic-graph argument (proofs/maxplus.hpp, proofs/method.md) applies to it unchanged.
//
// Why it is one: rank a posts batch k when its slot k-1 ends (batch 0 at time 0); an op completes at
// max(own post, counterpart's post) + comm, counterparts pairing by posting order per (sender, receiver)
// channel; the batch completes when all its ops have (an empty batch costs nothing) and slot k starts then.
// So start(a,k) = max( end(a,k-1) [+ comm if the batch is non-empty], end(b, j_b - 1) + comm for every
// counterpart posted in batch j_b >= 1 of rank b ): a longest path over the edges
//   slot (a,k-1) -> slot (a,k)     pays comm iff batch k of rank a is non-empty,
//   slot (b,j-1) -> slot (a,k)     pays comm, for each op of batch k whose counterpart is in batch j >= 1,
// which is exactly what `simulate` and `symbolic_simulate` compute when EdgeInfo::cross_rank means "pays
// comm". A cycle is a rendezvous deadlock. Trailing commits (slot -1) only post after the rank's last slot,
// and nothing waits for them to complete, so they add no node.
//
// One case is not a path: a non-empty first batch whose counterparts are all in their ranks' first batches
// starts at comm, not 0. `first_batch_waits` reports it; it is harmless exactly when comm = 0.
#include "model/dag.hpp"
#include "model/schedule.hpp"
#include "proofs/maxplus.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

struct BatchedGraph {
    std::optional<ScheduleGraph> graph;  // nullopt when the program is inconsistent (see failure)
    std::string failure;
    std::vector<std::uint32_t> first_batch_waits;  // global slot ids that start at comm without a predecessor
};
// Checks the program (check_comm_program; a deadlock is reported there) and builds the graph. Slot numbering
// is build_schedule_graph's.
BatchedGraph build_batched_graph(const Schedule& schedule, const CommProgram& program);
// The graph itself, for timing: throws SimulationError when the program is inconsistent, or when a first batch
// waits comm without a predecessor while comm may be positive (the graph cannot express that wait).
ScheduleGraph batched_timing_graph(const Schedule& schedule, const CommProgram& program, bool comm_may_be_positive);

// A communication program as a periodic word beside a slot word: per rank, the batches (one per step) are
// prefix . block(0..t-1) . suffix(t), micro-batch indices of pipeline p raised by j*delta[p] (block j) or
// t*delta[p] (suffix). Its split need not be the slot word's: a batch mixes the inputs of one slot with the
// outputs of the slot before.
struct ProgramWord {
    std::vector<int> delta;
    std::vector<std::vector<std::vector<P2POp>>> prefix, block, suffix;
    // The program of word.instantiate(t): step k runs slot k, the steps after the last slot run none.
    CommProgram instantiate(const PeriodicWord& word, int t) const;
};
struct ProgramFit {
    std::optional<ProgramWord> word;
    std::string failure;
};
ProgramFit fit_program_word(const PeriodicWord& word, const CommProgram& p0, const CommProgram& p1,
                            const CommProgram& p2);
// The smallest T such that two program words with the same lengths that agree for t = 0..T agree for all t
// (proofs/method.md lemma 1 applied to batch sequences); at least 3.
int program_check_horizon(const ProgramWord& program);
// "" when the program word instantiated at t equals `program` step for step.
std::string program_mismatch(const ProgramWord& pword, const PeriodicWord& word, int t, const CommProgram& program);

// From which t on the batched graph's edges, in the slot word's block coordinates, no longer depend on t:
// every channel's counterpart pairing is a running counter whose per-block growth is the same on both ends,
// so sends and receives in the prefix, the blocks and the suffix pair with fixed offsets once the prefix and
// the suffix of a channel can no longer meet; and the program word's split differs from the slot word's by
// a bounded number of steps. Empty failure when such a T exists.
struct BatchedStability {
    int T0 = 1;
    std::string failure;
};
BatchedStability batched_stable_from(const PeriodicWord& word, const ProgramWord& program);

// The edges of a timing graph of word.instantiate(t) in block coordinates (rank, region, index on each end,
// the block offset, and whether the edge pays comm), as sorted text lines: equal for two t means the same
// edge classes.
std::vector<std::string> edge_classes(const PeriodicWord& word, const ScheduleGraph& graph, int t);

}  // namespace pp
