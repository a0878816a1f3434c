#pragma once
// A periodic word cut at other places (proofs/method.md §3). The super-step potentials give every block slot of
// rank r the super-step j + sigma_r; when a rank's block starts part-way through what its neighbours' blocks do, no
// such sigma exists although a potential per slot does. Re-cutting that rank's block there fixes it:
//   prefix . B_0 ... B_{t-1} . S_t  =  (prefix . B_0[0:i]) . (B_j[i:] . B_{j+1}[0:i])_{j < t-1} . (B_{t-1}[i:] . S_t),
// the same instances from one block on, so the rotated word's origin is one block later.
#include "proofs/maxplus.hpp"

#include <optional>

namespace pp {

// The word with each rank's block rotated where the per-slot potentials of G_T step up (its instance at t is the
// given word's at t + 1), or nullopt when no per-slot potential exists or none steps up inside a block. Only a
// proposal: the rotated word is analysed and checked from scratch like any other.
std::optional<PeriodicWord> rotate_blocks_for_super_steps(const PeriodicWord& word, int T,
                                                          const TimingGraphOf& graph_of = {});

// The identity above with rank r's block cut at cuts[r] (0 <= cuts[r] < |block_r|; 0 keeps it): the word whose
// instance at t is `word`'s at t + 1.
PeriodicWord recut_word(const PeriodicWord& word, const std::vector<size_t>& cuts);

}  // namespace pp
