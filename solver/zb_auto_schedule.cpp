#include "solver/zb_auto_schedule.hpp"

#include "solver/lower_bound.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace pp {
namespace {

constexpr int kF = 0, kI = 1, kW = 2;
constexpr OpKind kKinds[3] = {OpKind::F, OpKind::I, OpKind::W};

// One run of the heuristic: the state the reference keeps per stage, with exact quantised times.
class AutoScheduler {
public:
    AutoScheduler(const Instance& inst, const ZbAutoVariant& variant)
        : inst_(inst), v_(variant), P_(inst.problem.placement.ranks), M_(inst.problem.placement.pipelines[0].microbatches) {
        task_.assign(3, std::vector<std::vector<int>>(P_, std::vector<int>(M_, -1)));
        cost_.assign(3, std::vector<Ticks>(P_, 0));
        for (int k = 0; k < 3; ++k)
            for (int s = 0; s < P_; ++s) {
                for (int m = 0; m < M_; ++m) task_[k][s][m] = inst.task_of(Op{kKinds[k], 0, s, m});
                cost_[k][s] = inst.tasks[task_[k][s][0]].duration;
            }
        if (const auto counter = memory_counter(inst)) {
            mem_ = {counter->alloc, -counter->by_input, -counter->by_weight};
            cap_ = counter->cap;
        } else {
            mem_ = {1, 0, -1};
            cap_ = std::int64_t{3} * M_;  // the reference's default: never binding
        }
        count_.assign(3, std::vector<int>(P_, 0));
        stage_end_.assign(P_, 0);
        live_.assign(P_, 0);
        bubble_.assign(P_, 0);
        end_.assign(inst.size(), 0);
        orders_.assign(P_, {});
    }

    std::optional<ZbAutoOrders> run() {
        for (int i = 0; i < M_; ++i) {
            if (i == 0 ? !warm_up() : !steady(i)) return std::nullopt;
        }
        for (int s = 0; s < P_; ++s)
            while (count_[kW][s] < M_)
                if (!put(s, kW)) return std::nullopt;
        ZbAutoOrders out;
        for (int s = 0; s < P_; ++s) {
            const Ticks first_start = end_[task_[kF][s][0]] - cost_[kF][s];
            out.span = std::max(out.span, stage_end_[s] - first_start);
        }
        out.orders = std::move(orders_);
        out.end = std::move(end_);
        return out;
    }

private:
    // The next op of `kind` on stage s, timed as soon as possible after the stage's last op and its
    // predecessor on the neighbouring stage; false when it would exceed the cap (the reference asserts).
    bool put(int s, int kind) {
        const int mb = count_[kind][s];
        const int id = task_[kind][s][mb];
        if (live_[s] + mem_[kind] > cap_) return false;
        const Ticks cost = cost_[kind][s];
        const Ticks no_wait = stage_end_[s] + cost;
        Ticks end = no_wait;
        if (kind == kF && s > 0) end = std::max(end, end_[task_[kF][s - 1][mb]] + inst_.comm + cost);
        if (kind == kI && s + 1 < P_) end = std::max(end, end_[task_[kI][s + 1][mb]] + inst_.comm + cost);
        if (count_[kF][s] > 0) {
            bubble_[s] += end - no_wait;
            largest_bubble_ = std::max(largest_bubble_, bubble_[s]);  // bubbles only grow
        }
        stage_end_[s] = end;
        end_[id] = end;
        live_[s] += mem_[kind];
        ++count_[kind][s];
        orders_[s].push_back(id);
        return true;
    }

    const Ticks& largest_bubble() const { return largest_bubble_; }

    // Before an op whose input arrives at `arrival` on stage s: W's that end by then; then one more W into
    // the rest of the wait unless the wait is no bigger than the largest bubble minus this stage's (then only
    // in the "fill small bubbles" variant).
    void fill_wait(int s, const Ticks& arrival) {
        while (count_[kW][s] < count_[kI][s] && stage_end_[s] + cost_[kW][s] <= arrival) put(s, kW);
        if (count_[kW][s] < count_[kI][s] && stage_end_[s] < arrival) {
            const bool small = arrival - stage_end_[s] <= largest_bubble() - bubble_[s];
            if (!small || v_.fill_small_bubbles) put(s, kW);
        }
    }

    // W's until `kind` fits under the cap; false when no W is pending (the reference's "Cannot fit memory").
    bool make_room(int s, int kind) {
        while (live_[s] + mem_[kind] > cap_) {
            if (count_[kW][s] >= count_[kI][s]) return false;
            put(s, kW);
        }
        return true;
    }

    bool warm_up() {
        for (int s = 0; s < P_; ++s)
            if (!put(s, kF)) return false;
        // From the last stage back: when I(0) reaches stage s, and how many more F's stage s runs before it.
        std::vector<int> extra(P_, 0);
        Ticks arrival_end = end_[task_[kF][P_ - 1][0]] + cost_[kI][P_ - 1];  // end of I(0) on the stage after
        for (int s = P_ - 2; s >= 0; --s) {
            std::int64_t mem = live_[s];
            Ticks busy = stage_end_[s];
            const Ticks arrival = arrival_end + inst_.comm;
            while (count_[kF][s] + extra[s] < M_ && mem + mem_[kF] <= cap_) {
                if (v_.allow_bubble_before_first_i ? busy + cost_[kF][s] > arrival : busy >= arrival) break;
                mem += mem_[kF];
                busy += cost_[kF][s];
                ++extra[s];
            }
            arrival_end = std::max(busy, arrival) + cost_[kI][s];
        }
        // Strictly fewer extra F's on each stage than on the one before (as the reference: not below the
        // count that would run every F).
        for (int s = 1; s < P_; ++s)
            while (extra[s] > 0 && extra[s] >= extra[s - 1] && count_[kF][s] + extra[s] < M_) --extra[s];
        for (int s = 0; s < P_; ++s)
            for (int k = 0; k < extra[s]; ++k)
                if (!put(s, kF)) return false;
        for (int s = P_ - 1; s >= 0; --s)
            if (!put(s, kI)) return false;
        return true;
    }

    bool steady(int i) {
        std::vector<int> want(P_, 0);
        for (int s = 0; s < P_; ++s) {
            if (count_[kF][s] >= M_) continue;
            if (v_.prioritise_i && s + 1 < P_ && count_[kF][s] >= count_[kF][s + 1] + 2) {
                // When the next stage could have run its next F and I and sent the gradient back.
                const Ticks next_ready = stage_end_[s + 1] + cost_[kF][s + 1] + cost_[kI][s + 1] + inst_.comm;
                if (stage_end_[s] >= next_ready) continue;
                // This stage's F, with the W's the cap would force before it.
                Ticks forced_w = 0;
                std::int64_t mem = live_[s] + mem_[kF];
                for (int k = 0; mem > cap_ && count_[kW][s] + k < count_[kI][s]; ++k) {
                    forced_w += cost_[kW][s];
                    mem += mem_[kW];
                }
                if (stage_end_[s] + cost_[kF][s] + forced_w <= next_ready) {
                    want[s] = 1;
                    continue;
                }
                if (next_ready - stage_end_[s] <= largest_bubble() - bubble_[s]) continue;
            }
            want[s] = 1;
        }
        for (int s = P_ - 2; s >= 0; --s) want[s] = std::min(want[s], want[s + 1]);
        for (int s = 0; s < P_; ++s) {
            if (want[s] == 0) continue;
            if (!make_room(s, kF)) return false;
            if (s > 0) fill_wait(s, end_[task_[kF][s - 1][count_[kF][s]]] + inst_.comm);
            if (!put(s, kF)) return false;
        }
        for (int s = P_ - 1; s >= 0; --s) {
            if (count_[kI][s] != i) return false;  // the reference asserts it; never seen
            if (!make_room(s, kI)) return false;
            if (s + 1 < P_) fill_wait(s, end_[task_[kI][s + 1][i]] + inst_.comm);
            if (s == 0 && count_[kF][s] == M_)
                while (count_[kW][s] < count_[kI][s]) put(s, kW);
            if (!put(s, kI)) return false;
        }
        return true;
    }

    const Instance& inst_;
    ZbAutoVariant v_;
    int P_, M_;
    std::vector<std::vector<std::vector<int>>> task_;  // [kind][stage][mb]
    std::vector<std::vector<Ticks>> cost_;             // [kind][stage]
    std::array<std::int64_t, 3> mem_{};                // change of live units per kind
    std::int64_t cap_ = 0;
    std::vector<std::vector<int>> count_;              // [kind][stage]: ops put so far
    std::vector<Ticks> stage_end_, bubble_;
    Ticks largest_bubble_ = 0;                         // the reference's get_max_bubble(), kept as it grows
    std::vector<std::int64_t> live_;
    std::vector<Ticks> end_;
    std::vector<std::vector<int>> orders_;
};

}  // namespace

std::string ZbAutoVariant::name() const {
    std::string s = "zb-auto(";
    s += allow_bubble_before_first_i ? "bubble before I0" : "no bubble before I0";
    s += prioritise_i ? ", prioritise I" : "";
    s += fill_small_bubbles ? ", fill small bubbles" : "";
    return s + ")";
}

std::vector<ZbAutoVariant> ZbAutoVariant::all() {
    std::vector<ZbAutoVariant> out;
    for (bool allow : {true, false})
        for (bool prioritise : {true, false})
            for (bool fill : {true, false}) out.push_back({allow, prioritise, fill});
    return out;
}

bool zb_auto_applies(const Instance& inst) {
    const Placement& pl = inst.problem.placement;
    if (inst.pairs_allowed() || pl.pipeline_count() != 1 || pl.pipelines[0].stages() != pl.ranks) return false;
    for (int s = 0; s < pl.ranks; ++s)
        if (pl.rank_of(0, s) != s) return false;
    return pl.pipelines[0].microbatches >= 1;
}

std::optional<ZbAutoOrders> zb_auto_orders(const Instance& inst, const ZbAutoVariant& variant) {
    if (!zb_auto_applies(inst)) return std::nullopt;
    return AutoScheduler(inst, variant).run();
}

std::optional<NamedSchedule> zb_auto_schedule(const Instance& inst, std::chrono::steady_clock::time_point deadline) {
    // The heuristic's own clock is as-soon-as-possible timing over the same edges (the tests hold it to
    // time_orders), so its end times give the objective without re-timing every variant.
    std::optional<ZbAutoOrders> best;
    Ticks best_value = 0;
    std::string best_name;
    for (const ZbAutoVariant& v : ZbAutoVariant::all()) {
        if (best && std::chrono::steady_clock::now() >= deadline) break;
        auto orders = zb_auto_orders(inst, v);
        if (!orders) continue;
        const Ticks value = objective_of(inst, orders->end);
        if (!best || value < best_value) best = std::move(orders), best_value = value, best_name = v.name();
    }
    if (!best) return std::nullopt;
    std::vector<Ticks> start(inst.size());
    for (size_t t = 0; t < inst.size(); ++t) start[t] = best->end[t] - inst.tasks[t].duration;
    return NamedSchedule{best_name, schedule_from_starts(inst, start, {})};
}

}  // namespace pp
