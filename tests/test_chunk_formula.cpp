// Issue 11: the symbolic pair formula against the exact slot timer at many cost points (two independent
// paths: max-plus forms over the graph's paths vs the event timer), its hidden region against the hand
// reading of Figure 4, and the counterexample search for "DualPipe hides all all-to-all".
#include "cli_runner.hpp"
#include "proofs/chunk_formula.hpp"
#include "proofs/chunk_refute.hpp"
#include "proofs/claim.hpp"
#include "verifier/chunk_derive.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace pp;

namespace {

std::array<Rational, kComponents> random_point(std::uint32_t& seed, bool shared) {
    std::array<Rational, kComponents> p{};
    for (int k = 0; k < kComponents; ++k) {
        seed = seed * 1664525u + 1013904223u;
        const auto c = static_cast<Component>(k);
        const bool is_shared = c == Component::SharedF || c == Component::SharedI || c == Component::SharedW;
        p[static_cast<size_t>(k)] = is_shared && !shared ? Rational(0) : Rational(static_cast<std::int64_t>((seed >> 20) % 9) + 1, 2);
    }
    return p;
}

}  // namespace

TEST_CASE("chunk formula: Figure 4's hidden region, proved, as read by hand", "[chunk][formula]") {
    const ChunkFormula f = derive_chunk_formula(SlotKind::PairFB, PatternSpec{}, 1, false);
    CHECK(f.proved());
    // By hand from the figure's segments: dispatch_f under mlp_i + mlp_w, dispatch_b under mlp_w + mlp_f (both
    // dispatches share the network stream between attn_f and attn_i), combine_f under attn_i + attn_w, and the
    // backward's first combine under the forward's attention.
    std::vector<std::string> region = f.hidden_region;
    std::sort(region.begin(), region.end());
    std::vector<std::string> expected = {"combine_b <= attn_f", "combine_f <= attn_i + attn_w", "dispatch_b <= mlp_f + mlp_w",
                                         "dispatch_f + dispatch_b <= mlp_f + mlp_i + mlp_w", "dispatch_f <= mlp_i + mlp_w"};
    std::sort(expected.begin(), expected.end());
    CHECK(region == expected);
    // Megatron without delayed wgrad: dispatch_b waits for the MLP weight gradient, so only mlp_f hides it.
    PatternSpec megatron;
    megatron.kind = PatternKind::Megatron;
    const ChunkFormula m = derive_chunk_formula(SlotKind::PairFB, megatron, 1, false);
    CHECK(m.proved());
    CHECK(std::find(m.hidden_region.begin(), m.hidden_region.end(), "dispatch_b <= mlp_f") != m.hidden_region.end());
}

TEST_CASE("chunk formula: the max-plus formula equals the exact slot timer at random points", "[chunk][formula]") {
    std::uint32_t seed = 7;
    for (const auto& [kind, layers, shared, name] :
         std::vector<std::tuple<SlotKind, int, bool, const char*>>{{SlotKind::PairFB, 1, false, "deepseek"}, {SlotKind::PairFB, 2, true, "deepseek"},
                                                                   {SlotKind::PairFI, 2, false, "megatron"}, {SlotKind::B, 3, true, "deepseek"},
                                                                   {SlotKind::PairFB, 2, false, "serial"}}) {
        const PatternSpec pattern = parse_pattern(name);
        const ChunkFormula f = derive_chunk_formula(kind, pattern, layers, shared, false);
        for (int round = 0; round < 40; ++round) {
            const ChunkCosts costs = uniform_chunk_costs(layers, random_point(seed, shared));
            INFO(slot_kind_name(kind) << " " << name << " " << format_chunk_costs(costs));
            const SlotTimeline t = time_slot_kind(kind, costs, pattern).timeline;
            CHECK(f.duration_at(costs) == t.duration);
            CHECK(f.hidden_at(costs) == (t.exposed_comm == Rational(0)));
        }
    }
}

TEST_CASE("chunk refute: DualPipe does not hide all all-to-all -- its pairs do inside the region", "[chunk][formula][refute]") {
    ChunkRefuteOptions o;
    o.p_lo = 2;
    o.p_hi = 4;
    const ChunkRefuteResult all = refute_chunk_claim("dualpipe", "exposed_comm == 0", o);
    REQUIRE(all.refuted);
    CHECK(all.P == 2);
    CHECK(all.M == 4);  // DualPipe's smallest admissible M at P = 2
    // Re-check the counterexample independently of the search: its warm-up forwards run alone.
    const ChunkTable table = derive_chunk_table(*all.costs, PatternSpec{});
    CHECK(exposure_per_rank(*all.schedule, table).total_exposed() > Rational(0));
    const ChunkRefuteResult pair = refute_chunk_claim("dualpipe", "pair_exposed == 0", o);
    REQUIRE(pair.refuted);
    const ChunkFormula f = derive_chunk_formula(SlotKind::PairFB, PatternSpec{}, 1, false, false);
    CHECK(!f.hidden_at(*pair.costs));  // the counterexample lies outside the proved region
    CHECK(time_slot_kind(SlotKind::PairFB, *pair.costs, PatternSpec{}).timeline.exposed_comm > Rational(0));
    // A true statement is not refuted (and not claimed proved either).
    const ChunkRefuteResult holds = refute_chunk_claim("dualpipe", "exposed_comm <= network_comm", o);
    CHECK(!holds.refuted);
    CHECK_THROWS_AS(refute_chunk_claim("dualpipe", "no_such_name == 0", o), ClaimError);
}

TEST_CASE("chunk formula: formula and refute on the command line", "[chunk][formula][cli]") {
    const auto f = pp::test::run_cli("formula dualpipe -P 4 --chunk-costs symbolic");
    CHECK(f.exit_code == 0);
    CHECK_THAT(f.out, Catch::Contains("[PROVED] formula") && Catch::Contains("dispatch_f <= mlp_i + mlp_w") &&
                          Catch::Contains("rank 0:"));
    const auto r = pp::test::run_cli("refute --claim 'exposed_comm == 0' dualpipe -P 2..4 --chunk-costs symbolic --json");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("\"refuted\""));
    CHECK(pp::test::run_cli("formula dualpipe -P 4 --chunk-costs symbolic --pattern best").exit_code == 2);
    // Exact chunk costs are one cost point for the schedule-level claim language: a chunk quantity there is a
    // usage error that names the path which evaluates it.
    const auto exact = pp::test::run_cli(
        "refute --claim 'exposed_comm == 0' dualpipe -P 4 --chunk-costs "
        "layers=1,attn_f=2,dispatch_f=1,mlp_f=2,combine_f=1,combine_b=1,mlp_i=2,mlp_w=1,dispatch_b=1,attn_i=2,attn_w=1");
    CHECK(exact.exit_code == 2);
    CHECK_THAT(exact.err, Catch::Contains("exposed_comm is a chunk quantity") && Catch::Contains("--chunk-costs symbolic"));
    // A chunk claim nested 4000 deep is a usage error (exit 2), not a stack overflow; a misspelt name is found
    // before anything is timed.
    const auto deep = pp::test::run_cli("refute --claim '" + std::string(4000, '-') + "1 == 1' dualpipe -P 2 --chunk-costs symbolic");
    CHECK(deep.exit_code == 2);
    CHECK_THAT(deep.err, Catch::Contains("nested more than 100 levels deep"));
    const auto typo = pp::test::run_cli("refute --claim 'exposed_comm == 0 || pair_exposd > 0' dualpipe -P 2 --chunk-costs symbolic");
    CHECK(typo.exit_code == 2);
    CHECK_THAT(typo.err, Catch::Contains("did you mean 'pair_exposed'"));
}
