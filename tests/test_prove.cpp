// The prover (`prove`, `formula`, `refute`) checked against facts established without it: closed forms
// worked out by hand, and exact simulation of the generator's output at concrete M and costs. A verdict is
// only trusted when a test can make it fail: broken generator variants must be REFUTED, and each
// counterexample is re-checked here by verification or simulation.
#include "cli_runner.hpp"

#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "verifier/memory.hpp"
#include "proofs/prove.hpp"
#include "proofs/formula.hpp"
#include "verifier/simulate.hpp"
#include "proofs/symbolic.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <tuple>

using namespace pp;
using pp::test::run_cli;

namespace {

Schedule generate(const std::string& family, int P, int M) {
    const ScheduleFamily* f = find_family(family);
    REQUIRE(f != nullptr);
    return f->generate({P, M, std::nullopt});
}

FamilySpec spec_of(const std::string& family, int P) {
    std::string why;
    auto spec = family_spec(family, P, &why);
    INFO(why);
    REQUIRE(spec);
    return *spec;
}

struct Point {
    Rational F, I, W, FB, comm{0};
    Rational B() const { return I + W; }
};

Costs costs_of(const Point& p) {
    Costs c;
    c.base.F = p.F;
    c.base.I = p.I;
    c.base.W = p.W;
    c.base.B = p.I + p.W;
    c.base.FB = p.FB;
    c.comm = p.comm;
    return c;
}

CostPoint cost_point(const Point& p) { return {p.F, p.I, p.W, p.B(), p.FB, p.comm}; }

// A random point of the prover's default region (F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0), with
// small denominators so that ties between pieces happen too.
Point random_point(std::mt19937_64& rng, bool with_comm = false) {
    auto pick = [&](int hi, int den) { return Rational(1 + static_cast<std::int64_t>(rng() % hi), 1 + static_cast<std::int64_t>(rng() % den)); };
    Point p;
    p.F = pick(12, 4);
    p.I = pick(12, 4);
    p.W = pick(12, 4);
    p.FB = (p.F + p.B()) * Rational(1 + static_cast<std::int64_t>(rng() % 8), 8);
    if (with_comm) p.comm = Rational(static_cast<std::int64_t>(rng() % 4), 1 + static_cast<std::int64_t>(rng() % 3));
    return p;
}

// Duration of one slot, read off the costs here rather than through the simulator.
Rational slot_cost(const Slot& s, const Costs& c) {
    if (s.is_pair()) return *c.base.FB;
    switch (s.ops[0].kind) {
        case OpKind::F: return c.base.F;
        case OpKind::I: return c.base.I;
        case OpKind::W: return c.base.W;
        case OpKind::B: return c.base.full_backward();
    }
    return 0;
}

// bubble = max over ranks of (makespan - busy), from the exact simulation's end times and busy times summed here.
Rational sim_bubble(const Schedule& s, const Costs& c) {
    const Simulation sim = simulate(s, c);
    Ticks makespan = 0;
    for (Ticks e : sim.end) makespan = std::max(makespan, e);
    const Rational span = sim.scale.to_units(makespan);
    Rational worst{0};
    for (const auto& rank : s.ranks) {
        Rational busy{0};
        for (const Slot& slot : rank) busy += slot_cost(slot, c);
        worst = std::max(worst, span - busy);
    }
    return worst;
}

ProofResult prove_symbolic(const FamilySpec& spec, Property property = Property::BubbleConstant) {
    ProveOptions o;
    o.property = property;
    return prove(spec, o);
}

// The family with its generator's output passed through `change` (the same plumbing for broken and intact).
FamilySpec variant(FamilySpec spec, std::function<void(Schedule&)> change) {
    auto base = spec.generate;
    spec.name += "-variant";
    spec.generate = [base, change](int M) {
        Schedule s = base(M);
        change(s);
        return s;
    };
    return spec;
}

bool has_violation(const VerifyReport& report, std::initializer_list<ViolationKind> kinds) {
    for (const auto& v : report.violations)
        for (auto k : kinds)
            if (v.kind == k) return true;
    return false;
}

// Position of the slot holding op on its rank, or -1.
int find_slot(const std::vector<Slot>& rank, const Op& op) {
    for (size_t k = 0; k < rank.size(); ++k)
        for (const Op& o : rank[k])
            if (o == op) return static_cast<int>(k);
    return -1;
}

Rational parse_json_rational(const nlohmann::json& v) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    auto r = parse_rational(text);
    INFO(text);
    REQUIRE(r);
    return *r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------

TEST_CASE("prove: 1F1B bubble is constant and equals (P-1)(F+B)", "[prove]") {
    std::mt19937_64 rng(11);
    for (int P = 2; P <= 5; ++P) {
        INFO("P=" << P);
        const ProofResult r = prove_symbolic(spec_of("1f1b", P));
        REQUIRE(r.verdict == Verdict::Proved);
        REQUIRE(r.bubble_symbolic);
        for (int k = 0; k < 6; ++k) {
            const Point p = random_point(rng);
            const Rational formula = Rational(P - 1) * (p.F + p.B());
            CHECK(r.bubble_symbolic->eval(cost_point(p)) == formula);
            for (int M : {P, P + 1, 3 * P + 1, 200}) {
                if (M == 200 && k > 1) continue;
                INFO("M=" << M);
                CHECK(sim_bubble(generate("1f1b", P, M), costs_of(p)) == formula);
            }
        }
    }
}

TEST_CASE("prove: DualPipe and DualPipeV bubbles are constant -- the symbolic value matches simulation", "[prove]") {
    std::mt19937_64 rng(7);
    // DualPipeV P=8 is the slowest proof here (31 symbolic base cases): its own section, so ctest can run it
    // next to the others.
    std::vector<std::pair<std::string, int>> cases;
    SECTION("dualpipe 4, 6, 8 and dualpipev 4") {
        cases = {{"dualpipe", 4}, {"dualpipe", 6}, {"dualpipe", 8}, {"dualpipev", 4}};
    }
    SECTION("dualpipev 8") { cases = {{"dualpipev", 8}}; }
    for (const auto& [family, P] : cases) {
        INFO(family << " P=" << P);
        const FamilySpec spec = spec_of(family, P);
        const ProofResult r = prove_symbolic(spec);
        REQUIRE(r.verdict == Verdict::Proved);
        REQUIRE(r.bubble_symbolic);
        std::vector<int> Ms;
        for (int t : {0, 1, 2, 3})
            Ms.push_back(spec.microbatches(t));
        for (int M : {2 * spec.m0, 3 * spec.m0 + spec.step, 4 * spec.m0}) Ms.push_back(M);
        std::vector<Schedule> instances;
        for (int M : Ms) instances.push_back(generate(family, P, M));
        for (int k = 0; k < 5; ++k) {
            const Point p = random_point(rng);
            const Rational claimed = r.bubble_symbolic->eval(cost_point(p));
            for (size_t i = 0; i < Ms.size(); ++i) {
                INFO("M=" << Ms[i] << " F=" << p.F << " I=" << p.I << " W=" << p.W << " FB=" << p.FB);
                CHECK(sim_bubble(instances[i], costs_of(p)) == claimed);
            }
        }
    }
}

TEST_CASE("prove: DualPipe P=8 at the issue's two cost points (checked by hand)", "[prove]") {
    const ProofResult r = prove_symbolic(spec_of("dualpipe", 8));
    REQUIRE(r.verdict == Verdict::Proved);
    const Point a{1, Rational(3, 2), Rational(1, 2), 2};
    const Point b{1, 1, 1, Rational(3, 2)};
    CHECK(r.bubble_symbolic->eval(cost_point(a)) == Rational(13, 2));
    CHECK(r.bubble_symbolic->eval(cost_point(b)) == Rational(9, 2));
    CHECK(sim_bubble(generate("dualpipe", 8, 16), costs_of(a)) == Rational(13, 2));
    CHECK(sim_bubble(generate("dualpipe", 8, 16), costs_of(b)) == Rational(9, 2));
    // The README formula (PP/2-1)(F&B+B-3W) is not the bubble there: 3*(2+2-1.5) = 7.5 and 3*(1.5+2-3) = 1.5.
    CHECK(Rational(3) * (a.FB + a.B() - Rational(3) * a.W) == Rational(15, 2));
}

TEST_CASE("prove: with comm latency the 1F1B and DualPipe bubbles grow (dataflow), as simulation shows", "[prove]") {
    // In the steady state a block waits for a round trip to the neighbour (two latencies), which the block's
    // work does not cover: lambda > F + B.
    for (const auto& [family, P] : std::vector<std::pair<std::string, int>>{{"1f1b", 3}, {"dualpipe", 4}}) {
        INFO(family << " P=" << P);
        const FamilySpec spec = spec_of(family, P);
        ProveOptions o;
        CostRegion region = CostRegion::standard(true);
        region.finish();
        o.region = region;
        const ProofResult r = prove(spec, o);
        REQUIRE(r.verdict == Verdict::Refuted);
        REQUIRE(r.counterexample->costs);
        CHECK((*r.counterexample->costs)[5] > Rational(0));
        Point p{1, 1, 1, 2, 1};
        const Rational b0 = sim_bubble(generate(family, P, spec.microbatches(0)), costs_of(p));
        const Rational b1 = sim_bubble(generate(family, P, spec.microbatches(12)), costs_of(p));
        const Rational b2 = sim_bubble(generate(family, P, spec.microbatches(24)), costs_of(p));
        CHECK(b1 > b0);
        CHECK(b2 - b1 == b1 - b0);
    }
}

TEST_CASE("prove: dependencies, deadlock-freedom and the DualPipe memory peak P+1", "[prove]") {
    for (const auto& [family, P] :
         std::vector<std::pair<std::string, int>>{{"dualpipe", 4}, {"dualpipe", 8}, {"dualpipev", 4}, {"1f1b", 4}}) {
        INFO(family << " P=" << P);
        const FamilySpec spec = spec_of(family, P);
        CHECK(prove_symbolic(spec, Property::Dependencies).verdict == Verdict::Proved);
        CHECK(prove_symbolic(spec, Property::DeadlockFree).verdict == Verdict::Proved);
        for (int t : {0, 1, 4}) CHECK(verify(generate(family, P, spec.microbatches(t))).ok());
    }
    for (int P : {4, 6, 8}) {
        INFO("dualpipe P=" << P);
        const FamilySpec spec = spec_of("dualpipe", P);
        ProveOptions o;
        o.property = Property::MemoryBound;
        o.memory_bound = Rational(P + 1);
        const ProofResult r = prove(spec, o);
        REQUIRE(r.verdict == Verdict::Proved);
        for (const auto& v : r.peaks) CHECK(v == Rational(P + 1));
        for (const auto& v : r.peaks_at_origin) CHECK(v == Rational(P + 1));
        // Independently: the peaks of concrete instances, and a bound one lower is refuted.
        for (int t : {0, 1, 7})
            for (const auto& v : peak_activations(generate("dualpipe", P, spec.microbatches(t)))) CHECK(v == Rational(P + 1));
        o.memory_bound = Rational(P);
        const ProofResult low = prove(spec, o);
        CHECK(low.verdict == Verdict::Refuted);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Broken generators: the prover must fail on them, with counterexamples that are really counterexamples.

namespace {

// Swaps the first adjacent pair of slots on `rank` where the second depends on the first on the same rank
// (I before its W, or the last stage's F before its backward).
void swap_dependent_pair(Schedule& s, int rank) {
    auto& ops = s.ranks[rank];
    for (size_t k = 0; k + 1 < ops.size(); ++k) {
        for (const Op& a : ops[k])
            for (const Op& b : ops[k + 1]) {
                if (a.pipeline != b.pipeline || a.microbatch != b.microbatch || a.stage != b.stage) continue;
                const bool i_w = a.kind == OpKind::I && b.kind == OpKind::W;
                const bool f_back = a.kind == OpKind::F && is_backward(b.kind);
                if (i_w || f_back) {
                    std::swap(ops[k], ops[k + 1]);
                    return;
                }
            }
    }
    FAIL("no adjacent dependent pair on rank " << rank);
}

}  // namespace

TEST_CASE("prove: the intact generator through the same plumbing is PROVED", "[prove]") {
    const FamilySpec dp = variant(spec_of("dualpipe", 4), [](Schedule&) {});
    CHECK(prove_symbolic(dp).verdict == Verdict::Proved);
    CHECK(prove_symbolic(dp, Property::Dependencies).verdict == Verdict::Proved);
    CHECK(prove_symbolic(dp, Property::DeadlockFree).verdict == Verdict::Proved);
    const FamilySpec ob = variant(spec_of("1f1b", 4), [](Schedule&) {});
    CHECK(prove_symbolic(ob).verdict == Verdict::Proved);
    CHECK(prove_symbolic(ob, Property::Dependencies).verdict == Verdict::Proved);
}

TEST_CASE("prove: a swapped dependent pair is refuted with a verified counterexample", "[prove]") {
    for (const auto& [family, rank] : std::vector<std::pair<std::string, int>>{{"dualpipe", 0}, {"1f1b", 3}}) {
        INFO(family);
        const FamilySpec broken = variant(spec_of(family, 4), [rank = rank](Schedule& s) { swap_dependent_pair(s, rank); });
        for (Property prop : {Property::Dependencies, Property::DeadlockFree, Property::BubbleConstant}) {
            INFO(property_name(prop));
            const ProofResult r = prove_symbolic(broken, prop);
            REQUIRE(r.verdict == Verdict::Refuted);
            REQUIRE(r.counterexample);
            REQUIRE(r.counterexample->schedule);
            const VerifyReport report = verify(*r.counterexample->schedule);
            CHECK(has_violation(report, {ViolationKind::OrderContradicts, ViolationKind::WBeforeI, ViolationKind::Deadlock}));
            // The counterexample is the broken generator's own output at the M it names.
            const VerifyReport again = verify(broken.generate(r.counterexample->microbatches));
            CHECK_FALSE(again.ok());
        }
    }
}

TEST_CASE("prove: a rank without its warm-up deadlocks, and the prover finds the cycle", "[prove]") {
    // Rank 0 of 1F1B runs F_m B_m alternately while rank 1 keeps its warm-up of P-1 forwards: rank 1 waits at
    // F_1 for rank 0, which waits for rank 1's B_0.
    const FamilySpec broken = variant(spec_of("1f1b", 4), [](Schedule& s) {
        std::vector<Slot> fs, bs, out;
        for (const Slot& slot : s.ranks[0]) (slot.ops[0].kind == OpKind::F ? fs : bs).push_back(slot);
        for (size_t m = 0; m < fs.size(); ++m) out.push_back(fs[m]), out.push_back(bs[m]);
        s.ranks[0] = out;
    });
    for (Property prop : {Property::DeadlockFree, Property::Dependencies}) {
        const ProofResult r = prove_symbolic(broken, prop);
        REQUIRE(r.verdict == Verdict::Refuted);
        REQUIRE(r.counterexample->schedule);
        const VerifyReport report = verify(*r.counterexample->schedule);
        REQUIRE(has_violation(report, {ViolationKind::Deadlock}));
        CHECK_THROWS_AS(simulate(*r.counterexample->schedule, Costs{}), SimulationError);
    }
}

TEST_CASE("prove: a missing W is refuted", "[prove]") {
    for (bool last : {false, true}) {
        INFO((last ? "last" : "first") << " W on rank 0");
        const FamilySpec broken = variant(spec_of("dualpipe", 4), [last](Schedule& s) {
            auto& rank = s.ranks[0];
            std::vector<size_t> ws;
            for (size_t k = 0; k < rank.size(); ++k)
                if (!rank[k].is_pair() && rank[k].ops[0].kind == OpKind::W) ws.push_back(k);
            if (!ws.empty()) rank.erase(rank.begin() + static_cast<long>(last ? ws.back() : ws.front()));
        });
        for (Property prop : {Property::Dependencies, Property::BubbleConstant}) {
            const ProofResult r = prove_symbolic(broken, prop);
            REQUIRE(r.verdict == Verdict::Refuted);
            REQUIRE(r.counterexample->schedule);
            CHECK(has_violation(verify(*r.counterexample->schedule), {ViolationKind::Missing, ViolationKind::WWithoutI}));
        }
        // Deadlock-freedom does not depend on the missing W: still proved.
        CHECK(prove_symbolic(broken, Property::DeadlockFree).verdict == Verdict::Proved);
    }
}

TEST_CASE("prove: an extra warm-up forward is refuted (duplicate) or raises the memory peak (moved)", "[prove]") {
    const int P = 4;
    // Duplicate: rank 0 runs the first steady-state forward once more at the end of its warm-up.
    const FamilySpec duplicate = variant(spec_of("1f1b", P), [](Schedule& s) {
        const int k = find_slot(s.ranks[0], Op{OpKind::F, 0, 0, P});
        if (k >= 0) s.ranks[0].insert(s.ranks[0].begin() + P, s.ranks[0][k]);
    });
    const ProofResult d = prove_symbolic(duplicate, Property::Dependencies);
    REQUIRE(d.verdict == Verdict::Refuted);
    CHECK(has_violation(verify(*d.counterexample->schedule), {ViolationKind::Duplicate}));
    // Moved: a warm-up of P+1 on rank 0 is valid but holds one more activation.
    const FamilySpec moved = variant(spec_of("1f1b", P), [](Schedule& s) {
        const int k = find_slot(s.ranks[0], Op{OpKind::F, 0, 0, P});
        if (k < 0) return;
        const Slot f = s.ranks[0][k];
        s.ranks[0].erase(s.ranks[0].begin() + k);
        s.ranks[0].insert(s.ranks[0].begin() + P, f);
    });
    CHECK(prove_symbolic(moved, Property::Dependencies).verdict == Verdict::Proved);
    ProveOptions o;
    o.property = Property::MemoryBound;
    o.memory_bound = Rational(P);
    CHECK(prove(spec_of("1f1b", P), o).verdict == Verdict::Proved);
    const ProofResult m = prove(moved, o);
    REQUIRE(m.verdict == Verdict::Refuted);
    VerifyOptions vo;
    vo.memory_limit = Rational(P);
    CHECK(has_violation(verify(*m.counterexample->schedule, vo), {ViolationKind::MemoryLimit}));
}

namespace {

// 1F1B without warm-up: every micro-batch goes down and back up before the next starts (valid, but each
// block now costs a full round trip).
void sequentialise(Schedule& s) {
    for (auto& rank : s.ranks) {
        std::vector<Slot> fs, bs, out;
        for (const Slot& slot : rank) (slot.ops[0].kind == OpKind::F ? fs : bs).push_back(slot);
        for (size_t m = 0; m < fs.size(); ++m) out.push_back(fs[m]), out.push_back(bs[m]);
        rank = out;
    }
}

void check_growth_counterexample(const FamilySpec& broken, const ProofResult& r) {
    REQUIRE(r.verdict == Verdict::Refuted);
    REQUIRE(r.counterexample);
    const Counterexample& cx = *r.counterexample;
    REQUIRE(cx.other_microbatches);
    REQUIRE(cx.costs);
    Costs c;
    c.base.F = (*cx.costs)[0], c.base.I = (*cx.costs)[1], c.base.W = (*cx.costs)[2], c.base.B = (*cx.costs)[3];
    c.base.FB = (*cx.costs)[4], c.comm = (*cx.costs)[5];
    const Schedule a = broken.generate(cx.microbatches), b = broken.generate(*cx.other_microbatches);
    CHECK(verify(a).ok());
    CHECK(verify(b).ok());
    CHECK(sim_bubble(a, c) != sim_bubble(b, c));
}

}  // namespace

TEST_CASE("prove: a valid variant whose bubble grows with M is refuted", "[prove]") {
    const FamilySpec always = variant(spec_of("1f1b", 4), sequentialise);
    CHECK(prove_symbolic(always, Property::Dependencies).verdict == Verdict::Proved);
    check_growth_counterexample(always, prove_symbolic(always));
    ProveOptions exact;
    exact.costs = costs_of(Point{1, 2, 1, 3});
    check_growth_counterexample(always, prove(always, exact));
    // The same reorder only from M = P + 3 on: the order is not one periodic word from the origin.
    FamilySpec late = spec_of("1f1b", 4);
    auto base = late.generate;
    late.generate = [base](int M) {
        Schedule s = base(M);
        if (M >= 7) sequentialise(s);
        return s;
    };
    check_growth_counterexample(late, prove_symbolic(late));
    check_growth_counterexample(late, prove(late, exact));
}

TEST_CASE("prove: unequal stage costs make the DualPipe bubble grow -- slope matches simulation", "[prove]") {
    const int P = 4;
    const FamilySpec spec = spec_of("dualpipe", P);
    Costs c = costs_of(Point{1, 1, 1, 2});
    OpCosts slow = c.base;
    slow.F = 2, slow.I = 2, slow.W = 2, slow.B = 4, slow.FB = 4;
    c.per_block[1] = slow;
    ProveOptions o;
    o.costs = c;
    const ProofResult r = prove(spec, o);
    REQUIRE(r.verdict == Verdict::Refuted);
    REQUIRE(r.counterexample);
    Rational slope{0};
    for (const auto& ri : r.idle) slope = std::max(slope, ri.slope);
    CHECK(slope > Rational(0));
    // Far out, the bubble grows by the steepest rank's slope per block (over one period).
    auto bubble_at = [&](int t) { return simulate(generate("dualpipe", P, spec.microbatches(t)), c); };
    const int t = 40, cyc = r.cycle;
    const Simulation s0 = bubble_at(t), s1 = bubble_at(t + cyc);
    CHECK(s1.scale.to_units(s1.bubble) - s0.scale.to_units(s0.bubble) == slope * Rational(cyc));
    // The counterexample's two M values differ in the simulator.
    const Counterexample& cx = *r.counterexample;
    REQUIRE(cx.other_microbatches);
    const Simulation a = simulate(generate("dualpipe", P, cx.microbatches), c);
    const Simulation b = simulate(generate("dualpipe", P, *cx.other_microbatches), c);
    CHECK(a.scale.to_units(a.bubble) != b.scale.to_units(b.bubble));
    // Balanced costs at the same point: constant.
    o.costs = costs_of(Point{1, 1, 1, 2});
    CHECK(prove(spec, o).verdict == Verdict::Proved);

    const auto cli = run_cli("prove dualpipe -P 4 --costs F=1,I=1,W=1,FB=2 --stage-costs 1:F=2,I=2,W=2,FB=4 --json");
    CHECK(cli.exit_code == 1);
    CHECK(nlohmann::json::parse(cli.out)["status"] == "refuted");
}

// ---------------------------------------------------------------------------------------------------------
// refute, formula, --emit

TEST_CASE("refute: DualPipe README formula is refuted with a re-checkable counterexample", "[prove][cli]") {
    const auto r = run_cli("refute --claim 'bubble == (P/2-1)*(FB+B-3*W)' dualpipe -P 4..8 --json");
    REQUIRE(r.exit_code == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["status"] == "refuted");
    const auto& cx = j["counterexample"];
    const int P = cx["ranks"].get<int>(), M = cx["microbatches"].get<int>();
    Point p;
    p.F = parse_json_rational(cx["costs"]["exact"]["F"]);
    p.I = parse_json_rational(cx["costs"]["exact"]["I"]);
    p.W = parse_json_rational(cx["costs"]["exact"]["W"]);
    p.FB = parse_json_rational(cx["costs"]["exact"]["FB"]);
    p.comm = parse_json_rational(cx["costs"]["exact"]["comm"]);
    const Rational B = cx["costs"].contains("B") ? parse_json_rational(cx["costs"]["exact"]["B"]) : p.B();
    CHECK(B == p.B());
    const Rational claimed = (Rational(P, 2) - 1) * (p.FB + B - Rational(3) * p.W);
    CHECK(sim_bubble(generate("dualpipe", P, M), costs_of(p)) != claimed);
}

TEST_CASE("refute: a true claim holds, a false 1F1B formula is refuted, a malformed claim is a usage error",
          "[prove][cli]") {
    const auto holds = run_cli("refute --claim 'bubble == (P-1)*(F+B)' 1f1b -P 2..6");
    CHECK(holds.exit_code == 0);
    const auto wrong = run_cli("refute --claim 'bubble <= (P-1)*F' 1f1b -P 2..4 --json");
    REQUIRE(wrong.exit_code == 1);
    const auto j = nlohmann::json::parse(wrong.out);
    CHECK(j["status"] == "refuted");
    const auto& cx = j["counterexample"];
    Point p;
    p.F = parse_json_rational(cx["costs"]["exact"]["F"]);
    p.I = parse_json_rational(cx["costs"]["exact"]["I"]);
    p.W = parse_json_rational(cx["costs"]["exact"]["W"]);
    p.FB = parse_json_rational(cx["costs"]["exact"]["FB"]);
    const int P = cx["ranks"].get<int>();
    CHECK(sim_bubble(generate("1f1b", P, cx["microbatches"].get<int>()), costs_of(p)) > Rational(P - 1) * p.F);
    for (const char* bad : {"bubble === 3", "bubble <= (P-1", "bubble <= frobnicate"}) {
        INFO(bad);
        const auto r = run_cli(std::string("refute --claim '") + bad + "' 1f1b -P 2..3");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("claim"));
    }
}

TEST_CASE("formula: the DualPipe P=8 bubble pieces agree with simulation", "[prove]") {
    CostRegion region = CostRegion::standard(false);
    region.finish();
    const FormulaResult fr = derive_formula(spec_of("dualpipe", 8), region);
    REQUIRE(fr.missing.empty());
    REQUIRE_FALSE(fr.bubble.pieces.empty());
    // Every piece whose conditions hold at the point gives the same value, and it is the simulated bubble.
    auto piece_value = [&](const Point& p) {
        std::optional<Rational> v;
        for (const auto& piece : fr.bubble.pieces) {
            bool inside = true;
            for (const auto& c : piece.conditions) inside = inside && c.eval(cost_point(p)) >= Rational(0);
            if (!inside) continue;
            const Rational x = piece.value.eval(cost_point(p));
            if (v) CHECK(*v == x);
            v = x;
        }
        REQUIRE(v);
        return *v;
    };
    CHECK(piece_value(Point{1, Rational(3, 2), Rational(1, 2), 2}) == Rational(13, 2));
    CHECK(piece_value(Point{1, 1, 1, Rational(3, 2)}) == Rational(9, 2));
    std::mt19937_64 rng(3);
    const Schedule s = generate("dualpipe", 8, 20);
    for (int k = 0; k < 8; ++k) {
        const Point p = random_point(rng);
        CHECK(piece_value(p) == sim_bubble(s, costs_of(p)));
    }
    const auto cli = run_cli("formula dualpipe -P 4");
    CHECK(cli.exit_code == 0);
    CHECK_THAT(cli.out, Catch::Contains("bubble (largest idle)"));
}

TEST_CASE("prove --emit: every SMT-LIB2 obligation re-checks with a stock z3", "[prove][cli]") {
    const auto dir = pp::test::scratch_dir() / "emit";
    std::filesystem::remove_all(dir);
    for (const char* prop : {"bubble-constant", "dependencies"}) {
        const auto r = run_cli(std::string("prove dualpipe -P 4 --property ") + prop + " --emit " + dir.string());
        CHECK(r.exit_code == 0);
    }
    const auto exact = run_cli("prove 1f1b -P 3 --costs F=1,I=2,W=1 --emit " + (dir / "exact").string());
    CHECK(exact.exit_code == 0);
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.path().extension() == ".smt2") files.push_back(e.path());
    CHECK(files.size() >= 4);
    if (std::system("command -v z3 >/dev/null 2>&1") != 0) {
        WARN("z3 not on PATH: the emitted files were not re-checked");
        return;
    }
    for (const auto& f : files) {
        INFO(f.string());
        const std::string text = pp::test::slurp(f);
        CHECK_THAT(text, Catch::Contains("expected: unsat"));
        const auto out = dir / "z3.out";
        const int status = std::system(("z3 -T:60 " + f.string() + " >" + out.string() + " 2>&1").c_str());
        (void)status;
        const std::string answer = pp::test::slurp(out);
        CHECK(answer.substr(0, answer.find('\n')) == "unsat");
    }
}

// ---------------------------------------------------------------------------------------------------------
// The printed bubble, sample points, structure lemma

TEST_CASE("prove: the printed bubble keeps only needed forms and is the same function", "[prove]") {
    CostRegion region = CostRegion::standard(false);
    region.finish();
    std::mt19937_64 rng(19);
    for (const auto& [family, P, M] : std::vector<std::tuple<std::string, int, int>>{{"dualpipe", 8, 16}, {"dualpipe", 4, 10}, {"zb-h1", 4, 6}}) {
        INFO(family << " P=" << P << " M=" << M);
        const Schedule s = generate(family, P, M);
        const SymbolicTiming st = symbolic_simulate(s, build_schedule_graph(s), region);
        const MaxPoly pruned = needed_forms(st.makespan, region);
        CHECK(pruned.forms.size() <= st.makespan.forms.size());
        for (int k = 0; k < 40; ++k) {
            const Point p = random_point(rng);
            CHECK(pruned.eval(cost_point(p)) == st.makespan.eval(cost_point(p)));
        }
        // Every kept form is needed: dropping it changes the function somewhere (at its own sample point).
        for (size_t i = 0; i < pruned.forms.size() && pruned.forms.size() > 1; ++i) {
            MaxPoly without = pruned;
            without.erase(i);
            bool differs = false;
            for (int k = 0; k < 400 && !differs; ++k) {
                const Point p = random_point(rng);
                differs = without.eval(cost_point(p)) != pruned.eval(cost_point(p));
            }
            CHECK(differs);
        }
    }
    // The proof prints the short form: DualPipe P=8's bubble has 14 pieces (`formula` lists the same ones).
    const ProofResult r = prove_symbolic(spec_of("dualpipe", 8));
    REQUIRE(r.bubble_symbolic);
    CHECK(r.bubble_symbolic->forms.size() == 14);
    const auto cli = run_cli("prove dualpipe -P 8");
    CHECK(cli.exit_code == 0);
    const auto line = cli.out.substr(cli.out.find("result: "), cli.out.find('\n', cli.out.find("result: ")) - cli.out.find("result: "));
    CHECK(std::count(line.begin(), line.end(), ',') == 13);
}

TEST_CASE("prove: counterexamples respect assumptions with a constant term", "[prove]") {
    // The cone of rays ignores 'F >= 1000' and 'comm <= 1/100'; the sample point that refutes must not.
    ProveOptions o;
    CostRegion region = CostRegion::standard(true);
    CostConstraint big_f;
    big_f.a[0] = 1;
    big_f.b = 1000;
    big_f.text = "F >= 1000";
    region.add(big_f);
    CostConstraint small_comm;
    small_comm.a[5] = -1;
    small_comm.b = Rational(-1, 100);
    small_comm.text = "comm <= 1/100";
    region.add(small_comm);
    region.finish();
    o.region = region;
    const ProofResult r = prove(spec_of("dualpipe", 4), o);
    REQUIRE(r.verdict == Verdict::Refuted);
    REQUIRE(r.counterexample->costs);
    const CostPoint& c = *r.counterexample->costs;
    CHECK(c[0] >= Rational(1000));
    CHECK(c[5] <= Rational(1, 100));
    CHECK(c[5] > Rational(0));
    CHECK(region.contains(c));
}

TEST_CASE("prove: without a structure lemma the prover does not claim every M", "[prove]") {
    // A generator that leaves its word beyond every instance the prover looks at: only a lemma about the
    // generator's code could rule that out, so without one the verdict must stay UNKNOWN.
    FamilySpec late = spec_of("1f1b", 4);
    late.structure_lemma.clear();
    late.check_structure = nullptr;  // 1F1B's step-program check speaks about the registered generator, not this one
    auto base = late.generate;
    late.generate = [base](int M) {
        Schedule s = base(M);
        if (M >= 1000) sequentialise(s);
        return s;
    };
    const ProofResult r = prove_symbolic(late);
    CHECK(r.verdict == Verdict::Unknown);
    CHECK_THAT(r.missing, Catch::Contains("structure lemma"));
    CHECK(prove_symbolic(late, Property::Dependencies).verdict == Verdict::Unknown);
}
