#pragma once
// Symbolic costs. Every start and end time of a dataflow schedule is a longest path, i.e. a maximum of
// non-negative integer combinations of the cost variables F, I, W, B, FB and comm (a "max-plus polynomial",
// or tropical polynomial, of linear forms). This file holds:
//   * LinForm: an integer linear form over the six cost variables;
//   * CostRegion: the cost space the forms are compared on, a polyhedral cone given by linear constraints
//     (the stated assumptions), with its extreme rays. A linear form is >= another on the whole cone iff
//     it is >= on every extreme ray, so forms are compared exactly by their values on the rays;
//   * MaxPoly: max of linear forms, pruned of forms dominated on the region (exactly the same function);
//   * symbolic_simulate: the simulator's longest path with MaxPoly values.
// Times are homogeneous in the costs (scaling every cost scales every time), which is why a cone suffices.
#include "model/costs.hpp"
#include "model/dag.hpp"
#include "model/rational.hpp"
#include "model/schedule.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pp {

enum class CostVar : int { F = 0, I = 1, W = 2, B = 3, FB = 4, comm = 5 };
inline constexpr int kCostVars = 6;
const char* cost_var_name(int index);
int cost_var_index(const std::string& name);  // -1 when not a cost variable ("F&B" is accepted for FB)

using CostPoint = std::array<Rational, kCostVars>;

struct LinForm {
    std::array<std::int64_t, kCostVars> c{};

    static LinForm var(CostVar v) {
        LinForm f;
        f.c[static_cast<int>(v)] = 1;
        return f;
    }
    LinForm& operator+=(const LinForm& o) {
        for (int i = 0; i < kCostVars; ++i) c[i] += o.c[i];
        return *this;
    }
    LinForm& operator-=(const LinForm& o) {
        for (int i = 0; i < kCostVars; ++i) c[i] -= o.c[i];
        return *this;
    }
    friend LinForm operator+(LinForm a, const LinForm& b) { return a += b; }
    friend LinForm operator-(LinForm a, const LinForm& b) { return a -= b; }
    friend LinForm operator*(std::int64_t k, LinForm a) {
        for (auto& x : a.c) x *= k;
        return a;
    }
    friend bool operator==(const LinForm&, const LinForm&) = default;
    friend auto operator<=>(const LinForm&, const LinForm&) = default;
    bool zero() const {
        for (auto x : c)
            if (x != 0) return false;
        return true;
    }
    Rational eval(const CostPoint& point) const;
};

// "2*FB + B - 3*W"; in DeepSeek's basis (I written as B - W) when deepseek_basis is set and B = I + W holds.
std::string format_form(const LinForm& form, bool deepseek_basis = false);
// A form with rational coefficients (formulas such as (P/2-1)*(...) for odd P/2 are still integral, but
// claims may divide).
struct RatForm {
    std::array<Rational, kCostVars> c{};
    Rational constant{0};
};
std::string format_ratform(const RatForm& form, bool deepseek_basis = false);

// One linear constraint  a . x  REL  b  over the cost variables.
struct CostConstraint {
    enum Rel { Ge, Gt, Eq };
    std::array<Rational, kCostVars> a{};
    Rational b{0};
    Rel rel = Ge;
    std::string text;  // as stated
    bool homogeneous() const { return b == Rational(0); }
};

// The cost space under the stated assumptions.
struct CostRegion {
    std::vector<CostConstraint> constraints;
    // Extreme rays of the closed homogeneous part, scaled to coprime integers. Filled by finish().
    std::vector<std::array<std::int64_t, kCostVars>> rays;
    bool b_is_i_plus_w = false;  // the constraint B = I + W is among the assumptions
    bool comm_zero = false;

    // The default assumptions: F, I, W > 0, B = I + W, 0 < FB <= F + B, and comm = 0 (comm >= 0 when comm_free).
    // comm_free = false adds comm = 0.
    static CostRegion standard(bool comm_free);
    void add(CostConstraint constraint);
    // Computes the rays; throws std::invalid_argument if the cone is not pointed or empty.
    void finish();
    std::vector<std::string> describe() const;
    // The values of a form on the rays (exact integers).
    std::vector<std::int64_t> ray_values(const LinForm& form) const;
    // Whether some ray gives the variable a non-zero value (needs finish()).
    bool may_be_positive(CostVar v) const;
    // A point strictly inside (the sum of the rays, plus a small multiple of each ray when weights given).
    CostPoint interior_point(const std::vector<std::int64_t>& weights = {}) const;
    bool contains(const CostPoint& point) const;
};

// max over a set of linear forms; empty = minus infinity. Forms dominated on the region are dropped.
struct MaxPoly {
    std::vector<LinForm> forms;
    std::vector<std::vector<std::int64_t>> values;  // ray values of each form, parallel to forms

    static MaxPoly of(const LinForm& form, const CostRegion& region);
    bool empty() const { return forms.empty(); }
    void shift(const LinForm& add, const CostRegion& region);  // + add (a linear form)
    void merge(const MaxPoly& other);                           // max, not yet pruned
    void prune();
    // max of two pruned polynomials, pruned: the same result as merge + prune, faster when both share forms.
    void merge_pruned(const MaxPoly& other);
    Rational eval(const CostPoint& point) const;
    // Identical after pruning (a sufficient test of equality as functions on the region).
    bool same_forms(const MaxPoly& other) const;
    std::string str(bool deepseek_basis = false) const;
    // The same after dropping what the region's equalities make irrelevant (normalize_form), deduplicated.
    std::string str(const CostRegion& region, bool deepseek_basis = true) const;
};

// comm dropped when the region says comm = 0; B written as I + W when it says B = I + W.
LinForm normalize_form(LinForm form, const CostRegion& region);

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
    std::vector<MaxPoly> start, end;  // per global slot id
    std::vector<LinForm> busy;        // per rank
    MaxPoly makespan;
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
