// Periodic blocks and cool-down windows (issue 13, "any M"; tag [search][periodic]).
#include "model/placement.hpp"
#include "solver/greedy.hpp"
#include "solver/greedy_improve.hpp"
#include "solver/lower_bound.hpp"
#include "solver/periodic.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "solver/z3_window.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace pp;

namespace {

// An independent exhaustive search of small periodic blocks for one stage per rank (written for this
// test only; no code shared with solver/periodic). A block of period T is given by, per class c
// (stage r, kind F/I/W), a lag l(c) in 0..K (in period k the class runs micro-batch k - l(c)) and, per
// rank, the order of its three classes inside the period. Then the start of (c, m) is
// (m + l(c)) T + x(c) with x the position inside the period, and every rule is a difference constraint
// on the x (a longest-path problem): order inside [0, T), dependencies, and the memory cap as "the
// stash lives at most cap periods": end(W) - start(F) <= cap T (then at most cap micro-batches overlap).
struct Unit {
    std::int64_t F, I, W, comm;
};

struct DiffEdge {
    int from, to;
    std::int64_t w;  // x(to) - x(from) >= w
};

bool feasible(int nodes, const std::vector<DiffEdge>& edges) {
    std::vector<std::int64_t> dist(nodes, 0);
    for (int round = 0; round <= nodes; ++round) {
        bool changed = false;
        for (const auto& e : edges)
            if (dist[e.from] + e.w > dist[e.to]) dist[e.to] = dist[e.from] + e.w, changed = true;
        if (!changed) return true;
        if (round == nodes) return false;
    }
    return false;
}

// The least integer period of any block with lags <= K (P ranks, one stage each), or -1.
std::int64_t best_period_exhaustive(int P, Unit u, std::optional<int> cap, int K, std::int64_t max_period) {
    const int classes = 3 * P, zero = classes;  // class = 3 * stage + kind (0 F, 1 I, 2 W); node `zero` is 0
    const std::int64_t d[3] = {u.F, u.I, u.W};
    static const std::array<std::array<int, 3>, 6> perms = {{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
    for (std::int64_t T = u.F + u.I + u.W; T <= max_period; ++T) {  // below the load nothing fits
        std::vector<int> lag(classes, 0), perm(P, 0);
        // odometer over lags (class 0 = F of stage 0 fixed at lag 0: a shift of all lags changes nothing)
        while (true) {
            for (int pr = 0; pr < 1 << (3 * P); ++pr) {  // enough counter space for 6^P permutations
                int code = pr, ok = 1;
                for (int r = 0; r < P; ++r) {
                    perm[r] = code % 8;
                    code /= 8;
                    if (perm[r] >= 6) ok = 0;
                }
                if (!ok) continue;
                std::vector<DiffEdge> edges;
                for (int r = 0; r < P; ++r) {
                    const auto& o = perms[perm[r]];
                    const int a = 3 * r + o[0], b = 3 * r + o[1], c = 3 * r + o[2];
                    edges.push_back({zero, a, 0});
                    edges.push_back({a, b, d[o[0]]});
                    edges.push_back({b, c, d[o[1]]});
                    edges.push_back({c, zero, d[o[2]] - T});
                    edges.push_back({zero, c, 0});  // x >= 0 for every class
                    edges.push_back({zero, b, 0});
                }
                auto dep = [&](int from, int to, std::int64_t w) {
                    edges.push_back({from, to, w + (lag[from] - lag[to]) * T});
                };
                for (int s = 0; s + 1 < P; ++s) dep(3 * s, 3 * (s + 1), u.F + u.comm);       // F(s) -> F(s+1)
                dep(3 * (P - 1), 3 * (P - 1) + 1, u.F);                                    // F(last) -> I(last)
                for (int s = P - 1; s > 0; --s) dep(3 * s + 1, 3 * (s - 1) + 1, u.I + u.comm);  // I(s) -> I(s-1)
                for (int s = 0; s < P; ++s) dep(3 * s + 1, 3 * s + 2, u.I);                // I(s) -> W(s)
                if (cap)
                    for (int s = 0; s < P; ++s)  // start(W) + W - start(F) <= cap T
                        edges.push_back({3 * s + 2, 3 * s, u.W + (lag[3 * s + 2] - lag[3 * s] - *cap) * T});
                if (feasible(classes + 1, edges)) return T;
            }
            int k = 1;
            while (k < classes && ++lag[k] > K) lag[k++] = 0;
            if (k == classes) break;
        }
    }
    return -1;
}

Instance instance_of(const std::string& placement, int P, int M, const std::string& costs, std::optional<int> cap) {
    SearchProblem problem;
    problem.placement = placement_from_name(placement, P, M);
    problem.costs = parse_costs(costs);
    if (cap) problem.memory_limit = Rational(*cap);
    return build_instance(problem);
}

auto soon(double seconds) {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

}  // namespace

TEST_CASE("periodic: the block's period equals an exhaustive search of small periodic blocks", "[search][periodic]") {
    struct Case {
        Unit u;
        std::optional<int> cap;
    };
    // unit costs with and without latency; caps that bind (period above the load) and that do not
    const std::vector<Case> cases = {
        {{1, 1, 1, 0}, std::nullopt}, {{1, 1, 1, 0}, 1}, {{1, 1, 1, 0}, 2}, {{1, 1, 1, 1}, 1},
        {{1, 1, 1, 1}, 2},            {{2, 1, 1, 0}, 1}, {{2, 1, 1, 1}, 2}, {{3, 2, 1, 1}, 1},
    };
    for (const Case& k : cases) {
        const std::string costs = "F=" + std::to_string(k.u.F) + ",I=" + std::to_string(k.u.I) + ",W=" +
                                  std::to_string(k.u.W) + ",comm=" + std::to_string(k.u.comm);
        INFO(costs << " cap " << (k.cap ? std::to_string(*k.cap) : "none"));
        const Instance inst = instance_of("1f1b", 2, 4, costs, k.cap);
        const PeriodicBlock b = find_periodic_block(inst, soon(20));
        REQUIRE(b.found);
        const std::int64_t exhaustive = best_period_exhaustive(2, k.u, k.cap, 3, 40);
        CHECK(b.period == Ticks(exhaustive));
        CHECK(Rational(b.period) >= b.bound);  // the throughput bound holds for the best block
        CHECK(check_periodic_block(inst, b, 12).empty());
    }
}

TEST_CASE("periodic: the throughput bound is met when the cap does not bind, and the repeated block verifies", "[search][periodic]") {
    // P=4, F=I=W=1, no latency, cap 4: rank 0's stash lives >= F + 3F + 3I + I + W = 9 < 4 * 3, so the
    // bound is the load 3 and a block of period 3 exists (1F1B's steady state).
    const Instance inst = instance_of("1f1b", 4, 12, "F=1,I=1,W=1", 4);
    const PeriodicBlock b = find_periodic_block(inst, soon(20));
    REQUIRE(b.found);
    CHECK(b.bound == Rational(3));
    CHECK(b.period == Ticks(3));
    // cap 2: the bound is 9 / 2 (Little's law on rank 0), so no block of period 4 can exist
    const Instance tight = instance_of("1f1b", 4, 12, "F=1,I=1,W=1", 2);
    const PeriodicBlock t = find_periodic_block(tight, soon(20));
    CHECK(t.bound == Rational(9, 2));
    REQUIRE(t.found);
    CHECK(t.period >= Ticks(5));
    // the block repeated from micro-batch 0 is a valid schedule of every M (verify with the cap, simulate)
    for (const Instance* in : {&inst, &tight}) {
        const PeriodicBlock& blk = in == &inst ? b : t;
        Schedule s = schedule_from_starts(*in, periodic_starts(*in, blk), std::vector<int>(in->size(), -1));
        const Evaluation e = evaluate_schedule(*in, s);
        CHECK(e.ok);
        VerifyOptions vo;
        vo.memory_limit = in->problem.memory_limit;
        s.costs = in->problem.costs;
        CHECK(verify(s, vo).ok());
    }
    // the V placement (two stashes per rank) as well
    const Instance v = instance_of("v", 2, 6, "F=1,I=1,W=1", 4);
    const PeriodicBlock vb = find_periodic_block(v, soon(20));
    REQUIRE(vb.found);
    CHECK(check_periodic_block(v, vb, 12).empty());
    Schedule vs = schedule_from_starts(v, periodic_starts(v, vb), std::vector<int>(v.size(), -1));
    CHECK(evaluate_schedule(v, vs).ok);
}

TEST_CASE("periodic: a cool-down window re-solved by Z3 reaches the plain search's optimum", "[search][periodic]") {
    // The plain search's optimum (cross-checked against a brute force in test_search_bruteforce on the
    // same kind of instance) is reached from the repeated periodic block by freeing every op, and a
    // bound one below it is unsat; freeing only a suffix keeps the fixed ops where they are.
    struct Case {
        std::string placement, costs;
        int P, M, cap;
    };
    for (const Case& k : std::vector<Case>{{"1f1b", "F=1,I=1,W=1", 3, 6, 2}, {"1f1b", "F=2,I=1,W=1,comm=1", 3, 5, 2},
                                           {"v", "F=1,I=1,W=1", 2, 4, 3}}) {
        INFO(k.placement << " P=" << k.P << " M=" << k.M << " " << k.costs << " cap " << k.cap);
        SearchProblem problem;
        problem.placement = placement_from_name(k.placement, k.P, k.M);
        problem.costs = parse_costs(k.costs);
        problem.memory_limit = Rational(k.cap);
        SearchOptions options;
        options.time_limit = 20;
        const SearchResult plain = search(problem, options);
        REQUIRE(plain.status == SearchStatus::Optimal);
        const Instance inst = build_instance(problem);
        const PeriodicBlock b = find_periodic_block(inst, soon(20));
        REQUIRE(b.found);
        const std::vector<Ticks> start = periodic_starts(inst, b);
        const TaskBounds bounds = compute_task_bounds(inst, true);
        const Ticks opt = plain.value / inst.quantum;
        Z3Query q;
        q.deadline = soon(20);
        const std::vector<bool> all = ops_from(start, 0);
        const Z3Outcome sat = solve_window(inst, windows_for_bound(inst, bounds, opt, true), start, all, q);
        REQUIRE(sat.answer == Z3Answer::Sat);
        Schedule s = schedule_from_starts(inst, sat.start, sat.partner);
        const Evaluation e = evaluate_schedule(inst, s);
        CHECK(e.ok);
        CHECK(e.value == plain.value);
        const Z3Outcome below = solve_window(inst, windows_for_bound(inst, bounds, opt - 1, true), start, all, q);
        CHECK(below.answer == Z3Answer::Unsat);
        // a suffix window: any answer it gives is a valid schedule that keeps the rest in place
        Ticks mid = 0;
        for (const Ticks& t : start) mid = std::max(mid, t);
        const std::vector<bool> suffix = ops_from(start, mid / 2);
        const Windows loose = windows_for_bound(inst, bounds, objective_of(inst, [&] {
                                                    std::vector<Ticks> end(inst.size());
                                                    for (size_t t = 0; t < inst.size(); ++t) end[t] = start[t] + inst.tasks[t].duration;
                                                    return end;
                                                }()), true);
        const Z3Outcome part = solve_window(inst, loose, start, suffix, q);
        REQUIRE(part.answer == Z3Answer::Sat);
        for (size_t t = 0; t < inst.size(); ++t)
            if (!suffix[t]) CHECK(part.start[t] == start[t]);
        Schedule ps = schedule_from_starts(inst, part.start, part.partner);
        CHECK(evaluate_schedule(inst, ps).ok);
    }
}

TEST_CASE("periodic: search at large M reports a throughput-optimal block and re-verifies what it returns", "[search][periodic]") {
    // P=4, M=64, cap 6: no exact encoding is allowed (limits at 0), so the search takes the large-M path:
    // periodic block, greedy, cool-down windows. Its schedule must verify and meet its bound's claim.
    SearchProblem problem;
    problem.placement = placement_from_name("1f1b", 4, 64);
    problem.costs = parse_costs("F=3,I=2,W=1,comm=1");
    problem.memory_limit = Rational(6);
    SearchOptions options;
    options.time_limit = 20;
    options.max_time_indexed_variables = 0;
    options.max_disjunctive_variables = 0;
    const SearchResult r = search(problem, options);
    REQUIRE(r.schedule);
    REQUIRE(r.periodic);
    REQUIRE(r.periodic->found);
    // the load F + I + W; rank 0's stash lives >= F + 3(F+comm) + 3(I+comm) + I + W = 27 <= 6 * 6
    CHECK(r.periodic->period == Ticks(6));
    CHECK(r.periodic->bound == Rational(6));
    CHECK(r.lower_bound <= r.value);
    Schedule s = *r.schedule;
    VerifyOptions vo;
    vo.memory_limit = Rational(6);
    CHECK(verify(s, vo).ok());
    CHECK(simulate(s, problem.costs).makespan == r.makespan);
}

// A block read off a schedule's steady state (block_from_starts) is only a candidate: the block check
// decides. ZBV's steady state on the V map is the load-bound block (each rank runs F, F, I, I, W, W of
// two stages per micro-batch: period 2(F+I+W) = 91890 with the Zero Bubble 1.5B costs, by hand).
namespace {

std::vector<Ticks> starts_of(const Instance& inst, const std::string& family) {
    for (const WarmStart& w : generator_warm_starts(inst.problem.placement))
        if (w.origin == "generator:" + family) {
            const auto orders = orders_of(inst, w.schedule);
            REQUIRE(orders);
            const GreedySchedule g = time_orders(inst, *orders);
            REQUIRE(g.ok);
            return g.start;
        }
    FAIL("no generator " << family);
    return {};
}

}  // namespace

TEST_CASE("periodic: a block read off ZBV's steady state is the load bound's block and passes the check", "[search][periodic]") {
    const Instance inst = instance_of("v", 4, 24, "F=18522,I=18086,W=9337,comm=601", 8);
    const PeriodicModel model = periodic_model(inst);
    CHECK(model.bound == Rational(2 * (18522 + 18086 + 9337)));
    const PeriodicBlock b = block_from_starts(inst, starts_of(inst, "zbv"), nullptr);
    REQUIRE(b.found);
    CHECK(b.period == Ticks(91890));
    CHECK(check_periodic_block(inst, b, 24).empty());
    for (int peak : b.live_peak) CHECK(peak <= 8);
    // repeated from micro-batch 0 it is a schedule of the instance (verify with the cap)
    Schedule s = schedule_from_starts(inst, periodic_starts(inst, b), std::vector<int>(inst.size(), -1));
    CHECK(evaluate_schedule(inst, s).ok);
    VerifyOptions vo;
    vo.memory_limit = Rational(8);
    s.costs = inst.problem.costs;
    CHECK(verify(s, vo).ok());

    // The check is what makes a read-off block trustworthy: two classes of one rank at one offset overlap.
    PeriodicBlock bad = b;
    for (size_t c = 1; c < bad.classes.size(); ++c)
        if (bad.classes[c].rank == bad.classes[0].rank) {
            bad.offset[c] = bad.offset[0];
            break;
        }
    CHECK_FALSE(check_periodic_block(inst, bad, 24).empty());

    // GPipe runs all forwards, then all backwards: on rank 0 its F's are F apart and its I's I apart, so
    // there is no common spacing to read off (F != I).
    const Instance loop = instance_of("1f1b", 4, 24, "F=18522,I=18086,W=9337,comm=601", std::nullopt);
    const PeriodicBlock none = block_from_starts(loop, starts_of(loop, "gpipe"), nullptr);
    CHECK_FALSE(none.found);
    CHECK_FALSE(none.reason.empty());
}

TEST_CASE("periodic: the search takes a throughput-optimal block from its warm start without a solver call", "[search][periodic]") {
    SearchProblem problem;
    problem.placement = placement_from_name("v", 4, 64);
    problem.costs = parse_costs("F=18522,I=18086,W=9337,comm=601");
    problem.memory_limit = Rational(8);
    SearchOptions options;
    options.time_limit = 20;
    options.max_time_indexed_variables = 0;
    options.max_disjunctive_variables = 0;
    options.warm_starts = generator_warm_starts(problem.placement);
    const SearchResult r = search(problem, options);
    REQUIRE(r.periodic);
    REQUIRE(r.periodic->found);
    CHECK(r.periodic->period == Ticks(91890));
    CHECK(r.periodic->bound == Rational(91890));
    CHECK(std::any_of(r.log.begin(), r.log.end(),
                      [](const std::string& line) { return line.find("read off the steady state") != std::string::npos; }));
    REQUIRE(r.schedule);
    Schedule s = *r.schedule;
    VerifyOptions vo;
    vo.memory_limit = Rational(8);
    CHECK(verify(s, vo).ok());
    CHECK(simulate(s, problem.costs).makespan == r.makespan);
}
