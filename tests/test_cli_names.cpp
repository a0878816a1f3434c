// One spelling per concept across commands, old spellings kept as aliases, family names in any case with a
// suggestion on a typo (issue 14, item 11).
#include "cli_runner.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using pp::test::run_cli;

TEST_CASE("family names: any case, '_' for '-', and a suggestion on a typo", "[cli][names]") {
    CHECK(pp::find_family("1F1B") == pp::find_family("1f1b"));
    CHECK(pp::find_family("ZB_H1") == pp::find_family("zb-h1"));
    CHECK(pp::find_family("DualPipeV")->name == "dualpipev");
    CHECK(pp::find_family("dualpip") == nullptr);

    const auto upper = run_cli("generate 1F1B -P 2 -M 2");
    CHECK(upper.exit_code == 0);
    CHECK(upper.out == run_cli("generate 1f1b -P 2 -M 2").out);

    const auto typo = run_cli("generate dualpip -P 4 -M 8");
    CHECK(typo.exit_code == 2);
    CHECK_THAT(typo.err, Catch::Contains("did you mean 'dualpipe'?"));
    CHECK_THAT(typo.err, Catch::Contains("zb-h2"));  // the list of families

    const auto show_typo = run_cli("show interleaved -P 4 -M 8");
    CHECK(show_typo.exit_code == 2);
    CHECK_THAT(show_typo.err, Catch::Contains("did you mean 'interleaved-1f1b'?"));

    const auto prove_upper = run_cli("prove DualPipe -P 2 --property deadlock-free");
    CHECK(prove_upper.exit_code == 0);
    CHECK_THAT(prove_upper.out, Catch::Contains("PROVED"));
}

TEST_CASE("names: --seconds-per-unit everywhere, --time-unit and --trace-unit-us still work", "[cli][names]") {
    const std::string base = "compare 1f1b -P 4 -M 8 --tokens-per-microbatch 4096 ";
    const auto now = run_cli(base + "--seconds-per-unit 0.01 --json");
    const auto old = run_cli(base + "--time-unit 0.01 --json");
    CHECK(now.exit_code == 0);
    CHECK(now.out == old.out);

    const auto dir = pp::test::scratch_dir();
    const auto a = (dir / "a.json").string(), b = (dir / "b.json").string();
    CHECK(run_cli("show 1f1b -P 2 -M 2 --trace " + a + " --seconds-per-unit 0.002").exit_code == 0);
    CHECK(run_cli("show 1f1b -P 2 -M 2 --trace " + b + " --trace-unit-us 2000").exit_code == 0);
    CHECK(pp::test::slurp(a) == pp::test::slurp(b));
    CHECK(nlohmann::json::parse(pp::test::slurp(a))["otherData"]["us_per_cost_unit"].get<double>() == 2000.0);
}
