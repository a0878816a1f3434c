// Warm starts rewritten into the search space (solver/search_driver.hpp).
#include "solver/search_driver.hpp"

namespace pp::search_detail {

namespace {

// Does a slot's pair match the pairs the search forms? (F&B: F with a fused B; F&I: F with an I.)
bool pair_in_space(const Instance& inst, const Slot& slot) {
    if (!inst.pairs_allowed()) return false;
    return slot.ops[1].kind == (inst.fused_pairs() ? OpKind::B : OpKind::I);
}

}  // namespace

// An unpaired fused B is inside the search space when it costs at least I + W (then I immediately
// followed by W does as well); a pair must be of the kind the search forms.
std::string outside_search_space(const Instance& inst, const Schedule& s) {
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) {
            if (slot.is_pair() && !pair_in_space(inst, slot))
                return inst.pairs_allowed() ? std::string("pairs an F with ") + kind_letter(slot.ops[1].kind) +
                                                  " while the search pairs " + pair_kind_name(inst.problem.pair_kind)
                                            : "has overlapped pairs and no --overlap cost";
            if (slot.is_pair()) continue;
            const Op& op = slot.ops[0];
            if (op.kind != OpKind::B) continue;
            const auto& c = inst.problem.costs.of_block(inst.problem.placement.block_of(op.pipeline, op.stage));
            if (c.full_backward() < c.I + c.W) return "uses a fused B cheaper than I + W";
        }
    return "";
}

// The nearest schedule inside the search space: an unpaired fused B becomes I immediately followed by
// W; a pair of the wrong kind becomes what the search can form (F&B -> F&I then W, F&I -> F then I,
// any pair without --overlap -> its ops one after the other: the F first, or with backward_first the
// backward first, which frees an activation before the F takes one -- the order a tight cap needs).
Schedule into_search_space(const Instance& inst, const Schedule& s, bool backward_first) {
    Schedule out = s;
    out.gaps.clear();
    for (auto& slots : out.ranks) {
        std::vector<Slot> split;
        for (const Slot& slot : slots) {
            if (slot.is_pair() && pair_in_space(inst, slot)) {
                split.push_back(slot);
                continue;
            }
            const Op* backward = nullptr;
            for (const Op& op : slot)
                if (op.kind == OpKind::B || op.kind == OpKind::I) backward = &op;
            if (!backward || (!slot.is_pair() && backward->kind == OpKind::I)) {
                split.push_back(slot);
                continue;
            }
            const Op i{OpKind::I, backward->pipeline, backward->stage, backward->microbatch};
            const Op w{OpKind::W, backward->pipeline, backward->stage, backward->microbatch};
            if (slot.is_pair() && inst.pairs_allowed() && !inst.fused_pairs()) {
                split.push_back(Slot::pair(slot.ops[0], i));
            } else if (slot.is_pair() && backward_first) {
                split.push_back(Slot::single(i));
                if (backward->kind == OpKind::B) split.push_back(Slot::single(w));
                split.push_back(Slot::single(slot.ops[0]));
                continue;
            } else {
                if (slot.is_pair()) split.push_back(Slot::single(slot.ops[0]));
                split.push_back(Slot::single(i));
            }
            if (backward->kind == OpKind::B) split.push_back(Slot::single(w));
        }
        slots = std::move(split);
    }
    return out;
}

bool needs_rewrite(const Instance& inst, const Schedule& s) {
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) {
            if (slot.is_pair() ? !pair_in_space(inst, slot) : slot.ops[0].kind == OpKind::B) return true;
        }
    return false;
}

}  // namespace pp::search_detail
