#pragma once
// Broken copies of a schedule for property tests: one of several edits at random positions, as a user's
// hand-edited file would have (swapped, duplicated, dropped, misplaced ops, an F fused with a later
// backward, an op out of range). Some edits leave the schedule valid (two independent slots swapped).
#include "model/schedule.hpp"

#include <random>

namespace test {

inline pp::Schedule mutated(const pp::Schedule& base, std::mt19937& rng) {
    using namespace pp;
    Schedule s = base;
    auto pick_rank = [&] {
        std::uniform_int_distribution<int> d(0, static_cast<int>(s.ranks.size()) - 1);
        for (int tries = 0; tries < 20; ++tries)
            if (int r = d(rng); !s.ranks[r].empty()) return r;
        return 0;
    };
    auto pick = [&](int r) { return std::uniform_int_distribution<size_t>(0, s.ranks[r].size() - 1)(rng); };
    const int r = pick_rank();
    if (s.ranks[r].empty()) return s;
    switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0: std::swap(s.ranks[r][pick(r)], s.ranks[r][pick(r)]); break;              // order reversed
        case 1: s.ranks[r].insert(s.ranks[r].begin() + static_cast<long>(pick(r)), s.ranks[r][pick(r)]); break;  // duplicate
        case 2: s.ranks[r].erase(s.ranks[r].begin() + static_cast<long>(pick(r))); break;  // missing
        case 3: {                                                                          // misplaced
            const int other = pick_rank();
            const size_t k = pick(r);
            s.ranks[other].push_back(s.ranks[r][k]);
            s.ranks[r].erase(s.ranks[r].begin() + static_cast<long>(k));
            break;
        }
        case 4: {  // an F fused with a later backward of the same rank (a pair)
            auto& slots = s.ranks[r];
            for (size_t k = 0; k + 1 < slots.size(); ++k)
                if (!slots[k].is_pair() && slots[k].ops[0].kind == OpKind::F)
                    for (size_t j = k + 1; j < slots.size(); ++j)
                        if (!slots[j].is_pair() && is_backward(slots[j].ops[0].kind)) {
                            slots[k] = Slot::pair(slots[k].ops[0], slots[j].ops[0]);
                            slots.erase(slots.begin() + static_cast<long>(j));
                            return s;
                        }
            break;
        }
        default: {  // an op that names a micro-batch the placement does not have
            Slot& slot = s.ranks[r][pick(r)];
            slot.ops[0].microbatch += 1000;
            break;
        }
    }
    return s;
}


}  // namespace test
