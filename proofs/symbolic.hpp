#pragma once
// Symbolic simulation: the simulator's longest path (verifier/simulate.hpp) with max-plus polynomials of the
// cost variables (proofs/maxpoly.hpp) in place of numbers, over a cost region (proofs/cost_space.hpp).
#include "model/costs.hpp"
#include "model/dag.hpp"
#include "model/schedule.hpp"
#include "proofs/cost_space.hpp"
#include "proofs/maxpoly.hpp"

#include <cstdint>
#include <vector>

namespace pp {

// Cost of each slot kind as a linear form: F, I, W, B; a pair costs FB.
LinForm slot_form(const Slot& slot);
// The concrete Costs at a point of cost space (B and FB set explicitly).
Costs costs_at(const CostPoint& point);
// The point of cost space of concrete uniform costs (B = full backward, FB = pair cost or F + B).
CostPoint point_of(const Costs& costs);

// A slot-level timed DAG: predecessor lists (with "pays comm") and a topological order.
struct TimedDag {
    std::vector<std::vector<std::pair<std::uint32_t, bool>>> preds;  // (pred slot, cross-rank)
    std::vector<std::uint32_t> topo;                                  // empty when cyclic
    bool acyclic() const { return topo.size() == preds.size(); }
};
TimedDag timed_dag(const ScheduleGraph& graph);

struct SymbolicTiming {
    std::vector<MaxPoly> start, end;  // per global slot id (end: see root; start: only with keep_start)
    // end time of slot v = end[root[v]] + offset[v]. Without SymbolicOptions::share, root[v] = v and offset 0; with
    // it, a slot proved to be another's end time plus a linear form shares that slot's polynomial (end[v] is then
    // left empty): the same function, one copy.
    std::vector<std::uint32_t> root;
    std::vector<LinForm> offset;
    std::vector<LinForm> busy;        // per rank
    MaxPoly makespan;
    // The end time of v as one polynomial (a copy when shared).
    MaxPoly end_of(std::uint32_t v, const CostRegion& region) const;
    // Whether end(b) == end(a) + shift form by form (O(1) when both share one polynomial).
    bool end_shifted(std::uint32_t a, std::uint32_t b, const LinForm& shift) const;
};
// Needs an acyclic graph (throws SimulationError otherwise).
SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region);
struct SymbolicOptions {
    bool keep_start = true;  // false: `start` is left empty (saves memory)
    // Shift reuse inside the instance, per rank (empty: none): slot (r, i), i >= period[r], is matched with slot
    // (r, i - period[r]); when it has the same duration and a non-empty predecessor list mapping element by element
    // (same cross-rank flags) onto that slot's, each predecessor's end time equal form by form to its counterpart's
    // plus `step` (checked), its start and end times are the counterpart's plus `step` - the polynomials
    // symbolic_simulate computes, because the recurrence is equivariant under adding one linear form to every
    // operand (see symbolic_simulate_reusing). Only a shortcut: the result is identical with or without it.
    std::vector<std::uint32_t> period;
    LinForm step;
    // Shifted slots share the polynomial they are a shift of (SymbolicTiming::root) instead of holding a copy.
    bool share = false;
};
SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                 const SymbolicOptions& options);

// A full symbolic timing of another instance, to take end times from (symbolic_simulate_reusing).
struct SymbolicReference {
    const Schedule* schedule = nullptr;
    const ScheduleGraph* graph = nullptr;
    const SymbolicTiming* timing = nullptr;
    TimedDag dag;  // timed_dag(*graph)
};
// What symbolic_simulate_reusing keeps of the instance it timed, for the next call (the previous instance).
struct SymbolicPrevious {
    bool valid = false;
    std::vector<std::uint32_t> rank_begin;
    TimedDag dag;
    std::vector<LinForm> duration;
    // Every slot's end time is *base[v] + offset[v] (base: the reference's or one computed by an earlier call).
    std::vector<const MaxPoly*> base;
    std::vector<LinForm> offset;
    MaxPoly makespan;
    std::vector<std::vector<MaxPoly>> store;  // the end times computed by the calls so far (base points into them)
};
// The reference's timing as the "previous instance" of a first symbolic_simulate_reusing call.
SymbolicPrevious symbolic_previous(const SymbolicReference& reference);
struct ReuseCounts {
    size_t taken = 0, shifted = 0, computed = 0;
};
// The same busy times and makespan as symbolic_simulate (identical polynomials), with `start` and `end` left
// EMPTY. Every slot's end time is, checked here slot by slot in topological order, one of:
//   * taken: slot (r, i) is matched with slot (r, i) of the reference, and has the same duration (slot_form),
//     a predecessor list that maps onto the reference slot's element by element (same order, same cross-rank
//     flags) and only taken predecessors. The longest-path recurrence then evaluates the same operations on the
//     same operands: the polynomial is identical (induction along the topological order), whatever the
//     instances are.
//   * shifted (when `previous` holds the instance timed before, and `step` is given): slot (r, i) is matched
//     with the previous instance's slot of rank r at the same distance from the rank's end; same duration, a
//     non-empty predecessor list mapping element by element (same cross-rank flags) onto that slot's, every
//     predecessor either shifted from exactly the matched slot or with an end time equal, form by form, to the
//     matched slot's plus `step`. The recurrence is equivariant under adding one linear form to every operand
//     (pruning, merging and the canonical order compare ray values and coefficient vectors, all moved alike),
//     so the end time is the previous one plus `step`, again identical to what symbolic_simulate computes.
//   * computed as in symbolic_simulate.
// When every rank's last slot is shifted from the previous instance's last slot, the makespan (the merge of those
// end times in rank order) is the previous makespan plus `step`, by the same equivariance.
// `previous` (optional) is read, then replaced by this instance's data.
SymbolicTiming symbolic_simulate_reusing(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                         const SymbolicReference& reference, SymbolicPrevious* previous = nullptr,
                                         const LinForm* step = nullptr, ReuseCounts* counts = nullptr);

}  // namespace pp
