// Issue 31's small items, each by behaviour: -q prints the result only; search checks its output before it
// starts; flag typos get a suggestion; placements in any case; chunk's --seconds-per-unit; named cost presets.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

using pp::test::run_cli;
using pp::test::scratch_dir;

namespace {

const std::string kChunk =
    "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1";

std::string makespan(const std::string& command) {
    const auto r = run_cli(command + " --json");
    INFO(command << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["exact"]["makespan"].get<std::string>();
}

}  // namespace

TEST_CASE("one meaning: search -q prints the result, not the search log", "[issue31][search]") {
    const auto loud = run_cli("search -P 3 -M 6 --costs F=1,I=2,W=1");
    const auto quiet = run_cli("search -P 3 -M 6 --costs F=1,I=2,W=1 -q");
    REQUIRE(loud.exit_code == 0);
    REQUIRE(quiet.exit_code == 0);
    CHECK_THAT(loud.out, Catch::Contains("  ["));  // the log: "  [0.00s] greedy ..."
    CHECK_THAT(quiet.out, !Catch::Contains("  ["));
    CHECK(quiet.err.empty());
    CHECK_THAT(quiet.out, Catch::Contains("status: OPTIMAL"));
    CHECK_THAT(quiet.out, Catch::Contains("lower bound:"));
}

TEST_CASE("one meaning: search refuses an output it could not write before it searches", "[issue31][search]") {
    // DualPipe's two pipelines do not fit PyTorch's CSV: refused up front (no status line, nothing written).
    const std::string csv = (scratch_dir() / "dualpipe_search.csv").string();
    const auto r = run_cli("search -P 4 -M 8 --placement dualpipe -o " + csv);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("holds one pipeline"));
    CHECK_THAT(r.out, !Catch::Contains("status:"));
    CHECK_FALSE(std::filesystem::exists(csv));
    const auto missing = run_cli("search -P 2 -M 3 -o /nonexistent-dir/x.txt");
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Catch::Contains("no such directory"));
    CHECK_THAT(missing.out, !Catch::Contains("status:"));
}

TEST_CASE("one meaning: a mistyped flag gets the nearest flag of its command", "[issue31][cli]") {
    const auto r = run_cli("verify 1f1b -P 2 -M 2 --memory-limt 3");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--memory-limt: unknown flag; did you mean '--memory-limit'?"));
    const auto s = run_cli("search -P 2 -M 2 --time-limt 3 --json");
    CHECK(s.exit_code == 2);
    CHECK_THAT(nlohmann::json::parse(s.out)["errors"][0]["message"].get<std::string>(), Catch::Contains("'--time-limit'"));
    // Far from every flag: no guess.
    CHECK_THAT(run_cli("verify 1f1b -P 2 -M 2 --zzzzzzzzzzzz").err, !Catch::Contains("did you mean"));
}

TEST_CASE("one meaning: placement names in any case, like family names", "[issue31][search]") {
    const auto lower = run_cli("search -P 2 -M 4 --placement v -q --json");
    const auto upper = run_cli("search -P 2 -M 4 --placement V -q --json");
    INFO(upper.err);
    REQUIRE(lower.exit_code == 0);
    REQUIRE(upper.exit_code == 0);
    CHECK(nlohmann::json::parse(lower.out)["exact"]["makespan"] == nlohmann::json::parse(upper.out)["exact"]["makespan"]);
    CHECK(run_cli("search -P 2 -M 4 --placement DualPipe -q").exit_code == 0);
}

TEST_CASE("one meaning: chunk takes --seconds-per-unit like show, compare and report", "[issue31][chunk]") {
    const std::string a = (scratch_dir() / "chunk_spu.json").string(), b = (scratch_dir() / "chunk_us.json").string();
    REQUIRE(run_cli("chunk --chunk-costs " + kChunk + " --trace " + a + " --seconds-per-unit 1/1000000").exit_code == 0);
    REQUIRE(run_cli("chunk --chunk-costs " + kChunk + " --trace " + b + " --trace-unit-us 1").exit_code == 0);
    CHECK(pp::test::slurp(a) == pp::test::slurp(b));
    CHECK(run_cli("chunk --chunk-costs " + kChunk + " --trace " + a + " --seconds-per-unit 0").exit_code == 2);
}

TEST_CASE("one meaning: named cost presets are the published numbers", "[issue31][costs]") {
    // Zero Bubble paper Table 9, 1.5B p=8 m=24 (ms -> us), and DeepSeek's README figure.
    CHECK(makespan("simulate 1f1b -P 8 -M 24 --costs zb-1.5b") ==
          makespan("simulate 1f1b -P 8 -M 24 --costs F=18522,I=18086,W=9337,comm=601"));
    CHECK(makespan("simulate 1f1b -P 8 -M 64 --costs ZB-1.5B-m64") ==
          makespan("simulate 1f1b -P 8 -M 64 --costs F=18546,I=18097,W=9321,comm=762"));
    CHECK(makespan("simulate zb-h1 -P 8 -M 24 --costs zb-1.5b,comm=0") ==
          makespan("simulate zb-h1 -P 8 -M 24 --costs F=18522,I=18086,W=9337,comm=0"));
    CHECK(makespan("simulate dualpipe -P 4 -M 8 --costs deepseek-readme") ==
          makespan("simulate dualpipe -P 4 -M 8 --costs F=1,I=1,W=1,B=2,FB=3"));
    const auto list = run_cli("list --costs --json");
    REQUIRE(list.exit_code == 0);
    const auto j = nlohmann::json::parse(list.out);
    CHECK(j["status"] == "ok");
    int zb_rows = 0;
    for (const auto& p : j["cost_presets"]) zb_rows += p["name"].get<std::string>().find("-m") != std::string::npos;
    CHECK(zb_rows == 12);  // every row of Table 9
    const auto bad = run_cli("simulate 1f1b -P 2 -M 2 --costs zb-1.5q");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("preset name"));
}

namespace {

nlohmann::json json_of(const std::string& command) {
    const auto r = run_cli(command + " --json");
    INFO(command << "\n" << r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("units: compare --units stage is simulate of the generated file -- rank units agree across commands", "[issue31][units]") {
    const std::string costs = "--costs F=3/2,I=1,W=2/3,comm=1/7";
    for (const std::string family : {"1f1b -P 3 -M 6", "zbv -P 2 -M 4", "interleaved-1f1b -P 2 -M 4 -V 2", "combined-1f1b -P 4 -M 8"}) {
        INFO(family);
        const std::string name = family.substr(0, family.find(' '));
        const std::string file = (scratch_dir() / ("units_" + name + ".txt")).string();
        REQUIRE(run_cli("generate " + family + " -o " + file).exit_code == 0);
        // Stage units: the costs as given, per stage, in both commands.
        const auto stage = json_of("compare " + family + " " + costs + " --units stage")["rows"][0]["exact"];
        const auto simulated = json_of("simulate " + file + " " + costs)["exact"];
        CHECK(stage["makespan"] == simulated["makespan"]);
        CHECK(json_of("compare " + family + " " + costs + " --per-stage-costs")["rows"][0]["exact"]["makespan"] == stage["makespan"]);
        // Rank units: compare's default; simulate, show and verify say the same makespan and peaks with --units rank.
        const auto rank = json_of("compare " + family + " " + costs)["rows"][0]["exact"];
        const auto sim_rank = json_of("simulate " + file + " " + costs + " --units rank");
        CHECK(sim_rank["exact"]["makespan"] == rank["makespan"]);
        CHECK_THAT(sim_rank["units"].get<std::string>(), Catch::StartsWith("rank"));
        CHECK(json_of("show " + file + " " + costs + " --units rank")["exact"]["makespan"] == rank["makespan"]);
        const auto verified = json_of("verify " + file + " --units rank");
        CHECK(verified["exact"]["peak_activations"] == rank["peak_activations"]);
        CHECK(json_of("verify " + file)["units"] == "stage");
    }
    // A file's costs are per stage: --units rank does not scale them again.
    const std::string costed = pp::test::write_temp("units_costed.txt", "ranks 1\nmicrobatches 1\ncosts F=2 I=2 W=2\nrank 0: 0F0 0B0\n");
    CHECK(run_cli("simulate " + costed + " --units rank").exit_code == 2);
}

TEST_CASE("units: a like-for-like V search is never worse than compare's ZBV at rank units", "[issue31][units][search]") {
    for (const auto& [p, m] : std::vector<std::pair<int, int>>{{2, 4}, {3, 6}}) {
        const std::string size = fmt::format("-P {} -M {}", p, m);
        const std::string costs = "--costs F=3,I=2,W=2,comm=1/2";
        const auto zbv = json_of("compare zbv " + size + " " + costs)["rows"][0];
        const std::string cap = zbv["exact"]["peak_activations"][0].get<std::string>();
        const auto found = json_of("search " + size + " --placement v " + costs + " --units rank --memory-limit " + cap +
                                   " --time-limit 20 -q");
        INFO(found.dump());
        REQUIRE((found["status"] == "optimal" || found["status"] == "feasible"));
        CHECK(found["units"] == "rank");
        CHECK(found["exact"]["stage_share"] == "0.5");
        CHECK(found["makespan"].get<double>() <= zbv["makespan"].get<double>());
    }
}

TEST_CASE("letters: a cost letter no op uses is named in a warning", "[issue31][letters]") {
    // The case: B on a file whose backward is split into I and W changes nothing.
    const auto split = run_cli("simulate zb-h1 -P 2 -M 2 --costs F=1,B=2,W=1");
    CHECK(split.exit_code == 0);
    CHECK_THAT(split.err, Catch::Contains("the cost B is not used"));
    const auto full = run_cli("simulate 1f1b -P 2 -M 2 --costs F=1,I=1,W=1,B=3");
    CHECK_THAT(full.err, Catch::Contains("the cost I is not used"));
    CHECK_THAT(full.err, Catch::Contains("the cost W is not used"));
    CHECK_THAT(run_cli("show 1f1b -P 2 -M 2 --costs FB=3").err, Catch::Contains("the cost FB is not used"));
    // Letters that are used: nothing said (DualPipe has F&B pairs and full backwards; 1F1B's B is I + W).
    CHECK(run_cli("simulate dualpipe -P 4 -M 8 --costs F=1,B=2,W=1,FB=3").err.empty());
    CHECK(run_cli("simulate 1f1b -P 2 -M 2 --costs F=1,I=1,W=1").err.empty());
}

TEST_CASE("plan: a family refused at the implied M is evaluated at the nearest M it accepts, and said", "[issue31][plan]") {
    // DeepSeek-V3 on 2048 GPUs: M = 15360 / (DP * 1); combined 1F1B needs M to be a multiple of P (the issue's
    // case: the EP section used M=112 silently while the ranking left the family out).
    const auto r = run_cli("plan --preset deepseek-v3 --gpus 2048 --families combined-1f1b --json");
    INFO(r.err);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["options"].is_array());
    REQUIRE_FALSE(j["options"].empty());
    bool adjusted = false;
    for (const auto& o : j["options"]) {
        if (o["requested_microbatches"].is_null()) continue;
        adjusted = true;
        CHECK(o["microbatches"].get<int>() % o["ranks"].get<int>() == 0);
        CHECK(o["microbatches"] != o["requested_microbatches"]);
        CHECK_THAT(o["label"].get<std::string>(), Catch::Contains("(not "));
    }
    CHECK(adjusted);
    // Nothing to evaluate: exit 1, status unknown, the reason listed.
    const auto none = run_cli("plan --preset deepseek-v3 --gpus 2048 --families no-such-family --json");
    CHECK(none.exit_code == 1);
    const auto n = nlohmann::json::parse(none.out);
    CHECK(n["status"] == "unknown");
    CHECK_FALSE(n["skipped"].empty());
}

TEST_CASE("plan: one step-time model -- the ranking and the EP section time the same schedule the same", "[issue31][plan]") {
    // The case: 1F1B PP=16 M=120 was 38.735 s in the ranking (all-to-all exposed) and 28.8 s in the EP
    // section (chunk model). Now both use the chunk model for an MoE model with EP > 1, and say so.
    const auto r = run_cli("plan --preset deepseek-v3 --gpus 2048 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["step_time_model"] == "chunk");
    int compared = 0;
    for (const auto& row : j["ep_all_to_all"]["rows"]) {
        if (!row.contains("makespan_us")) continue;
        for (const auto& o : j["options"])
            if (o["family"] == row["family"] && o["ranks"] == j["ep_all_to_all"]["ranks"] && o["microbatches"] == row["microbatches"]) {
                INFO(o["label"]);
                CHECK(o["makespan_seconds"].get<double>() == Approx(row["makespan_us"].get<double>() / 1e6).epsilon(1e-9));
                ++compared;
            }
    }
    CHECK(compared >= 3);  // 1f1b, dualpipe, dualpipev at least
    CHECK_THAT(run_cli("plan --preset deepseek-v3 --gpus 2048").out, Catch::Contains("step time: chunk model"));
    // A dense model has no all-to-all: the op model, said.
    CHECK(nlohmann::json::parse(run_cli("plan --preset dense-70b --gpus 4096 --json").out)["step_time_model"] == "op");
}

TEST_CASE("units: sweep takes --units like search, line for line", "[issue31][units]") {
    const auto sweep = run_cli("sweep --mode search -P 2 -M 4 --placement v --costs F=3,I=2,W=2 --units rank --memory-limit 2 "
                               "--instance-time-limit 20");
    INFO(sweep.err);
    REQUIRE(sweep.exit_code == 0);
    const auto line = nlohmann::json::parse(sweep.out.substr(0, sweep.out.find('\n')));
    CHECK(line["units"] == "rank");
    const auto search = json_of("search -P 2 -M 4 --placement v --costs F=3,I=2,W=2 --units rank --memory-limit 2 -q");
    CHECK(line["status"] == search["status"]);
    CHECK(line["exact"]["makespan"] == search["exact"]["makespan"]);
}

TEST_CASE("plan: --chunk-costs takes the chunk syntax of every command -- measured op costs are --op-costs-ms", "[issue31][plan]") {
    const std::string chunk =
        "attn_f=6.7,dispatch_f=4.4,mlp_f=5.7,combine_f=8.8,combine_b=4.4,mlp_i=5.7,mlp_w=5.7,dispatch_b=8.8,attn_i=7.3,attn_w=6.1";
    const auto r = run_cli("plan --preset deepseek-v3 --gpus 2048 --chunk-costs " + chunk + " --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["step_time_model"] == "chunk");
    CHECK_THAT(run_cli("plan --preset deepseek-v3 --gpus 2048 --chunk-costs " + chunk).out,
               Catch::Contains("chunk costs: measured components"));
    // Slower measured components give a slower step than the same components 10x faster.
    const std::string fast = "attn_f=0.67,dispatch_f=0.44,mlp_f=0.57,combine_f=0.88,combine_b=0.44,mlp_i=0.57,mlp_w=0.57,"
                             "dispatch_b=0.88,attn_i=0.73,attn_w=0.61";
    const auto f = nlohmann::json::parse(run_cli("plan --preset deepseek-v3 --gpus 2048 --chunk-costs " + fast + " --json").out);
    CHECK(f["options"][0]["step_seconds"].get<double>() < j["options"][0]["step_seconds"].get<double>());
    // The old meaning of plan's --chunk-costs: refused, naming its new flag.
    const auto old = run_cli("plan --preset deepseek-v3 --gpus 2048 --chunk-costs F=1,I=1,W=1");
    CHECK(old.exit_code == 2);
    CHECK_THAT(old.err, Catch::Contains("op-costs-ms"));
    CHECK(run_cli("plan --preset deepseek-v3 --gpus 2048 --op-costs-ms F=1,I=1,W=1 --json").exit_code == 0);
}

TEST_CASE("units: with --units rank a file's own stage costs stay as written, flag costs are scaled", "[issue31][units]") {
    // Two ranks, 1F1B loop placement of 4 stages (2 per rank): share P/blocks = 1/2. The file gives block 1 its
    // own F = 10 (a stage cost); --costs F=2,I=2,W=2 are rank units, so every other stage runs at F=I=W=1.
    // One micro-batch, one rank line per rank, in dependency order: by hand, stages 0..3 forward then back.
    const std::string file = pp::test::write_temp("units_file_block.txt",
                                                  "ranks 2\nmicrobatches 1\nstages 4\nplacement loop\n"
                                                  "costs F=1 I=1 W=1\nstage-costs 1 F=10\n"
                                                  "rank 0: 0F0 2F0 2B0 0B0\nrank 1: 1F0 3F0 3B0 1B0\n");
    // Forwards 1 + 10 + 1 + 1, backwards (I + W = 2 each) 4 x 2: makespan 21 (no comm).
    CHECK(makespan("simulate " + file + " --costs F=2,I=2,W=2 --units rank") == "21");
    CHECK(makespan("simulate " + file + " --costs F=1,I=1,W=1") == "21");  // the same in stage units
}

TEST_CASE("units: prove, formula and refute take --units -- rank is stage where a stage is a 1/P share, refused where not",
          "[issue31][units]") {
    // 1F1B: a stage is a 1/P share, so rank units give the same formula, said in the units line and in JSON.
    const auto stage = run_cli("formula 1f1b -P 4 --json");
    const auto rank = run_cli("formula 1f1b -P 4 --units rank --json");
    REQUIRE(stage.exit_code == 0);
    REQUIRE(rank.exit_code == 0);
    auto js = nlohmann::json::parse(stage.out), jr = nlohmann::json::parse(rank.out);
    CHECK(js["units"] == "stage");
    CHECK_THAT(jr["units"].get<std::string>(), Catch::StartsWith("rank"));
    CHECK(js["bubble"] == jr["bubble"]);
    for (const std::string command : {"prove 1f1b -P 3 --json", "refute 1f1b -P 3 --claim 'bubble >= 0' --json"}) {
        const auto r = run_cli(command + " --units rank");
        INFO(command << "\n" << r.err);
        CHECK((r.exit_code == 0 || r.exit_code == 1));
        CHECK_THAT(nlohmann::json::parse(r.out)["units"].get<std::string>(), Catch::StartsWith("rank"));
    }
    // A ZBV stage is half a share: symbolic results are stated per stage, so rank units are refused with the rule.
    // A claim is checked instance by instance, so refute takes rank units there too (next test case).
    for (const std::string command : {"formula zbv -P 4", "prove zbv -P 4", "formula interleaved-1f1b -P 2 -V 3"}) {
        const auto r = run_cli(command + " --units rank");
        INFO(command);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--units stage"));
        CHECK(run_cli(command + " --units stage").exit_code != 2);
    }
}

TEST_CASE("units: a claim's peaks and costs are a rank's under --units rank (V: a stage holds half a rank's stash)",
          "[issue44][units]") {
    // v-half at P=2, M=2 by hand: the simulator's stage peak is 4 stashes on rank 1 (stages 1 and 2, both micro-batches); a rank holds two stages of
    // half a share each, so the rank peak is 2. 'peak <= P/2 + 1' (= 2) is then false in stage units, true in rank.
    const auto refuted = run_cli("refute --claim 'peak <= P/2 + 1' v-half -P 2 -M 2 --json");
    REQUIRE(refuted.exit_code == 1);
    const auto jr = nlohmann::json::parse(refuted.out);
    CHECK(jr["counterexample"]["values"]["peak"] == "4");
    const auto holds = run_cli("refute --claim 'peak <= P/2 + 1' v-half -P 2 -M 2 --units rank --json");
    INFO(holds.out << holds.err);
    REQUIRE(holds.exit_code == 0);
    CHECK_THAT(nlohmann::json::parse(holds.out)["units"].get<std::string>(), Catch::StartsWith("rank"));
    // The rank peak itself is 2: 'peak <= 1' is broken with the value 2 printed in rank units.
    const auto low = run_cli("refute --claim 'peak <= 1' v-half -P 2 -M 2 --units rank --json");
    REQUIRE(low.exit_code == 1);
    CHECK(nlohmann::json::parse(low.out)["counterexample"]["values"]["peak"] == "2");
    // The same on zbv, refused before rank units reached claims: a claim holds or breaks, never exit 2.
    const auto zbv = run_cli("refute zbv -P 4 --claim 'bubble >= 0' --units rank --json");
    INFO(zbv.err);
    CHECK(zbv.exit_code == 0);
    // The UNDECIDED reason names what the claim uses, and peak claims close over every M (no 'uses M' for a peak).
    const auto every_m = run_cli("refute --claim 'peak <= P+2' v-half -P 2..4 --units rank");
    CHECK(every_m.exit_code == 0);
    CHECK_THAT(every_m.out, Catch::Contains("memory-bound: PROVED"));
    CHECK_THAT(every_m.out + every_m.err, !Catch::Contains("uses M, makespan"));
}

TEST_CASE("one meaning: the newcomer's flags get their suggestion first, presets and defaults are said",
          "[issue44][cli]") {
    // `-p 4` for -P: the hint is the first line, before what the typo caused (--ranks missing).
    const auto short_flag = run_cli("generate 1f1b -p 4 -M 4");
    CHECK(short_flag.exit_code == 2);
    CHECK_THAT(short_flag.err, Catch::StartsWith("-p: unknown flag; did you mean '-P' (--ranks)?"));
    const auto cost = run_cli("simulate 1f1b -P 2 -M 2 --cost F=1");
    CHECK(cost.exit_code == 2);
    CHECK_THAT(cost.err, Catch::StartsWith("--cost: unknown flag; did you mean '--costs'?"));
    CHECK_THAT(cost.err, !Catch::Contains("not expected"));
    // -M where every M is answered: the reason, not CLI11's "arguments were not expected".
    const auto every_m = run_cli("prove 1f1b -P 4 -M 8");
    CHECK(every_m.exit_code == 2);
    CHECK_THAT(every_m.err, Catch::StartsWith("-M: `pipeproof prove` answers for every number of micro-batches"));
    CHECK_THAT(every_m.err, !Catch::Contains("not expected"));
    // A short flag nothing resembles: the command's short flags.
    const auto stray = run_cli("formula 1f1b -P 4 -q");
    CHECK(stray.exit_code == 2);
    CHECK_THAT(stray.err, Catch::StartsWith("-q: unknown flag for `pipeproof formula` (its short flags: -P, -V)"));
    // A misspelt command: the nearest one. Only the named command is set up (start-up time); help still lists all.
    const auto command = run_cli("verfy x.txt");
    CHECK(command.exit_code == 2);
    CHECK_THAT(command.err, Catch::StartsWith("verfy: not a pipeproof command; did you mean 'verify'?"));
    const auto help_all = run_cli("--help-all");
    for (const std::string name : {"verify", "simulate", "search", "prove", "chunk", "plan"})
        CHECK_THAT(help_all.out, Catch::Contains("\n" + name + "\n"));
    CHECK_THAT(run_cli("--max-ops 1e9 list").out, Catch::Contains("dualpipev"));
    // A preset spelled without its dash.
    const auto preset = run_cli("simulate 1f1b -P 2 -M 2 --costs zb1.5b");
    CHECK(preset.exit_code == 2);
    CHECK_THAT(preset.err, Catch::Contains("did you mean the preset 'zb-1.5b'?"));
    // A one-of value.
    CHECK_THAT(run_cli("simulate 1f1b -P 2 -M 2 --units stages").err, Catch::Contains("did you mean 'stage'?"));
    // A family that takes V says which V it took, wherever it is named without -V; never with -V.
    for (const std::string command : {"generate interleaved-1f1b -P 2 -M 4", "simulate interleaved-1f1b -P 2 -M 4",
                                      "formula interleaved-1f1b -P 2", "prove interleaved-1f1b -P 2",
                                      "refute --claim 'bubble >= 0' interleaved-1f1b -P 2 -M 4"}) {
        INFO(command);
        CHECK_THAT(run_cli(command).err, Catch::Contains("note: interleaved-1f1b: V = 2 stages per rank (its default; -V chooses)"));
        CHECK_THAT(run_cli(command + " -V 2").err, !Catch::Contains("its default"));
    }
    CHECK_THAT(run_cli("simulate 1f1b -P 2 -M 4").err, !Catch::Contains("its default"));
    // The HTML report names today's flag, not an old spelling.
    const std::string html = pp::test::write_temp("newcomer_report.html", "");
    REQUIRE(run_cli("report 1f1b -P 2 -M 4 -o " + html).exit_code == 0);
    CHECK(pp::test::slurp(html).find("--per-stage-costs") == std::string::npos);
}

TEST_CASE("one meaning: --time-unit names the unit of the costs in text, pictures and JSON, and gives seconds per unit",
          "[issue44][units]") {
    // 1F1B, P=3, M=4, F=I=W=1: makespan (M+P-1)(F+B) = 6 x 3 = 18 and largest idle (P-1)(F+B) = 6, by hand.
    const auto text = run_cli("simulate 1f1b -P 3 -M 4 --time-unit ms");
    REQUIRE(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("makespan 18 ms   bubble (largest idle) 6 ms"));
    CHECK_THAT(text.out, Catch::Contains("busy (ms)"));
    const auto named = nlohmann::json::parse(run_cli("simulate 1f1b -P 3 -M 4 --time-unit ms --json").out);
    CHECK(named["time_unit"] == "ms");
    CHECK(named["makespan"] == 18);  // the unit is a name: the numbers stay the costs' numbers
    CHECK(nlohmann::json::parse(run_cli("simulate 1f1b -P 3 -M 4 --json").out)["time_unit"].is_null());
    // Pictures: the ASCII legend's scale and the SVG's time axis name it; the trace converts by it (1 s = 10^6 us).
    CHECK_THAT(run_cli("show 1f1b -P 2 -M 2 --time-unit ms").out, Catch::Contains("1 column = 0.25 ms"));
    const std::string svg = pp::test::write_temp("time_unit.svg", ""), trace = pp::test::write_temp("time_unit.json", "");
    REQUIRE(run_cli("show 1f1b -P 2 -M 2 --time-unit ms --svg " + svg).exit_code == 0);
    CHECK_THAT(pp::test::slurp(svg), Catch::Contains("time axis in ms"));
    REQUIRE(run_cli("show 1f1b -P 2 -M 2 --time-unit s --trace " + trace).exit_code == 0);
    const auto events = nlohmann::json::parse(pp::test::slurp(trace));
    CHECK(events["otherData"]["us_per_cost_unit"] == 1e6);
    REQUIRE(run_cli("show 1f1b -P 2 -M 2 --time-unit s --seconds-per-unit 0.001 --trace " + trace).exit_code == 2);
    // GPU-hours: --time-unit ms is --seconds-per-unit 0.001; the old numeric spelling still works; a contradiction
    // is refused.
    const std::string base = "compare 1f1b -P 4 -M 8 --tokens-per-microbatch 4096 --json ";
    const auto by_unit = nlohmann::json::parse(run_cli(base + "--time-unit ms").out);
    const auto by_seconds = nlohmann::json::parse(run_cli(base + "--seconds-per-unit 0.001").out);
    const auto old = nlohmann::json::parse(run_cli(base + "--time-unit 0.001").out);
    CHECK(by_unit["time_unit"] == "ms");
    CHECK(by_seconds["time_unit"].is_null());
    CHECK(by_unit["rows"][0]["exact"]["gpu_hours_per_million_tokens"] == by_seconds["rows"][0]["exact"]["gpu_hours_per_million_tokens"]);
    CHECK(old["rows"][0]["exact"]["gpu_hours_per_million_tokens"] == by_seconds["rows"][0]["exact"]["gpu_hours_per_million_tokens"]);
    CHECK(run_cli(base + "--time-unit ms --seconds-per-unit 0.01").exit_code == 2);
    CHECK(run_cli("compare 1f1b -P 4 -M 8 --time-unit ms").exit_code == 0);  // a name alone needs no tokens
    // search and sweep carry it in JSON; a misspelt unit gets the nearest one.
    CHECK(nlohmann::json::parse(run_cli("search -P 2 -M 4 --time-unit us -q --json").out)["time_unit"] == "us");
    const auto sweep = run_cli("sweep --mode compare -P 2 -M 4 --time-unit s");
    REQUIRE(sweep.exit_code == 0);
    CHECK(nlohmann::json::parse(sweep.out.substr(0, sweep.out.find('\n')))["time_unit"] == "s");
    const auto typo = run_cli("simulate 1f1b -P 2 -M 2 --time-unit sec");
    CHECK(typo.exit_code == 2);
    CHECK_THAT(typo.err, Catch::Contains("did you mean 's'?"));
}

TEST_CASE("one meaning: a CSV that drops its last micro-batch says the M it inferred, and -M checks the intended one",
          "[issue44][csv]") {
    // 1F1B on 4 ranks with 8 micro-batches, written as PyTorch's CSV, then every op of micro-batch 7 removed:
    // a valid 7-micro-batch schedule, which verify passes -- saying so -- and refuses when told M = 8.
    const auto csv = run_cli("generate 1f1b -P 4 -M 8 --format torch-csv");
    REQUIRE(csv.exit_code == 0);
    std::string dropped;
    for (size_t at = 0; at < csv.out.size();) {
        const size_t end = csv.out.find('\n', at);
        std::string row = csv.out.substr(at, end - at), kept;
        for (size_t c = 0; c <= row.size();) {
            const size_t comma = std::min(row.find(',', c), row.size());
            const std::string cell = row.substr(c, comma - c);
            if (!cell.empty() && cell.back() != '7') kept += (kept.empty() ? "" : ",") + cell;
            c = comma + 1;
        }
        dropped += kept + "\n";
        at = end + 1;
    }
    const std::string file = pp::test::write_temp("dropped_last.csv", dropped);
    const auto quiet = run_cli("verify " + file);
    CHECK(quiet.exit_code == 0);
    CHECK_THAT(quiet.out, Catch::Contains("4 ranks, 7 micro-batches, 4 stages, placement 1f1b"));
    CHECK_THAT(quiet.out, Catch::Contains("7 micro-batches (0..6: the largest micro-batch number + 1)"));
    const auto j = nlohmann::json::parse(run_cli("verify " + file + " --json").out);
    CHECK(j["microbatches"] == 7);
    CHECK(std::find(j["inferred"].begin(), j["inferred"].end(), "microbatches") != j["inferred"].end());
    const auto told = run_cli("verify " + file + " --microbatches 8");
    CHECK(told.exit_code == 1);
    CHECK_THAT(told.out, Catch::Contains("0F7 is missing"));
    CHECK_THAT(told.out, Catch::Contains("3F7 is missing"));
    // Micro-batches numbered 1..8: the inferred M is 9 and micro-batch 0 is named as missing.
    std::string shifted;
    for (size_t k = 0; k < csv.out.size(); ++k) {
        const char ch = csv.out[k];
        const bool index = std::isdigit(static_cast<unsigned char>(ch)) && k > 0 && std::isalpha(static_cast<unsigned char>(csv.out[k - 1]));
        shifted += index ? static_cast<char>(ch + 1) : ch;
    }
    const auto off = run_cli("verify " + pp::test::write_temp("from_one.csv", shifted));
    CHECK(off.exit_code == 1);
    CHECK_THAT(off.out, Catch::Contains("0F0 is missing"));
}

TEST_CASE("one meaning: prove's memory-bound peaks say from which M they hold, in rank units too", "[issue44][prove]") {
    // V-Half's order becomes periodic at M = 6, so its peaks hold from M = 7 on (the statement's origin is M = 1);
    // in rank units each peak is P/2 + 1 = 3 at P = 4, the V-Half paper's bound.
    const auto text = run_cli("prove v-half -P 4 --units rank --property memory-bound");
    REQUIRE(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("activation peak per rank = [3 3 3 3] for every M >= 7"));
    const auto j = nlohmann::json::parse(run_cli("prove v-half -P 4 --units rank --property memory-bound --json").out);
    CHECK(j["microbatches_from"] == 1);
    CHECK(j["peaks_from_microbatches"] == 7);
    CHECK(j["peaks"] == nlohmann::json({3, 3, 3, 3}));
}
