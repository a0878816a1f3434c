// Issue 14 item 3: every command a script drives has --json, and each JSON field has one type (numbers
// are numbers; exact fractions are strings under "exact").
#include "cli_runner.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

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
    const auto j = parse_stdout(r);
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
    const auto none = run_cli("plan --preset dense-70b --gpus 64 --json");
    CHECK(none.exit_code == 1);
    const auto n = parse_stdout(none);
    CHECK(n.at("recommendation").is_null());
    CHECK(n.at("nothing_fits").at("with_recompute_gb").is_number());
}

TEST_CASE("prove --emit-proof: the spelling search uses; --emit stays as the old one", "[cli][names]") {
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
