// Every schedule family through `prove` (bubble-constant), checked against exact simulation of the generator's
// output at M the prover never simulated: the proved (M0, b) holds at M0 and at large M, fails just below M0 (when
// M0 is above the first admissible M), growth slopes equal simulated differences, and a broken variant of every
// generator is not PROVED.
#include "model/dag.hpp"
#include "proofs/prove.hpp"
#include "proofs/symbolic.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace pp;

namespace {

struct Fam {
    std::string name;
    std::optional<int> V;
};

FamilySpec spec_of(const Fam& f, int P) {
    std::string why;
    auto spec = family_spec(f.name, P, &why, f.V);
    INFO(why);
    REQUIRE(spec);
    return *spec;
}

Schedule generate(const Fam& f, int P, int M) {
    const ScheduleFamily* family = find_family(f.name);
    REQUIRE(family != nullptr);
    return family->generate({P, M, f.V});
}

// A random point of the default region (F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0).
CostPoint random_point(std::mt19937_64& rng) {
    auto pick = [&](int hi, int den) {
        return Rational(1 + static_cast<std::int64_t>(rng() % hi), 1 + static_cast<std::int64_t>(rng() % den));
    };
    const Rational F = pick(9, 3), I = pick(9, 3), W = pick(9, 3);
    const Rational FB = (F + I + W) * Rational(1 + static_cast<std::int64_t>(rng() % 8), 8);
    return {F, I, W, I + W, FB, Rational(0)};
}

// bubble = max over ranks of (makespan - busy), busy summed here from the costs, makespan from the simulator.
Rational sim_bubble(const Schedule& s, const CostPoint& p) {
    const Simulation sim = simulate(s, costs_at(p));
    Rational makespan{0};
    for (Ticks e : sim.end) makespan = std::max(makespan, sim.scale.to_units(e));
    Rational worst{0};
    for (const auto& rank : s.ranks) {
        Rational busy{0};
        for (const Slot& slot : rank) busy += slot_form(slot).eval(p);
        worst = std::max(worst, makespan - busy);
    }
    return worst;
}

// The proved eventual value and M0 against simulation: b at M0 and at large M, not b just below M0 (exact costs,
// where the least M0 is a statement about one point), every listed early value.
void check_exact(const Fam& f, int P, std::mt19937_64& rng) {
    const FamilySpec spec = spec_of(f, P);
    const CostPoint p = random_point(rng);
    INFO(f.name << " V=" << f.V.value_or(0) << " P=" << P << " F=" << p[0] << " I=" << p[1] << " W=" << p[2]
                << " FB=" << p[4]);
    ProveOptions o;
    o.costs = costs_at(p);
    const ProofResult r = prove(spec, o);
    INFO(r.missing << r.summary);
    REQUIRE(r.verdict == Verdict::Proved);
    REQUIRE(r.bubble_exact);
    const int M0 = r.constant_from_m;
    CHECK(sim_bubble(generate(f, P, M0), p) == *r.bubble_exact);
    for (int k : {1, 7, 31}) CHECK(sim_bubble(generate(f, P, M0 + k * spec.step), p) == *r.bubble_exact);
    if (M0 > spec.m0) CHECK(sim_bubble(generate(f, P, M0 - spec.step), p) != *r.bubble_exact);
    REQUIRE(r.early_exact.size() == static_cast<size_t>((M0 - spec.m0) / spec.step));
    for (size_t k = 0; k < r.early_exact.size(); ++k)
        CHECK(sim_bubble(generate(f, P, spec.m0 + static_cast<int>(k) * spec.step), p) == r.early_exact[k]);
}

// Symbolic: b as a function of the costs equals simulation at M0 and at large M; the least uniform M0 is least:
// with --from-M one step below it the statement is refuted, by a counterexample simulation confirms.
void check_symbolic(const Fam& f, int P, std::mt19937_64& rng) {
    const FamilySpec spec = spec_of(f, P);
    INFO(f.name << " V=" << f.V.value_or(0) << " P=" << P);
    const ProofResult r = prove(spec, ProveOptions{});
    INFO(r.missing << r.summary);
    REQUIRE(r.verdict == Verdict::Proved);
    REQUIRE(r.bubble_symbolic);
    const int M0 = r.constant_from_m;
    for (int k = 0; k < 3; ++k) {
        const CostPoint p = random_point(rng);
        const Rational b = r.bubble_symbolic->eval(p);
        CHECK(sim_bubble(generate(f, P, M0), p) == b);
        CHECK(sim_bubble(generate(f, P, M0 + (11 + k) * spec.step), p) == b);
    }
    if (M0 > spec.m0) {
        ProveOptions o;
        o.from_m = M0 - spec.step;
        const ProofResult below = prove(spec, o);
        REQUIRE(below.verdict == Verdict::Refuted);
        const Counterexample& cx = *below.counterexample;
        REQUIRE(cx.costs);
        REQUIRE(cx.other_microbatches);
        CHECK(cx.microbatches >= M0 - spec.step);
        CHECK(sim_bubble(generate(f, P, cx.microbatches), *cx.costs) !=
              sim_bubble(generate(f, P, *cx.other_microbatches), *cx.costs));
    }
}

void check_family(const Fam& f, std::initializer_list<int> ranks, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int P : ranks) {
        check_symbolic(f, P, rng);
        check_exact(f, P, rng);
    }
}

}  // namespace

TEST_CASE("prove families: gpipe, (P-1)(F+B) for every M >= 1", "[prove][families]") {
    check_family({"gpipe", {}}, {2, 4, 8}, 1);
    const ProofResult r = prove(spec_of({"gpipe", {}}, 4), ProveOptions{});
    CHECK(r.constant_from_m == 1);
    CHECK(r.bubble_symbolic->eval({Rational(2), Rational(1), Rational(1), Rational(2), Rational(3), Rational(0)}) ==
          Rational(3 * (2 + 2)));
}

TEST_CASE("prove families: 1f1b", "[prove][families]") { check_family({"1f1b", {}}, {2, 4, 8}, 2); }

TEST_CASE("prove families: interleaved-1f1b, V = 2, 3, 4", "[prove][families]") {
    for (int V : {2, 3, 4}) check_family({"interleaved-1f1b", V}, {2, 4, 8}, 30 + V);
}

TEST_CASE("prove families: looped-bfs, constant only from M0 = P on", "[prove][families]") {
    for (int V : {2, 3}) check_family({"looped-bfs", V}, {2, 4, 8}, 40 + V);
    // Independently: (P-1)(F+B) per chunk from M = P on; one more chunk-step of idle per missing micro-batch below.
    const ProofResult r = prove(spec_of({"looped-bfs", 2}, 4), ProveOptions{});
    REQUIRE(r.verdict == Verdict::Proved);
    CHECK(r.constant_from_m == 4);
}

TEST_CASE("prove families: zb1p", "[prove][families]") { check_family({"zb1p", {}}, {2, 4, 8}, 5); }

TEST_CASE("prove families: zbv, constant only from M0 > 2P - 2 on", "[prove][families]") {
    check_family({"zbv", {}}, {2, 4, 8}, 6);
}

TEST_CASE("prove families: zb-h1 and zb-h2", "[prove][families]") {
    check_family({"zb-h1", {}}, {2, 4, 8}, 7);
    check_family({"zb-h2", {}}, {2, 4, 8}, 8);
}

TEST_CASE("prove families: dualpipe and dualpipev", "[prove][families]") {
    check_family({"dualpipe", {}}, {2, 4, 8}, 9);
    check_family({"dualpipev", {}}, {2, 4, 8}, 10);
}

TEST_CASE("prove families: chimera's bubble grows, at the rate simulation shows", "[prove][families]") {
    std::mt19937_64 rng(12);
    for (int P : {4, 6}) {
        const FamilySpec spec = spec_of({"chimera", {}}, P);
        CHECK(prove(spec, ProveOptions{}).verdict == Verdict::Refuted);
        const CostPoint p = random_point(rng);
        INFO("P=" << P << " F=" << p[0] << " I=" << p[1] << " W=" << p[2]);
        ProveOptions o;
        o.costs = costs_at(p);
        const ProofResult r = prove(spec, o);
        REQUIRE(r.verdict == Verdict::Refuted);
        Rational slope{0};
        for (const auto& ri : r.idle) slope = std::max(slope, ri.slope);
        REQUIRE(slope > Rational(0));
        // From the periodic point on, c blocks add c * slope to the bubble (c = the window's cycle).
        const int c = r.cycle;
        const int M = spec.microbatches(r.t_periodic + 3);
        const Rational b0 = sim_bubble(generate({"chimera", {}}, P, M), p);
        const Rational b1 = sim_bubble(generate({"chimera", {}}, P, M + c * spec.step), p);
        const Rational b2 = sim_bubble(generate({"chimera", {}}, P, M + 2 * c * spec.step), p);
        CHECK(b1 - b0 == slope * Rational(c));
        CHECK(b2 - b1 == slope * Rational(c));
    }
}

TEST_CASE("prove families: a broken variant of every generator is not PROVED", "[prove][families]") {
    // The generator's output with the last rank's middle slot dropped once M is past the first few admissible
    // values: an op goes missing (the intact family is PROVED: the tests above).
    const std::vector<Fam> families = {{"gpipe", {}},  {"1f1b", {}},     {"interleaved-1f1b", 2}, {"looped-bfs", 2},
                                       {"zb1p", {}},   {"zbv", {}},      {"zb-h1", {}},           {"zb-h2", {}},
                                       {"dualpipe", {}}, {"dualpipev", {}}, {"chimera", {}}};
    for (const Fam& f : families) {
        INFO(f.name);
        FamilySpec spec = spec_of(f, 4);
        const auto base = spec.generate;
        const int from = spec.microbatches(2);
        spec.generate = [base, from](int M) {
            Schedule s = base(M);
            if (M >= from) {
                auto& last = s.ranks.back();
                last.erase(last.begin() + static_cast<long>(last.size() / 2));
                if (!s.gaps.empty()) s.gaps.clear();
            }
            return s;
        };
        const ProofResult r = prove(spec, ProveOptions{});
        CHECK(r.verdict != Verdict::Proved);
    }
}
