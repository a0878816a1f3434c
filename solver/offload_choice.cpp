#include "solver/offload_choice.hpp"

#include "limits/z3_check.hpp"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace pp {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxMemoryTerms = size_t{2} << 20;

z3::expr ticks(z3::context& ctx, const Ticks& value) { return ctx.int_val(value.to_string().c_str()); }

// Memory deltas and caps as integers over one denominator, so that the sums are exact.
struct MemoryUnits {
    Integer per_unit = 1;
    explicit MemoryUnits(const OffloadNetwork& net, const std::vector<Rational>& caps) {
        TimeScale common;  // the same lcm-of-denominators arithmetic as a time scale
        for (const auto& events : net.events)
            for (const auto& e : events) common.include(e.delta);
        for (const Rational& c : caps) common.include(c);
        per_unit = common.ticks_per_unit;
    }
    Integer of(const Rational& value) const {
        const Rational scaled = value * Rational(per_unit);
        return scaled.numerator() / scaled.denominator();  // whole by construction, and floor for a cap
    }
};

class ChoiceEncoding {
public:
    ChoiceEncoding(z3::context& ctx, const OffloadNetwork& net, const Rational& device_cap,
                   const std::optional<Rational>& host_cap)
        : ctx_(ctx), net_(net), solver_(ctx) {
        for (size_t k = 0; k < net.moves.size(); ++k) made_.push_back(ctx.bool_const(("move_" + std::to_string(k)).c_str()));
        for (size_t v = 0; v < net.nodes(); ++v) start_.push_back(ctx.int_const(("s_" + std::to_string(v)).c_str()));
        for (size_t v = 0; v < net.nodes(); ++v) end_.push_back(start_[v] + duration(v));
        add_dataflow();
        std::vector<Rational> caps{device_cap};
        if (host_cap) caps.push_back(*host_cap);
        const MemoryUnits units(net, caps);
        add_memory(units, false, units.of(device_cap));
        if (host_cap) add_memory(units, true, units.of(*host_cap));
    }

    z3::solver& solver() { return solver_; }

    // The moves a model makes.
    std::vector<bool> moves_of(const z3::model& model) const {
        std::vector<bool> out;
        for (const z3::expr& m : made_) out.push_back(model.eval(m, true).is_true());
        return out;
    }

    z3::expr makespan_at_most(const Ticks& bound) const {
        z3::expr_vector all(ctx_);
        for (std::uint32_t v = 0; v < net_.slots; ++v) all.push_back(end_[v] <= ticks(ctx_, bound));
        return z3::mk_and(all);
    }

private:
    z3::expr duration(size_t node) const {
        const z3::expr d = ticks(ctx_, net_.duration[node]);
        if (node < net_.slots) return d;
        return z3::ite(made_[(node - net_.slots) / 2], d, ctx_.int_val(0));
    }
    z3::expr guard(int move) const { return move < 0 ? ctx_.bool_val(true) : made_[static_cast<size_t>(move)]; }
    z3::expr time_of(std::uint32_t node, bool at_start) const { return at_start ? start_[node] : end_[node]; }

    // Each start is the latest of its active arcs, or 0: exactly the timing's longest path, so a memory bound that
    // holds here holds for the timing of the same choice.
    void add_dataflow() {
        for (size_t v = 0; v < net_.nodes(); ++v) {
            z3::expr_vector attained(ctx_);
            attained.push_back(start_[v] == 0);
            solver_.add(start_[v] >= 0);
            for (const auto& arc : net_.preds[v]) {
                const z3::expr term = time_of(arc.from, arc.from_start) + ticks(ctx_, arc.delay);
                solver_.add(z3::implies(guard(arc.move), start_[v] >= term));
                attained.push_back(guard(arc.move) && start_[v] == term);
            }
            solver_.add(z3::mk_or(attained));
        }
    }

    // At every allocation of the device (or the host), the live amount -- every active event at or before it,
    // at the same time those the sweep takes first included -- is at most the cap.
    void add_memory(const MemoryUnits& units, bool host, const Integer& cap) {
        for (const auto& events : net_.events)
            for (const auto& e : events) {
                if (e.host != host || e.delta <= Rational(0)) continue;
                const z3::expr at = time_of(e.node, e.at_start);
                z3::expr live = ctx_.int_val(0);
                for (const auto& x : events) {
                    if (x.host != host || x.delta == Rational(0)) continue;
                    // At the same time, the events the timing's sweep takes first (their tie order) count.
                    const z3::expr x_time = time_of(x.node, x.at_start);
                    const z3::expr counted = guard(x.move) && (x.tie <= e.tie ? x_time <= at : x_time < at);
                    live = live + z3::ite(counted, ctx_.int_val(units.of(x.delta).to_string().c_str()), ctx_.int_val(0));
                }
                solver_.add(z3::implies(guard(e.move), live <= ctx_.int_val(cap.to_string().c_str())));
            }
    }

    z3::context& ctx_;
    const OffloadNetwork& net_;
    z3::solver solver_;
    std::vector<z3::expr> made_, start_, end_;
};

OffloadPolicy restricted(OffloadPolicy policy, std::vector<Op> only) {
    policy.only = std::move(only);
    return policy;
}

bool within(const OffloadTiming& t, const Rational& device_cap, const std::optional<Rational>& host_cap) {
    return t.device_peak() <= device_cap && (!host_cap || t.host_peak() <= *host_cap);
}

std::vector<Op> moved_of(const OffloadNetwork& net, const std::vector<bool>& made) {
    std::vector<Op> moved;
    for (size_t k = 0; k < made.size(); ++k)
        if (made[k]) moved.push_back(net.moves[k].forward);
    return moved;
}

// A better first choice for the bisection: from the moves `made` (every one), leave one stash resident at a time
// while the caps still hold and the makespan does not grow (each step makes one move fewer, so at most n passes of
// n timings, each on the network already built).
void drop_moves_greedily(const OffloadNetwork& net, const OffloadPolicy& policy, const Rational& device_cap,
                         const limits::Deadline& deadline, std::vector<bool>& made, OffloadChoice& out) {
    for (bool dropped = true; dropped && !deadline.passed();) {
        dropped = false;
        for (size_t k = 0; k < made.size() && !deadline.passed(); ++k) {
            if (!made[k]) continue;
            made[k] = false;
            OffloadTiming timing = time_network(net, made);
            const Rational makespan = timing.scale.to_units(timing.makespan);
            if (!within(timing, device_cap, policy.host_memory) || makespan > out.makespan) {
                made[k] = true;
                continue;
            }
            out.makespan = makespan;
            out.timing = std::move(timing);
            dropped = true;
        }
    }
    out.moved = moved_of(net, made);
}

}  // namespace

const char* choice_status_name(ChoiceStatus status) {
    switch (status) {
        case ChoiceStatus::Optimal: return "OPTIMAL";
        case ChoiceStatus::Feasible: return "FEASIBLE";
        case ChoiceStatus::Infeasible: return "INFEASIBLE";
        case ChoiceStatus::Unknown: return "UNKNOWN";
    }
    return "?";
}

OffloadChoice choose_offloads(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                              const OffloadPolicy& policy, const Rational& device_cap, double seconds) {
    const auto deadline = limits::Deadline::after(seconds);
    const OffloadNetwork net = offload_network(schedule, costs, sizes, policy);
    OffloadChoice out;
    out.eligible = static_cast<int>(net.moves.size());
    auto take = [&](std::vector<Op> moved, OffloadTiming timing) {
        out.moved = std::move(moved);
        out.makespan = timing.scale.to_units(timing.makespan);
        out.timing = std::move(timing);
    };

    // Nothing moved: the plain timing, a lower bound for every choice; the answer when it fits.
    OffloadTiming none = time_network(net, std::vector<bool>(net.moves.size(), false));
    out.lower_bound = none.scale.to_units(none.makespan);
    if (within(none, device_cap, policy.host_memory)) {
        take({}, std::move(none));
        out.status = ChoiceStatus::Optimal;
        out.reason = "nothing needs to move: the schedule fits the cap as it is";
        return out;
    }
    std::vector<bool> made(net.moves.size(), true);
    if (OffloadTiming every = time_network(net, made); within(every, device_cap, policy.host_memory)) {
        take(moved_of(net, made), std::move(every));
        drop_moves_greedily(net, policy, device_cap, deadline, made, out);
    }

    // The memory constraints pair every allocation with every event of its rank: refuse an encoding past
    // kMaxMemoryTerms (about 1 KB of Z3 memory each) and keep what the greedy found.
    size_t terms = 0;
    for (const auto& events : net.events) {
        size_t allocations = 0;
        for (const auto& e : events) allocations += e.delta > Rational(0) ? 1 : 0;
        terms += allocations * events.size();
    }
    if (terms > kMaxMemoryTerms) {
        out.reason = fmt::format("the Z3 encoding would hold {} memory terms (at most {}): the greedy choice, not searched further",
                                 terms, kMaxMemoryTerms);
        out.status = out.timing ? ChoiceStatus::Feasible : ChoiceStatus::Unknown;
        return out;
    }
    z3::context ctx;
    ChoiceEncoding enc(ctx, net, device_cap, policy.host_memory);
    // One query: a choice with makespan <= bound (none: any), re-timed; true when sat.
    auto ask = [&](const std::optional<Ticks>& bound) -> std::optional<bool> {
        if (deadline.passed()) return std::nullopt;
        enc.solver().push();
        if (bound) enc.solver().add(enc.makespan_at_most(*bound));
        ++out.queries;
        const z3::check_result r = limits::check(enc.solver(), limits::CheckLimit{deadline, nullptr});
        std::optional<bool> answer;
        if (r == z3::sat) {
            std::vector<Op> moved = moved_of(net, enc.moves_of(enc.solver().get_model()));
            // Re-timed from the schedule, not from the network the encoding was built on.
            OffloadTiming timing = time_with_offload(schedule, costs, sizes, restricted(policy, moved));
            // The encoding is exact: its choice must time within the bound and keep the caps.
            if (!within(timing, device_cap, policy.host_memory) || (bound && timing.makespan * net.scale.ticks_per_unit >
                                                                                    *bound * timing.scale.ticks_per_unit))
                throw std::logic_error("offload choice: Z3's choice does not keep its bounds when re-timed");
            take(std::move(moved), std::move(timing));
            answer = true;
        } else if (r == z3::unsat) {
            answer = false;
        }
        enc.solver().pop();
        return answer;
    };

    if (!out.timing) {
        const auto any = ask(std::nullopt);
        if (!any) {
            out.status = ChoiceStatus::Unknown;
            out.reason = "time limit reached before any choice was found";
            return out;
        }
        if (!*any) {
            out.status = ChoiceStatus::Infeasible;
            out.reason = "no choice of stashes to move keeps the cap (Z3: unsat)";
            return out;
        }
    }
    Ticks low = net.scale.to_ticks(out.lower_bound), high = net.scale.to_ticks(out.makespan);
    while (low < high) {
        const Ticks mid = low + (high - low) / 2;
        const auto answer = ask(mid);
        if (!answer) break;
        if (*answer) high = net.scale.to_ticks(out.makespan);
        else low = mid + 1;
    }
    out.lower_bound = net.scale.to_units(low);
    out.status = low == high ? ChoiceStatus::Optimal : ChoiceStatus::Feasible;
    out.reason = low == high ? "Z3: no choice is faster (unsat one tick below)" : "time limit reached";
    if (low == high && out.lower_bound == out.makespan && out.queries == 0) out.reason = "the plain makespan is reached";
    return out;
}

}  // namespace pp
