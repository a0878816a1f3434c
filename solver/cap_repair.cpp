#include "solver/cap_repair.hpp"

#include <deque>

namespace pp {
namespace {

// One rank's slots (single ops) with every forward that would exceed the cap postponed; false when none
// had to wait.
bool repair_rank(std::vector<Slot>& slots, int cap) {
    std::vector<Slot> out;
    std::deque<Slot> waiting;
    int live = 0;
    bool moved = false;
    for (const Slot& slot : slots) {
        const OpKind kind = slot.ops[0].kind;
        if (kind == OpKind::F) {
            if (!waiting.empty() || live + 1 > cap) {
                waiting.push_back(slot);
                moved = true;
                continue;
            }
            ++live;
        }
        out.push_back(slot);
        if (kind != OpKind::W) continue;
        --live;
        while (!waiting.empty() && live + 1 <= cap) {
            out.push_back(waiting.front());
            waiting.pop_front();
            ++live;
        }
    }
    out.insert(out.end(), waiting.begin(), waiting.end());
    slots = std::move(out);
    return moved;
}

}  // namespace

std::optional<Schedule> repaired_to_cap(const Schedule& schedule, int cap) {
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots)
            if (slot.is_pair() || slot.ops[0].kind == OpKind::B) return std::nullopt;  // split first
    Schedule out = schedule;
    out.gaps.clear();
    bool moved = false;
    for (auto& slots : out.ranks) moved = repair_rank(slots, cap) || moved;
    if (!moved) return std::nullopt;
    return out;
}

}  // namespace pp
