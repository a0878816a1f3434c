#include "verifier/memory.hpp"

#include <algorithm>
#include <type_traits>

namespace pp {
namespace {

// One stash size in integer ticks: what an F allocates, what its I releases, what its W releases.
struct StashTicks {
    Ticks alloc = 1, free_at_i = 0, free_at_w = 1;
};

// Integer units over the denominators of the activation sizes (each stage's, when they differ), so the sweep is
// exact and cheap.
struct MemoryUnits {
    TimeScale scale;
    StashTicks uniform;
    std::vector<std::vector<StashTicks>> per_stage;  // [pipeline][stage], when the sizes differ by stage
    explicit MemoryUnits(const ActivationModel& model) {
        auto each_size = [&](auto&& visit) {
            if (model.uniform()) return visit(Rational(1));
            for (const auto& stages : model.stage_scale)
                for (const Rational& s : stages) visit(s);
        };
        each_size([&](const Rational& s) {
            scale.include(model.forward_alloc * s);
            scale.include(model.input_grad_free * s);
        });
        auto ticks_of = [&](const Rational& s) {
            StashTicks t;
            t.alloc = scale.to_ticks(model.forward_alloc * s);
            t.free_at_i = scale.to_ticks(model.input_grad_free * s);
            t.free_at_w = t.alloc - t.free_at_i;
            return t;
        };
        if (model.uniform()) uniform = ticks_of(Rational(1));  // else the scale need not hold the unscaled sizes
        for (const auto& stages : model.stage_scale) {
            per_stage.emplace_back();
            for (const Rational& s : stages) per_stage.back().push_back(ticks_of(s));
        }
    }
    // The live count is a sum of at most two terms per op, each at most the largest alloc in size: machine
    // integers cannot overflow when 2 x ops x alloc stays inline.
    bool fits_machine(size_t ops) const {
        Ticks largest = per_stage.empty() ? uniform.alloc : Ticks(0);
        bool nonnegative = !per_stage.empty() || (uniform.free_at_i >= 0 && uniform.free_at_w >= 0);
        for (const auto& stages : per_stage)
            for (const StashTicks& t : stages) {
                largest = std::max(largest, t.alloc);
                nonnegative = nonnegative && t.free_at_i >= 0 && t.free_at_w >= 0;
            }
        return nonnegative && largest * Ticks(ops) * 2 <= Integer::kInlineMax;
    }
};

// The sweep in T = std::int64_t (when MemoryUnits::fits_machine) or T = Ticks.
template <class T>
struct Sweep {
    struct Sizes {
        T alloc, free_at_i, free_at_w;
    };
    Sizes uniform;
    std::vector<std::vector<Sizes>> per_stage;
    explicit Sweep(const MemoryUnits& u) : uniform(convert(u.uniform)) {
        for (const auto& stages : u.per_stage) {
            per_stage.emplace_back();
            for (const StashTicks& t : stages) per_stage.back().push_back(convert(t));
        }
    }
    static T convert(const Ticks& x) {
        if constexpr (std::is_same_v<T, Ticks>) return x;
        else return x.to_int64();
    }
    static Sizes convert(const StashTicks& t) { return {convert(t.alloc), convert(t.free_at_i), convert(t.free_at_w)}; }
    const Sizes& of(const Op& op) const {
        return per_stage.empty() ? uniform : per_stage.at(op.pipeline).at(op.stage);
    }
    // Per kind, what an op allocates when it starts and releases when it ends (F, I, W, B).
    T allocates(const Op& op) const { return op.kind == OpKind::F ? of(op).alloc : T(0); }
    T releases(const Op& op) const {
        switch (op.kind) {
            case OpKind::I: return of(op).free_at_i;
            case OpKind::W: return of(op).free_at_w;
            case OpKind::B: return of(op).alloc;
            default: return T(0);
        }
    }
    T allocated(const Slot& slot) const {
        T total = allocates(slot.ops[0]);
        if (slot.is_pair()) total += allocates(slot.ops[1]);
        return total;
    }
    T released(const Slot& slot) const {
        T total = releases(slot.ops[0]);
        if (slot.is_pair()) total += releases(slot.ops[1]);
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

std::vector<Rational> activation_profile(const Schedule& schedule, int rank, const ActivationModel& activations) {
    const auto& slots = schedule.ranks.at(static_cast<size_t>(rank));
    const MemoryUnits units(sizes_per_unit(schedule, activations));
    if (units.fits_machine(ops_in(slots))) return Sweep<std::int64_t>(units).profile(slots, units.scale);
    return Sweep<Ticks>(units).profile(slots, units.scale);
}

std::vector<Rational> peak_activations(const Schedule& schedule, const ActivationModel& activations) {
    const MemoryUnits units(sizes_per_unit(schedule, activations));
    size_t ops = 0;
    for (const auto& slots : schedule.ranks) ops = std::max(ops, ops_in(slots));
    if (units.fits_machine(ops)) return Sweep<std::int64_t>(units).peaks(schedule, units.scale);
    return Sweep<Ticks>(units).peaks(schedule, units.scale);
}

}  // namespace pp
