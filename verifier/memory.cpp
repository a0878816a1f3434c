#include "verifier/memory.hpp"

#include <algorithm>
#include <type_traits>

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
    // The live count is a sum of at most two terms per op, each at most alloc in size: machine integers
    // cannot overflow when 2 x ops x alloc stays inline.
    bool fits_machine(size_t ops) const {
        return free_at_i >= 0 && free_at_w >= 0 && alloc * Ticks(ops) * 2 <= Integer::kInlineMax;
    }
};

// The sweep in T = std::int64_t (when MemoryUnits::fits_machine) or T = Ticks.
template <class T>
struct Sweep {
    T alloc, free_at_i, free_at_w;
    explicit Sweep(const MemoryUnits& u) : alloc(convert(u.alloc)), free_at_i(convert(u.free_at_i)), free_at_w(convert(u.free_at_w)) {}
    static T convert(const Ticks& x) {
        if constexpr (std::is_same_v<T, Ticks>) return x;
        else return x.to_int64();
    }
    // Per kind, what an op allocates when it starts and releases when it ends (F, I, W, B).
    T allocates(OpKind kind) const { return kind == OpKind::F ? alloc : T(0); }
    T releases(OpKind kind) const {
        switch (kind) {
            case OpKind::I: return free_at_i;
            case OpKind::W: return free_at_w;
            case OpKind::B: return alloc;
            default: return T(0);
        }
    }
    T allocated(const Slot& slot) const {
        T total = allocates(slot.ops[0].kind);
        if (slot.is_pair()) total += allocates(slot.ops[1].kind);
        return total;
    }
    T released(const Slot& slot) const {
        T total = releases(slot.ops[0].kind);
        if (slot.is_pair()) total += releases(slot.ops[1].kind);
        return total;
    }
    std::vector<Rational> profile(const std::vector<Slot>& slots, const TimeScale& scale) const {
        std::vector<Rational> out;
        out.reserve(slots.size());
        T live(0);
        for (const Slot& slot : slots) {
            live += allocated(slot);
            out.push_back(scale.to_units(Ticks(live)));
            live -= released(slot);
        }
        return out;
    }
    std::vector<Rational> peaks(const Schedule& schedule, const TimeScale& scale) const {
        std::vector<Rational> out;
        for (const auto& slots : schedule.ranks) {
            T live(0), peak(0);
            for (const Slot& slot : slots) {
                live += allocated(slot);
                peak = std::max(peak, live);
                live -= released(slot);
            }
            out.push_back(scale.to_units(Ticks(peak)));
        }
        return out;
    }
};

size_t ops_in(const std::vector<Slot>& slots) { return 2 * slots.size(); }  // a bound: a slot has 1 or 2 ops

}  // namespace

std::vector<Rational> activation_profile(const std::vector<Slot>& slots, const ActivationModel& activations) {
    const MemoryUnits units(activations);
    if (units.fits_machine(ops_in(slots))) return Sweep<std::int64_t>(units).profile(slots, units.scale);
    return Sweep<Ticks>(units).profile(slots, units.scale);
}

std::vector<Rational> peak_activations(const Schedule& schedule, const ActivationModel& activations) {
    const MemoryUnits units(activations);
    size_t ops = 0;
    for (const auto& slots : schedule.ranks) ops = std::max(ops, ops_in(slots));
    if (units.fits_machine(ops)) return Sweep<std::int64_t>(units).peaks(schedule, units.scale);
    return Sweep<Ticks>(units).peaks(schedule, units.scale);
}

}  // namespace pp
