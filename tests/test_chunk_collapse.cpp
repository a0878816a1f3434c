// Issue 11: chunk costs that collapse every part of a chunk into one compute component (no network) give
// the opaque costs' results exactly, on every family of the schedule library: same start and end of every
// slot, same makespan and bubble, under both timing models, for every pattern. And the derived costs are
// what the hand arithmetic says they are.
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

using namespace pp;

namespace {

std::vector<Rational> in_units(const Simulation& sim, const std::vector<Ticks>& ticks) {
    std::vector<Rational> out;
    for (Ticks t : ticks) out.push_back(sim.scale.to_units(t));
    return out;
}

// F=7/2 I=2 W=1 (comm 1/2) as a single attention (or expert) component per part and layer.
std::string collapsed(const std::string& component, int layers) {
    // L layers of cost x/L each add up to x.
    const Rational L(layers);
    auto v = [&](Rational x) { return format_rational(x / L); };
    std::string text = fmt::format("layers={}", layers);
    for (const char* key : {"attn", "mlp"}) {
        const bool on = component == key;
        text += fmt::format(",{}_f={},{}_i={},{}_w={}", key, on ? v(Rational(7, 2)) : "0", key, on ? v(Rational(2)) : "0", key,
                            on ? v(Rational(1)) : "0");
    }
    return text + ",dispatch_f=0,combine_f=0,combine_b=0,dispatch_b=0,pp=1/2";
}

}  // namespace

TEST_CASE("chunk collapse: one compute component, no network, reproduces opaque costs on every family", "[chunk][collapse]") {
    const Costs opaque = parse_costs("F=7/2,I=2,W=1,comm=1/2");
    int instances = 0;
    for (const auto& family : schedule_families()) {
        int family_instances = 0;
        for (const auto& [P, M] : std::vector<std::pair<int, int>>{{2, 4}, {4, 8}, {4, 16}})
            for (const std::optional<int> V : {std::optional<int>{}, std::optional<int>{2}}) {
                Schedule schedule;
                try {
                    schedule = family.generate({P, M, V});
                } catch (const GenerateError&) {
                    continue;
                }
                INFO(schedule.source);
                REQUIRE(verify(schedule).ok());
                const ScheduleGraph graph = build_schedule_graph(schedule);
                const Simulation expected = simulate(schedule, graph, opaque);
                for (const std::string component : {"attn", "mlp"})
                    for (const int layers : {1, 3})
                        for (const char* pattern : {"deepseek", "megatron", "serial", "best"}) {
                            INFO(component << " L=" << layers << " " << pattern);
                            const ChunkTable table = derive_chunk_table(parse_chunk_costs(collapsed(component, layers)), parse_pattern(pattern));
                            const Costs derived = table.costs();
                            const Simulation got = simulate(schedule, graph, derived);
                            CHECK(got.scale.to_units(got.makespan) == expected.scale.to_units(expected.makespan));
                            CHECK(got.scale.to_units(got.bubble) == expected.scale.to_units(expected.bubble));
                            CHECK(got.bubble_fraction == expected.bubble_fraction);
                            CHECK(in_units(got, got.start) == in_units(expected, expected.start));
                            CHECK(in_units(got, got.end) == in_units(expected, expected.end));
                            const ChunkExposure exposure = exposure_per_rank(schedule, table);
                            CHECK(exposure.total_network() == 0);
                            CHECK(exposure.total_exposed() == 0);
                        }
                // Batched timing too, where the schedule's communication program can run.
                const Costs derived = derive_chunk_table(parse_chunk_costs(collapsed("attn", 1)), parse_pattern("deepseek")).costs();
                if (check_comm_program(schedule, batched_program(schedule)).empty()) {
                    const Simulation a = simulate_batched(schedule, opaque), b = simulate_batched(schedule, derived);
                    CHECK(a.scale.to_units(a.makespan) == b.scale.to_units(b.makespan));
                    CHECK(in_units(a, a.end) == in_units(b, b.end));
                }
                ++family_instances;
            }
        INFO(family.name);
        CHECK(family_instances > 0);  // every family is covered at some (P, M)
        instances += family_instances;
    }
    CHECK(instances >= 20);
}

TEST_CASE("chunk collapse: derived op costs by hand", "[chunk]") {
    // attn_f=2 dispatch_f=1 mlp_f=3 combine_f=1 | combine_b=1 mlp_i=3 mlp_w=2 dispatch_b=4 attn_i=2 attn_w=1, pp=1/2,
    // deepseek: F = 7, I = 10, W = 3, B = 11, F&B = 13 (test_chunk_timing.cpp has the timelines);
    // F&I: C attn_f [0,2] mlp_i [2,5] mlp_f [5,8] attn_i [9,11]; N combine_b [0,1] dispatch_f [2,3]
    // dispatch_b [5,9] combine_f [9,10]: 11.
    const auto table = derive_chunk_table(
        parse_chunk_costs("attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1,pp=1/2"),
        parse_pattern("deepseek"));
    const Costs c = table.costs();
    CHECK(c.base.F == 7);
    CHECK(c.base.I == 10);
    CHECK(c.base.W == 3);
    CHECK(c.base.full_backward() == 11);
    CHECK(*c.base.FB == 13);
    CHECK(*c.base.FI == 11);
    CHECK(c.comm == Rational(1, 2));
    // A pair's cost follows its backward's kind.
    const Op f{OpKind::F, 0, 0, 1}, i{OpKind::I, 0, 0, 0}, b{OpKind::B, 0, 0, 0};
    CHECK(c.pair_duration(f, 0, i, 0) == 11);
    CHECK(c.pair_duration(f, 0, b, 0) == 13);
}
