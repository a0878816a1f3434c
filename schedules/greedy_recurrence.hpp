#pragma once
// What a finite check of a greedy generator's state recurrence answers (schedules/v_zb.hpp for v-zb's rounds,
// schedules/v1f1b.hpp for 1F1B-V's column sweep): from from_m on, one more period of period_m micro-batches
// inserts one block per rank, so the order is a periodic word for every M >= from_m (proofs/method.md §1c).
#include <string>

namespace pp {

struct GreedyRecurrence {
    bool holds = false;
    std::string failure;            // when !holds: the last M and period tried, and what did not repeat
    int from_m = 0;                 // the order is a periodic word for every M >= from_m
    int period_m = 0;               // e: micro-batches per period
    int runs_checked = 0;           // greedy runs checked (per residue class of M modulo e)
};

}  // namespace pp
