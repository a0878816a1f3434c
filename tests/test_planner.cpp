// The planner's inputs (flags and config file share one parser), its use of the simulator, its
// GPU-hours arithmetic, its recommendation for the seed's EP-heavy MoE case, and the CLI.
#include "cli_runner.hpp"
#include "planner/plan_spec.hpp"
#include "planner/plan_text.hpp"
#include "planner/planner.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

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
    apply_setting(r, "op-costs-ms", "F=1,I=1.5,W=0.5");
    apply_setting(r, "op-costs-layers", "2");
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
                       {"global-batch", "64"}, {"op-costs-ms", "F=1,I=1,W=1"}, {"intra-node-gbps", "1e12"},
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

// Issue 14 item 7: the DP gradient all-reduce is in the step. By hand: 16 GPUs, PP 2, TP 1 -> DP 8; a 1B
// dense model in 2 blocks -> 0.5B parameters per GPU, 2-byte gradients = 1e9 bytes; ring over 8 replicas
// (16 GPUs per node, so inside a node at 10 GB/s): 2 x 7/8 x 1e9 / 1e10 = 0.175 s. Hidden: one block's
// backward I + W = 4 layers x 2 ms = 8 ms; exposed 0.167 s.
TEST_CASE("plan: the DP gradient all-reduce is counted in the step (ring, hand computation)", "[planner]") {
    PlanRequest r;
    apply_settings(r, {{"gpus", "16"}, {"gpus-per-node", "16"}, {"layers", "8"}, {"hidden", "1024"}, {"params", "1B"},
                       {"seq-len", "1024"}, {"global-batch", "64"}, {"op-costs-ms", "F=1,I=1,W=1"}, {"intra-node-gbps", "10"},
                       {"inter-node-gbps", "10"}, {"pp", "2"}, {"families", "1f1b"}});
    const PlanResult plan = make_plan(r);
    REQUIRE(plan.options.size() == 1);
    const PlanOption& o = plan.options[0];
    CHECK(o.dp == 8);
    CHECK(o.gradient_reduce.seconds == Approx(0.175));
    CHECK(o.gradient_reduce.hidden == Approx(0.008));
    CHECK(o.step_seconds == Approx(o.makespan_seconds + 0.167));
    CHECK_THAT(plan_text(plan), Catch::Contains("exposed DP gradient all-reduce 0.167 s (of 0.175 s"));
}

// Issue 14 item 7: a 70B dense model on 64 GPUs fits nowhere; the plan must not recommend anything and
// must say what would fit, each remedy checked here against the option's own parts.
TEST_CASE("plan: nothing fits -> no recommendation, and what would fit", "[planner]") {
    PlanRequest r;
    // V-Half and V-Min (half and a third of 1F1B's activations) fit this cluster; without them nothing does.
    apply_settings(r, {{"preset", "dense-70b"}, {"gpus", "64"}, {"exclude-families", "v-half,v-min"}});
    const PlanResult plan = make_plan(r);
    REQUIRE(!plan.options.empty());
    REQUIRE(!plan.any_fits());
    REQUIRE(plan.nothing_fits);
    const NothingFits& why = *plan.nothing_fits;
    const PlanOption& least = plan.options[why.least];
    for (const auto& o : plan.options) CHECK(least.total_gb <= o.total_gb);
    CHECK(least.total_gb == Approx(least.weights_gb + least.grads_gb + least.optimizer_gb + least.activations_gb));
    CHECK(why.with_zero2_gb == Approx(least.total_gb - least.grads_gb * (1 - 1.0 / least.dp)));
    CHECK(why.with_recompute_gb < least.total_gb);
    CHECK(why.with_recompute_gb > least.total_gb - least.activations_gb);
    // Activations dominate (34 x hidden bytes per token per layer, P stashes of L/P layers on the first
    // rank whatever P is), so recomputation is the remedy that fits.
    CHECK(why.with_recompute_gb <= r.cluster.gpu_memory_gb);
    // More GPUs help only once M < P; whatever is said must hold when re-planned.
    if (why.gpus_that_fit) {
        PlanRequest bigger = r;
        bigger.cluster.gpus = *why.gpus_that_fit;
        CHECK(make_plan(bigger).any_fits());
    }
    const std::string text = plan_text(plan);
    CHECK_THAT(text, Catch::Contains("NOTHING FITS"));
    CHECK_THAT(text, !Catch::Contains("Recommendation:"));
    CHECK_THAT(text, Catch::Contains("full activation recomputation"));
    CHECK_THAT(text, Catch::Contains(why.gpus_that_fit ? fmt::format("with {} GPUs", *why.gpus_that_fit) : "no cluster up to 16x"));
}

// Issue 14 item 7 at the CLI: no recommendation (exit 1) when nothing fits; with TP 8 the same model fits
// and, with the all-reduce counted, a pipeline beats plain data parallelism.
TEST_CASE("plan CLI: nothing fits is exit 1 without a recommendation -- TP 8 recommends a pipeline", "[planner]") {
    const auto none = run_cli("plan --preset dense-70b --gpus 64 --exclude-families v-half,v-min");
    CHECK(none.exit_code == 1);
    CHECK_THAT(none.out, Catch::Contains("NOTHING FITS"));
    CHECK_THAT(none.out, !Catch::Contains("Recommendation:"));
    const auto tp8 = run_cli("plan --preset dense-70b --gpus 64 --tp 8");
    REQUIRE(tp8.exit_code == 0);
    CHECK_THAT(tp8.out, Catch::Contains("Recommendation:"));
    CHECK_THAT(tp8.out, !Catch::Contains("Recommendation: no pipeline"));
    // PP=1 holds all weights, so its all-reduce is the largest: 70B/8 per GPU over DP 8 across nodes.
    PlanRequest r;
    apply_settings(r, {{"preset", "dense-70b"}, {"gpus", "64"}, {"tp", "8"}, {"pp", "1"}});
    const PlanResult pp1 = make_plan(r);
    REQUIRE(pp1.options.size() == 1);
    // 8.75e9 parameters x 2 bytes x 2 x 7/8 / 50e9 B/s = 0.6125 s.
    CHECK(pp1.options[0].gradient_reduce.seconds == Approx(0.6125));
}

TEST_CASE("plan: every family is a candidate unless excluded, and the op costs it estimated are printed and emitted",
          "[planner][issue44]") {
    const auto plan = run_cli("plan --preset dense-70b --gpus 64 --json");
    REQUIRE(plan.exit_code == 0);
    const auto j = nlohmann::json::parse(plan.out);
    std::vector<std::string> families = j["families"];
    // seq1f1b is not a candidate: the plan prices whole micro-batches.
    for (const pp::ScheduleFamily& family : pp::schedule_families())
        CHECK((std::find(families.begin(), families.end(), family.name) != families.end()) ==
              !pp::family_takes_segments(family.name));
    // V-Half halves 1F1B's activation stash, which is what keeps 70B on 64 80-GB GPUs: it is the recommendation.
    CHECK(j["recommendation"]["family"] == "v-half");
    // The FLOP estimate per layer, by hand: tokens 4096 x (2 N / L + 2 s h) FLOPs at 40 % of 989 TFLOP/s;
    // F: 4096 x (2 x 70e9 / 80 + 2 x 4096 x 8192) / (0.4 x 989e12) s = 18.81 ms; I adds 2 s h, W drops it.
    const double rate = 0.4 * 989e12, tokens = 4096, matmul = 2 * 70e9 / 80, attention = 2.0 * 4096 * 8192;
    CHECK(j["op_costs_per_layer_ms"]["F"].get<double>() == Approx(1e3 * tokens * (matmul + attention) / rate));
    CHECK(j["op_costs_per_layer_ms"]["I"].get<double>() == Approx(1e3 * tokens * (matmul + 2 * attention) / rate));
    CHECK(j["op_costs_per_layer_ms"]["W"].get<double>() == Approx(1e3 * tokens * matmul / rate));
    CHECK(j["op_costs_source"] == "estimated from FLOPs");
    CHECK(j["step_time_model"] == "op");
    // Each option's block costs: its layers per block times the layer's (v-half PP=32: 64 blocks of 80/64 layers).
    const auto& best = j["recommendation"];
    CHECK(best["op_costs_ms"]["F"].get<double>() == Approx(j["op_costs_per_layer_ms"]["F"].get<double>() * 80 / 64));
    const auto text = run_cli("plan --preset dense-70b --gpus 64");
    CHECK_THAT(text.out, Catch::Contains("op costs: estimated from FLOPs"));
    CHECK_THAT(text.out, Catch::Contains("op costs per layer, one micro-batch: F=18.81 ms, I=19.51 ms, W=18.12 ms"));
    CHECK_THAT(text.out, !Catch::Contains("chunk costs: estimated"));
    // Excluded families are not considered; a misspelt exclusion is an error, not a silent no-op.
    const auto without = nlohmann::json::parse(run_cli("plan --preset dense-70b --gpus 64 --json --exclude-families v-half").out);
    families = without["families"].get<std::vector<std::string>>();
    CHECK(std::find(families.begin(), families.end(), "v-half") == families.end());
    CHECK(without["recommendation"]["family"] != "v-half");
    const auto typo = run_cli("plan --preset dense-70b --gpus 64 --exclude-families v-halff");
    CHECK(typo.exit_code == 2);
    CHECK_THAT(typo.err, Catch::Contains("did you mean 'v-half'"));
}
