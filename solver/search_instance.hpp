#pragma once
// The search's integer model of a placement (issue 2). One task per (pipeline, stage, micro-batch, kind)
// with kind F, I or W: the search always splits the backward, because a fused B (cost I + W, or more) is
// never better than I immediately followed by W -- same release of memory, earlier gradient for the
// previous stage. Times are integers in units of `quantum` simulator ticks, the gcd of every duration
// and the latency, so a time-indexed encoding stays as small as the costs allow; as-soon-as-possible
// schedules start everything at multiples of that gcd, so nothing is lost.
//
// Precedence edges (start(to) >= start(from) + duration(from) + lag):
//   dependencies  F(s-1,m) -> F(s,m), F(last,m) -> I(last,m), I(s+1,m) -> I(s,m), I(s,m) -> W(s,m);
//                 lag = comm when the two stages sit on different ranks.
//   FIFO          X(s,m-1) -> X(s,m) for each kind X and stage s (symmetry breaking, see below).
//   memory        W(s,m-(L-u)) -> F(s,m), u = stages of the same pipeline on that rank before s.
//
// Overlapped pairs (--overlap). A pair is one unit of cost `overlap` on one rank, holding an F and a
// backward (DeepSeek's F&B, PyTorch's OVERLAP_F_B; the unit is the FB cost of the written file):
//   F&B (PairKind::ForwardBackward, `--overlap FB=`, what FB means everywhere else): the backward is the
//       full B of one micro-batch, its I and W fused. Both end with the unit: the input gradient leaves
//       and the activation is freed at its end. In the model the pair's I starts with its F and its W
//       is a zero-length task at the unit's end. A backward outside a pair is split into I and W.
//   F&I (PairKind::ForwardInput, `--overlap FI=`): the backward is the input-gradient I only; its W
//       runs later on its own.
//
// Symmetry breaking (lossless for identical micro-batches). Take any feasible schedule; on every stage
// and kind, give micro-batch m the m-th smallest start time of that class. Durations do not depend on
// m, so every device still runs the same multiset of busy intervals (no overlap, same makespan, same
// first start and last end per rank). Every dependency links the same micro-batch with the same offset
// d: from start(to_m) >= end(from_m) + d for all m follows k-th smallest start(to) >= k-th smallest
// end(from) + d, and the intervals of one class are disjoint (one device), so the k-th smallest end is
// the end of the k-th interval. Memory at time t is #F started - #W finished, which only depends on
// the multisets. Hence an optimum exists in which each class runs in micro-batch order (DualPipe: within
// each direction). With that order, the live activations of one stage form a contiguous range of
// micro-batches, so a cap L is exactly "F(s,m) starts after W(s,m-L) ends" on a rank that holds one
// stage; at F(s,m) every earlier stage of the same pipeline on that rank also holds m (its W comes after
// I(s,m)), which gives the u offset. Ranks with more than one stage also get a cardinality constraint.
//
// Per-stage costs (--stage-costs) change nothing above: durations may differ between classes, but
// within one (stage, kind) class every micro-batch still costs the same, and that is all the argument
// uses. The same holds for pairs: ops on one rank never overlap, so within a class the order of starts
// is the order of ends even when some members are paired (longer); a pair's cost depends only on the
// classes it joins; relabelling inside classes keeps every pair a pair of the same two classes.
// One exception: with F&B pairs the I and W of a fused backward must belong to the same micro-batch, so
// the W of stage s is relabelled with the permutation of its I, not sorted on its own. There F and I
// keep their FIFO order, W does not, and the memory cap is a cardinality constraint on every rank.
#include "model/costs.hpp"
#include "model/placement.hpp"
#include "model/rational.hpp"
#include "model/schedule.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pp {

enum class Objective {
    Makespan,  // end of the last op
    Span,      // Zero Bubble: max over ranks of (end of its last op - earliest possible start of its first)
};

enum class PairKind { ForwardBackward, ForwardInput };
const char* pair_kind_name(PairKind kind);  // "F&B", "F&I"

struct SearchProblem {
    Placement placement;
    Costs costs;                        // durations per kind (and block), latency
    // Per rank, in stage activations (exact, as given); nullopt = unlimited. Every stash is one whole
    // activation, so "peak <= cap" is exactly "peak <= floor(cap)": nothing is rounded away, and the
    // schedule written carries the cap as given.
    std::optional<Rational> memory_limit;
    // What F allocates and I releases (the rest at W's end), in the limit's units: whole stashes (1, 0) by
    // default; the Zero Bubble paper's model is F = 1, I = 1 - M_W/M_B (issue 32).
    ActivationModel activations{};
    Objective objective = Objective::Makespan;
    std::optional<Rational> overlap;    // pairs allowed, of this cost (the FB of the written file)
    PairKind pair_kind = PairKind::ForwardBackward;
    bool symmetry_breaking = true;      // FIFO per class + memory as precedence (lossless, see above)
};

enum class Why : std::uint8_t { Dependency, Fifo, Memory };

struct Task {
    Op op;
    int rank = 0;
    Ticks duration = 0;    // quantised
    int cls = 0;           // (pipeline, stage, kind) class: FIFO chains run inside a class
    int activation = -1;   // F and W: index into Instance::activations
};

struct PrecedenceEdge {
    int from = 0, to = 0;
    Ticks lag = 0;  // start(to) >= start(from) + duration(from) + lag
    Why why = Why::Dependency;
};

// One (pipeline, stage, micro-batch) stash: allocated at the start of F, released at the end of W.
struct Activation {
    int forward = 0, weight = 0, rank = 0;
    int input = 0;  // the I between them: it releases part of the stash under a WeightedMemory
};

// The memory cap when I releases part of a stash (issue 32), in integer units: F allocates `alloc`, I
// releases alloc - kept, W the remaining `kept`, and a rank holds at most `cap` units at every F's start.
// Units are the limit's times the lcm of the sizes' denominators, so "live <= limit" is exactly
// "units <= cap" (live units are integers, cap = floor(limit * lcm)).
struct WeightedMemory {
    std::int64_t alloc = 1, kept = 1, cap = 0;
    std::int64_t released_by_input() const { return alloc - kept; }
};

struct Instance {
    SearchProblem problem;
    TimeScale scale;             // the simulator's ticks for these costs
    Ticks quantum = 1;           // one instance time unit = quantum ticks
    Ticks comm = 0;              // quantised latency
    std::optional<Ticks> pair;   // quantised pair cost, when pairs are allowed
    std::optional<int> cap;      // floor(memory limit): the most whole activations a rank may hold
    // Set instead of `cap` when I releases part of each stash. Every component that reads `cap` assumes
    // whole stashes held from F to W; with `cap` unset those see no cap (a relaxation: their bounds stay
    // sound), while the exact encodings, the greedy and the re-verification count these units.
    std::optional<WeightedMemory> weighted;
    int ranks = 0;
    std::vector<Task> tasks;
    std::vector<std::vector<int>> rank_tasks;       // per rank, task ids
    std::vector<PrecedenceEdge> edges;
    std::vector<std::vector<int>> out_edges, in_edges;  // edge ids per task
    std::vector<Activation> activations;
    std::vector<bool> rank_needs_cardinality;       // memory cap not fully expressed by memory edges
    std::vector<int> topo_position;                 // a topological order of tasks over all edges
    std::vector<int> topo_order;
    std::vector<Ticks> earliest_rank_start;         // h_r: longest dependency path to any op of rank r
    Ticks horizon = 0;  // every duration and lag added up: no schedule without deliberate idling ends later

    size_t size() const { return tasks.size(); }
    int task_of(const Op& op) const;  // -1 when absent
    Rational to_units(Ticks quantised) const { return scale.to_units(quantised * quantum); }
    Ticks to_ticks(Ticks quantised) const { return quantised * quantum; }
    bool fifo() const { return problem.symmetry_breaking; }
    bool pairs_allowed() const { return pair.has_value(); }
    bool fused_pairs() const { return pair && problem.pair_kind == PairKind::ForwardBackward; }  // F&B
    bool is_pairable(int task) const;  // F or I, when pairs are allowed
    bool is_absorbable(int task) const;  // a W that an F&B pair may absorb (fused_pairs)
    // Duration of a task inside a pair: the pair cost for F and I, 0 for an absorbed W (it marks the end).
    Ticks pair_duration(int task) const { return is_absorbable(task) ? 0 : *pair; }
    int weight_of(int input_task) const;  // the W of an I's (pipeline, stage, micro-batch)
    int input_of(int weight_task) const;

    std::vector<int> task_index_;  // OpIndex-like dense map (pipeline, stage, mb, kind) -> task
    std::vector<size_t> pipeline_base_;
};

// The memory cap as every order-based check counts it (one op at a time per rank, so a release at an op's
// end precedes the rank's next start): F adds `alloc` at its start, I and W release theirs. Whole stashes
// are 1, 0, 1 with the integer cap; nullopt without a cap.
struct MemoryCounter {
    std::int64_t alloc = 1, by_input = 0, by_weight = 1, cap = 0;
    std::int64_t change(OpKind kind) const {
        switch (kind) {
            case OpKind::F: return alloc;
            case OpKind::I: return -by_input;
            case OpKind::W: return -by_weight;
            default: return -(by_input + by_weight);
        }
    }
};
std::optional<MemoryCounter> memory_counter(const Instance& inst);

// The least memory cap any schedule of this placement needs: at the start of F on the last stage a rank
// holds of a pipeline, every earlier stage of that pipeline on the rank still holds the same
// micro-batch. A cap below this is infeasible; at this cap, running micro-batches one at a time works.
struct MemoryFloor {
    int units = 1;
    int rank = 0, pipeline = 0;
    std::string explanation;
};
MemoryFloor memory_floor(const Placement& placement);

// Throws std::invalid_argument for problems the search does not model (a zero duration). A memory cap
// below the floor is not an error here: the search reports it as infeasible.
Instance build_instance(const SearchProblem& problem);

// The search holds about kSearchBytesPerTask per task (instance, bounds, heuristics' orders, re-verified
// schedules; measured 1.38 KB on 1f1b P=500 M=1000, 1.5M tasks, 2.0 GB peak). It takes up to a 25th of the
// schedule size limit (--max-ops): 2 x 10^6 tasks by default, about 3 GB.
inline constexpr std::uint64_t kSearchBytesPerTask = 1536;
inline constexpr std::uint64_t kSearchShareOfMaxOps = 25;
// Its tasks: F, I and W of every (stage, micro-batch), saturating.
std::uint64_t search_tasks(const Placement& placement);
// Throws SizeLimitError (model/size_budget.hpp) with the estimate when the search would be over its limit.
void require_search_size(const Placement& placement);

// Turns start times (and, with pairs, partner[t] = the task paired with t or -1) into a schedule:
// per rank, in order of start time, ties broken topologically.
Schedule schedule_from_starts(const Instance& inst, const std::vector<Ticks>& start, const std::vector<int>& partner);

// "F(stage 3, mb 5)" style text for certificates ("@1" for pipeline 1).
std::string describe_op(const Op& op);

}  // namespace pp
