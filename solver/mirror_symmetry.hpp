#pragma once
// Mirror-symmetric schedules of a bidirectional placement (issue 13): an upper-bound engine and a
// bound on a named class, never a lower bound on the instance.
//
// DualPipe puts pipeline 0's stage s on rank s and pipeline 1's stage s on rank P-1-s. With the same
// costs per (stage, kind) in both pipelines, the map mu: (pipeline p, stage s, micro-batch m, kind) ->
// (pipeline 1-p, s, m, kind) together with the rank map r -> P-1-r carries the instance onto itself:
// every task onto a task of the mirrored rank with the same duration, every precedence edge (dependency,
// FIFO, memory) onto an edge with the same lag, every activation onto an activation. mirror_map() checks
// all of that on the instance as built, not on the placement's name.
//
// A schedule is mirror-symmetric when start(t) = start(mu(t)) for every task: rank P-1-r runs rank r's
// order with the pipelines swapped. DeepSeek's DualPipe is of that form. Tying the starts halves the
// free variables of the disjunctive encoding and removes the exchanges between mirrored ranks, so Z3
// decides "is there a symmetric schedule with makespan <= T" where the full query stays undecided
// (DualPipe P=6 M=12 cap 6, ZB 1.5B costs: a symmetric schedule at 592947 in 25 s, one comm below what
// the local search reached; P=8 M=16 cap 8: no symmetric schedule below 797230, unsat in 47 s).
//
// What an answer means. Sat: a schedule (re-verified and re-timed like every other). Unsat at T: no
// mirror-symmetric schedule has makespan <= T -- a statement about that class only; an asymmetric
// schedule may still do better, so it never raises the proven lower bound.
//
// The FIFO order and the memory edges stay in the restricted query without loss within the class:
// relabelling a symmetric schedule's micro-batches by start order inside every (pipeline, stage, kind)
// class (the argument in search_instance.hpp) gives class c and class mu(c) the same sorted starts,
// because they had the same multiset of starts; so the relabelled schedule is symmetric again.
#include "solver/search_instance.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

struct MirrorMap {
    std::vector<int> task;  // task -> its mirror (an involution)
    std::vector<int> rank;  // rank -> its mirror
};

// The mirror of the instance, when it maps the instance onto itself as described above; nullopt with
// `why_not` set otherwise (not two pipelines, unequal costs, pairs, a different objective ...).
std::optional<MirrorMap> mirror_map(const Instance& inst, std::string* why_not = nullptr);

// Tied starts for Z3Query::tied: tied[t] = mu(t) when mu(t) < t, else -1 (the smaller index is the
// representative).
std::vector<int> tied_starts(const MirrorMap& mirror);

}  // namespace pp
