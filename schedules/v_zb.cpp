// V-ZB: the zero-bubble V schedule whose order adapts to the costs, as sail-sg/zero-bubble-pipeline-parallelism
// @39f2c186 builds it for `--zero-bubble-v-schedule` with mem-setup `zb` (the default):
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py, PipelineGraph(P, M, f, b, w, c, f_mem, b_mem, w_mem,
// max_mem).create_schedule (L282-322) with try_v_schedule (L31-252). Written from tests/data/v-families/
// ALGORITHMS.md ("V-ZB"); conformance: tests/test_v_families.cpp against the reference's own orders (five cost
// sets) in tests/data/v-families/. This is not schedules/zbv.cpp (PyTorch's fixed ZB-V pattern).
//
// Algorithm: a greedy simulation in exact time (integer ticks on the costs' common denominator: it compares times). Warm-up: F c0 down the ranks, then
// up the V with as many extra F c0 per rank as fit before F c1 arrives within the memory; then ranks catch up
// alternately on F c0 and F c1. Steady state and drain, 2M rounds: each rank places its next backward (I c1
// going up the ranks, or I c0 going down once its input is there), then its next forward; before each, pending
// W's (FIFO over both chunks) fill the idle time until the input arrives, and one more W if the wait would raise
// the rank's bubble above the largest. The bubble counted is each rank's idle time after its first F. Four
// variants (W before forwards or not, before I c1 or not), each retried with its per-rank bubbles as the
// "approved" ones while that lowers the largest; the smallest largest bubble wins (first on ties).
//
// Parameters: costs F, I (the reference's B), W and comm, one set for every stage (GenerateParams::costs; default
// F = I = W = 1, comm = 0, the costs pipeproof times at when none are given -- the reference's runtime orders for
// F = B = W = 1000, comm = 1 before it has profiled: pass --costs F=1000,I=1000,W=1000,comm=1 for that order).
// Memory: F allocates f_mem, I frees b_mem, W frees the rest (GenerateParams::activation_sizes: F = f_mem, I =
// -b_mem; default F = 1, I = 1/2, the reference's test sizes f_mem = 2, b_mem = w_mem = -1; the runtime's sizes
// 34h+5as, -(2h+5as), -32h gave the same orders everywhere tried), limit max_mem (GenerateParams::memory_limit,
// default 2P x f_mem as the reference's).
//
// Preconditions: P >= 1, M >= 1, V unset or 2 (the scheduler accepts every such instance; the runtime also asserts
// P > 1); one cost set (per-block costs are refused: the reference takes one median f, b, w); a positive limit
// (the reference reads 0 as "not given"). A limit the greedy cannot keep fails, as the reference's assertion does.
// The reference's memory deltas need not sum to zero; ours do (F allocates what I and W release), as at runtime.
#include "schedules/families.hpp"
#include "schedules/v_families.hpp"

#include "limits/deadline.hpp"

#include <array>
#include <deque>
#include <optional>

namespace pp {
namespace {

// Lanes, as the reference indexes count[] and its node ids (cat * 2 + chunk, backward chunks flipped).
constexpr int kF0 = 0, kF1 = 1, kI1 = 2, kI0 = 3, kW1 = 4, kW0 = 5, kLanes = 6;

// Exact arithmetic on a common denominator: the costs and comm times L (the least common multiple of their
// denominators) and the memory sizes and limit times their own such L are Integers (64-bit while they fit,
// arbitrary precision past that). Every comparison the greedy makes is linear and homogeneous in the costs (in the
// memory sizes), so it reads the same on these scales -- the reference's -1 for "not placed yet" included, which
// becomes -L.
using Ticks = Integer;

struct Setup {
    int P = 0, M = 0;
    Ticks f, b, w, c, unit;            // costs, comm, and 1 cost unit, in ticks
    Ticks f_mem, b_mem, w_mem, max_mem;  // memory deltas and limit, in the memory's own unit
    Rational limit, usual_limit;       // as given, for messages
    const Ticks& cost(int lane) const { return lane < kI1 ? f : lane < kW1 ? b : w; }
    const Ticks& mem(int lane) const { return lane < kI1 ? f_mem : lane < kW1 ? b_mem : w_mem; }
};

Integer lcm_of_denominators(const std::vector<Rational>& values) {
    Integer l(1);
    for (const Rational& v : values) l = l / gcd(l, v.denominator()) * v.denominator();
    return l;
}

Integer in_ticks(const Rational& value, const Integer& scale) { return value.numerator() * (scale / value.denominator()); }

struct Result {
    std::vector<std::vector<std::pair<int, int>>> order;  // per rank: (lane, micro-batch)
    Ticks max_bubble;
};

[[noreturn]] void reference_fails(const Setup& s, const std::string& what) {
    throw GenerateError("v-zb: the reference's greedy (zbv.py try_v_schedule) fails at P=" + std::to_string(s.P) +
                        ", M=" + std::to_string(s.M) + ": " + what +
                        (s.limit < s.usual_limit ? " (the memory limit " + format_rational(s.limit) + " is below the default " +
                                                       format_rational(s.usual_limit) + " = 2P activations)"
                                                 : std::string()));
}

// One try_v_schedule(fill_f, fill_b, approved_bubble).
class Try {
public:
    Try(const Setup& setup, bool fill_f, bool fill_b, std::vector<Ticks> approved)
        : s_(setup), fill_f_(fill_f), fill_b_(fill_b), approved_(std::move(approved)) {
        max_approved_ = approved_[0];
        for (const Ticks& a : approved_) max_approved_ = std::max(max_approved_, a);
        const int P = s_.P;
        count_.assign(P, {});
        cur_.assign(P, Ticks(0));
        mem_.assign(P, Ticks(0));
        bubble_.assign(P, Ticks(0));
        pending_w_.assign(P, {});
        end_.assign(kLanes, std::vector<std::vector<Ticks>>(P));
        result_.order.assign(P, {});
    }

    Result run() {
        warm_up();
        for (int round = 0; round < 2 * s_.M; ++round) {
            steady_backwards();
            steady_forwards();
        }
        for (int i = 0; i < s_.P; ++i)
            while (!pending_w_[i].empty()) put_w(i);
        result_.max_bubble = max_bubble(-1);
        // Retried with this try's bubbles as the approved ones, while that lowers the largest.
        if (max_approved_ < Ticks(0) || result_.max_bubble < max_approved_) {
            Result again = Try(s_, fill_f_, fill_b_, bubble_).run();
            if (again.max_bubble < result_.max_bubble) return again;
        }
        return std::move(result_);
    }

private:
    bool placed(int lane, int rank, int mb) const { return mb < count_[rank][lane]; }
    // end_time[id], -1 (cost unit) while the op is not placed.
    Ticks end_or_minus_one(int lane, int rank, int mb) const {
        return placed(lane, rank, mb) ? end_[lane][rank][mb] : -s_.unit;
    }

    // get_max_stage_bubble: the largest bubble of any rank (at least 0) and, for a rank, its headroom under the
    // largest approved bubble. Bubbles only grow, so their largest is kept as they do.
    Ticks max_bubble(int rank) const {
        return rank >= 0 ? std::max(largest_bubble_, max_approved_ - approved_[rank]) : largest_bubble_;
    }

    // put(): the rank's next op of `lane`, at the end of the rank or when its input arrives.
    void put(int lane, int i) {
        limits::poll("generating v-zb");  // a run's time limit (search's warm starts) stops it
        const int mb = count_[i][lane];
        if (mb >= s_.M) reference_fails(s_, "it places a micro-batch past M");
        if (mem_[i] + s_.mem(lane) > s_.max_mem)
            reference_fails(s_, "an op would exceed the memory limit " + format_rational(s_.limit) +
                                    " (the reference asserts mem + delta <= max_mem); raise the limit");
        static constexpr int kBefore[kLanes] = {-1, kF0, kF1, kI1, kI1, kI0};  // same rank, same micro-batch
        if (kBefore[lane] >= 0 && !placed(kBefore[lane], i, mb)) reference_fails(s_, "an op before its own input");
        const Ticks no_wait = cur_[i] + s_.cost(lane);
        Ticks end = no_wait;
        const bool down = lane == kF0 || lane == kI1;  // input from rank i-1; F c1 and I c0 from rank i+1
        const bool up = lane == kF1 || lane == kI0;
        const int from = down && i > 0 ? i - 1 : up && i + 1 < s_.P ? i + 1 : -1;
        if (from >= 0) {
            if (!placed(lane, from, mb)) reference_fails(s_, "an op before its input on the next rank");
            end = std::max(end, end_[lane][from][mb] + s_.c + s_.cost(lane));
        }
        if (count_[i][kF0] > 0) {
            bubble_[i] += end - no_wait;
            largest_bubble_ = std::max(largest_bubble_, bubble_[i]);
        }
        end_[lane][i].push_back(end);
        cur_[i] = end;
        mem_[i] += s_.mem(lane);
        result_.order[i].emplace_back(lane, mb);
        if (lane == kI1 || lane == kI0) pending_w_[i].push_back(lane + 2);
        ++count_[i][lane];
    }

    void put_w(int i) {
        if (pending_w_[i].empty()) reference_fails(s_, "no W is left to free memory (the memory limit is too small)");
        const int lane = pending_w_[i].front();
        pending_w_[i].pop_front();
        put(lane, i);
    }

    // Before an op whose input comes from (lane, from, mb): W's while they end before it arrives, then one more if
    // the wait would raise this rank's bubble past the largest.
    void fill(int i, int lane, int from, int mb, bool extra_ok) {
        while (!pending_w_[i].empty() && from >= 0 && end_or_minus_one(lane, from, mb) + s_.c >= cur_[i] + s_.w) put_w(i);
        // Without an input the reference reads end_time[-1]: the last node id, W c0 of micro-batch M-1 on rank P-1.
        const Ticks arrival = from >= 0 ? end_or_minus_one(lane, from, mb) : end_or_minus_one(kW0, s_.P - 1, s_.M - 1);
        if (!pending_w_[i].empty() && arrival + s_.c - cur_[i] > max_bubble(i) - bubble_[i] && extra_ok) put_w(i);
    }

    void warm_up() {
        const int P = s_.P, M = s_.M;
        for (int i = 0; i < P; ++i) put(kF0, i);
        for (int i = P - 1; i >= 0; --i) {
            if (i == P - 1) {
                put(kF1, i);
                continue;
            }
            const Ticks arrive = end_or_minus_one(kF1, i + 1, 0) + s_.c;
            while (mem_[i] + s_.f_mem * Ticks(2 * i + 2) <= s_.max_mem && cur_[i] + s_.f <= arrive && count_[i][kF0] < M)
                for (int j = 0; j <= i; ++j) put(kF0, j);
            put(kF1, i);
        }
        int lane = kF0;  // alternates, and persists across ranks
        for (int i = 1; i < P; ++i) {
            int idle_rounds = 0;
            while (count_[i][kF0] + count_[i][kF1] < count_[i - 1][kF0] + count_[i - 1][kF1] ||
                   (count_[i][kF1] <= count_[i - 1][kF1] && count_[i - 1][kF1] < M)) {
                bool any = false;
                for (int j = P - 1; j >= i; --j)
                    if (count_[j][lane] < M) {
                        put(lane, j);
                        any = true;
                    }
                lane = lane == kF0 ? kF1 : kF0;
                idle_rounds = any ? 0 : idle_rounds + 1;
                if (idle_rounds >= 2) reference_fails(s_, "its warm-up loop does not end");
            }
        }
    }

    void steady_backwards() {
        const int P = s_.P, M = s_.M;
        for (int i = 0; i < P; ++i)
            while (mem_[i] + s_.b_mem > s_.max_mem) put_w(i);
        std::vector<int> up, down;  // I c1 next (ascending leg), I c0 next (descending leg)
        for (int i = 0; i < P; ++i) {
            if (count_[i][kI0] >= count_[i][kI1])
                up.push_back(i);
            else if (i == P - 1)
                down.push_back(i);
            else if (placed(kI0, i + 1, count_[i][kI0]) || count_[i][kI1] >= M)
                down.push_back(i);
            else
                up.push_back(i);
        }
        for (auto it = down.rbegin(); it != down.rend(); ++it) {
            const int i = *it;
            fill(i, kI0, i + 1 < P ? i + 1 : -1, count_[i][kI0], true);
            put(kI0, i);
        }
        for (int i : up) {
            fill(i, kI1, i > 0 ? i - 1 : -1, count_[i][kI1], fill_b_);
            put(kI1, i);
        }
    }

    void steady_forwards() {
        const int P = s_.P, M = s_.M;
        for (int i = 0; i < P; ++i) {
            if (count_[i][kF1] >= M) continue;
            int lane = -1;
            if (count_[i][kF1] >= count_[i][kF0])
                lane = kF0;
            else if (i == P - 1)
                lane = kF1;
            else if (placed(kF1, i + 1, count_[i][kF1]))
                lane = kF1;
            else if (count_[i][kF0] < M && (i == 0 || placed(kF0, i - 1, count_[i][kF0])))
                lane = kF0;
            if (lane < 0) continue;
            while (mem_[i] + s_.f_mem > s_.max_mem) put_w(i);
            const int from = lane == kF0 ? (i > 0 ? i - 1 : -1) : (i + 1 < P ? i + 1 : -1);
            fill(i, lane, from, count_[i][lane], fill_f_);
            put(lane, i);
        }
    }

    const Setup& s_;
    bool fill_f_, fill_b_;
    std::vector<Ticks> approved_;
    Ticks max_approved_;
    Ticks largest_bubble_{0};
    std::vector<std::array<int, kLanes>> count_;
    std::vector<Ticks> cur_, mem_, bubble_;
    std::vector<std::deque<int>> pending_w_;             // lanes of the W's owed, oldest first
    std::vector<std::vector<std::vector<Ticks>>> end_;  // [lane][rank][mb], for mb < count
    Result result_;
};

Setup setup_from(const GenerateParams& params) {
    Setup s;
    s.P = params.ranks;
    s.M = params.microbatches;
    const Costs costs = params.costs.value_or(Costs{});
    if (!costs.per_block.empty())
        throw GenerateError("v-zb orders for one cost set shared by every stage (the reference takes one f, b, w: the "
                            "median over ranks of their means); per-block costs are not a v-zb input");
    const Integer time_scale = lcm_of_denominators({costs.base.F, costs.base.I, costs.base.W, costs.comm});
    s.f = in_ticks(costs.base.F, time_scale);
    s.b = in_ticks(costs.base.I, time_scale);
    s.w = in_ticks(costs.base.W, time_scale);
    s.c = in_ticks(costs.comm, time_scale);
    s.unit = time_scale;
    const ActivationModel sizes = params.activation_sizes.value_or(ActivationModel{Rational(1), Rational(1, 2)});
    if (sizes.forward_alloc <= Rational(0))
        throw GenerateError("v-zb needs a positive activation size for F (the reference's f_mem), got " +
                            format_rational(sizes.forward_alloc));
    s.usual_limit = sizes.forward_alloc * Rational(2 * s.P);
    s.limit = params.memory_limit.value_or(s.usual_limit);
    if (s.limit <= Rational(0))
        throw GenerateError("v-zb needs a positive memory limit (the reference reads max_mem = 0 as 'not given', i.e. "
                            "2P activations), got " + format_rational(s.limit));
    const Integer memory_scale = lcm_of_denominators({sizes.forward_alloc, sizes.input_grad_free, s.limit});
    s.f_mem = in_ticks(sizes.forward_alloc, memory_scale);
    s.b_mem = -in_ticks(sizes.input_grad_free, memory_scale);
    s.w_mem = in_ticks(sizes.input_grad_free - sizes.forward_alloc, memory_scale);
    s.max_mem = in_ticks(s.limit, memory_scale);
    return s;
}

}  // namespace

Schedule generate_v_zb(const GenerateParams& params) {
    check_v_family(params, "v-zb");
    const Setup setup = setup_from(params);
    std::optional<Result> best;
    for (const bool fill_b : {true, false})
        for (const bool fill_f : {true, false}) {
            Result r = Try(setup, fill_f, fill_b, std::vector<Ticks>(setup.P, -setup.unit)).run();
            if (!best || r.max_bubble < best->max_bubble) best = std::move(r);
        }
    static constexpr VOp kOps[kLanes] = {{OpKind::F, 0, 0}, {OpKind::F, 1, 0}, {OpKind::I, 1, 0},
                                         {OpKind::I, 0, 0}, {OpKind::W, 1, 0}, {OpKind::W, 0, 0}};
    VOrder order(setup.P);
    for (int r = 0; r < setup.P; ++r)
        for (const auto& [lane, mb] : best->order[r]) {
            VOp op = kOps[lane];
            op.microbatch = mb;
            order[r].push_back(op);
        }
    return v_family_schedule(setup.P, setup.M, order, "v-zb(P=" + std::to_string(setup.P) + ",M=" + std::to_string(setup.M) + ")");
}

}  // namespace pp
