#pragma once
// Whether two schedules order the same work on every rank (`pipeproof equiv`): a port of a schedule against its
// reference, a file against the family that should have written it. Slot by slot, rank by rank: the same ops
// (kind, pipeline, stage, micro-batch; an overlapped pair as a pair) in the same order, on the same placement.
// Up to one renaming, reported when used: the ranks and every pipeline's stages reversed (r -> P-1-r,
// s -> S-1-s), how a V or DualPipe schedule reads when one of its writers counts ranks from the other end.
#include "model/schedule.hpp"

#include <optional>
#include <string>

namespace pp {

struct EquivalenceDifference {
    int rank = 0;              // in the first schedule
    long long slot_index = 0;  // 0-based, in that rank's order; -1 when the placements differ
    std::string first_slot, second_slot;  // as written ("0F7", "(0F7;7B3)"); empty past a rank's end
    SourceLoc first_loc, second_loc;
    std::string what;  // one sentence
};

struct Equivalence {
    bool equivalent = false;
    std::string renaming;  // "none" or "ranks and stages reversed" (when equivalent)
    long long ops = 0;     // ops compared (when equivalent)
    std::optional<EquivalenceDifference> difference;  // the first one without renaming (when not equivalent)
};

Equivalence compare_orders(const Schedule& first, const Schedule& second);

}  // namespace pp
