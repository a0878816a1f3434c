// --time-limit and --memory-budget of prove and refute (proofs/budget.hpp, cli/watchdog.hpp): when the budget
// runs out the answer is UNKNOWN / UNDECIDED with exit 3 and the reason, never PROVED, HOLDS or REFUTED by default.
#include "cli_runner.hpp"
#include "proofs/budget.hpp"
#include "proofs/prove.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using pp::test::run_cli;

TEST_CASE("budget: prove answers UNKNOWN when its time limit has run out", "[budget][prove]") {
    const auto r = run_cli("prove 1f1b -P 4 --time-limit 1e-9");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("verdict: UNKNOWN"));
    CHECK_THAT(r.out, Catch::Contains("missing: the time limit of 1e-09 s ran out while generating the instance M="));
    // JSON: the same answer, status "unknown", the reason in "missing".
    const auto j = run_cli("prove 1f1b -P 4 --time-limit 1e-9 --json");
    CHECK(j.exit_code == 3);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["status"] == "unknown");
    CHECK_THAT(doc["missing"].get<std::string>(), Catch::Contains("time limit"));
    // A limit that is ample changes nothing: the same proof as without one (test_prove.cpp checks its value).
    const auto ample = run_cli("prove 1f1b -P 4 --time-limit 600 --json");
    // Limits too large to be a deadline are no limit (1e300 s used to overflow the clock).
    const auto huge = run_cli("prove 1f1b -P 4 --time-limit 1e300 --memory-budget 1e300");
    CHECK(huge.exit_code == 0);
    CHECK_THAT(huge.out, Catch::Contains("verdict: PROVED"));
    const auto unlimited = run_cli("prove 1f1b -P 4 --json");
    CHECK(ample.exit_code == 0);
    CHECK(unlimited.exit_code == 0);
    const auto a = nlohmann::json::parse(ample.out), u = nlohmann::json::parse(unlimited.out);
    CHECK(a["status"] == "proved");
    CHECK(a["result"] == u["result"]);
    CHECK(a["obligations"].size() == u["obligations"].size());
}

TEST_CASE("budget: prove answers UNKNOWN when its memory budget is exceeded", "[budget][prove]") {
    // 1 MB of resident memory is less than the process itself takes: the first check gives up.
    const auto r = run_cli("prove 1f1b -P 4 --memory-budget 1");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("missing: the memory budget of 1 MB ran out ("));
}

TEST_CASE("budget: limits are flags, checked as such", "[budget][errors]") {
    for (const char* bad : {"prove 1f1b -P 4 --time-limit 0", "prove 1f1b -P 4 --time-limit -1",
                            "refute --claim 'bubble >= 0' 1f1b -P 2 --time-limit x",
                            "refute --claim 'bubble >= 0' 1f1b -P 2 --memory-budget 0"}) {
        const auto r = run_cli(bad);
        INFO(bad);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--time-limit") || Catch::Contains("--memory-budget"));
    }
}

TEST_CASE("budget: refute stops a huge M range at its time limit, UNDECIDED, not HOLDS", "[budget][refute]") {
    // 1F1B, P=2, F=I=W=1 (B=2), comm 0: makespan = (M + P - 1)(F + B) = 3M + 3 (by hand), so the claim fails
    // first at M = 33333, far beyond what 0.3 s of search reaches (each M is generated and simulated): the
    // answer must be UNDECIDED (exit 3) with the reason, and the range 1..2^31-1 must not be materialised (it
    // used to take ~8 GB before the first instance).
    const auto r = run_cli(
        "refute --claim 'makespan < 100000' 1f1b -P 2 -M 1..2147483647 --costs F=1,I=1,W=1 --time-limit 0.3");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("UNDECIDED: no counterexample among"));
    // The limit runs out between instances or while one is timed (the simulator polls the clock): either way
    // the note names the limit and the instance.
    CHECK_THAT(r.out, Catch::Contains("note: the time limit of 0.3 s ran out while "));
    CHECK_THAT(r.out, Catch::Contains("searching P=2 M="));
    // Within reach: 3M + 3 >= 20 first at M = 6; the limit does not get in the way.
    const auto near =
        run_cli("refute --claim 'makespan < 20' 1f1b -P 2 -M 1..2147483647 --costs F=1,I=1,W=1 --time-limit 600");
    CHECK(near.exit_code == 1);
    CHECK_THAT(near.out, Catch::Contains("REFUTED: counterexample at P=2, M=6,"));
}

TEST_CASE("budget: refute with symbolic costs stops at its time limit", "[budget][refute]") {
    const auto r = run_cli("refute --claim 'bubble(M+2) == bubble(M)' zbv -P 4 --time-limit 1e-9 --json");
    CHECK(r.exit_code == 3);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["status"] == "unknown");
    CHECK(doc["counterexample"].is_null());
    CHECK_THAT(doc["notes"].dump(), Catch::Contains("time limit"));
}

TEST_CASE("budget: the prover library answers UNKNOWN under an exhausted budget, and the budget can be lifted",
          "[budget][prove]") {
    const auto spec = pp::family_spec("1f1b", 3);
    REQUIRE(spec);
    pp::ProveOptions options;
    options.costs = pp::Costs{};
    pp::budget::set(1e-9, std::nullopt);
    const pp::ProofResult stopped = pp::prove(*spec, options);
    pp::budget::set(std::nullopt, std::nullopt);
    CHECK(stopped.verdict == pp::Verdict::Unknown);
    CHECK_THAT(stopped.missing, Catch::StartsWith("the time limit of"));
    const pp::ProofResult full = pp::prove(*spec, options);
    CHECK(full.verdict == pp::Verdict::Proved);
}
