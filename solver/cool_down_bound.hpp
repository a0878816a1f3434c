#pragma once
// The least idle a rank must have after its last forward (issue 13): an exact one-machine problem on
// the backward work that is left, solved by a small dynamic programme.
//
// Why: the memory-aware rank bound (lower_bound.cpp) counts the end of a rank as "after its last F the
// rank runs at most cap activations' I + W while at least g (that F's tail) must pass" -- an aggregate.
// On the V map it is short by exactly the W granularity: after the last F(b, M-1) of rank P-1, the
// input gradient I(b, M-1) comes back only after the round trip D = (P-1)(F+I+2comm), and after
// I(a, M-1) the chain to rank 0 needs E = (P-1)(I+comm)+W; the W's deferred past I(a, M-1) must cover
// E, the ones not deferred help fill D, and a whole W cannot be split between the two. At P=4, M=8,
// cap 8 (ZB 1.5B costs) this raises the bound by E - 7W = 39 to the best schedule known.
//
// Setting, for a rank r and a forward f of r that may be its last F (one per pipeline under FIFO: the
// last micro-batch at the last stage that pipeline has on r). Let t = end(f) when f is the last F.
//  1. After t the rank runs only I and W of the activations live at t, at most cap of them (nothing is
//     allocated after its last F starts, and the live count never exceeds the cap): the d activations
//     of f's micro-batch on r (their I and W all follow f) and at most cap - d "fillers", each either
//     an I followed by its W, or a W whose I ran before t.
//  2. Each op j of f's micro-batch on r starts >= t + rho(j), rho = the longest dependency path from
//     the end of f (ops on other ranks at their durations), and must be followed by tail(j) (valid
//     tails); a filler I is released at t and followed by at least the least tail of an I of r; a
//     filler W is released at t (after its I) with tail 0. Direct same-rank dependencies keep order.
//  3. The makespan C >= t + tail(f), and C >= end + tail of every op after t.
// So idle in [t, C] >= min over filler counts and orders of max(end, ends + tails, tail(f)) - work,
// which the programme below computes exactly for that relaxation: the true after-t sequence is one of
// the orders it enumerates, with releases and tails no smaller, and the same work. Fillers are
// identical, so the state is (filler I's, their W's, weight-only W's placed, which of f's ops are
// placed) with Pareto labels (time, latest delivery); when a label list grows too long two labels are
// merged into their componentwise minimum, which only weakens the result (still a lower bound).
// Applies only to ranks whose I's all cost the same and whose W's all cost the same (else: none).
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

#include <vector>

namespace pp {

struct CoolDownIdle {
    int last_forward = -1;    // the candidate f
    Ticks idle = 0;           // least idle of r in [end(f), C] if f is the last F of r
    int fillers_with_input = 0, fillers_weight_only = 0;  // an order that attains it
};

// One entry per candidate last forward of rank r; empty when the bound does not apply (no cap,
// unequal I or W costs on r, too many candidates or ops, a cap above 40 + the micro-batch's activations).
std::vector<CoolDownIdle> cool_down_idle(const Instance& inst, const TaskBounds& bounds, int rank);

// Longest dependency path from the end of task `from` to the start of every op of the same micro-batch and
// pipeline (ops at their least durations; other tasks: a negative sentinel below any real time). Only those 3
// ops per stage are kept, so a caller per rank stays linear in the pipeline, not in the instance.
struct Releases {
    std::vector<int> tasks;    // the micro-batch's ops, by task id
    std::vector<Ticks> value;  // value[k] for tasks[k]
    Ticks at(int task) const;  // the sentinel for a task of another micro-batch
};
Releases releases_after(const Instance& inst, int from);

}  // namespace pp
