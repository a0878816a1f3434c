#pragma once
// Warm starts for the search: every schedule of the library (schedules/registry.hpp) that exists for
// the same placement. The search keeps those that verify under the cap and lie in its search space.
#include "model/placement.hpp"
#include "solver/search.hpp"

#include <string>
#include <vector>

namespace pp {

// Every library family that generates for the placement's P and M. Stops generating once a limit of the
// caller's (limits/deadline.hpp) has run out and returns what it has.
std::vector<WarmStart> generator_warm_starts(const Placement& placement);

// The named placements of `pipeproof search --placement`: "1f1b" (one stage per rank), "v" (two stages
// per rank on the V map), "interleaved:V" (V stages per rank, loop map), "dualpipe" (bidirectional, M
// even). Throws std::invalid_argument for anything else.
Placement placement_from_name(const std::string& name, int ranks, int microbatches);
bool is_placement_name(const std::string& name);

}  // namespace pp
