// search --placement any / a list: the best over several placements, and what its OPTIMAL covers. Each
// placement's line is checked against a search of that placement alone (an independent run), the best against
// the least of them, the written schedule against the simulator.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

using pp::test::run_cli;
using pp::test::scratch_dir;

namespace {

nlohmann::json json_of(const pp::test::CliResult& r) {
    INFO(r.err);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("search scope: any is the best of every placement, each as searched alone", "[search][issue42]") {
    const std::string instance = "-P 2 -M 4 --costs F=2,I=2,W=1 --memory-limit 2 -q --time-limit 30";
    const std::string best_file = (scratch_dir() / "scope_best.txt").string();
    const auto any = run_cli("search --placement any " + instance + " --json -o " + best_file);
    REQUIRE(any.exit_code == 0);
    const auto j = json_of(any);
    REQUIRE(j["placements"].size() == 6);
    double least_value = 1e300, least_bound = 1e300;
    bool all_optimal = true;
    for (const auto& p : j["placements"]) {
        const std::string name = p["placement"];
        INFO(name);
        if (p["status"] == "skipped") continue;
        const auto alone = json_of(run_cli("search --placement " + name + " --units rank " + instance + " --json"));
        CHECK(alone["status"] == p["status"]);
        CHECK(alone["value"] == p["value"]);
        CHECK(alone["lower_bound"] == p["lower_bound"]);
        least_value = std::min(least_value, p["value"].get<double>());
        least_bound = std::min(least_bound, p["lower_bound"].get<double>());
        all_optimal = all_optimal && p["status"] == "optimal";
    }
    CHECK(j["value"].get<double>() == least_value);
    CHECK(j["lower_bound"].get<double>() == least_bound);
    CHECK(j["lower_bound"].get<double>() <= j["value"].get<double>());
    if (all_optimal) CHECK(j["status"] == "optimal");
    CHECK(j["scope"]["searched"].size() == 6);
    CHECK(j["scope"]["optimal_over"] == (j["status"] == "optimal" ? j["scope"]["searched"] : nlohmann::json::array()));
    // The best schedule, written, times to the value claimed.
    const auto sim = json_of(run_cli("simulate " + best_file + " --json"));
    CHECK(sim["makespan"] == j["makespan"]);
    CHECK(sim["placement"] == j["placement"]);
}

TEST_CASE("search scope: one placement says the OPTIMAL is for it only", "[search][issue42]") {
    const auto text = run_cli("search -P 2 -M 4 -q");
    REQUIRE(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::StartsWith("status: OPTIMAL for placement 1f1b only"));
    const auto j = json_of(run_cli("search -P 2 -M 4 -q --json"));
    CHECK(j["scope"]["searched"] == nlohmann::json::array({"1f1b"}));
    CHECK(j["scope"]["optimal_over"] == nlohmann::json::array({"1f1b"}));
    const auto list = run_cli("search --placement 1f1b,v -P 2 -M 4 -q");
    REQUIRE(list.exit_code == 0);
    CHECK_THAT(list.out, Catch::StartsWith("status: OPTIMAL over the placements 1f1b, v (and only over them)") ||
                             Catch::StartsWith("status: FEASIBLE"));
}

TEST_CASE("search scope: infeasible everywhere, bad lists and per-stage options", "[search][issue42]") {
    // Half a rank's stash is below every placement's memory floor.
    const auto none = run_cli("search --placement 1f1b,dualpipe -P 2 -M 4 --memory-limit 0.5 -q");
    CHECK(none.exit_code == 1);
    CHECK_THAT(none.out, Catch::StartsWith("status: INFEASIBLE under the cap for every placement searched (1f1b, dualpipe)"));
    const auto bad = run_cli("search --placement 1f1b,w -P 2 -M 4");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("'w' in the list is not 1f1b, v, interleaved:V or dualpipe"));
    const auto stage = run_cli("search --placement any -P 2 -M 4 --units stage");
    CHECK(stage.exit_code == 2);
    CHECK_THAT(stage.err, Catch::Contains("--units stage"));
    CHECK(run_cli("search --placement any -P 2 -M 4 --stage-costs 0:F=2").exit_code == 2);
    CHECK(run_cli("search --placement any -P 2").exit_code == 2);
}
