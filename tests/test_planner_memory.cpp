// The planner's memory figures against hand computations, including the seed lesson's exercise 4:
// DualPipe's 2x parameter copy for a 70B dense model at P=8 and a 671B MoE model at P=16.
#include "planner/memory_model.hpp"
#include "planner/planner.hpp"

#include <catch2/catch.hpp>

using namespace pp::plan;

namespace {

PlanRequest dense_70b() {
    PlanRequest r;
    apply_preset(r, "dense-70b");
    r.cluster.gpus = 64;
    return r;
}

PlanRequest moe_671b() {
    PlanRequest r;
    apply_preset(r, "deepseek-v3");  // expert share 0.97, EP 64
    r.cluster.gpus = 2048;
    return r;
}

}  // namespace

TEST_CASE("planner memory: 70B dense at P=8 -- DualPipe's copy doubles the weights", "[planner]") {
    const PlanRequest r = dense_70b();
    // Hand computation: no experts, so every parameter is "dense" and sits in pipeline stages.
    //   1F1B:      rank holds 1 of 8 blocks -> 70e9 / 8     = 8.75e9 parameters = 17.5 GB at 2 bytes
    //   DualPipe:  rank holds 2 of 8 blocks -> 2 * 70e9 / 8 = 17.5e9 parameters = 35 GB   (+8.75e9, +100%)
    //   DualPipeV: rank holds 2 of 16 blocks -> 70e9 / 8    = 8.75e9 parameters (1x)
    CHECK(family_parameters(r, "1f1b", 8, 16).total() == Approx(8.75e9));
    CHECK(family_parameters(r, "dualpipe", 8, 16).total() == Approx(17.5e9));
    CHECK(family_parameters(r, "dualpipe", 8, 16).experts == 0);
    CHECK(family_parameters(r, "dualpipev", 8, 16).total() == Approx(8.75e9));
    CHECK(family_parameters(r, "dualpipe", 8, 16).total() * r.training.bytes_per_param / 1e9 == Approx(35.0));
}

TEST_CASE("planner memory: 671B MoE at P=16 -- the copy is cheap because experts are EP-sharded", "[planner]") {
    PlanRequest r = moe_671b();
    // Hand computation, expert share e = 0.97, EP = 64:
    //   dense  = 0.03 * 671e9 = 20.13e9;  experts = 0.97 * 671e9 = 650.87e9
    //   1F1B:     dense 20.13e9 / 16 = 1.258125e9;  experts 650.87e9 / 16 / 64 = 0.635615234375e9
    //             total 1.893740234375e9 parameters (3.79 GB at 2 bytes)
    //   DualPipe: dense 2 * 1.258125e9 = 2.51625e9; experts not duplicated (assumption) 0.635615234375e9
    //             total 3.151865234375e9 (6.30 GB): +1.258125e9 parameters = +2.52 GB, +66% -- against +100%
    //             (+17.5 GB) for the 70B dense model at P=8
    //   DualPipe, experts duplicated too: 2 * 1.893740234375e9 = 3.78748046875e9
    const auto single = family_parameters(r, "1f1b", 16, 32);
    CHECK(single.dense == Approx(1.258125e9));
    CHECK(single.experts == Approx(0.635615234375e9));
    CHECK(single.total() == Approx(1.893740234375e9));
    const auto dual = family_parameters(r, "dualpipe", 16, 32);
    CHECK(dual.dense == Approx(2.51625e9));
    CHECK(dual.experts == Approx(0.635615234375e9));
    CHECK(dual.total() == Approx(3.151865234375e9));
    CHECK((dual.total() - single.total()) / single.total() == Approx(0.66435).epsilon(1e-4));
    CHECK(family_parameters(r, "dualpipev", 16, 32).total() == Approx(1.893740234375e9));
    r.training.duplicate_experts = true;
    CHECK(family_parameters(r, "dualpipe", 16, 32).total() == Approx(3.78748046875e9));
}

TEST_CASE("planner memory: training state and activation stash sizes", "[planner]") {
    const PlanRequest r = dense_70b();
    // 8.75e9 parameters x (2 weights + 2 grads + 12 optimizer / DP 4) = 8.75e9 x 7 = 61.25e9 bytes.
    CHECK(training_state_bytes({8.75e9, 0}, r.training, 4) == Approx(61.25e9));
    // One stash of 10 layers (80 layers / 8 blocks), 1 sequence of 4096 tokens, 34 x 8192 bytes per token
    // per layer: 34 * 8192 * 4096 * 10 = 11,408,506,880 bytes; TP 8 divides it by 8.
    CHECK(stash_bytes(r.model, r.training, 8) == Approx(11408506880.0));
    TrainingSpec tp8 = r.training;
    tp8.tp = 8;
    CHECK(stash_bytes(r.model, tp8, 8) == Approx(11408506880.0 / 8));
}

TEST_CASE("planner memory: the plan's options carry the same weights as the hand computation", "[planner]") {
    PlanRequest r = moe_671b();
    r.pp_degrees = {16};
    r.families = {"1f1b", "dualpipe"};
    const PlanResult plan = make_plan(r);
    REQUIRE(plan.options.size() == 2);
    for (const auto& o : plan.options) {
        const double expected = o.family == "dualpipe" ? 3.151865234375e9 : 1.893740234375e9;
        CHECK(o.weights_gb == Approx(expected * 2 / 1e9));
        CHECK(o.single_copy_weights_gb == Approx(1.893740234375e9 * 2 / 1e9));
        CHECK(o.dp == 128);
        CHECK(o.microbatches == 120);  // 15360 sequences / DP 128
    }
}
