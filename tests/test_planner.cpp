// The planner's inputs (flags and config file share one parser), its use of the simulator, its
// GPU-hours arithmetic, its recommendation for the seed's EP-heavy MoE case, and the CLI.
#include "cli_runner.hpp"
#include "planner/plan_spec.hpp"
#include "planner/plan_text.hpp"
#include "planner/planner.hpp"

#include <catch2/catch.hpp>

using namespace pp::plan;
using pp::test::run_cli;
using pp::test::write_temp;

TEST_CASE("plan config: key = value lines, comments, presets first, later settings win", "[planner]") {
    const auto settings = parse_plan_config("# a cluster\ngpus = 64   # eight nodes\n\n--tp=8\nparams = 671B\npreset = dense-70b\n");
    REQUIRE(settings.size() == 4);
    CHECK(settings[1].first == "tp");
    PlanRequest r;
    apply_settings(r, settings);
    CHECK(r.cluster.gpus == 64);
    CHECK(r.training.tp == 8);
    CHECK(r.model.total_params == 671e9);  // the preset went first, the explicit value refined it
    CHECK(r.model.layers == 80);
    CHECK_THROWS_AS(parse_plan_config("gpus 64\n"), PlanSpecError);
    CHECK_THROWS_WITH(parse_plan_config("gpus = 1\nnonsense\n"), Catch::Contains("line 2"));
    CHECK_THROWS_WITH(apply_setting(r, "gpuz", "1"), Catch::Contains("unknown setting"));
    CHECK_THROWS_AS(apply_setting(r, "gpus", "-3"), PlanSpecError);
    CHECK_THROWS_AS(apply_setting(r, "expert-share", "1.5"), PlanSpecError);
    apply_setting(r, "active-params", "3.7e10");
    CHECK(r.model.active_params == 37e9);
    apply_setting(r, "chunk-costs", "F=1,I=1.5,W=0.5");
    apply_setting(r, "chunk-layers", "2");
    REQUIRE(r.training.chunk);
    CHECK(r.training.chunk->I == 1.5);
    CHECK(r.training.chunk->layers == 2);
}

TEST_CASE("plan: measured chunk costs go through the simulator exactly (1F1B closed form)", "[planner]") {
    // 8 layers, P = 4 -> 2 layers per block; F = I = W = 1 ms per layer -> F = 2 ms, B = I + W = 4 ms per block.
    // Links so fast that P2P rounds to zero. 32 GPUs / PP 4 = DP 8; 64 sequences / 8 = M = 8 per pipeline.
    // 1F1B: makespan (M+P-1)(F+B) = 11 x 6 ms = 66 ms; bubble fraction (P-1)/(M+P-1) = 3/11.
    // GPU-hours per million tokens: 32 GPUs x 0.066 s / 3600 / (64 x 1024 tokens / 1e6) = 0.0089518...
    PlanRequest r;
    apply_settings(r, {{"gpus", "32"}, {"layers", "8"}, {"hidden", "1024"}, {"params", "1B"}, {"seq-len", "1024"},
                       {"global-batch", "64"}, {"chunk-costs", "F=1,I=1,W=1"}, {"intra-node-gbps", "1e12"},
                       {"inter-node-gbps", "1e12"}, {"pp", "4"}, {"families", "1f1b"}});
    const PlanResult plan = make_plan(r);
    REQUIRE(plan.options.size() == 1);
    const PlanOption& o = plan.options[0];
    CHECK(o.microbatches == 8);
    CHECK(o.bubble_fraction == pp::Rational(3, 11));
    CHECK(o.step_seconds == Approx(0.066));
    CHECK(o.gpu_hours_per_million_tokens == Approx(32 * 0.066 / 3600 / (64 * 1024 / 1e6)));
    CHECK(o.peak_stashes == 4);  // 1F1B: P stashes on rank 0
}

TEST_CASE("plan: the seed's EP-heavy MoE on 2048 GPUs recommends DualPipe at PP 16", "[planner]") {
    PlanRequest r;
    apply_settings(r, {{"preset", "deepseek-v3"}, {"gpus", "2048"}});
    const PlanResult plan = make_plan(r);
    REQUIRE(!plan.options.empty());
    CHECK(plan.options.front().family == "dualpipe");
    CHECK(plan.options.front().pp == 16);
    CHECK(plan.options.front().fits);
    const std::string text = plan_text(plan);
    CHECK_THAT(text, Catch::Contains("Recommendation: dualpipe PP=16 M=120"));
    CHECK_THAT(text, Catch::Contains("Parameter copies"));
    CHECK_THAT(text, Catch::Contains("Exact vs estimated"));
    // Options are ranked: fitting ones first, then by GPU-hours.
    for (size_t k = 1; k < plan.options.size(); ++k)
        if (plan.options[k].fits == plan.options[k - 1].fits)
            CHECK(plan.options[k - 1].gpu_hours_per_million_tokens <= plan.options[k].gpu_hours_per_million_tokens);
}

TEST_CASE("plan CLI: flags, config file, errors", "[planner]") {
    auto ok = run_cli("plan --preset deepseek-v3 --gpus 2048 --top 3");
    REQUIRE(ok.exit_code == 0);
    CHECK_THAT(ok.out, Catch::Contains("Recommendation:"));
    const auto config = write_temp("plan.conf", "preset = dense-70b\ngpus = 64\ntp = 8\nglobal-batch = 256\n");
    auto from_file = run_cli("plan --config " + config + " --pp 8");
    REQUIRE(from_file.exit_code == 0);
    CHECK_THAT(from_file.out, Catch::Contains("PP=8"));
    CHECK(run_cli("plan --layers 8").exit_code == 2);  // no GPUs, no model size
    CHECK(run_cli("plan --config " + write_temp("bad.conf", "gpus = many\n")).exit_code == 2);
    CHECK(run_cli("plan --config /nonexistent/plan.conf").exit_code == 2);
}
