#include "verifier/memory.hpp"

#include <algorithm>

namespace pp {
namespace {

// Integer units over the denominators of the two activation sizes, so the sweep is exact and cheap.
struct MemoryUnits {
    TimeScale scale;
    Ticks alloc = 1, free_at_i = 0, free_at_w = 1;
    explicit MemoryUnits(const ActivationModel& model) {
        scale.include(model.forward_alloc);
        scale.include(model.input_grad_free);
        alloc = scale.to_ticks(model.forward_alloc);
        free_at_i = scale.to_ticks(model.input_grad_free);
        free_at_w = alloc - free_at_i;
    }
    Ticks allocated(const Slot& slot) const {
        Ticks total = 0;
        for (const Op& op : slot)
            if (op.kind == OpKind::F) total += alloc;
        return total;
    }
    Ticks released(const Slot& slot) const {
        Ticks total = 0;
        for (const Op& op : slot) {
            if (op.kind == OpKind::I) total += free_at_i;
            if (op.kind == OpKind::W) total += free_at_w;
            if (op.kind == OpKind::B) total += alloc;
        }
        return total;
    }
};

}  // namespace

std::vector<Rational> activation_profile(const std::vector<Slot>& slots, const ActivationModel& activations) {
    const MemoryUnits units(activations);
    std::vector<Rational> profile;
    profile.reserve(slots.size());
    Ticks live = 0;
    for (const Slot& slot : slots) {
        live += units.allocated(slot);
        profile.push_back(units.scale.to_units(live));
        live -= units.released(slot);
    }
    return profile;
}

std::vector<Rational> peak_activations(const Schedule& schedule, const ActivationModel& activations) {
    const MemoryUnits units(activations);
    std::vector<Rational> peaks;
    for (const auto& slots : schedule.ranks) {
        Ticks live = 0, peak = 0;
        for (const Slot& slot : slots) {
            live += units.allocated(slot);
            peak = std::max(peak, live);
            live -= units.released(slot);
        }
        peaks.push_back(units.scale.to_units(peak));
    }
    return peaks;
}

}  // namespace pp
