#pragma once
// From chunk costs to the costs every command already uses (issue 11). A slot's duration depends only on
// its kind (lone F, I, W, B; pair F&I or F&B) and the pattern, so each kind is timed once
// (verifier/slot_timing.hpp) and the results become ordinary op costs:
//   F = duration(F)  I = duration(I)  W = duration(W)  B = duration(B)  FB = duration(F&B)  FI = duration(F&I)
//   comm = ChunkCosts::pp (0 when not given)
// The schedule is then timed by the unchanged longest path (verifier/simulate.hpp, or batched timing):
// nothing downstream needs to know whether a cost was given or derived. Per-slot-kind exposed
// communication is looked up the same way, so the whole-schedule cost is the longest path plus one table
// lookup per slot.
//
// Whole-schedule exposed communication of rank r = the sum, over r's slots, of the slot kind's
// exposed_comm (verifier/slot_timing.hpp): EP all-to-all time during which the rank's compute stream is
// idle inside a slot, a pair counting both chunks' all-to-alls against both chunks' compute. Idle time
// between slots (bubbles, PP transfers) is not communication time and is not counted; the rank's network
// time is the sum of its slots' all-to-all costs, and hidden share = 1 - exposed / network.
#include "model/chunk_dag.hpp"
#include "model/costs.hpp"
#include "model/overlap_pattern.hpp"
#include "model/schedule.hpp"
#include "verifier/chunk_best.hpp"
#include "verifier/slot_timing.hpp"

#include <array>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp {

struct SlotKindTiming {
    SlotKind kind = SlotKind::F;
    SlotDag dag;
    StreamOrder order;
    SlotTimeline timeline;
    std::string method;                 // "pattern deepseek", or how `best` was found
    // `best` only: proven optimal (value = lower bound), the lower bound, search nodes, and for a bound
    // proved by Z3 the SMT-LIB2 query "no order finishes earlier" that a stock z3 answers unsat.
    bool optimal = true;
    std::optional<Rational> lower_bound;
    std::uint64_t search_nodes = 0;
    std::string certificate_smt2;
};

struct ChunkTable {
    ChunkCosts chunk;
    PatternSpec pattern;
    std::array<SlotKindTiming, kSlotKinds> kinds;

    const SlotKindTiming& of(SlotKind kind) const { return kinds[static_cast<size_t>(kind)]; }
    Costs costs() const;  // the derived op costs (see the header)
};

// How `best` is computed for one slot kind. The default: exhaustive search (verifier/chunk_best.hpp),
// throwing ChunkBestUndecided when it runs out of budget; the CLI passes the solver's Z3 fallback.
using BestSolver = std::function<SlotKindTiming(const SlotDag& dag, const Rational& slowdown)>;
struct ChunkBestUndecided : std::runtime_error {
    using std::runtime_error::runtime_error;
};
SlotKindTiming best_by_exhaustive_search(const SlotDag& dag, const Rational& slowdown, const BestSearchOptions& options = {});

// Throws PatternError for a custom pattern that cannot run (model/overlap_pattern.hpp).
ChunkTable derive_chunk_table(const ChunkCosts& chunk, const PatternSpec& pattern, const BestSolver& best = {});
SlotKindTiming time_slot_kind(SlotKind kind, const ChunkCosts& chunk, const PatternSpec& pattern, const BestSolver& best = {});

struct ChunkExposure {
    std::vector<Rational> exposed;   // per rank
    std::vector<Rational> network;   // per rank: all-to-all time of its slots
    std::optional<Rational> hidden_share(size_t rank) const;  // nullopt when the rank has no network time
    Rational total_exposed() const;
    Rational total_network() const;
};
ChunkExposure exposure_per_rank(const Schedule& schedule, const ChunkTable& table);

}  // namespace pp
