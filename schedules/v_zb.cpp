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
#include "schedules/v_zb.hpp"

#include "schedules/families.hpp"
#include "schedules/v_families.hpp"

#include "limits/deadline.hpp"

#include <fmt/format.h>

#include <array>
#include <deque>
#include <limits>
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

// ---- what the recurrence check (check_v_zb_recurrence, below) records of a run ----

// The whole state the rest of a run depends on, taken between two rounds: counts, clocks, memory, bubbles, the
// owed W's, and the end times later lookups can still read (an op is looked up by the count of a rank of its
// lane, and counts only grow, so entries below the least count of their lane are never read again).
struct Snapshot {
    std::vector<std::array<int, kLanes>> count;
    std::vector<Ticks> cur, mem, bubble;
    Ticks largest_bubble;
    std::vector<std::deque<int>> pending_w;
    std::array<int, kLanes> lowest{};                       // least count of each lane over the ranks
    std::vector<std::vector<std::vector<Ticks>>> readable;  // [lane][rank]: ends of micro-batches lowest..count-1
};

// One try_v_schedule run: its snapshots after the warm-up (index 0) and after each round, and the first round
// in which a comparison with M came out in a way a larger M could change (-1: the warm-up; none: INT_MAX).
struct TryTrace {
    std::vector<Snapshot> snapshots;
    int first_unstable_round = std::numeric_limits<int>::max();
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
    Try(const Setup& setup, bool fill_f, bool fill_b, std::vector<Ticks> approved,
        std::vector<TryTrace>* traces = nullptr)
        : s_(setup), fill_f_(fill_f), fill_b_(fill_b), approved_(std::move(approved)), traces_(traces) {
        if (traces_) {
            trace_index_ = traces_->size();
            traces_->emplace_back();
        }
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
        record_snapshot();
        for (round_ = 0; round_ < 2 * s_.M; ++round_) {
            steady_backwards();
            steady_forwards();
            record_snapshot();
        }
        for (int i = 0; i < s_.P; ++i)
            while (!pending_w_[i].empty()) put_w(i);
        result_.max_bubble = max_bubble(-1);
        // Retried with this try's bubbles as the approved ones, while that lowers the largest.
        if (max_approved_ < Ticks(0) || result_.max_bubble < max_approved_) {
            Result again = Try(s_, fill_f_, fill_b_, bubble_, traces_).run();
            if (again.max_bubble < result_.max_bubble) return again;
        }
        return std::move(result_);
    }

private:
    // Every comparison with M goes through these two: an outcome a larger M could flip (x < M false, x >= M true)
    // marks the round, since from there on the run may differ from a run with a larger M.
    bool below_m(int x) {
        const bool below = x < s_.M;
        if (!below) note_m_sensitive();
        return below;
    }
    bool at_least_m(int x) {
        const bool at_least = x >= s_.M;
        if (at_least) note_m_sensitive();
        return at_least;
    }
    void note_m_sensitive() {
        if (!traces_) return;
        int& first = (*traces_)[trace_index_].first_unstable_round;
        first = std::min(first, round_);
    }

    void record_snapshot() {
        if (!traces_) return;
        Snapshot snap;
        snap.count = count_;
        snap.cur = cur_;
        snap.mem = mem_;
        snap.bubble = bubble_;
        snap.largest_bubble = largest_bubble_;
        snap.pending_w = pending_w_;
        snap.readable.assign(kLanes, std::vector<std::vector<Ticks>>(s_.P));
        for (int lane = 0; lane < kLanes; ++lane) {
            int lowest = count_[0][lane];
            for (int i = 0; i < s_.P; ++i) lowest = std::min(lowest, count_[i][lane]);
            snap.lowest[lane] = lowest;
            for (int i = 0; i < s_.P; ++i)
                snap.readable[lane][i].assign(end_[lane][i].begin() + lowest, end_[lane][i].end());
        }
        (*traces_)[trace_index_].snapshots.push_back(std::move(snap));
    }

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
        const Ticks arrival = from >= 0 ? end_or_minus_one(lane, from, mb)
                              : at_least_m(count_[s_.P - 1][kW0]) ? end_[kW0][s_.P - 1][s_.M - 1]
                                                                  : -s_.unit;
        if (!pending_w_[i].empty() && arrival + s_.c - cur_[i] > max_bubble(i) - bubble_[i] && extra_ok) put_w(i);
    }

    void warm_up() {
        const int P = s_.P;
        for (int i = 0; i < P; ++i) put(kF0, i);
        for (int i = P - 1; i >= 0; --i) {
            if (i == P - 1) {
                put(kF1, i);
                continue;
            }
            const Ticks arrive = end_or_minus_one(kF1, i + 1, 0) + s_.c;
            while (mem_[i] + s_.f_mem * Ticks(2 * i + 2) <= s_.max_mem && cur_[i] + s_.f <= arrive && below_m(count_[i][kF0]))
                for (int j = 0; j <= i; ++j) put(kF0, j);
            put(kF1, i);
        }
        int lane = kF0;  // alternates, and persists across ranks
        for (int i = 1; i < P; ++i) {
            int idle_rounds = 0;
            while (count_[i][kF0] + count_[i][kF1] < count_[i - 1][kF0] + count_[i - 1][kF1] ||
                   (count_[i][kF1] <= count_[i - 1][kF1] && below_m(count_[i - 1][kF1]))) {
                bool any = false;
                for (int j = P - 1; j >= i; --j)
                    if (below_m(count_[j][lane])) {
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
        const int P = s_.P;
        for (int i = 0; i < P; ++i)
            while (mem_[i] + s_.b_mem > s_.max_mem) put_w(i);
        std::vector<int> up, down;  // I c1 next (ascending leg), I c0 next (descending leg)
        for (int i = 0; i < P; ++i) {
            if (count_[i][kI0] >= count_[i][kI1])
                up.push_back(i);
            else if (i == P - 1)
                down.push_back(i);
            else if (placed(kI0, i + 1, count_[i][kI0]) || at_least_m(count_[i][kI1]))
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
        const int P = s_.P;
        for (int i = 0; i < P; ++i) {
            if (at_least_m(count_[i][kF1])) continue;
            int lane = -1;
            if (count_[i][kF1] >= count_[i][kF0])
                lane = kF0;
            else if (i == P - 1)
                lane = kF1;
            else if (placed(kF1, i + 1, count_[i][kF1]))
                lane = kF1;
            else if (below_m(count_[i][kF0]) && (i == 0 || placed(kF0, i - 1, count_[i][kF0])))
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
    std::vector<TryTrace>* traces_ = nullptr;  // set by the recurrence check only
    size_t trace_index_ = 0;
    int round_ = -1;  // -1: the warm-up
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

// The reference's four variants, each with its retries; the smallest largest bubble wins (first on ties).
Result best_of_variants(const Setup& setup, std::vector<TryTrace>* traces = nullptr) {
    std::optional<Result> best;
    for (const bool fill_b : {true, false})
        for (const bool fill_f : {true, false}) {
            Result r = Try(setup, fill_f, fill_b, std::vector<Ticks>(setup.P, -setup.unit), traces).run();
            if (!best || r.max_bubble < best->max_bubble) best = std::move(r);
        }
    return std::move(*best);
}

// ---- the recurrence check ----

// b is a shifted by one period: every count e higher, every clock and readable end time lambda later (one lambda
// for all), memory, bubbles and owed W's equal.
bool shifted_by_period(const Snapshot& a, const Snapshot& b, int e) {
    const Ticks lambda = b.cur[0] - a.cur[0];
    const size_t P = a.cur.size();
    for (size_t i = 0; i < P; ++i) {
        for (int lane = 0; lane < kLanes; ++lane)
            if (b.count[i][lane] != a.count[i][lane] + e) return false;
        if (b.cur[i] != a.cur[i] + lambda || b.mem[i] != a.mem[i] || b.bubble[i] != a.bubble[i]) return false;
        if (b.pending_w[i] != a.pending_w[i]) return false;
    }
    if (b.largest_bubble != a.largest_bubble) return false;
    for (int lane = 0; lane < kLanes; ++lane) {
        if (b.lowest[lane] != a.lowest[lane] + e) return false;
        for (size_t i = 0; i < P; ++i) {
            const auto& x = a.readable[lane][i];
            const auto& y = b.readable[lane][i];
            if (x.size() != y.size()) return false;
            for (size_t k = 0; k < x.size(); ++k)
                if (y[k] != x[k] + lambda) return false;
        }
    }
    return true;
}

// A lookup of an op not placed yet reads -1 cost unit (the reference's end_time = -1), a time that does not shift
// with the clocks; from a state where every clock is past comm - 1 unit, every such read compares the same way
// (fill: "-1 + c >= cur + w" and "-1 + c - cur > headroom >= 0" are false and stay false as clocks grow).
bool unplaced_reads_settled(const Snapshot& a, const Setup& s) {
    for (const Ticks& cur : a.cur)
        if (!(cur > s.c - s.unit)) return false;
    return true;
}

// The first round k from which the trace repeats with period 2e rounds (e micro-batches), every round before k+2e
// run as it would be for any larger M; nullopt if none.
std::optional<int> sync_round(const TryTrace& trace, const Setup& s, int e) {
    const int d = 2 * e;  // the rounds loop runs 2M rounds: one more period adds 2e
    for (int k = 0; k + d < static_cast<int>(trace.snapshots.size()) && k + d <= trace.first_unstable_round; ++k)
        if (unplaced_reads_settled(trace.snapshots[k], s) && shifted_by_period(trace.snapshots[k], trace.snapshots[k + d], e))
            return k;
    return std::nullopt;
}

}  // namespace

GreedyRecurrence check_v_zb_recurrence(const GenerateParams& params, int first_m, int last_m) {
    GreedyRecurrence answer;
    std::string last_failure = "no M tried";
    for (int m = std::max(first_m, 1); m <= last_m; ++m) {
        for (int e : {1, 2}) {
            // Every residue class of M modulo e, from m: one instrumented generation each.
            bool all = true;
            int tries = 0;
            for (int r = 0; r < e && all; ++r) {
                GenerateParams at = params;
                at.microbatches = m + r;
                check_v_family(at, "v-zb");
                const Setup setup = setup_from(at);
                std::vector<TryTrace> traces;
                best_of_variants(setup, &traces);
                for (const TryTrace& trace : traces) {
                    ++tries;
                    if (!sync_round(trace, setup, e)) {
                        all = false;
                        last_failure = fmt::format(
                            "at M = {}, period {} micro-batch(es): run {} of the greedy never repeats its whole state "
                            "(counts, clocks, memory, bubbles, owed W's, readable end times) before a comparison "
                            "with M {}",
                            m + r, e, tries,
                            trace.first_unstable_round < 0 ? "in the warm-up" : fmt::format("in round {}", trace.first_unstable_round));
                        break;
                    }
                }
            }
            if (!all) continue;
            answer.holds = true;
            answer.from_m = m;
            answer.period_m = e;
            answer.runs_checked = tries;
            return answer;
        }
    }
    answer.failure = last_failure + fmt::format(" (M = {}..{} tried)", std::max(first_m, 1), last_m);
    return answer;
}

Schedule generate_v_zb(const GenerateParams& params) {
    check_v_family(params, "v-zb");
    const Setup setup = setup_from(params);
    const Result best = best_of_variants(setup);
    static constexpr VOp kOps[kLanes] = {{OpKind::F, 0, 0}, {OpKind::F, 1, 0}, {OpKind::I, 1, 0},
                                         {OpKind::I, 0, 0}, {OpKind::W, 1, 0}, {OpKind::W, 0, 0}};
    VOrder order(setup.P);
    for (int r = 0; r < setup.P; ++r)
        for (const auto& [lane, mb] : best.order[r]) {
            VOp op = kOps[lane];
            op.microbatch = mb;
            order[r].push_back(op);
        }
    return v_family_schedule(setup.P, setup.M, order, "v-zb(P=" + std::to_string(setup.P) + ",M=" + std::to_string(setup.M) + ")");
}

}  // namespace pp
