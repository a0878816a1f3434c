#pragma once
// A re-checkable SMT-LIB2 form of the critical-path lower bound, for `search --emit-proof` when the
// longest paths alone rule out "objective <= bound" and no Z3 query was needed.
//
// The file holds only the chain behind the bound: a start time per op on the longest path through
// `task`, one difference constraint per precedence edge of the chain (dependency, FIFO or memory edge,
// each named), "starts >= 0", and "the last op ends by `bound`". Every constraint is one the full
// problem also has, so an unsat answer for the chain is an unsat answer for the whole instance.
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

#include <optional>
#include <string>

namespace pp {

// nullopt unless the plain (unstrengthened) bounds put head + duration + tail of `task` above `bound`
// for the makespan objective without pairs -- the cases where the chain is the whole argument.
std::optional<std::string> critical_path_smt2(const Instance& inst, const TaskBounds& plain, int task, Ticks bound);

}  // namespace pp
