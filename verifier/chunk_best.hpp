#pragma once
// The `best` overlap pattern, exactly, by exhaustive search (issue 11): the minimum slot duration over every
// pair of stream orders (one list per stream) that respects the data edges (model/chunk_dag.hpp), each
// timed by the slot timer's rule (verifier/slot_timing.hpp: start = max(stream free, inputs done)). Ties go
// to the smaller exposed communication. For larger L the solver's Z3 search (solver/chunk_best_z3.hpp)
// takes over where this one runs out of budget.
//
// Without contention (slowdown 0) the search is a branch and bound over the orders in a canonical form:
// the components sorted by (start time, stream), compute first on a tie. Every pair of stream orders has
// exactly one such sequence (costs are positive, so two components of one stream never start together, and
// a component starts after each of its inputs and its stream predecessor started), and extending a
// sequence by a component whose inputs are placed gives that component's start from the prefix alone. A
// branch is cut when its lower bound -- for each stream, the later of its free time and the last start,
// plus its remaining work; for each ready component, its earliest start plus its longest path to the end
// -- cannot beat the best order found. The first incumbent is the DeepSeek order (its lists, data edges
// only). With slowdown > 0 start times depend on the overlap, so the search plainly enumerates the linear
// extensions of each stream, times every pair that can run, and keeps the best.
#include "model/chunk_dag.hpp"
#include "model/overlap_pattern.hpp"
#include "verifier/slot_timing.hpp"

#include <cstdint>
#include <string>

namespace pp {

struct BestSearchOptions {
    std::uint64_t node_budget = 20'000'000;  // search nodes (B&B) or timed order pairs (with slowdown)
};

struct BestOrder {
    StreamOrder order;        // data edges only, no extra edges
    SlotTimeline timeline;
    bool complete = false;    // the whole space was searched: the order is optimal
    std::uint64_t nodes = 0;  // search nodes, or order pairs timed
    std::string method;       // "branch and bound over canonical orders" | "enumeration of stream orders"
};

BestOrder best_order_exhaustive(const SlotDag& dag, const Rational& slowdown, const BestSearchOptions& options = {});

// The data-only order of the DeepSeek lists: always valid, the search's first incumbent.
StreamOrder data_only(const StreamOrder& order);

}  // namespace pp
