// Issue 14 item 3: every command a script drives has --json, and each JSON field has one type (numbers
// are numbers; exact fractions are strings under "exact").
#include "cli_runner.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <sstream>

using pp::test::run_cli;

namespace {

nlohmann::json parse_stdout(const pp::test::CliResult& r) {
    INFO(r.out << r.err);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("list --json: every family with its name, parameters and source", "[cli][json]") {
    const auto r = run_cli("list --json");
    REQUIRE(r.exit_code == 0);
    const auto doc = parse_stdout(r);
    CHECK(doc.at("status") == "ok");
    const auto& j = doc.at("families");
    REQUIRE(j.is_array());
    CHECK(j.size() == pp::schedule_families().size());
    for (const auto& f : j) {
        CHECK(f.at("name").is_string());
        CHECK(pp::find_family(f.at("name").get<std::string>()) != nullptr);
        CHECK(f.at("source").is_string());
        CHECK(f.at("requires").is_string());
    }
}

TEST_CASE("show --json: the timeline's slots agree with simulate's makespan and the 1F1B closed form", "[cli][json]") {
    // 1F1B, P = 3, M = 4, F = 1, B = I + W = 2: makespan (M + P - 1)(F + B) = 18, by hand.
    const auto r = run_cli("show 1f1b -P 3 -M 4 --costs F=1,I=1,W=1 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = parse_stdout(r);
    CHECK(j.at("makespan") == 18);
    const auto& slots = j.at("timeline");
    CHECK(slots.size() == 3u * 4u * 2u);  // F and B (= I + W) of every micro-batch on each of 3 ranks
    double last_end = 0;
    for (const auto& s : slots) {
        CHECK(s.at("start").is_number());
        CHECK(s.at("exact").at("start").is_string());
        CHECK(s.at("end").get<double>() > s.at("start").get<double>());
        last_end = std::max(last_end, s.at("end").get<double>());
    }
    CHECK(last_end == 18);
    const auto sim = parse_stdout(run_cli("simulate 1f1b -P 3 -M 4 --costs F=1,I=1,W=1 --json"));
    CHECK(sim.at("makespan") == j.at("makespan"));
    CHECK(run_cli("show 1f1b -P 3 -M 4 --json --svg /dev/null").exit_code == 2);
}

TEST_CASE("plan --json: options, recommendation and nothing-fits as one document", "[cli][json][planner]") {
    const auto ok = run_cli("plan --preset deepseek-v3 --gpus 2048 --json");
    REQUIRE(ok.exit_code == 0);
    const auto j = parse_stdout(ok);
    REQUIRE(j.at("recommendation").is_object());
    CHECK(j.at("recommendation").at("label") == "dualpipe PP=16 M=120");
    CHECK(j.at("recommendation").at("fits") == true);
    for (const auto& o : j.at("options")) {
        CHECK(o.at("bubble_fraction").is_number());
        CHECK(o.at("exact").at("bubble_fraction").is_string());
        CHECK(o.at("step_seconds").get<double>() >= o.at("makespan_seconds").get<double>());
    }
    const auto none = run_cli("plan --preset dense-70b --gpus 64 --exclude-families v-half,v-min --json");
    CHECK(none.exit_code == 1);
    const auto n = parse_stdout(none);
    CHECK(n.at("recommendation").is_null());
    CHECK(n.at("status") == "infeasible");  // the status of exit 1: nothing fits
    CHECK(n.at("nothing_fits").at("with_recompute_gb").is_number());
}

TEST_CASE("prove --emit-proof: the spelling search uses -- --emit stays as the old one", "[cli][names]") {
    const auto dir = pp::test::scratch_dir() / "emit_proof_alias";
    std::filesystem::remove_all(dir);
    const auto r = run_cli("prove dualpipe -P 4 --property dependencies --emit-proof " + dir.string());
    CHECK(r.exit_code == 0);
    size_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) files += e.path().extension() == ".smt2";
    CHECK(files >= 1);
}

TEST_CASE("version flag: the release and the commit, exit 0", "[cli]") {
    const auto r = run_cli("--version");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("pipeproof 0."));
}

TEST_CASE("json status: one vocabulary, one case, at the top of every command's document", "[cli][json][issue31]") {
    const std::set<std::string> vocabulary = {"valid",  "invalid", "optimal", "feasible", "infeasible",
                                              "proved", "refuted", "holds",   "unknown",  "ok", "error"};
    const std::string chunk =
        "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1";
    const std::string over = pp::test::write_temp("status_over.txt",
                                                  "ranks 2\nmicrobatches 2\nmemory-limit 1\n"
                                                  "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n");
    const std::string deadlock = pp::test::write_temp("status_deadlock.txt",
                                                      "ranks 2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1\n");
    // command -> the status it must answer (each checked by hand: 1F1B P=2 M=2 is valid; the cap of 1 is
    // exceeded by 1F1B's two warm-up forwards on rank 0; rank 0 waits on 0B0 while rank 1 waits on 1F1's input).
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"verify 1f1b -P 2 -M 2", "valid"},
        {"verify " + over, "invalid"},
        {"simulate 1f1b -P 2 -M 2", "valid"},
        {"simulate " + over, "invalid"},
        {"simulate " + deadlock, "invalid"},  // no timing: the error document, findings under "violations" too
        {"show 1f1b -P 2 -M 2", "valid"},
        {"compare 1f1b zb-h1 -P 2 -M 4", "ok"},
        {"search -P 2 -M 3", "optimal"},
        {"search -P 2 -M 3 --memory-limit 0.5", "infeasible"},
        {"prove 1f1b -P 2", "proved"},
        {"formula 1f1b -P 2", "proved"},
        {"refute --claim 'bubble <= 0' 1f1b -P 2 -M 2..3", "refuted"},
        {"refute --claim 'bubble >= 0' 1f1b -P 2 -M 2..3", "holds"},
        {"list", "ok"},
        {"chunk --chunk-costs " + chunk, "ok"},
        {"plan --preset deepseek-v3 --gpus 2048", "ok"},
        {"verify --no-such-flag", "error"},
    };
    for (const auto& [command, expected] : cases) {
        const auto r = run_cli(command + " --json");
        INFO(command << "\n" << r.err);
        const auto j = nlohmann::json::parse(r.out);
        REQUIRE(j.is_object());
        REQUIRE(j.contains("status"));
        CHECK(vocabulary.count(j["status"].get<std::string>()) == 1);
        CHECK(j["status"] == expected);
        if (expected == "invalid") CHECK(j.at("violations").is_array());
    }
    // sweep writes one document per line, each with its status.
    const auto sweep = run_cli("sweep --mode compare -P 2 -M 4,8");
    REQUIRE(sweep.exit_code == 0);
    std::istringstream lines(sweep.out);
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) CHECK(nlohmann::json::parse(line)["status"] == "ok");
    CHECK(count == 2);
}
