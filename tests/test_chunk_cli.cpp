// Issue 11 on the command line and in files: the `chunk` command's exact JSON, exposed communication in
// simulate/compare, `show --chunks`, the chunks sections of the native and JSON formats, and bad input
// exiting 2 with its location. Expected values are the hand timelines of test_chunk_timing.cpp.
#include "cli_runner.hpp"
#include "formats/chunks_json.hpp"
#include "formats/json_schedule.hpp"
#include "formats/native.hpp"
#include "solver/chunk_best_z3.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using pp::test::run_cli;
using pp::test::write_temp;

namespace {

const std::string kCaseA = "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1";

nlohmann::json json_of(const pp::test::CliResult& r) {
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("chunk cli: one slot's duration and exposed_comm, exact, per pattern and op", "[chunk][cli]") {
    auto pair = run_cli("chunk --chunk-costs " + kCaseA + " --json");
    CHECK(pair.exit_code == 0);
    auto j = json_of(pair);
    CHECK(j["duration"] == 13);
    CHECK(j["exposed_comm"] == 0);
    CHECK(j["network_comm"] == 7);
    CHECK(j["pattern"] == "deepseek");
    CHECK(j["components"].size() == 10);
    j = json_of(run_cli("chunk --chunk-costs " + kCaseA + " --pattern megatron --json"));
    CHECK(j["duration"] == 14);
    CHECK(j["exposed_comm"] == 1);
    j = json_of(run_cli("chunk --chunk-costs " + kCaseA + " --op B --json"));
    CHECK(j["duration"] == 11);
    CHECK(j["exposed_comm"] == 3);
    j = json_of(run_cli("chunk --chunk-costs " + kCaseA + " --pattern serial --json"));
    CHECK(j["duration"] == 20);
    CHECK(j["exposed_comm"] == 7);
    // Text: the two lanes and the exposed row (a round 0.05 per column: 280 columns).
    const auto text = run_cli("chunk --chunk-costs " + kCaseA + " --pattern megatron --width 300");  // room for whole labels
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("compute   [attn_f0") && Catch::Contains("network   [combine_b") &&
                             Catch::Contains("duration 14   exposed_comm 1"));
}

TEST_CASE("chunk cli: pattern best is optimal and its certificate re-checks", "[chunk][cli][best]") {
    const std::string dir = (pp::test::scratch_dir() / "best-proof").string();
    // Forward dispatch too long for Figure 4's slot: best reorders.
    const std::string costs = "attn_f=2,dispatch_f=6,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=1,attn_i=2,attn_w=1";
    const auto r = run_cli("chunk --chunk-costs " + costs + " --pattern best --json --emit-proof " + dir);
    CHECK(r.exit_code == 0);
    const auto j = json_of(r);
    CHECK(j["optimal"] == true);
    CHECK(j["duration"] == j["lower_bound"]);
    const auto deepseek = json_of(run_cli("chunk --chunk-costs " + costs + " --json"));
    CHECK(deepseek["duration"] == 14);
    CHECK(j["duration"].get<int>() <= 14);
    CHECK(j["duration"].get<int>() >= 13);  // the compute stream alone needs 13
    const std::string smt2 = pp::test::slurp(dir + "/certificate.smt2");
    REQUIRE(!smt2.empty());
    CHECK(pp::smt2_is_unsat(smt2));  // no order finishes one tick earlier
}

TEST_CASE("chunk cli: Z3 and the exhaustive search agree on best", "[chunk][best]") {
    const std::vector<std::string> cases = {
        kCaseA, "layers=2," + kCaseA,
        "layers=2,attn_f=1,dispatch_f=3,mlp_f=1,combine_f=2,combine_b=2,mlp_i=1,mlp_w=1,dispatch_b=3,attn_i=1,attn_w=1"};
    for (const std::string& text : cases) {
        INFO(text);
        const pp::ChunkCosts chunk = pp::parse_chunk_costs(text);
        for (const pp::SlotKind kind : {pp::SlotKind::PairFB, pp::SlotKind::B, pp::SlotKind::PairFI}) {
            const pp::SlotDag dag = pp::build_slot_dag(kind, chunk);
            const auto exhaustive = pp::best_by_exhaustive_search(dag, pp::Rational(0));
            pp::ChunkBestOptions z3;
            z3.force_z3 = true;
            const auto solved = pp::best_order_certified(dag, pp::Rational(0), z3);
            CHECK(solved.optimal);
            CHECK(solved.timeline.duration == exhaustive.timeline.duration);
            CHECK(pp::smt2_is_unsat(solved.certificate_smt2));
        }
    }
}

TEST_CASE("chunk cli: simulate and compare report exposed communication per rank", "[chunk][cli]") {
    // One rank: F0 (7, exposed 2), (F1;B0) (13, exposed 0), B1 (11, exposed 3): makespan 31, network 2 + 7 + 5 = 14,
    // exposed 5, hidden share 9/14.
    const std::string file = write_temp("chunk_one_rank.txt", "ranks 1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0) 0B1\n");
    const auto j = json_of(run_cli("simulate " + file + " --chunk-costs " + kCaseA + " --json"));
    CHECK(j["makespan"] == 31);
    CHECK(j["per_rank"][0]["exposed_comm"] == 5);
    CHECK(j["per_rank"][0]["network_comm"] == 14);
    CHECK(j["per_rank"][0]["exact"]["hidden_share"] == "9/14");
    CHECK(j["per_rank"][0]["hidden_share"] == Approx(9.0 / 14));
    CHECK(j["chunks"]["slot_kinds"]["F&B"]["duration"] == 13);
    // compare rows carry exposed_comm per rank.
    const auto c = json_of(run_cli("compare 1f1b dualpipe -P 4 -M 8 --chunk-costs " + kCaseA + " --json"));
    REQUIRE(c["rows"].size() == 2);
    // 1F1B has no pairs: every rank runs 8 F (exposed 2) and 8 B (exposed 3) = 40 of 8 x (2 + 5) = 56.
    REQUIRE(c["rows"][0]["exposed_comm_per_rank"].size() == 4);
    for (const auto& e : c["rows"][0]["exposed_comm_per_rank"]) CHECK(e == 40);
    for (const auto& e : c["rows"][0]["network_comm_per_rank"]) CHECK(e == 56);
    CHECK(c["rows"][0]["exposed_comm_total"] == 160);
    CHECK(c["rows"][1].contains("exposed_comm_per_rank"));
    CHECK(c["rows"][1]["exposed_comm_total"].get<double>() < 4 * 40);  // DualPipe's pairs hide some of it
}

TEST_CASE("chunk cli: show --chunks draws two lanes per rank", "[chunk][cli]") {
    const auto r = run_cli("show dualpipe -P 4 -M 8 --chunks --chunk-costs " + kCaseA);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("rank 0   C ") && Catch::Contains("two-stream lanes, pattern deepseek"));
    const auto bad = run_cli("show dualpipe -P 4 -M 8 --chunks");
    CHECK(bad.exit_code == 2);
}

TEST_CASE("chunk cli: bad chunk input exits 2 with its location", "[chunk][cli][input]") {
    // A negative component cost on the command line: the flag and the character.
    const auto neg = run_cli("chunk --chunk-costs attn_f=2,dispatch_f=-1,mlp_f=3");
    CHECK(neg.exit_code == 2);
    CHECK_THAT(neg.err, Catch::Contains("--chunk-costs: at character 21") && Catch::Contains("negative"));
    // A pattern that breaks a dependency: mlp_f0 before attn_f0 on the compute stream.
    const auto broken = run_cli("chunk --chunk-costs " + kCaseA +
                                " --pattern 'compute: mlp_f0 attn_f0 mlp_i0 mlp_w0 attn_i0 attn_w0 / network: combine_b0 dispatch_f0 "
                                "dispatch_b0 combine_f0'");
    CHECK(broken.exit_code == 2);
    CHECK_THAT(broken.err, Catch::Contains("--pattern: at character 10") && Catch::Contains("breaks a dependency"));
    // --pattern alone, and --costs with --chunk-costs.
    CHECK(run_cli("simulate 1f1b -P 2 -M 2 --pattern megatron").exit_code == 2);
    CHECK(run_cli("simulate 1f1b -P 2 -M 2 --costs F=1 --chunk-costs " + kCaseA).exit_code == 2);
    // A native file whose chunks are for 2 layers but overrides layer 2.
    const std::string wrong_layer = write_temp("chunk_wrong_layer.txt",
                                               "ranks 1\nmicrobatches 1\nchunks layers=2 " + kCaseA + " mlp_f@2=5\nrank 0: 0F0 0B0\n");
    const auto wl = run_cli("simulate " + wrong_layer);
    CHECK(wl.exit_code == 2);
    const size_t column = std::string("chunks layers=2 " + kCaseA + " mlp_f@").size() + 1;
    CHECK_THAT(wl.err, Catch::Contains(wrong_layer + ":3:" + std::to_string(column) + ": error: layer 2 does not exist"));
    // A negative cost in the file.
    const std::string negative = write_temp("chunk_negative.txt", "ranks 1\nmicrobatches 1\nchunks attn_f=-2\nrank 0: 0F0 0B0\n");
    const auto ng = run_cli("simulate " + negative);
    CHECK(ng.exit_code == 2);
    CHECK_THAT(ng.err, Catch::Contains(negative + ":3:15: error: attn_f cannot be negative"));
    // A chunk-pattern line that breaks a dependency: the position of the entry that waits for a later one.
    const std::string pattern_file = write_temp(
        "chunk_bad_pattern.txt", "ranks 1\nmicrobatches 1\nchunks " + kCaseA +
                                     "\nchunk-pattern compute: attn_f0 mlp_i0 mlp_w0 attn_i0 attn_w0 mlp_f0 / network: combine_b0 "
                                     "dispatch_b0 combine_f0 dispatch_f0\nrank 0: 0F0 0B0\n");
    const auto bp = run_cli("simulate " + pattern_file);
    CHECK(bp.exit_code == 2);
    // The compute stream stops at mlp_f0 (waits for dispatch_f0), the network stream at combine_f0 (waits for mlp_f0).
    CHECK_THAT(bp.err, Catch::Contains(pattern_file + ":4:") && Catch::Contains("breaks a dependency"));
    // JSON: layer_costs for the wrong number of layers.
    const std::string json_file = write_temp(
        "chunk_wrong_layers.json",
        R"({"ranks": 1, "pipelines": [{"microbatches": 1, "stage_ranks": [0]}],
            "chunks": {"layers": 2, "costs": {"attn_f": "2", "dispatch_f": "1", "mlp_f": "3", "combine_f": "1", "combine_b": "1",
                       "mlp_i": "3", "mlp_w": "2", "dispatch_b": "4", "attn_i": "2", "attn_w": "1"},
                       "layer_costs": [{"mlp_f": "1"}, {"mlp_f": "2"}, {"mlp_f": "3"}]},
            "schedule": [{"rank": 0, "ops": [{"kind": "F", "stage": 0, "microbatch": 0}, {"kind": "B", "stage": 0, "microbatch": 0}]}]})");
    const auto jl = run_cli("simulate " + json_file);
    CHECK(jl.exit_code == 2);
    CHECK_THAT(jl.err, Catch::Contains("at /chunks/layer_costs: has 3 entries, but the chunk has 2 layers"));
}

TEST_CASE("chunk formats: chunks sections round-trip through native and JSON", "[chunk][native][json]") {
    const std::string text = "ranks 1\nmicrobatches 2\nchunks layers=2 " + kCaseA +
                             ",mlp_f@1=5,shared_f=1/3,slowdown=1/4,pp=0.5\nchunk-pattern megatron\nrank 0: 0F0 (0F1;0B0) 0B1\n";
    const pp::Schedule s = pp::read_native(text, "chunks.txt");
    REQUIRE(s.chunks);
    CHECK(s.chunks->costs.layers == 2);
    CHECK(s.chunks->costs.cost(pp::Component::MlpF, 0) == 3);
    CHECK(s.chunks->costs.cost(pp::Component::MlpF, 1) == 5);
    CHECK(s.chunks->costs.cost(pp::Component::SharedF, 1) == pp::Rational(1, 3));
    CHECK(s.chunks->costs.slowdown == pp::Rational(1, 4));
    REQUIRE(s.chunks->pattern);
    CHECK(s.chunks->pattern->kind == pp::PatternKind::Megatron);
    const pp::Schedule back = pp::read_native(pp::write_native(s), "back.txt");
    REQUIRE(back.chunks);
    CHECK(back.chunks->costs == s.chunks->costs);
    CHECK(back.chunks->pattern->kind == pp::PatternKind::Megatron);
    const pp::Schedule from_json = pp::read_json(pp::write_json(s), "back.json");
    REQUIRE(from_json.chunks);
    CHECK(from_json.chunks->costs == s.chunks->costs);
    CHECK(from_json.chunks->pattern->kind == pp::PatternKind::Megatron);
    // A custom pattern round-trips too.
    const std::string custom = "ranks 1\nmicrobatches 1\nchunks " + kCaseA +
                               "\nchunk-pattern compute: attn_f0 mlp_i0 mlp_w0 mlp_f0 attn_i0 attn_w0 / network: combine_b0 dispatch_f0 "
                               "dispatch_b0 combine_f0\nrank 0: 0F0 0B0\n";
    const pp::Schedule c = pp::read_native(custom, "custom.txt");
    const pp::Schedule c2 = pp::read_json(pp::write_json(c), "custom.json");
    REQUIRE(c2.chunks->pattern);
    CHECK(pp::format_pattern(*c2.chunks->pattern) == pp::format_pattern(*c.chunks->pattern));
    // The file's chunks drive simulate; --costs overrides them.
    const std::string file = write_temp("chunks_file.txt", text);
    const auto j = nlohmann::json::parse(run_cli("simulate " + file + " --json").out);
    CHECK(j.contains("chunks"));
    const auto opaque = nlohmann::json::parse(run_cli("simulate " + file + " --costs F=1,I=1,W=1 --json").out);
    CHECK(!opaque.contains("chunks"));
    CHECK(opaque["makespan"] == 6);  // F 1 + (F;B) 1 + 2 + B 2
}

TEST_CASE("chunk cli: plan says how much EP communication each family exposes", "[chunk][planner]") {
    const auto text = run_cli("plan --preset deepseek-v3 --gpus 2048 --top 3");
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("EP all-to-all at PP=") && Catch::Contains("combined-1f1b") &&
                             Catch::Contains("DualPipe's F&B pair") && Catch::Contains("Assumptions:"));
}

TEST_CASE("chunk cli: like-for-like compare gives a half-share stage half the layers, exactly", "[chunk][cli][compare]") {
    // ZB1P and DualPipeV cut the model into 2P blocks: with a 2-layer share per 1/P, each stage runs a 1-layer chunk.
    // The same as timing 1-layer chunks per stage directly (--per-stage-costs).
    const std::string two = "layers=2," + kCaseA, one = "layers=1," + kCaseA;
    for (const std::string family : {"zb1p", "dualpipev", "combined-1f1b"}) {
        INFO(family);
        const auto share = json_of(run_cli("compare " + family + " -P 4 -M 8 --chunk-costs " + two + " --json"));
        const auto stage = json_of(run_cli("compare " + family + " -P 4 -M 8 --per-stage-costs --chunk-costs " + one + " --json"));
        CHECK(share["rows"][0]["makespan"] == stage["rows"][0]["makespan"]);
        CHECK(share["rows"][0]["exposed_comm_per_rank"] == stage["rows"][0]["exposed_comm_per_rank"]);
        CHECK_THAT(share["rows"][0]["pattern"].get<std::string>(), Catch::Contains("1 layer per stage"));
    }
    // One layer per 1/P share cannot be halved: costs are scaled instead, and the row says so.
    const auto scaled = json_of(run_cli("compare zb1p -P 4 -M 8 --chunk-costs " + one + " --json"));
    CHECK_THAT(scaled["rows"][0]["pattern"].get<std::string>(), Catch::Contains("scaled"));
}
