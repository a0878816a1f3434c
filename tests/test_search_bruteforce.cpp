// The search against an independent brute force on tiny instances (tag [search]).
#include "model/placement.hpp"
#include "solver/search.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"
#include "solver/z3_encoding.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

// An independent exact solver for tiny instances, written for the search tests only: depth-first
// enumeration of every as-soon-as-possible schedule, with no symmetry breaking and no shared code with
// solver/search*.
//
// Every schedule that is a set of per-rank orders has one ASAP timing; list its ops by (start, rank).
// Each op then comes after its dependencies and after its rank predecessor (durations are positive), and
// its start is max(rank free, inputs arrived). So enumerating sequences in which every appended op
// starts no earlier than the previous one (ties: by rank) visits every per-rank order exactly once
// through its sorted sequence. Branch and bound prunes with "rank free + work left on the rank".
// Memory is order-based per rank: live = F started - W ended <= cap at every F. Pairs: an F and an I of
// one rank may start together as one unit of duration FB.
namespace pp::test {

struct TinyCosts {
    std::int64_t F = 1, I = 1, W = 1, comm = 0;
    std::optional<std::int64_t> FB;  // pairs allowed when set
};

struct BruteForceResult {
    std::int64_t best = -1;  // -1: infeasible
    long nodes = 0;
};

class BruteForce {
public:
    BruteForce(const Placement& pl, TinyCosts costs, std::optional<int> cap, bool span)
        : pl_(pl), c_(costs), cap_(cap), span_(span) {
        for (int p = 0; p < pl.pipeline_count(); ++p)
            for (int s = 0; s < pl.pipelines[p].stages(); ++s)
                for (int m = 0; m < pl.pipelines[p].microbatches; ++m)
                    for (int k = 0; k < 3; ++k) ops_.push_back({k, p, s, m, pl.rank_of(p, s)});
        auto find = [&](int k, int p, int s, int m) {
            for (size_t i = 0; i < ops_.size(); ++i)
                if (ops_[i].kind == k && ops_[i].p == p && ops_[i].s == s && ops_[i].m == m) return static_cast<int>(i);
            return -1;
        };
        for (auto& o : ops_) {
            const int last = pl.pipelines[o.p].stages() - 1;
            int pred = -1;
            if (o.kind == 0 && o.s > 0) pred = find(0, o.p, o.s - 1, o.m);
            if (o.kind == 1) pred = o.s == last ? find(0, o.p, o.s, o.m) : find(1, o.p, o.s + 1, o.m);
            if (o.kind == 2) pred = find(1, o.p, o.s, o.m);
            o.pred = pred;
        }
        // h_r: earliest start of any op of rank r from dependencies alone.
        std::vector<std::int64_t> head(ops_.size(), 0);
        for (int round = 0; round < static_cast<int>(ops_.size()); ++round)
            for (size_t i = 0; i < ops_.size(); ++i)
                if (ops_[i].pred >= 0) head[i] = head[ops_[i].pred] + duration(ops_[ops_[i].pred]) + lag(ops_[i].pred, static_cast<int>(i));
        origin_.assign(pl.ranks, std::numeric_limits<std::int64_t>::max());
        for (size_t i = 0; i < ops_.size(); ++i) origin_[ops_[i].rank] = std::min(origin_[ops_[i].rank], head[i]);
    }

    BruteForceResult solve() {
        const size_t n = ops_.size();
        end_.assign(n, -1);
        free_.assign(pl_.ranks, 0);
        live_.assign(pl_.ranks, 0);
        work_left_.assign(pl_.ranks, 0);
        last_end_.assign(pl_.ranks, 0);
        for (const auto& o : ops_) work_left_[o.rank] += occupancy2(o);
        best_ = std::numeric_limits<std::int64_t>::max();
        dfs(0, 0, 0);
        BruteForceResult r;
        r.best = best_ == std::numeric_limits<std::int64_t>::max() ? -1 : best_;
        r.nodes = nodes_;
        return r;
    }

private:
    struct TinyOp {
        int kind, p, s, m, rank;
        int pred = -1;
    };
    std::int64_t duration(const TinyOp& o) const { return o.kind == 0 ? c_.F : o.kind == 1 ? c_.I : c_.W; }
    // Twice the least time an op occupies its rank: a pair's FB may be shared by its two ops.
    std::int64_t occupancy2(const TinyOp& o) const {
        return c_.FB && o.kind < 2 ? std::min(2 * duration(o), *c_.FB) : 2 * duration(o);
    }
    std::int64_t lag(int from, int to) const { return ops_[from].rank == ops_[to].rank ? 0 : c_.comm; }
    std::int64_t ready(int i) const {
        const int pr = ops_[i].pred;
        return pr < 0 ? 0 : end_[pr] + lag(pr, i);
    }
    bool available(int i) const { return end_[i] < 0 && (ops_[i].pred < 0 || end_[ops_[i].pred] >= 0); }

    std::int64_t bound() const {
        std::int64_t b = 0;
        for (int r = 0; r < pl_.ranks; ++r) {
            const std::int64_t done = work_left_[r] > 0 ? free_[r] + (work_left_[r] + 1) / 2 : last_end_[r];
            b = std::max(b, done - (span_ ? origin_[r] : 0));
        }
        return b;
    }

    // Places op i (and partner j >= 0) at its ASAP start if that keeps the sequence sorted.
    void dfs(size_t placed, std::int64_t last_start, int last_rank) {
        ++nodes_;
        if (placed == ops_.size()) {
            best_ = std::min(best_, bound());
            return;
        }
        if (bound() >= best_) return;
        for (size_t i = 0; i < ops_.size(); ++i) {
            if (!available(static_cast<int>(i))) continue;
            try_unit(static_cast<int>(i), -1, placed, last_start, last_rank);
            if (c_.FB && ops_[i].kind == 0)
                for (size_t j = 0; j < ops_.size(); ++j)
                    if (ops_[j].kind == 1 && ops_[j].rank == ops_[i].rank && available(static_cast<int>(j)))
                        try_unit(static_cast<int>(i), static_cast<int>(j), placed, last_start, last_rank);
        }
    }

    void try_unit(int i, int j, size_t placed, std::int64_t last_start, int last_rank) {
        const int r = ops_[i].rank;
        std::int64_t start = std::max(free_[r], ready(i));
        if (j >= 0) start = std::max(start, ready(j));
        if (start < last_start || (start == last_start && r < last_rank)) return;
        if (ops_[i].kind == 0 && cap_ && live_[r] + 1 > *cap_) return;
        const std::int64_t d = j >= 0 ? *c_.FB : duration(ops_[i]);
        const std::int64_t saved_free = free_[r], saved_last = last_end_[r];
        const int saved_live = live_[r];
        end_[i] = start + d;
        if (j >= 0) end_[j] = start + d;
        free_[r] = last_end_[r] = start + d;
        work_left_[r] -= occupancy2(ops_[i]) + (j >= 0 ? occupancy2(ops_[j]) : 0);
        if (ops_[i].kind == 0) ++live_[r];
        if (ops_[i].kind == 2) --live_[r];
        dfs(placed + (j >= 0 ? 2 : 1), start, r);
        live_[r] = saved_live;
        work_left_[r] += occupancy2(ops_[i]) + (j >= 0 ? occupancy2(ops_[j]) : 0);
        free_[r] = saved_free;
        last_end_[r] = saved_last;
        end_[i] = -1;
        if (j >= 0) end_[j] = -1;
    }

    const Placement& pl_;
    TinyCosts c_;
    std::optional<int> cap_;
    bool span_;
    std::vector<TinyOp> ops_;
    std::vector<std::int64_t> origin_, end_, free_, work_left_, last_end_;
    std::vector<int> live_;
    std::int64_t best_ = 0;
    long nodes_ = 0;
};

}  // namespace pp::test

namespace {

using namespace pp;
using pp::test::BruteForce;
using pp::test::TinyCosts;

struct Case {
    std::string name;
    Placement placement;
    TinyCosts costs;
    std::optional<int> cap;
};

Costs costs_of(const TinyCosts& t) {
    Costs c;
    c.base.F = t.F;
    c.base.I = t.I;
    c.base.W = t.W;
    c.comm = t.comm;
    return c;
}

SearchProblem problem_of(const Case& k, Objective objective = Objective::Makespan) {
    SearchProblem p;
    p.placement = k.placement;
    p.costs = costs_of(k.costs);
    p.memory_limit = k.cap;
    p.objective = objective;
    if (k.costs.FB) p.overlap = Rational(*k.costs.FB);
    return p;
}

Placement loop(int P, int M) { return Placement::single(P, loop_stage_map(P, P), M); }
Placement vshape(int P, int M) { return Placement::single(P, v_stage_map(P, 2 * P), M); }
Placement interleaved(int P, int V, int M) { return Placement::single(P, loop_stage_map(P, P * V), M); }

// Small enough for the brute force, varied enough to reach every part of the search: memory edges,
// cardinality (two stages per rank), latency, unequal durations, both directions.
std::vector<Case> cases() {
    const TinyCosts unit{1, 1, 1, 0, {}}, uneven{3, 4, 2, 1, {}}, wide{2, 1, 1, 0, {}};
    return {
        {"loop P2 M2 unit", loop(2, 2), unit, std::nullopt},
        {"loop P2 M2 unit cap1", loop(2, 2), unit, 1},
        {"loop P2 M3 uneven cap2", loop(2, 3), uneven, 2},
        {"loop P3 M2 uneven", loop(3, 2), uneven, std::nullopt},
        {"loop P3 M3 wide cap2", loop(3, 3), wide, 2},
        {"loop P3 M3 unit cap1", loop(3, 3), unit, 1},
        {"v P2 M2 unit cap2", vshape(2, 2), unit, 2},
        {"v P2 M2 uneven cap3", vshape(2, 2), uneven, 3},
        {"interleaved P2 V2 M2 wide cap2", interleaved(2, 2, 2), wide, 2},
        {"dualpipe P2 M2 uneven", Placement::bidirectional(2, 1), uneven, std::nullopt},
        {"dualpipe P2 M4 unit cap2", Placement::bidirectional(2, 2), unit, 2},
    };
}

// Checks the returned schedule independently of the search: verify (with the cap) and simulate.
void check_schedule(const SearchResult& r, const Case& k) {
    REQUIRE(r.schedule);
    VerifyOptions vo;
    if (k.cap) vo.memory_limit = Rational(*k.cap);
    const VerifyReport report = verify(*r.schedule, vo);
    CHECK(report.ok());
    Costs costs = costs_of(k.costs);
    if (k.costs.FB) costs.base.FB = Rational(*k.costs.FB);
    const Simulation sim = simulate(*r.schedule, costs);
    CHECK(sim.makespan == r.makespan);
}

SearchOptions quick() {
    SearchOptions o;
    o.time_limit = 20;
    return o;
}

}  // namespace

TEST_CASE("search: optimum equals an independent brute force", "[search]") {
    for (const Case& k : cases()) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        const SearchResult r = search(problem_of(k), quick());
        CHECK(r.status == SearchStatus::Optimal);
        CHECK(r.value == bf.best);
        CHECK(r.lower_bound == bf.best);
        check_schedule(r, k);
    }
}

TEST_CASE("search: symmetry breaking loses no optimum (with and without agree)", "[search]") {
    for (const Case& k : cases()) {
        INFO(k.name);
        SearchProblem with = problem_of(k), without = problem_of(k);
        without.symmetry_breaking = false;
        const SearchResult a = search(with, quick()), b = search(without, quick());
        CHECK(a.status == SearchStatus::Optimal);
        CHECK(b.status == SearchStatus::Optimal);
        CHECK(a.value == b.value);
    }
}

TEST_CASE("search: both Z3 encodings answer unsat one below the optimum and sat at it", "[search]") {
    for (const Case& k : cases()) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const Instance inst = build_instance(problem_of(k));
        for (bool strengthen : {true, false}) {
            const TaskBounds bounds = compute_task_bounds(inst, strengthen);
            Z3Query q;
            q.strengthen = strengthen;
            q.deadline = Clock::now() + std::chrono::seconds(20);
            for (auto solve : {solve_time_indexed, solve_disjunctive}) {
                q.bound = bf.best / inst.quantum - 1;
                CHECK(solve(inst, bounds, q).answer == Z3Answer::Unsat);
                q.bound = bf.best / inst.quantum;
                const Z3Outcome sat = solve(inst, bounds, q);
                REQUIRE(sat.answer == Z3Answer::Sat);
                Schedule s = schedule_from_starts(inst, sat.start, sat.partner);
                const Evaluation e = evaluate_schedule(inst, s);
                CHECK(e.ok);
                CHECK(e.value == bf.best);
            }
        }
    }
}

TEST_CASE("search: Zero Bubble span objective equals the brute force", "[search]") {
    const TinyCosts uneven{3, 4, 2, 1, {}};
    for (const Case& k : {Case{"loop P3 M3 span", loop(3, 3), uneven, std::nullopt},
                          Case{"loop P3 M3 span cap2", loop(3, 3), uneven, 2},
                          Case{"v P2 M2 span cap3", vshape(2, 2), uneven, 3}}) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, true).solve();
        const SearchResult r = search(problem_of(k, Objective::Span), quick());
        CHECK(r.status == SearchStatus::Optimal);
        CHECK(r.value == bf.best);
        check_schedule(r, k);
    }
}

TEST_CASE("search: overlapped F&I pairs, chosen by the search, equal the brute force", "[search]") {
    for (const Case& k : {Case{"loop P2 M2 FB3", loop(2, 2), TinyCosts{2, 2, 1, 0, 3}, std::nullopt},
                          Case{"dualpipe P2 M4 FB3 cap3", Placement::bidirectional(2, 2), TinyCosts{2, 2, 1, 0, 3}, 3}}) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const SearchResult r = search(problem_of(k), quick());
        CHECK(r.status == SearchStatus::Optimal);
        CHECK(r.value == bf.best);
        check_schedule(r, k);
        // Without pairs the optimum can only be worse or equal.
        Case plain = k;
        plain.costs.FB.reset();
        CHECK(BruteForce(plain.placement, plain.costs, plain.cap, false).solve().best >= bf.best);
    }
}
