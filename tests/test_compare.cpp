// `pipeproof compare` and compare_schedule (verifier/compare.hpp). Expected numbers are closed forms or
// hand derivations written out next to the checks.
#include "cli_runner.hpp"
#include "schedules/families.hpp"
#include "verifier/compare.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using pp::Rational;

// An exact value of a --json document: the text under "exact" ("69", "7/23", "0.018310546875"); the field
// itself is always a JSON number (checked here too, issue 14).
Rational exact_text(const nlohmann::json& j) {
    REQUIRE(j.is_string());
    const std::string text = j.get<std::string>();
    const auto slash = text.find('/');
    if (slash != std::string::npos) return Rational(std::stoll(text.substr(0, slash)), std::stoll(text.substr(slash + 1)));
    const auto dot = text.find('.');
    if (dot == std::string::npos) return Rational(std::stoll(text));
    std::int64_t den = 1;
    for (size_t k = dot + 1; k < text.size(); ++k) den *= 10;
    return Rational(std::stoll(text.substr(0, dot)) * den + std::stoll(text.substr(dot + 1)), den);
}

Rational exact(const nlohmann::json& object, const std::string& key) {
    CHECK(object.at(key).is_number());
    return exact_text(object.at("exact").at(key));
}

std::vector<Rational> exact_list(const nlohmann::json& object, const std::string& key) {
    std::vector<Rational> out;
    for (const auto& v : object.at(key)) CHECK(v.is_number());
    for (const auto& v : object.at("exact").at(key)) out.push_back(exact_text(v));
    return out;
}

}  // namespace

TEST_CASE("compare: the seed lesson's exercise 1, P=8 M=16 dualpipe vs 1f1b", "[compare]") {
    // Default costs F = I = W = 1: B = 2, F&B = F + B = 3 (no overlap gain). Closed forms:
    //   1F1B: makespan (M+P-1)(F+B) = 23 x 3 = 69; busy M(F+B) = 48 on every rank, so idle 21 everywhere;
    //         bubble fraction 21/69 = 7/23, utilisation 16/23. Peak activations min(M, P-r) = 8..1.
    //   DualPipe: busy M(F+B) = 48 on every rank (each rank runs 8 F and 8 B of each direction, pairs cost
    //         F+B); the README bubble (PP/2-1)(F&B+B-3W) = 3 x (3+2-3) = 6, exact for these costs
    //         (dualpipe.md, "Bubble sanity check") and the same for every M: makespan 54, idle 6 everywhere,
    //         fraction 6/54 = 1/9, utilisation 8/9. Peak activations PP+1 = 9 on every rank.
    //   ZB bubble rate (T - M(F+I+W))/T: rank 0 starts at 0 and ends last in both, T = makespan:
    //         21/69 = 7/23 and 6/54 = 1/9.
    //   Parameters: 1F1B holds 1 block per rank, each once; DualPipe 2 per rank, every block twice.
    //   GPU-hours with 4096 tokens per micro-batch and 0.01 s per unit: a step is 16 x 4096 = 65536 tokens
    //   on 8 GPUs for makespan x 0.01 s, so GPU-hours per 1e6 tokens = 8 x makespan x 0.01 / 3600 x 1e6 / 65536
    //   = makespan x 25/73728: 1F1B 69 x 25/73728 = 575/24576 (~0.0233968), DualPipe 54 x 25/73728 = 75/4096
    //   = 0.018310546875. Tokens/s: 65536 / 0.69 = 6553600/69 and 65536 / 0.54 = 3276800/27.
    const auto result = pp::test::run_cli(
        "compare 1f1b dualpipe -P 8 -M 16 --tokens-per-microbatch 4096 --time-unit 0.01 --json");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto j = nlohmann::json::parse(result.out);
    CHECK(j["timing_model"] == "dataflow");
    REQUIRE(j["rows"].size() == 2);
    const auto& one = j["rows"][0];
    const auto& dual = j["rows"][1];
    CHECK(one["schedule"] == "1f1b(P=8,M=16)");
    CHECK(dual["schedule"] == "dualpipe(P=8,M=16)");

    CHECK(exact(one, "makespan") == Rational(69));
    CHECK(exact(dual, "makespan") == Rational(54));
    CHECK(exact_list(one, "idle_per_rank") == std::vector<Rational>(8, Rational(21)));
    CHECK(exact_list(dual, "idle_per_rank") == std::vector<Rational>(8, Rational(6)));
    CHECK(exact(one, "bubble_fraction") == Rational(7, 23));
    CHECK(exact(dual, "bubble_fraction") == Rational(1, 9));
    CHECK(exact(one, "utilisation") == Rational(16, 23));
    CHECK(exact(dual, "utilisation") == Rational(8, 9));
    CHECK(exact(one, "zb_bubble_rate") == Rational(7, 23));
    CHECK(exact(dual, "zb_bubble_rate") == Rational(1, 9));
    CHECK(exact_list(one, "peak_activations") == std::vector<Rational>{8, 7, 6, 5, 4, 3, 2, 1});
    CHECK(exact_list(dual, "peak_activations") == std::vector<Rational>(8, Rational(9)));
    CHECK(one["blocks_per_rank"] == std::vector<int>(8, 1));
    CHECK(dual["blocks_per_rank"] == std::vector<int>(8, 2));
    CHECK(one["copies_per_block"] == std::vector<int>(8, 1));
    CHECK(dual["copies_per_block"] == std::vector<int>(8, 2));
    CHECK(exact(one, "gpu_hours_per_million_tokens") == Rational(575, 24576));
    CHECK(exact(dual, "gpu_hours_per_million_tokens") == Rational(75, 4096));
    CHECK(exact(one, "tokens_per_second") == Rational(6553600, 69));
    CHECK(exact(dual, "tokens_per_second") == Rational(3276800, 27));
    // The utilisation difference the exercise asks for: 8/9 - 16/23 = 40/207 (~19.32 points); GPU-hours
    // fall by the makespan ratio 54/69 = 18/23.
    CHECK(exact(dual, "utilisation") - exact(one, "utilisation") == Rational(40, 207));
    CHECK(exact(dual, "gpu_hours_per_million_tokens") / exact(one, "gpu_hours_per_million_tokens") == Rational(18, 23));
}

TEST_CASE("compare: text output names the timing model and shows the exercise-1 deltas", "[compare]") {
    const auto result = pp::test::run_cli("compare 1f1b dualpipe -P 8 -M 16 --tokens-per-microbatch 4096 --time-unit 0.01");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("timing model: dataflow") != std::string::npos);
    CHECK(result.out.find("575/24576") != std::string::npos);
    CHECK(result.out.find("0.018310546875") != std::string::npos);
    CHECK(result.out.find("GPU utilisation +19.32 points") != std::string::npos);  // 40/207 = 0.19323...
    CHECK(result.out.find("x18/23") != std::string::npos);
    const auto batched = pp::test::run_cli("compare dualpipe -P 8 -M 20 --costs F=1,I=1,W=1,FB=1.75 --comm-model batched");
    REQUIRE(batched.exit_code == 0);
    CHECK(batched.out.find("timing model: batched (reference comm order)") != std::string::npos);
}

TEST_CASE("compare: files, V defaults and usage errors", "[compare]") {
    // A family that takes V gets 2 unless -V says otherwise; one that does not is generated without it.
    const auto both = pp::test::run_cli("compare interleaved-1f1b gpipe -P 2 -M 4 --json");
    INFO(both.err);
    REQUIRE(both.exit_code == 0);
    const auto j = nlohmann::json::parse(both.out);
    CHECK(j["rows"][0]["schedule"] == "interleaved-1f1b(P=2,V=2,M=4)");
    CHECK(j["rows"][0]["blocks_per_rank"] == std::vector<int>{2, 2});
    CHECK(j["rows"][1]["schedule"] == "gpipe(P=2,M=4)");
    const auto v3 = pp::test::run_cli("compare zb1p -P 2 -M 4 -V 3 --json");
    REQUIRE(v3.exit_code == 0);
    CHECK(nlohmann::json::parse(v3.out)["rows"][0]["blocks"] == 6);

    // A schedule file: GPipe P=2 M=2 by hand, F=1 B=2: makespan (M+P-1)(F+B) = 9, idle 3 per rank.
    const std::string file = pp::test::write_temp("cmp_gpipe.txt", "");
    const auto gen = pp::test::run_cli("generate gpipe -P 2 -M 2 -o " + file);
    REQUIRE(gen.exit_code == 0);
    const auto from_file = pp::test::run_cli("compare " + file + " --json");
    INFO(from_file.err);
    REQUIRE(from_file.exit_code == 0);
    const auto jf = nlohmann::json::parse(from_file.out);
    CHECK(exact(jf["rows"][0], "makespan") == Rational(9));
    CHECK(exact_list(jf["rows"][0], "idle_per_rank") == std::vector<Rational>{3, 3});

    CHECK(pp::test::run_cli("compare 1f1b -P 4").exit_code == 2);                            // no -M
    CHECK(pp::test::run_cli("compare 1f1b -P 4 -M 8 --tokens-per-microbatch 10").exit_code == 2);  // no --time-unit
    CHECK(pp::test::run_cli("compare 1f1b -P 4 -M 8 --tokens-per-microbatch 10 --time-unit 0").exit_code == 2);
    CHECK(pp::test::run_cli("compare nosuchfamily -P 4 -M 8").exit_code == 2);
    CHECK(pp::test::run_cli("compare dualpipe -P 3 -M 8").exit_code == 2);                    // reference precondition
    CHECK(pp::test::run_cli("compare 1f1b -P 4 -M 8 --comm-model lockstep").exit_code == 2);
}

TEST_CASE("compare: like for like by default -- costs per 1/P of the model, --per-stage-costs for the raw mode",
          "[compare]") {
    // P=4, M=8, F=I=W=1. 1F1B: 4 blocks, share 1. Interleaved V=2: 8 blocks, each stage at 1/2: F=I=W=1/2.
    // DualPipe: 4 blocks (two copies), share 1. DualPipeV: 8 blocks, share 1/2.
    const auto r = pp::test::run_cli("compare 1f1b interleaved-1f1b dualpipe dualpipev -P 4 -M 8 --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["cost_basis"] == "model-share");
    CHECK(exact(j["rows"][0], "stage_share") == Rational(1));
    CHECK(exact(j["rows"][1], "stage_share") == Rational(1, 2));
    CHECK(exact(j["rows"][2], "stage_share") == Rational(1));
    CHECK(exact(j["rows"][3], "stage_share") == Rational(1, 2));
    CHECK(j["rows"][1]["stage_costs"] == "F=0.5,I=0.5,W=0.5,comm=0");
    // Every row does the same total work: 8 micro-batches x (F + I + W) x 4 model shares = 96 over 4 ranks.
    for (const auto& row : j["rows"]) {
        Rational busy{0};
        for (const auto& b : exact_list(row, "busy_per_rank")) busy += b;
        CHECK(busy == Rational(96));
    }
    // Raw mode: the interleaved model is twice as large.
    const auto raw = pp::test::run_cli("compare 1f1b interleaved-1f1b -P 4 -M 8 --per-stage-costs --json");
    REQUIRE(raw.exit_code == 0);
    const auto jr = nlohmann::json::parse(raw.out);
    CHECK(jr["cost_basis"] == "per-stage");
    Rational raw_busy{0};
    for (const auto& b : exact_list(jr["rows"][1], "busy_per_rank")) raw_busy += b;
    CHECK(raw_busy == Rational(192));
    // Text says which basis it uses.
    const auto text = pp::test::run_cli("compare 1f1b dualpipev -P 4 -M 8");
    CHECK(text.out.find("costs per 1/P of the model") != std::string::npos);
}

TEST_CASE("compare: the ZB bubble rate is never negative, pairs or not", "[compare]") {
    // P=8, M=16, F=I=W=1, FB=1.5: DualPipe's and DualPipeV's pairs are cheaper than their parts; the rate used
    // to come out as -1/7 and -5/43.
    const auto r = pp::test::run_cli("compare 1f1b zb1p dualpipe dualpipev -P 8 -M 16 --costs F=1,I=1,W=1,FB=1.5 --json");
    REQUIRE(r.exit_code == 0);
    // Named: a range-for over parse(...)["rows"] keeps only the reference operator[] returns alive, not the
    // parsed document (heap-use-after-free under ASan).
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("rows").size() == 4);
    for (const auto& row : j.at("rows")) {
        INFO(row["schedule"]);
        CHECK(exact(row, "zb_bubble_rate") >= Rational(0));
        CHECK(exact(row, "zb_bubble_rate") < Rational(1));
    }
}

TEST_CASE("compare_schedule: a hand-timed GPipe with latency, and DualPipe's overlap in the ZB rate", "[compare]") {
    // GPipe P=2 M=2, F=1, I=1, W=1 (B=2), comm 1/2. Dataflow: rank 0 F 0-1, 1-2; rank 1 F 1.5-2.5,
    // 2.5-3.5, B 3.5-5.5, 5.5-7.5; rank 0 B 6-8 (gradient at 5.5 + 0.5), 8-10. Makespan 10, busy 6 each,
    // idle 4 each; spans 10 and 6: T = 10, W = 2 x 3 = 6, rate 2/5.
    pp::Costs c;
    c.comm = Rational(1, 2);
    const pp::CompareRow row = pp::compare_schedule(pp::generate_gpipe({2, 2, std::nullopt}), c);
    CHECK(row.makespan == Rational(10));
    CHECK(row.idle_per_rank == std::vector<Rational>{4, 4});
    CHECK(row.span_per_rank == std::vector<Rational>{10, 6});
    CHECK(row.zb_span == Rational(10));
    CHECK(row.zb_work == Rational(6));
    CHECK(row.zb_bubble_rate == Rational(2, 5));
    CHECK(row.bubble_fraction == Rational(8, 20));
    CHECK(row.utilisation == Rational(3, 5));
    CHECK_FALSE(row.gpu_hours_per_million_tokens.has_value());

    // The ZB rate counts the work a rank does, a pair at its pair cost: DualPipe P=2 M=4 with F&B = 2 < F + B = 3.
    // Rank 0 runs 0F0 1F0@1 0F1 1B0@1 (1F1@1;0B0) 1B1@1 0I1 0W1: 3 x 1 + 2 + 2 + 2 + 1 + 1 = 11 (rank 1 mirrors it),
    // not the 4 x (1 + 2) = 12 with nothing overlapped, which made the rate negative for cheap pairs.
    pp::Costs overlap;
    overlap.base.FB = Rational(2);
    const pp::CompareRow dual = pp::compare_schedule(pp::generate_dualpipe({2, 4, std::nullopt}), overlap);
    CHECK(dual.zb_work == Rational(11));
    CHECK(dual.zb_bubble_rate >= Rational(0));

    pp::CompareOptions half;
    half.tokens_per_microbatch = 10;
    CHECK_THROWS_AS(pp::compare_schedule(pp::generate_gpipe({2, 2, std::nullopt}), c, half), std::invalid_argument);
}
