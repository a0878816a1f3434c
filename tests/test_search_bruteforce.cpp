// The search against an independent brute force on tiny instances (tag [search]).
#include "checker/internal.hpp"
#include "model/costs.hpp"
#include "model/placement.hpp"
#include "schedules/families.hpp"
#include "solver/cap_filled_warm_starts.hpp"
#include "solver/cap_repair.hpp"
#include "solver/cool_down_bound.hpp"
#include "solver/mirror_symmetry.hpp"
#include "solver/pinned_completion.hpp"
#include "solver/rank_budget.hpp"
#include "solver/subset_relaxation.hpp"
#include "solver/warm_up_chain_bound.hpp"
#include "solver/search.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"
#include "solver/z3_encoding.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <functional>
#include <limits>
#include <optional>
#include <set>
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
// one rank may start together as one unit of duration FB; with `fused` (DeepSeek's F&B) the unit also
// holds that I's W (the full backward), which ends -- and frees its activation -- with the unit.
// Durations may differ per model block (per-stage costs).
namespace pp::test {

struct TinyCosts {
    TinyCosts() = default;
    TinyCosts(std::int64_t f, std::int64_t i, std::int64_t w, std::int64_t c, std::optional<std::int64_t> fb = {},
              bool fused_pairs = false)
        : F(f), I(i), W(w), comm(c), FB(fb), fused(fused_pairs) {}
    std::int64_t F = 1, I = 1, W = 1, comm = 0;
    std::optional<std::int64_t> FB;  // pairs allowed when set
    bool fused = false;              // pairs are F&B (I and W of one micro-batch), else F&I
    std::map<int, std::array<std::int64_t, 3>> block;  // per-block F, I, W overrides
    // Memory in integer units (the cap too): F allocates `alloc`, I releases `by_input`, W the rest.
    // Whole stashes are 1, 0; the Zero Bubble paper's model has 0 < by_input < alloc.
    std::int64_t alloc = 1, by_input = 0;
};

struct BruteForceResult {
    std::int64_t best = -1;  // -1: infeasible
    long nodes = 0;
};

class BruteForce {
public:
    // mirror_only: count only schedules in which every op ends with the same op of the other pipeline
    // (two pipelines; the mirror-symmetric class of solver/mirror_symmetry.hpp).
    BruteForce(const Placement& pl, TinyCosts costs, std::optional<int> cap, bool span, bool mirror_only = false)
        : pl_(pl), c_(costs), cap_(cap), span_(span), mirror_only_(mirror_only) {
        for (int p = 0; p < pl.pipeline_count(); ++p)
            for (int s = 0; s < pl.pipelines[p].stages(); ++s)
                for (int m = 0; m < pl.pipelines[p].microbatches; ++m)
                    for (int k = 0; k < 3; ++k) ops_.push_back({k, p, s, m, pl.rank_of(p, s), pl.block_of(p, s)});
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
            o.weight = o.kind == 1 ? find(2, o.p, o.s, o.m) : -1;
            o.mirror = pl.pipeline_count() == 2 ? find(o.kind, 1 - o.p, o.s, o.m) : -1;
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
        for (const auto& o : ops_) work_left_[o.rank] += occupancy6(o);
        best_ = std::numeric_limits<std::int64_t>::max();
        dfs(0, 0, 0);
        BruteForceResult r;
        r.best = best_ == std::numeric_limits<std::int64_t>::max() ? -1 : best_;
        r.nodes = nodes_;
        return r;
    }

private:
    struct TinyOp {
        int kind, p, s, m, rank, block;
        int pred = -1, weight = -1, mirror = -1;
    };
    bool symmetric() const {
        for (const TinyOp& o : ops_)
            if (o.mirror < 0 || end_[o.mirror] != end_[&o - ops_.data()]) return false;
        return true;
    }
    std::int64_t duration(const TinyOp& o) const {
        const auto it = c_.block.find(o.block);
        if (it != c_.block.end()) return it->second[o.kind];
        return o.kind == 0 ? c_.F : o.kind == 1 ? c_.I : c_.W;
    }
    // Six times the least time an op occupies its rank: a pair's FB may be shared by its two (F&I) or
    // three (F&B) ops.
    std::int64_t occupancy6(const TinyOp& o) const {
        if (!c_.FB || (o.kind == 2 && !c_.fused)) return 6 * duration(o);
        return std::min(6 * duration(o), (c_.fused ? 2 : 3) * *c_.FB);
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
            const std::int64_t done = work_left_[r] > 0 ? free_[r] + (work_left_[r] + 5) / 6 : last_end_[r];
            b = std::max(b, done - (span_ ? origin_[r] : 0));
        }
        return b;
    }

    // Places op i (and partner j >= 0) at its ASAP start if that keeps the sequence sorted.
    void dfs(size_t placed, std::int64_t last_start, int last_rank) {
        ++nodes_;
        if (placed == ops_.size()) {
            if (mirror_only_ && !symmetric()) return;
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
        if (ops_[i].kind == 0 && cap_ && live_[r] + c_.alloc > *cap_) return;
        const std::int64_t d = j >= 0 ? *c_.FB : duration(ops_[i]);
        const int w = j >= 0 && c_.fused ? ops_[j].weight : -1;  // the absorbed W of an F&B
        const std::int64_t saved_free = free_[r], saved_last = last_end_[r];
        const std::int64_t saved_live = live_[r];
        const std::int64_t used = occupancy6(ops_[i]) + (j >= 0 ? occupancy6(ops_[j]) : 0) + (w >= 0 ? occupancy6(ops_[w]) : 0);
        end_[i] = start + d;
        if (j >= 0) end_[j] = start + d;
        if (w >= 0) end_[w] = start + d;
        free_[r] = last_end_[r] = start + d;
        work_left_[r] -= used;
        if (ops_[i].kind == 0) live_[r] += c_.alloc;
        if (ops_[i].kind == 1 || j >= 0) live_[r] -= c_.by_input;
        if (ops_[i].kind == 2 || w >= 0) live_[r] -= c_.alloc - c_.by_input;
        dfs(placed + (j >= 0 ? 2 : 1) + (w >= 0 ? 1 : 0), start, r);
        live_[r] = saved_live;
        work_left_[r] += used;
        free_[r] = saved_free;
        last_end_[r] = saved_last;
        end_[i] = -1;
        if (j >= 0) end_[j] = -1;
        if (w >= 0) end_[w] = -1;
    }

    const Placement& pl_;
    TinyCosts c_;
    std::optional<int> cap_;
    bool span_;
    bool mirror_only_ = false;
    std::vector<TinyOp> ops_;
    std::vector<std::int64_t> origin_, end_, free_, work_left_, last_end_;
    std::vector<std::int64_t> live_;
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
    for (const auto& [block, d] : t.block) {
        OpCosts o;
        o.F = d[0], o.I = d[1], o.W = d[2];
        c.per_block[block] = o;
    }
    return c;
}

SearchProblem problem_of(const Case& k, Objective objective = Objective::Makespan) {
    SearchProblem p;
    p.placement = k.placement;
    p.costs = costs_of(k.costs);
    if (k.cap) p.memory_limit = Rational(*k.cap) / Rational(k.costs.alloc);  // the units' cap as F's multiple
    p.activations = {Rational(1), Rational(k.costs.by_input) / Rational(k.costs.alloc)};
    p.objective = objective;
    if (k.costs.FB) p.overlap = Rational(*k.costs.FB);
    p.pair_kind = k.costs.fused ? PairKind::ForwardBackward : PairKind::ForwardInput;
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
    if (k.cap) vo.memory_limit = Rational(*k.cap) / Rational(k.costs.alloc);
    vo.activations = {Rational(1), Rational(k.costs.by_input) / Rational(k.costs.alloc)};
    const VerifyReport report = verify(*r.schedule, vo);
    CHECK(report.ok());
    Costs costs = costs_of(k.costs);
    if (k.costs.FB) {
        costs.base.FB = Rational(*k.costs.FB);
        for (auto& [block, c] : costs.per_block) c.FB = costs.base.FB;
    }
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

// Both exact encodings on one instance: unsat one tick below the brute-force optimum, sat at it with a schedule
// that re-verifies at exactly that value.
void check_encodings_bracket(const Instance& inst, Ticks optimum, bool strengthen) {
    const TaskBounds bounds = compute_task_bounds(inst, strengthen);
    Z3Query q;
    q.strengthen = strengthen;
    q.deadline = Clock::now() + std::chrono::seconds(20);
    for (auto solve : {solve_time_indexed, solve_disjunctive}) {
        q.bound = optimum / inst.quantum - 1;
        CHECK(solve(inst, bounds, q).answer == Z3Answer::Unsat);
        q.bound = optimum / inst.quantum;
        const Z3Outcome sat = solve(inst, bounds, q);
        REQUIRE(sat.answer == Z3Answer::Sat);
        Schedule s = schedule_from_starts(inst, sat.start, sat.partner);
        const Evaluation e = evaluate_schedule(inst, s);
        CHECK(e.ok);
        CHECK(e.value == optimum);
    }
}

TEST_CASE("search: both Z3 encodings answer unsat one below the optimum and sat at it", "[search]") {
    for (const Case& k : cases()) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const Instance inst = build_instance(problem_of(k));
        for (bool strengthen : {true, false}) check_encodings_bracket(inst, bf.best, strengthen);
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
    for (const Case& k : {Case{"loop P2 M2 FI3", loop(2, 2), TinyCosts{2, 2, 1, 0, 3}, std::nullopt},
                          Case{"dualpipe P2 M4 FI3 cap3", Placement::bidirectional(2, 2), TinyCosts{2, 2, 1, 0, 3}, 3}}) {
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

// Counts the pairs of a schedule whose backward is a fused B.
int fused_pairs(const Schedule& s) {
    int count = 0;
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) count += slot.is_pair() && slot.ops[1].kind == OpKind::B;
    return count;
}

// The search is OPTIMAL at the brute-force optimum with symmetry breaking on and off (lossless both ways).
void check_optimal_with_and_without_symmetry(const Case& k, Ticks best) {
    for (bool symmetry : {true, false}) {
        INFO("symmetry breaking " << symmetry);
        SearchProblem p = problem_of(k);
        p.symmetry_breaking = symmetry;
        const SearchResult r = search(p, quick());
        CHECK(r.status == SearchStatus::Optimal);
        CHECK(r.value == best);
        check_schedule(r, k);
    }
}

TEST_CASE("search: F&B pairs (an F with a full backward, I and W fused) equal the brute force", "[search]") {
    TinyCosts fb{2, 2, 1, 0, 4, true};  // F + I + W = 5 > FB = 4: pairing pays
    TinyCosts fb_comm{2, 3, 1, 1, 5, true};
    for (const Case& k : {Case{"loop P2 M2 FB4", loop(2, 2), fb, std::nullopt},
                          Case{"loop P2 M3 FB4 cap2", loop(2, 3), fb, 2},
                          Case{"dualpipe P2 M4 FB4 cap3", Placement::bidirectional(2, 2), fb, 3},
                          Case{"dualpipe P2 M2 FB5 comm", Placement::bidirectional(2, 1), fb_comm, std::nullopt},
                          Case{"v P2 M2 FB4 cap3", vshape(2, 2), fb, 3}}) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        check_optimal_with_and_without_symmetry(k, bf.best);
    }
    // On the dualpipe instance the optimum needs at least one fused pair (without pairs it is worse).
    const Case k{"dualpipe P2 M4 FB4 cap3", Placement::bidirectional(2, 2), fb, 3};
    Case plain = k;
    plain.costs.FB.reset();
    const auto with = BruteForce(k.placement, k.costs, k.cap, false).solve().best;
    const auto without = BruteForce(plain.placement, plain.costs, plain.cap, false).solve().best;
    CHECK(with < without);
    const SearchResult r = search(problem_of(k), quick());
    REQUIRE(r.schedule);
    CHECK(fused_pairs(*r.schedule) > 0);
}

TEST_CASE("search: per-stage costs equal the brute force, with and without symmetry breaking", "[search]") {
    // Unequal stages: a heavy last stage (LM head and loss), a light first one (embedding), per block.
    auto blocks = [](TinyCosts c, std::map<int, std::array<std::int64_t, 3>> b) {
        c.block = std::move(b);
        return c;
    };
    const TinyCosts base{2, 2, 1, 1, {}};
    for (const Case& k : {Case{"loop P3 M3 heavy last cap2", loop(3, 3), blocks(base, {{0, {1, 1, 1}}, {2, {3, 4, 2}}}), 2},
                          Case{"loop P2 M3 heavy first", loop(2, 3), blocks(base, {{0, {4, 3, 1}}}), std::nullopt},
                          Case{"v P2 M2 cap3", vshape(2, 2), blocks(base, {{0, {1, 2, 1}}, {3, {3, 3, 2}}}), 3},
                          Case{"interleaved P2 V2 M2 cap2", interleaved(2, 2, 2), blocks(base, {{1, {3, 3, 1}}}), 2},
                          Case{"dualpipe P2 M4 cap3", Placement::bidirectional(2, 2), blocks(base, {{1, {3, 2, 2}}}), 3},
                          Case{"dualpipe P2 M2 F&B", Placement::bidirectional(2, 1),
                               blocks(TinyCosts{2, 2, 1, 0, 4, true}, {{1, {3, 2, 2}}}), std::nullopt}}) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        // The instance really has unequal stages.
        const Instance inst = build_instance(problem_of(k));
        std::set<Ticks> forward;
        for (const Task& t : inst.tasks)
            if (t.op.kind == OpKind::F) forward.insert(t.duration);
        CHECK(forward.size() > 1);
        check_optimal_with_and_without_symmetry(k, bf.best);
    }
}

TEST_CASE("search: the analytic bounds (memory-aware warm-up included) never exceed the brute-force optimum", "[search]") {
    for (const Case& k : cases()) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        const Instance inst = build_instance(problem_of(k));
        const LowerBound lb = analytic_lower_bound(inst, compute_task_bounds(inst, true));
        INFO(lb.kind << ": " << lb.derivation);
        CHECK(lb.value * inst.quantum <= Ticks(bf.best));
        for (const Ticks& v : lb.per_rank) CHECK(v * inst.quantum <= Ticks(bf.best));
    }
}

// Issue 13, P=32 M=256 cap 64: ZB-H2 peaks at 2P-1 and ends one W above the optimum; the hand schedule
// with its W's lagging one micro-batch more on ranks 1..P-1 (cap_filled_warm_starts.hpp) reaches it.
// The same happens at P=2, small enough for the brute force.
TEST_CASE("search: the cap-filled Zero Bubble hand schedule reaches the brute-force span optimum, ZB-H2 does not", "[search]") {
    const TinyCosts zb15{18522, 18086, 9337, 601, {}};
    const Case k{"loop P2 M4 ZB 1.5B span cap4", loop(2, 4), zb15, 4};
    const auto bf = BruteForce(k.placement, k.costs, k.cap, true).solve();
    REQUIRE(bf.best > 0);
    const Instance inst = build_instance(problem_of(k, Objective::Span));
    Ticks best = -1;
    for (NamedSchedule& n : cap_filled_warm_starts(inst)) {
        INFO(n.origin);
        const Evaluation e = evaluate_schedule(inst, n.schedule);
        REQUIRE(e.ok);  // within the cap: every variant keeps warm-up + lag + 1 <= cap
        CHECK(e.value >= Ticks(bf.best));
        if (best < 0 || e.value < best) best = e.value;
    }
    CHECK(best == Ticks(bf.best));
    Schedule h2 = generate_zb_h2({2, 4, std::nullopt});
    const Evaluation paper = evaluate_schedule(inst, h2);
    REQUIRE(paper.ok);
    CHECK(paper.value == Ticks(bf.best + zb15.W));  // one W more on the path, as at P=32
    // The search takes it and certifies it without a solver call.
    const SearchResult r = search(problem_of(k, Objective::Span), quick());
    CHECK(r.status == SearchStatus::Optimal);
    CHECK(r.value == Ticks(bf.best));
    CHECK(r.calls.empty());
    check_schedule(r, k);
}

TEST_CASE("search: every cap-filled hand schedule verifies within its cap", "[search]") {
    for (auto [P, M, cap] : {std::array<int, 3>{3, 6, 6}, {4, 8, 5}, {4, 16, 8}, {4, 16, 12}, {5, 10, 9}}) {
        const Case k{"loop", loop(P, M), TinyCosts{3, 4, 2, 1, {}}, cap};
        const Instance inst = build_instance(problem_of(k));
        const auto starts = cap_filled_warm_starts(inst);
        INFO("P=" << P << " M=" << M << " cap " << cap);
        CHECK(!starts.empty());
        for (const NamedSchedule& n : starts) {
            INFO(n.origin);
            VerifyOptions vo;
            vo.memory_limit = Rational(cap);
            CHECK(verify(n.schedule, vo).ok());
        }
    }
    // Not for other placements, nor without a cap.
    CHECK(cap_filled_warm_starts(build_instance(problem_of({"v", vshape(2, 4), TinyCosts{}, 4}))).empty());
    CHECK(cap_filled_warm_starts(build_instance(problem_of({"none", loop(2, 4), TinyCosts{}, std::nullopt}))).empty());
}

namespace {

// The ops of one kind on one rank, in order.
std::vector<Op> ops_of_kind(const std::vector<Slot>& slots, bool forwards) {
    std::vector<Op> out;
    for (const Slot& s : slots)
        if ((s.ops[0].kind == OpKind::F) == forwards) out.push_back(s.ops[0]);
    return out;
}

}  // namespace

TEST_CASE("search: a warm start over the cap is repaired by postponing forwards only", "[search]") {
    // GPipe split into F, I, W holds every micro-batch at once: M = 4 activations per rank.
    Schedule gpipe = generate_gpipe({2, 4, std::nullopt});
    for (auto& slots : gpipe.ranks) {
        std::vector<Slot> split;
        for (const Slot& s : slots) {
            const Op& op = s.ops[0];
            if (op.kind != OpKind::B) {
                split.push_back(s);
                continue;
            }
            split.push_back(Slot::single({OpKind::I, op.pipeline, op.stage, op.microbatch}));
            split.push_back(Slot::single({OpKind::W, op.pipeline, op.stage, op.microbatch}));
        }
        slots = split;
    }
    VerifyOptions at2;
    at2.memory_limit = Rational(2);
    REQUIRE(!verify(gpipe, at2).ok());
    const auto repaired = repaired_to_cap(gpipe, 2);
    REQUIRE(repaired);
    CHECK(verify(*repaired, at2).ok());
    for (size_t r = 0; r < gpipe.ranks.size(); ++r) {
        // Only forwards moved: each kind's own order is unchanged.
        CHECK(ops_of_kind(repaired->ranks[r], true) == ops_of_kind(gpipe.ranks[r], true));
        CHECK(ops_of_kind(repaired->ranks[r], false) == ops_of_kind(gpipe.ranks[r], false));
    }
    CHECK_FALSE(repaired_to_cap(gpipe, 4));  // already within the cap: nothing to repair
    // In the search: DualPipe at the 1F1B cap P (its split order peaks at P+1) becomes a warm start.
    const Case k{"dualpipe P4 M8 cap4", Placement::bidirectional(4, 4), TinyCosts{18522, 18086, 9337, 601, {}}, 4};
    SearchOptions o = quick();
    o.time_limit = 2;
    o.engine = SearchEngine::None;
    o.warm_starts = {{"generator:dualpipe", generate_dualpipe({4, 8, std::nullopt})}};
    const SearchResult r = search(problem_of(k), o);
    bool used = false;
    for (const std::string& line : r.log)
        used = used || (line.find("dualpipe+split(backward first)+cap-repair: ") != std::string::npos &&
                        line.find("not used") == std::string::npos);
    CHECK(used);
    check_schedule(r, k);
}

// Issue 13, the V map's cool-down (solver/cool_down_bound.hpp): after rank P-1's last forward F(P, M-1)
// the gradient of that micro-batch returns after D = (P-1)(F+I+2comm), and after I(P-1, M-1) the chain
// to rank 0 and its W needs E = (P-1)(I+comm)+W. With cap 2P the rank holds 2P activations then: when the
// 2P-2 other I's and one W fill D, whole W's cannot cover E exactly, and the best order idles
// E - (2P-1)W after its last forward (by hand: W's deferred past I(P-1, M-1) are all but one).
TEST_CASE("search: the exact cool-down idle of the V map's last rank equals the hand value", "[search]") {
    const TinyCosts zb15{18522, 18086, 9337, 601, {}};
    for (int P : {2, 3, 4}) {
        INFO("P=" << P);
        const Case k{"v ZB 1.5B cap 2P", vshape(P, 2 * P), zb15, 2 * P};
        const Instance inst = build_instance(problem_of(k));
        const std::int64_t D = (P - 1) * (zb15.F + zb15.I + 2 * zb15.comm), E = (P - 1) * (zb15.I + zb15.comm) + zb15.W;
        REQUIRE((2 * P - 2) * zb15.I + zb15.W >= D);  // the D window can be filled: only the end idles
        const auto cool = cool_down_idle(inst, compute_task_bounds(inst, true), P - 1);
        REQUIRE(cool.size() == 1);
        CHECK(inst.tasks[cool[0].last_forward].op == Op{OpKind::F, 0, P, 2 * P - 1});
        CHECK(cool[0].idle * inst.quantum == Ticks(E - (2 * P - 1) * zb15.W));
    }
}

// P=8: the 14 other I's and one W fall short of D by 7(F-I+2comm) - W, and E - 15W remains at the end;
// together that is the aggregate (D + 2I + E) - 16(I+W) the rank bound already had.
TEST_CASE("search: at V P=8 cap 16 the exact cool-down idle equals the aggregate one", "[search]") {
    const TinyCosts zb15{18522, 18086, 9337, 601, {}};
    const Case k{"v P8 M16 ZB 1.5B cap 16", vshape(8, 16), zb15, 16};
    const Instance inst = build_instance(problem_of(k));
    const auto cool = cool_down_idle(inst, compute_task_bounds(inst, true), 7);
    REQUIRE(cool.size() == 1);
    const std::int64_t D = 7 * (zb15.F + zb15.I + 2 * zb15.comm), E = 7 * (zb15.I + zb15.comm) + zb15.W;
    CHECK(cool[0].idle * inst.quantum == Ticks(D + 2 * zb15.I + E - 16 * (zb15.I + zb15.W)));
}

// The bound with the exact cool-down never exceeds a brute-force optimum, and on the V map with the
// Zero Bubble cost ratios it meets it.
TEST_CASE("search: the cool-down bound never exceeds the brute-force optimum", "[search]") {
    const TinyCosts zb15{18522, 18086, 9337, 601, {}}, uneven{3, 4, 2, 1, {}};
    for (const Case& k : {Case{"v P2 M2 ZB cap4", vshape(2, 2), zb15, 4}, Case{"v P2 M3 ZB cap4", vshape(2, 3), zb15, 4},
                          Case{"v P2 M3 ZB cap3", vshape(2, 3), zb15, 3}, Case{"v P2 M3 uneven cap2", vshape(2, 3), uneven, 2},
                          Case{"loop P2 M4 ZB cap2", loop(2, 4), zb15, 2}, Case{"loop P3 M3 ZB cap2", loop(3, 3), zb15, 2},
                          Case{"dualpipe P2 M4 ZB cap2", Placement::bidirectional(2, 2), zb15, 2}}) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        const Instance inst = build_instance(problem_of(k));
        const TaskBounds bounds = compute_task_bounds(inst, true);
        const LowerBound lb = analytic_lower_bound(inst, bounds);
        INFO(lb.kind << ": " << lb.derivation << " / brute force " << bf.best);
        CHECK(lb.value * inst.quantum <= Ticks(bf.best));
        for (const Ticks& v : lb.per_rank) CHECK(v * inst.quantum <= Ticks(bf.best));
        if (k.name == "v P2 M3 ZB cap4") CHECK(lb.value * inst.quantum == Ticks(bf.best));
    }
}

// Issue 13: the idle-budget cuts (solver/rank_budget.hpp) are implied constraints, so the disjunctive
// encoding with them still answers unsat one below the brute-force optimum and sat at it, including the
// V map with the Zero Bubble costs, where the warm-up and cool-down idles are not zero.
namespace {

std::vector<Case> budget_cases() {
    std::vector<Case> out;
    for (const Case& k : cases())
        if (!k.costs.FB) out.push_back(k);
    const TinyCosts zb15{18522, 18086, 9337, 601, {}};
    out.push_back({"v P2 M3 ZB cap4", vshape(2, 3), zb15, 4});
    out.push_back({"v P2 M3 ZB cap3", vshape(2, 3), zb15, 3});
    out.push_back({"loop P3 M3 ZB cap2", loop(3, 3), zb15, 2});
    out.push_back({"dualpipe P2 M4 ZB cap2", Placement::bidirectional(2, 2), zb15, 2});
    return out;
}

// A budget case with its brute-force optimum and what the solver parts see: instance, strengthened
// bounds and idle budgets.
struct BudgetSetup {
    pp::test::BruteForceResult bf;
    Instance inst;
    TaskBounds bounds;
    std::vector<RankBudget> budgets;
};

BudgetSetup budget_setup(const Case& k) {
    BudgetSetup s{BruteForce(k.placement, k.costs, k.cap, false).solve(), build_instance(problem_of(k)), {}, {}};
    REQUIRE(s.bf.best > 0);
    s.bounds = compute_task_bounds(s.inst, true);
    s.budgets = rank_budgets(s.inst, s.bounds);
    return s;
}

}  // namespace

TEST_CASE("search: the idle-budget cuts keep the disjunctive encoding exact", "[search]") {
    for (const Case& k : budget_cases()) {
        INFO(k.name);
        const BudgetSetup setup = budget_setup(k);
        const auto& [bf, inst, bounds, budgets] = setup;
        bool some_idle = false;
        for (const RankBudget& b : budgets) some_idle = some_idle || forced_idle(b) > 0;
        if (k.name.rfind("v P2 M3 ZB", 0) == 0) CHECK(some_idle);  // the cuts carry the memory-aware idle
        Z3Query q;
        q.budgets = &budgets;
        q.deadline = Clock::now() + std::chrono::seconds(20);
        q.bound = bf.best / inst.quantum - 1;
        CHECK(solve_disjunctive_in(inst, windows_for_bound(inst, bounds, q.bound, true), q).answer == Z3Answer::Unsat);
        q.bound = bf.best / inst.quantum;
        const Z3Outcome sat = solve_disjunctive_in(inst, windows_for_bound(inst, bounds, q.bound, true), q);
        REQUIRE(sat.answer == Z3Answer::Sat);
        Schedule s = schedule_from_starts(inst, sat.start, sat.partner);
        const Evaluation e = evaluate_schedule(inst, s);
        CHECK(e.ok);
        CHECK(e.value == Ticks(bf.best));
    }
}

// Subset relaxations (solver/subset_relaxation.hpp): a relaxation is never unsat at a bound some schedule
// meets (every single rank, every pair of ranks, with the budget cuts of the ranks kept whole, and the
// later micro-batches of two ranks without them), and keeping every task is the full problem again.
TEST_CASE("search: subset relaxations never exceed the brute-force optimum", "[search]") {
    for (const Case& k : budget_cases()) {
        INFO(k.name);
        const BudgetSetup setup = budget_setup(k);
        const auto& [bf, inst, bounds, budgets] = setup;
        const Ticks optimum = bf.best / inst.quantum;
        auto solve = [&](const std::vector<int>& ranks, int first, Ticks bound) {
            const TaskSubproblem sub = task_subproblem(inst, tasks_of_ranks(inst, ranks, first));
            std::vector<RankBudget> kept(budgets.size());
            if (first == 0)
                for (int r : ranks) kept[r] = budgets[r];
            Z3Query q;
            q.bound = bound;
            q.budgets = &kept;
            q.deadline = Clock::now() + std::chrono::seconds(20);
            return solve_task_subproblem(sub, windows_for_bound(inst, bounds, bound, true), q).answer;
        };
        for (int r = 0; r < inst.ranks; ++r) {
            INFO("rank " << r);
            CHECK(solve({r}, 0, optimum) == Z3Answer::Sat);
            if (r + 1 < inst.ranks) {
                CHECK(solve({r, r + 1}, 0, optimum) == Z3Answer::Sat);
                CHECK(solve({r, r + 1}, 1, optimum) == Z3Answer::Sat);
            }
        }
        std::vector<int> all(inst.ranks);
        for (int r = 0; r < inst.ranks; ++r) all[r] = r;
        CHECK(solve(all, 0, optimum) == Z3Answer::Sat);
        CHECK(solve(all, 0, optimum - 1) == Z3Answer::Unsat);
    }
}

// The relaxation-guided completion (solver/pinned_completion.hpp) at the brute-force optimum: its
// relaxation is never unsat there, and a completion it finds is a schedule at the optimum.
TEST_CASE("search: the relaxation-guided completion never refutes a feasible bound", "[search]") {
    for (const Case& k : budget_cases()) {
        INFO(k.name);
        const BudgetSetup setup = budget_setup(k);
        const auto& [bf, inst, bounds, budgets] = setup;
        Z3Query q;
        q.bound = bf.best / inst.quantum;
        q.deadline = Clock::now() + std::chrono::seconds(20);
        const Windows w = windows_for_bound(inst, bounds, q.bound, true);
        const CompletionOutcome out = complete_from_relaxation(inst, w, budgets, inst.ranks - 1, inst.ranks - 2, q, 0.5);
        CHECK(out.relaxation.answer == Z3Answer::Sat);
        if (out.completion.answer == Z3Answer::Sat) {
            Schedule s = schedule_from_starts(inst, out.completion.start, out.completion.partner);
            const Evaluation e = evaluate_schedule(inst, s);
            CHECK(e.ok);
            CHECK(e.value == Ticks(bf.best));
        }
        // Pinning the ops of a rank at their times in a schedule at the optimum keeps that schedule inside.
        const Z3Outcome full = solve_disjunctive_in(inst, w, q);
        REQUIRE(full.answer == Z3Answer::Sat);
        std::vector<bool> pin(inst.size(), false);
        for (int t : inst.rank_tasks[0]) pin[t] = true;
        const Windows pinned = pinned_windows(inst, w, pin, full.start);
        CHECK(pinned.empty_task < 0);
        for (size_t t = 0; t < inst.size(); ++t) {
            CHECK(pinned.est[t] <= full.start[t]);
            CHECK(full.start[t] <= pinned.lst[t]);
        }
        // Chaining rank 0 in that schedule's order is a restriction that keeps it: sat at the optimum,
        // and never better than the optimum.
        std::vector<int> order = inst.rank_tasks[0];
        std::sort(order.begin(), order.end(), [&](int a, int b) { return full.start[a] < full.start[b]; });
        const Instance chained = with_rank_order(inst, order);
        const TaskBounds cb = compute_task_bounds(chained, true);
        Z3Query cq = q;
        cq.budgets = &budgets;
        CHECK(solve_disjunctive_in(chained, windows_for_bound(chained, cb, q.bound, true), cq).answer == Z3Answer::Sat);
        cq.bound = q.bound - 1;
        CHECK(solve_disjunctive_in(chained, windows_for_bound(chained, cb, cq.bound, true), cq).answer == Z3Answer::Unsat);
    }
}

// The mirror-symmetric query (solver/mirror_symmetry.hpp) against the brute force restricted to that
// class: Z3 with the starts of mirrored tasks tied is sat at the best symmetric makespan and unsat one
// below, its model re-times within the bound and is symmetric; the class optimum is never below the
// unrestricted one (on these tiny cases they coincide; a case where they differ is not known yet, so
// the search reports an unsat as a bound on the class, never as a lower bound).
TEST_CASE("search: the mirror-symmetric query equals the brute force over symmetric schedules", "[search]") {
    const TinyCosts unit{1, 1, 1, 0, {}}, uneven{3, 4, 2, 1, {}};
    const std::vector<Case> cases{
        {"dualpipe P2 M2 uneven", Placement::bidirectional(2, 1), uneven, std::nullopt},
        {"dualpipe P2 M4 unit cap2", Placement::bidirectional(2, 2), unit, 2},
        {"dualpipe P2 M4 uneven cap2", Placement::bidirectional(2, 2), uneven, 2},
        {"dualpipe P2 M4 uneven cap3", Placement::bidirectional(2, 2), uneven, 3},
        {"dualpipe P4 M2 uneven", Placement::bidirectional(4, 1), uneven, std::nullopt},
    };
    for (const Case& k : cases) {
        INFO(k.name);
        const auto all = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const auto symmetric = BruteForce(k.placement, k.costs, k.cap, false, true).solve();
        REQUIRE(all.best > 0);
        REQUIRE(symmetric.best >= all.best);
        const Instance inst = build_instance(problem_of(k));
        const std::optional<MirrorMap> mirror = mirror_map(inst);
        REQUIRE(mirror);
        const std::vector<int> tied = tied_starts(*mirror);
        const TaskBounds bounds = compute_task_bounds(inst, true);
        Z3Query q;
        q.tied = &tied;
        q.deadline = Clock::now() + std::chrono::seconds(20);
        q.bound = symmetric.best / inst.quantum;
        const Z3Outcome at = solve_disjunctive(inst, bounds, q);
        REQUIRE(at.answer == Z3Answer::Sat);
        for (size_t t = 0; t < inst.size(); ++t) CHECK(at.start[t] == at.start[mirror->task[t]]);
        Schedule s = schedule_from_starts(inst, at.start, at.partner);
        const Evaluation e = evaluate_schedule(inst, s);
        CHECK(e.ok);
        CHECK(e.value == Ticks(symmetric.best));
        q.bound -= 1;
        CHECK(solve_disjunctive(inst, bounds, q).answer == Z3Answer::Unsat);
    }
}

// Issue 32: the Zero Bubble paper's memory model, in which I releases part of a stash (F = 1, I = 1 - M_W/M_B).
// The brute force counts integer units (F allocates alloc, I releases by_input); the search reads the same
// as --activation-sizes F=1,I=by_input/alloc with the cap cap/alloc.
namespace {
TinyCosts sized(TinyCosts c, std::int64_t alloc, std::int64_t by_input) {
    c.alloc = alloc, c.by_input = by_input;
    return c;
}
std::vector<Case> sized_cases() {
    const TinyCosts unit{1, 1, 1, 0, {}}, uneven{3, 4, 2, 1, {}}, wide{2, 1, 1, 0, {}}, heavy_w{1, 1, 3, 0, {}};
    return {
        {"loop P2 M3 unit I=1/2 cap1.5", loop(2, 3), sized(unit, 2, 1), 3},
        {"loop P2 M4 heavy-W I=1/2 cap1.5", loop(2, 4), sized(heavy_w, 2, 1), 3},
        {"loop P3 M3 uneven I=2/3 cap4/3", loop(3, 3), sized(uneven, 3, 2), 4},
        {"loop P3 M3 wide I=1/3 cap5/3", loop(3, 3), sized(wide, 3, 1), 5},
        {"loop P3 M4 heavy-W I=83/131 cap2", loop(3, 4), sized(heavy_w, 131, 83), 262},
        {"v P2 M2 uneven I=1/2 cap2.5", vshape(2, 2), sized(uneven, 2, 1), 5},
        {"interleaved P2 V2 M2 wide I=2/3 cap7/3", interleaved(2, 2, 2), sized(wide, 3, 2), 7},
        {"dualpipe P2 M2 unit I=1/2 cap2.5", Placement::bidirectional(2, 1), sized(unit, 2, 1), 5},
        {"loop P2 M3 unit I=F cap1", loop(2, 3), sized(unit, 1, 1), 1},
    };
}
}  // namespace

TEST_CASE("search: fractional activation sizes (I releases part of a stash) equal the brute force", "[search][issue32]") {
    for (const Case& k : sized_cases()) {
        INFO(k.name);
        for (bool span : {false, true}) {
            const auto bf = BruteForce(k.placement, k.costs, k.cap, span).solve();
            REQUIRE(bf.best > 0);
            SearchProblem problem = problem_of(k, span ? Objective::Span : Objective::Makespan);
            const SearchResult r = search(problem, quick());
            CHECK(r.status == SearchStatus::Optimal);
            CHECK(r.value == bf.best);
            CHECK(r.lower_bound <= bf.best);
            check_schedule(r, k);
            problem.symmetry_breaking = false;
            CHECK(search(problem, quick()).value == bf.best);
        }
    }
}

TEST_CASE("search: under fractional sizes both Z3 encodings answer unsat below the optimum and sat at it", "[search][issue32]") {
    for (const Case& k : sized_cases()) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const Instance inst = build_instance(problem_of(k));
        REQUIRE(inst.weighted.has_value() == (k.costs.by_input > 0));
        check_encodings_bracket(inst, bf.best, true);
    }
}

TEST_CASE("search: a fractional size lets more stashes live than whole ones at the same cap, never fewer", "[search][issue32]") {
    // Every schedule within the whole-stash cap is within the fractional one (a stash never holds more than 1),
    // so the fractional optimum is at most the whole one (two brute forces, no search involved).
    int strictly_better = 0;
    for (const Case& k : sized_cases()) {
        if (k.costs.by_input == 0 || k.costs.by_input == k.costs.alloc) continue;
        INFO(k.name);
        TinyCosts whole = k.costs;
        whole.alloc = 1, whole.by_input = 0;
        const int whole_cap = static_cast<int>(*k.cap / k.costs.alloc);
        const auto fractional = BruteForce(k.placement, k.costs, k.cap, false).solve();
        const auto integral = BruteForce(k.placement, whole, whole_cap, false).solve();
        if (integral.best < 0) continue;  // below the whole-stash floor: nothing to compare
        CHECK(fractional.best <= integral.best);
        strictly_better += fractional.best < integral.best;
    }
    CHECK(strictly_better > 0);  // the cases exercise what the whole-stash model cannot express
}

TEST_CASE("search: the span memory bound (warm-up and cool-down under the cap) never exceeds the brute-force span", "[search][issue32]") {
    std::vector<Case> all = sized_cases();
    const TinyCosts slow_return{1, 3, 1, 1, {}};  // a long round trip: the cool-down idle is large
    all.push_back({"loop P3 M3 slow-return I=1/2 cap2", loop(3, 3), sized(slow_return, 2, 1), 4});
    all.push_back({"loop P2 M4 slow-return I=1/2 cap2", loop(2, 4), sized(slow_return, 2, 1), 4});
    all.push_back({"loop P2 M5 slow-return I=1/2 cap2", loop(2, 5), sized(slow_return, 2, 1), 4});
    all.push_back({"loop P2 M4 slow-return cap2", loop(2, 4), slow_return, 2});
    int fired = 0, tight = 0;
    for (const Case& k : all) {
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, true).solve();
        REQUIRE(bf.best > 0);
        const Instance inst = build_instance(problem_of(k, Objective::Span));
        const LowerBound lb = analytic_lower_bound(inst, compute_task_bounds(inst, true));
        INFO(lb.kind << ": " << lb.derivation);
        CHECK(lb.value * inst.quantum <= Ticks(bf.best));
        for (const Ticks& v : lb.per_rank) CHECK(v * inst.quantum <= Ticks(bf.best));
        if (lb.kind == "rank-load+memory") {
            ++fired;
            tight += lb.value * inst.quantum == Ticks(bf.best);
        }
    }
    CHECK(fired > 0);  // the bound is exercised, and at least once it is the optimum itself
    CHECK(tight > 0);
}

// Issue 42: the warm-up chain (solver/warm_up_chain_bound.hpp) weighs every rank's warm-up idle against the
// delay a longer warm-up passes to the ranks that wait for its first I (the earlier stages; on a V or DualPipe,
// in both directions). Sound against the brute force on both objectives, with
// and without symmetry breaking, under whole and fractional stashes; and above every one-rank bound somewhere.
TEST_CASE("search: the warm-up chain bound never exceeds the brute-force optimum", "[search][issue42]") {
    // I + comm just above F: each rank's round trip leaves part of a forward idle (the Zero Bubble cells' shape)
    const TinyCosts zb_like{10, 11, 5, 1, {}}, uneven{3, 4, 2, 1, {}}, slow_return{2, 5, 1, 1, {}};
    const std::vector<Case> all{
        {"loop P3 M3 zb-like", loop(3, 3), zb_like, std::nullopt},
        {"loop P3 M3 zb-like cap2", loop(3, 3), zb_like, 2},
        {"loop P3 M4 zb-like cap2", loop(3, 4), zb_like, 2},
        {"loop P3 M4 zb-like I=1/2 cap2", loop(3, 4), sized(zb_like, 2, 1), 4},
        {"loop P2 M4 zb-like cap2", loop(2, 4), zb_like, 2},
        {"loop P4 M2 zb-like", loop(4, 2), zb_like, std::nullopt},
        {"loop P3 M3 uneven cap2", loop(3, 3), uneven, 2},
        {"loop P3 M4 slow-return I=1/3 cap5/3", loop(3, 4), sized(slow_return, 3, 1), 5},
        {"loop P2 M5 slow-return cap2", loop(2, 5), slow_return, 2},
        // several stages per rank: the chain runs through both directions of a V and both pipelines of DualPipe
        {"v P2 M2 zb-like cap3", vshape(2, 2), zb_like, 3},
        {"v P2 M3 zb-like I=1/2 cap3", vshape(2, 3), sized(zb_like, 2, 1), 6},
        {"interleaved P2 V2 M2 zb-like cap2", interleaved(2, 2, 2), zb_like, 2},
        {"interleaved P2 V2 M3 uneven", interleaved(2, 2, 3), uneven, std::nullopt},
        {"dualpipe P2 M2 zb-like cap2", Placement::bidirectional(2, 1), zb_like, 2},
        {"dualpipe P2 M4 uneven cap3", Placement::bidirectional(2, 2), uneven, 3},
    };
    int fired = 0, tight = 0, above_one_rank = 0;
    for (const Case& k : all)
        for (bool span : {false, true}) {
            const auto bf = BruteForce(k.placement, k.costs, k.cap, span).solve();
            for (bool fifo : {true, false}) {
                INFO(k.name << (span ? " span" : " makespan") << (fifo ? "" : " no symmetry breaking"));
                REQUIRE(bf.best > 0);
                SearchProblem problem = problem_of(k, span ? Objective::Span : Objective::Makespan);
                problem.symmetry_breaking = fifo;
                const Instance inst = build_instance(problem);
                const TaskBounds bounds = compute_task_bounds(inst, true);
                LowerBound chain;
                warm_up_chain_bound(inst, bounds, chain);
                INFO(chain.derivation << " / brute force " << bf.best);
                CHECK(chain.value * inst.quantum <= Ticks(bf.best));
                fired += chain.kind == "warm-up-chain";
                tight += chain.value * inst.quantum == Ticks(bf.best);
                above_one_rank += analytic_lower_bound(inst, bounds).kind == "warm-up-chain";
            }
        }
    CHECK(fired > 0);
    CHECK(tight > 0);
    CHECK(above_one_rank > 0);  // somewhere it sees more than every one-rank bound
}

// The chain's value on two Zero Bubble ZB-2p cells, recomputed here by a different method: enumerate how many
// forwards n_r each rank runs before its first I (from the last rank down), with the closed forms of the
// uniform-cost pipeline: h_r = r(F+comm), the k-th forward of rank r ends no earlier than h_r + (k+1)F, the
// last rank's first I starts no earlier than h_{P-1} + F, and each earlier stage's a further I + comm later.
// Rank r's first I is then at b_r = max(that, h_r + n_r F) and it idles b_r - h_r - n_r F; the least over the
// choices of the largest idle, plus the work M(F+I+W), is the bound. For 6.2B p=8 m=24 by hand: each hop adds
// F+I+2comm = 2F + 0.78, so rank r >= 1 idles (7-r)0.78 unless it delays; the least largest idle is 2.34 (ranks
// 3..0 take one more forward, rank 4 idles 3 x 0.78), and 1900.476 = 1898.136 + 2.34.
namespace {
Rational enumerated_chain_idle(int P, std::int64_t K, const Rational& F, const Rational& I, const Rational& c) {
    std::optional<Rational> best;
    std::function<void(int, Rational, Rational)> visit = [&](int r, Rational from, Rational worst) {
        if (best && worst >= *best) return;
        if (r < 0) {
            best = worst;
            return;
        }
        const Rational h = Rational(r) * (F + c);
        if (r == P - 1) from = h + F;
        for (std::int64_t n = 0; n <= K; ++n) {
            const Rational b = std::max(from, h + Rational(n) * F);
            visit(r - 1, b + I + c, std::max(worst, b - h - Rational(n) * F));
            if (h + Rational(n) * F >= from) break;  // more forwards only delay the earlier stages
        }
    };
    visit(P - 1, Rational(0), Rational(0));
    return *best;
}
}  // namespace

TEST_CASE("search: the warm-up chain bound on Zero Bubble cells equals an enumeration of the forwards per rank", "[search][issue42]") {
    struct Cell {
        const char* costs;
        Rational F, I, W, comm;
        int P, M;
        Rational kept;  // what W releases: M_W / M_B
    };
    for (const Cell& cell : {Cell{"F=29.718,I=29.444,W=19.927,comm=0.527", Rational(29718, 1000), Rational(29444, 1000),
                                  Rational(19927, 1000), Rational(527, 1000), 8, 24, Rational(16, 37)},
                             Cell{"F=18.513,I=18.086,W=9.331,comm=0.626", Rational(18513, 1000), Rational(18086, 1000),
                                  Rational(9331, 1000), Rational(626, 1000), 8, 32, Rational(48, 131)}}) {
        INFO(cell.costs);
        SearchProblem problem;
        problem.placement = loop(cell.P, cell.M);
        problem.costs = parse_costs(cell.costs);
        problem.memory_limit = Rational(2 * cell.P);
        problem.activations = {Rational(1), Rational(1) - cell.kept};
        problem.objective = Objective::Span;
        const Instance inst = build_instance(problem);
        LowerBound chain;
        warm_up_chain_bound(inst, compute_task_bounds(inst, true), chain);
        REQUIRE(chain.kind == "warm-up-chain");
        const Rational work = Rational(cell.M) * (cell.F + cell.I + cell.W);
        const Rational idle = enumerated_chain_idle(cell.P, 2 * cell.P, cell.F, cell.I, cell.comm);
        CHECK(inst.to_units(chain.value) == work + idle);
        if (cell.P == 8 && cell.M == 24) CHECK(work + idle == Rational(1900476, 1000));
    }
}

// The independent checker's view of a search instance (checker/search.cpp), against the brute force: its arithmetic
// bound never exceeds the optimum, and its SMT model (z3 and cvc5) is unsat below the optimum and sat just above it
// -- whole, and relaxed to each rank -- with and without the micro-batch order. So the checker neither passes a
// bound that is too high nor fails to certify the true optimum on these instances.
TEST_CASE("search certificates: the checker's bound and model against the brute force", "[search][search-certificate]") {
    std::vector<Case> all = cases();
    for (const Case& k : sized_cases()) all.push_back(k);
    int certified = 0;
    const auto file = std::filesystem::temp_directory_path() / fmt::format("pp-search-model-{}.smt2", ::getpid());
    for (const Case& k : all) {
        if (k.costs.FB) continue;  // pairs: the checker's model does not encode them (NOT CHECKED)
        INFO(k.name);
        const auto bf = BruteForce(k.placement, k.costs, k.cap, false).solve();
        REQUIRE(bf.best > 0);
        const SearchResult r = search(problem_of(k), quick());
        REQUIRE(r.schedule);
        Schedule s = *r.schedule;
        s.costs = costs_of(k.costs);
        if (k.cap) s.memory_limit = Rational(*k.cap) / Rational(k.costs.alloc);
        s.activation_sizes = ActivationModel{Rational(1), Rational(k.costs.by_input) / Rational(k.costs.alloc)};
        for (const bool fifo : {true, false}) {
            check::CheckOptions options;
            options.fifo = fifo;
            CHECK(check::search_arithmetic_bound(s, options) <= Rational(bf.best));
            auto answers = [&](const Rational& bound, std::optional<int> rank) {
                std::ofstream(file) << check::search_model_query(s, bound, options, rank);
                std::vector<std::string> said;
                for (const std::string solver : {"z3", "cvc5"}) {
                    const check::SolverAnswer a = check::run_solver(solver, file, 60, 1);
                    said.push_back(a.error.empty() && a.answers.size() == 1 ? a.answers[0] : "error: " + a.error);
                }
                return said;
            };
            const Rational above = Rational(bf.best) + Rational(1, 2);
            CHECK(answers(above, std::nullopt) == std::vector<std::string>{"sat", "sat"});
            for (int rank = 0; rank < s.placement.ranks; ++rank)
                CHECK(answers(above, rank) == std::vector<std::string>{"sat", "sat"});
            const auto at_optimum = answers(Rational(bf.best), std::nullopt);
            CHECK(at_optimum == std::vector<std::string>{"unsat", "unsat"});
            certified += at_optimum == std::vector<std::string>{"unsat", "unsat"};
        }
    }
    std::filesystem::remove(file);
    CHECK(certified >= 30);
}
