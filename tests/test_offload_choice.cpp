// Choosing which stashes to offload (solver/offload_choice.hpp) against brute force: on small instances every
// subset of the eligible stashes is timed by time_with_offload, and the least makespan that keeps the device cap
// must be the chooser's OPTIMAL answer (INFEASIBLE exactly when no subset keeps it); plus the CLI's answers.
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "solver/offload_choice.hpp"
#include "verifier/memory.hpp"
#include "verifier/offload.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace pp;
using pp::test::run_cli;

namespace {

Schedule generate(const std::string& family, int P, int M, std::optional<int> V = std::nullopt) {
    GenerateParams params{P, M};
    params.stages_per_rank = V;
    return find_family(family)->generate(params);
}

struct BruteForce {
    std::optional<Rational> best;  // the least makespan of a subset that keeps the caps
    int subsets = 0;
};

BruteForce brute_force(const Schedule& s, const Costs& costs, const ActivationModel& sizes, const OffloadPolicy& policy,
                       const Rational& cap) {
    const OffloadNetwork net = offload_network(s, costs, sizes, policy);
    REQUIRE(net.moves.size() <= 12);
    BruteForce out;
    for (std::uint32_t mask = 0; mask < (1u << net.moves.size()); ++mask) {
        OffloadPolicy chosen = policy;
        chosen.only = std::vector<Op>{};
        for (size_t k = 0; k < net.moves.size(); ++k)
            if (mask & (1u << k)) chosen.only->push_back(net.moves[k].forward);
        const OffloadTiming t = time_with_offload(s, costs, sizes, chosen);
        ++out.subsets;
        if (t.device_peak() > cap || (policy.host_memory && t.host_peak() > *policy.host_memory)) continue;
        const Rational makespan = t.scale.to_units(t.makespan);
        if (!out.best || makespan < *out.best) out.best = makespan;
    }
    return out;
}

}  // namespace

TEST_CASE("offload choice: the least makespan under the cap, as brute force finds it", "[offload][solver]") {
    std::mt19937 rng(2026);
    auto pick = [&](const std::vector<Rational>& values) { return values[rng() % values.size()]; };
    const std::vector<std::tuple<std::string, int, int, std::optional<int>>> cases = {
        {"1f1b", 3, 4, {}}, {"zb-h1", 3, 3, {}}, {"group-interleaved", 2, 3, 2}, {"group-interleaved", 2, 4, 2},
        {"interleaved-1f1b", 2, 4, 2}, {"dualpipe", 2, 4, {}}, {"zbv", 2, 4, {}}};
    int optimal = 0, infeasible = 0, solved = 0;
    for (int round = 0; round < 12; ++round)
        for (const auto& [family, P, M, V] : cases) {
            const Schedule s = generate(family, P, M, V);
            Costs costs;
            costs.base.F = pick({Rational(1), Rational(2)});
            costs.base.I = pick({Rational(1), Rational(3, 2)});
            costs.base.W = pick({Rational(1), Rational(1, 2)});
            costs.comm = pick({Rational(0), Rational(1, 2)});
            ActivationModel sizes;
            sizes.input_grad_free = pick({Rational(0), Rational(1, 2)});
            OffloadPolicy policy;
            policy.fraction = pick({Rational(1), Rational(1, 2)});
            policy.offload_time = pick({Rational(1), Rational(3, 2), Rational(2), Rational(3)});
            policy.reload_time = pick({Rational(1), Rational(3, 2), Rational(2), Rational(3)});
            policy.duplex = rng() % 2 == 0;
            if (rng() % 3 == 0) policy.host_memory = pick({Rational(1), Rational(3, 2)});
            // Below the order-based peak, so that something has to move.
            Rational peak(0);
            for (const Rational& p : peak_activations(s, sizes)) peak = std::max(peak, p);
            const Rational cap = peak - pick({Rational(1, 2), Rational(1)});
            CAPTURE(family, P, M, round, format_costs(costs), format_rational(policy.fraction), format_rational(policy.offload_time),
                    format_rational(policy.reload_time), policy.duplex, format_rational(cap));
            const BruteForce expected = brute_force(s, costs, sizes, policy, cap);
            const OffloadChoice got = choose_offloads(s, costs, sizes, policy, cap, 60);
            if (!expected.best) {
                CHECK(got.status == ChoiceStatus::Infeasible);
                ++infeasible;
                continue;
            }
            REQUIRE(got.status == ChoiceStatus::Optimal);
            CHECK(got.makespan == *expected.best);
            CHECK(got.lower_bound == *expected.best);
            REQUIRE(got.timing);
            CHECK(got.timing->device_peak() <= cap);
            ++optimal;
            if (got.queries > 0) ++solved;  // decided by Z3, not by the plain timing or the all-moved one
        }
    CHECK(optimal + infeasible == 84);
    CHECK(optimal >= 10);    // the draw reaches both answers, not one only
    CHECK(infeasible >= 3);
    CHECK(solved >= 2);
}

TEST_CASE("offload choice: simulate --choose-offloads", "[offload][solver][cli]") {
    // 1F1B P=4 M=8, F=1, B=2: rank 0's four warm-up forwards peak at 4. With a link of 3/2 per stash each way a cap of 3
    // holds only if some stashes move; moving all of them costs 3 (makespan 36), the best choice costs 1/2.
    const std::string base = "simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --offload 1 --host-link 3/2 --choose-offloads ";
    const auto best = run_cli(base + "--memory-limit 3");
    CHECK(best.exit_code == 0);
    CHECK(best.out.find("offload choice: OPTIMAL: ") != std::string::npos);
    CHECK(best.out.find("makespan with offload: 33.5 (without: 33") != std::string::npos);
    CHECK(best.out.find("Z3: no choice is faster (unsat one tick below)") != std::string::npos);  // proved, not sampled
    const auto all = run_cli("simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --offload 1 --host-link 3/2");
    CHECK(all.out.find("makespan with offload: 36 (without: 33") != std::string::npos);
    // A cap of 2 cannot hold: F3 starts at 3, while F0's offload (from 1) ends at 5/2 and F1's cannot end before 4.
    const auto none = run_cli(base + "--memory-limit 2 --json");
    CHECK(none.exit_code == 1);
    CHECK(none.out.find("\"infeasible\"") != std::string::npos);
    // Too large for Z3 (17.8 million memory terms): the greedy choice within the time limit, FEASIBLE with the plain bound.
    const auto large = run_cli("simulate 1f1b -P 16 -M 256 --costs F=1,B=2 --offload 1 --host-link 3/2 --memory-limit 12 "
                               "--choose-offloads --time-limit 1");
    CHECK(large.exit_code == 0);
    CHECK(large.out.find("offload choice: FEASIBLE: ") != std::string::npos);
    CHECK(large.out.find("memory terms (at most 2097152): the greedy choice") != std::string::npos);
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --offload 1 --host-link 1 --choose-offloads").exit_code == 2);  // no cap
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --offload 1 --host-link 1 --time-limit 5").exit_code == 2);     // no choice
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --choose-offloads --memory-limit 2").exit_code == 2);           // no --offload
}
