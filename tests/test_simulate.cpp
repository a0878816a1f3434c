// The exact simulator against timings worked out by hand.
#include "formats/native.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>

using namespace pp;

namespace {
Simulation run(const std::string& text, const std::string& costs) {
    return simulate(read_native(text, "case.txt"), parse_costs(costs));
}
Rational units(const Simulation& sim, Ticks t) { return sim.scale.to_units(t); }
}  // namespace

TEST_CASE("simulate: 1F1B on two ranks, F=1 B=2", "[simulate]") {
    // Hand timeline: r0 F0[0,1] F1[1,2] B0[4,6] B1[7,9]; r1 F0[1,2] B0[2,4] F1[4,5] B1[5,7].
    const auto sim = run("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n", "F=1,B=2");
    CHECK(units(sim, sim.makespan) == 9);  // (M+P-1)(F+B)
    CHECK(units(sim, sim.ranks[0].busy) == 6);
    CHECK(units(sim, sim.ranks[0].idle) == 3);
    CHECK(units(sim, sim.ranks[1].idle) == 3);
    CHECK(units(sim, sim.bubble) == 3);
    CHECK(sim.bubble_fraction == Rational(6, 18));
    CHECK(units(sim, sim.start[2]) == 4);  // r0 B0
    CHECK(units(sim, sim.end[3]) == 9);
    CHECK(units(sim, sim.ranks[1].first_start) == 1);
    CHECK(units(sim, sim.ranks[1].last_end) == 7);
    // Critical path ends at r0 B1 and goes back through r1 B1.
    REQUIRE(sim.critical_path.size() >= 2);
    CHECK(sim.critical_path.back() == 3);
    CHECK(sim.critical_path[sim.critical_path.size() - 2] == 7);
}

TEST_CASE("simulate: P2P latency on cross-rank edges only, exact rationals", "[simulate]") {
    // GPipe, one micro-batch: F r0 [0,1/3], +1/2 -> F r1 [5/6,7/6], B r1 [7/6,19/6], +1/2 -> B r0 [11/3,17/3].
    const auto sim = run("ranks 2\nmicrobatches 1\nrank 0: 0F0 0B0\nrank 1: 1F0 1B0\n", "F=1/3,B=2,comm=0.5");
    CHECK(units(sim, sim.makespan) == Rational(17, 3));
    CHECK(sim.scale.format(sim.makespan) == "17/3");
    // Same-rank stages (V turn) pay no latency: stages 0 and 1 both on rank 0.
    const auto local = run("ranks 1\nmicrobatches 1\nstages 2\nplacement 0 0\nrank 0: 0F0 1F0 1B0 0B0\n", "F=1,B=2,comm=5");
    CHECK(units(local, local.makespan) == 6);
}

TEST_CASE("simulate: overlapped pairs take FB and start when both inputs are there", "[simulate]") {
    // One rank, one stage: F0 [0,1], (F1;B0) [1,3.5], B1 [3.5,5.5]. Activations: 1, then 2 inside the pair.
    const auto sim = run("ranks 1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0) 0B1\n", "F=1,B=2,FB=2.5");
    CHECK(units(sim, sim.makespan) == Rational(11, 2));
    CHECK(sim.ranks[0].peak_activations == 2);
    CHECK(units(sim, sim.bubble) == 0);
    // Without FB the pair costs F + B.
    const auto plain = run("ranks 1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0) 0B1\n", "F=1,B=2");
    CHECK(units(plain, plain.makespan) == 6);
}

TEST_CASE("simulate: split backward and per-block costs", "[simulate]") {
    // ranks 2, one micro-batch, block 1 three times slower: F r0 [0,1], F r1 [1,4], I r1 [4,7], W r1 [7,10],
    // I r0 [7,8], W r0 [8,9]. Makespan 10; rank 0 busy 3, idle 7.
    Schedule s = read_native("ranks 2\nmicrobatches 1\nrank 0: 0F0 0I0 0W0\nrank 1: 1F0 1I0 1W0\n", "case.txt");
    Costs costs = parse_costs("F=1,I=1,W=1");
    costs.per_block[1] = OpCosts{3, 3, 3, std::nullopt, std::nullopt, std::nullopt};
    const auto sim = simulate(s, costs);
    CHECK(units(sim, sim.makespan) == 10);
    CHECK(units(sim, sim.ranks[0].idle) == 7);
    CHECK(units(sim, sim.bubble) == 7);
}

TEST_CASE("simulate: a deadlocked schedule has no timing", "[simulate]") {
    CHECK_THROWS_AS(run("ranks 2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1\n", "F=1"), SimulationError);
}

TEST_CASE("rational text", "[simulate]") {
    CHECK(format_rational(Rational(9, 2)) == "4.5");
    CHECK(format_rational(Rational(1, 8)) == "0.125");
    CHECK(format_rational(Rational(7, 3)) == "7/3");
    CHECK(format_rational(Rational(-3, 4)) == "-0.75");
    CHECK(*parse_rational("1.75") == Rational(7, 4));
    CHECK(*parse_rational("7/4") == Rational(7, 4));
    CHECK(*parse_rational("18522") == 18522);
    CHECK_FALSE(parse_rational("-1"));
    CHECK_FALSE(parse_rational("1."));
    CHECK_FALSE(parse_rational("1/0"));
    CHECK_FALSE(parse_rational("abc"));
}
