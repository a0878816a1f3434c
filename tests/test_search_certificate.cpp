// Search certificates (`search --certificate DIR`, DIR/search.json) and their independent check (`pipeproof-check
// DIR`): an OPTIMAL answer is CHECKED -- the schedule re-timed by the checker, its own model of every schedule unsat
// below the bound in z3 and cvc5 -- and every corruption (a number, the status, an op swapped or removed, the limit,
// the costs, a slower schedule claimed optimal, what the model does not encode) is rejected at the step that
// recomputes it; an unreadable certificate is a usage error (exit 2).
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace {

using pp::test::fresh_dir;
using pp::test::run_check;
using pp::test::run_cli;
using pp::test::slurp;
namespace fs = std::filesystem;

// A copy of `from` with search.json and schedule.txt changed.
fs::path corrupted(const fs::path& from, const std::string& name, const std::function<void(nlohmann::json&)>& claim,
                   const std::function<void(std::string&)>& schedule = {}) {
    const fs::path dir = fresh_dir(name);
    fs::copy(from, dir, fs::copy_options::recursive);
    nlohmann::json j = nlohmann::json::parse(slurp(dir / "search.json"));
    claim(j);
    std::ofstream(dir / "search.json", std::ios::binary) << j.dump(2);
    if (schedule) {
        std::string text = slurp(dir / "schedule.txt");
        schedule(text);
        std::ofstream(dir / "schedule.txt", std::ios::binary) << text;
    }
    return dir;
}

void replace(std::string& text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
}

// The checker rejects `dir` at `step` (exit 1, the step named in the verdict).
void require_rejected(const fs::path& dir, const std::string& step, const std::string& why) {
    const auto check = run_check(dir.string());
    INFO(dir.filename().string() << "\n" << check.out << check.err);
    CHECK(check.exit_code == 1);
    CHECK_THAT(check.out, Catch::Contains("NOT CHECKED: " + step + ": "));
    CHECK_THAT(check.out, Catch::Contains(why));
    CHECK_THAT(check.out, !Catch::Contains("\nCHECKED"));
}

}  // namespace

TEST_CASE("search certificates: an OPTIMAL answer is CHECKED independently, and every corruption is rejected",
          "[search-certificate]") {
    // P = 3, M = 4, F = I = W = 1, cap 3: the optimum is 14, the longest chain (0F0 ... 0W3: by hand, 1 + 13).
    const fs::path good = fresh_dir("search-cert");
    const auto search = run_cli("search -P 3 -M 4 --costs F=1,I=1,W=1 --memory-limit 3 --placement 1f1b -q --certificate " +
                                good.string());
    INFO(search.out << search.err);
    REQUIRE(search.exit_code == 0);
    const nlohmann::json claim = nlohmann::json::parse(slurp(good / "search.json"));
    CHECK(claim["format"] == "pipeproof search certificate");
    CHECK(claim["status"] == "optimal");
    CHECK(claim["value"] == "14");
    CHECK(claim["lower_bound"] == "14");
    CHECK(claim["pairs_allowed"] == false);
    CHECK(claim["placement"] == "1f1b");
    const auto check = run_check(good.string());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("makespan 14 by the checker's own timing"));
    // The bound is the chain 0F0 ... 0W3 (by hand: 1 + 13), which the checker finds by arithmetic alone.
    CHECK_THAT(check.out, Catch::Contains("re-derived by the checker's arithmetic"));
    CHECK_THAT(check.out, Catch::Contains("loads through 0F0: it cannot start before 0, takes 1, and at least 13 must follow"));
    CHECK_THAT(check.out, Catch::Contains("CHECKED: no schedule of this placement's F, I and W ops"));
    CHECK_THAT(check.out, Catch::Contains("has a makespan below 14; the schedule's makespan is 14 (optimal)"));
    // Without the micro-batch order the chain is 0F0 ... 0I3 0W3 only through the data: the whole model, every order
    // of every class, goes to the solvers, and is small enough here.
    const auto every_order = run_check(good.string() + " --no-fifo");
    CHECK(every_order.exit_code == 0);
    CHECK_THAT(every_order.out, !Catch::Contains("micro-batch order"));

    // Where arithmetic falls short (P = 4, M = 8, cap 2: the search itself needed Z3 for the optimum 41), z3 and cvc5
    // answer the checker's model.
    const fs::path tight = fresh_dir("search-cert-tight");
    REQUIRE(run_cli("search -P 4 -M 8 --costs F=1,I=1,W=1 --memory-limit 2 --placement 1f1b -q --certificate " +
                    tight.string()).exit_code == 0);
    const auto tight_check = run_check(tight.string());
    INFO(tight_check.out << tight_check.err);
    CHECK(tight_check.exit_code == 0);
    CHECK_THAT(tight_check.out, Catch::Contains("has no schedule ending before 41: z3 unsat"));
    CHECK_THAT(tight_check.out, Catch::Contains("cvc5 unsat"));

    // A weaker bound holds too (a FEASIBLE answer's certified gap).
    const fs::path weaker = corrupted(good, "search-cert-weaker", [](nlohmann::json& j) {
        j["status"] = "feasible";
        j["lower_bound"] = "27/2";
    });
    CHECK(run_check(weaker.string()).exit_code == 0);

    require_rejected(corrupted(good, "search-cert-value", [](nlohmann::json& j) { j["value"] = "13"; j["lower_bound"] = "13"; }),
                     "schedule", "the schedule's makespan is 14, the certificate says 13");
    require_rejected(corrupted(good, "search-cert-above", [](nlohmann::json& j) { j["lower_bound"] = "15"; }), "claim",
                     "is above the schedule's value");
    require_rejected(corrupted(good, "search-cert-status", [](nlohmann::json& j) { j["lower_bound"] = "13"; }), "claim",
                     "status 'optimal' with value 14 and lower bound 13");
    require_rejected(corrupted(good, "search-cert-version", [](nlohmann::json& j) { j["version"] = 2; }), "claim", "version 2");
    require_rejected(corrupted(good, "search-cert-span", [](nlohmann::json& j) { j["objective"] = "span"; }), "claim",
                     "NOT CHECKED: objective 'span'");
    require_rejected(corrupted(good, "search-cert-pairs", [](nlohmann::json& j) { j["pairs_allowed"] = true; }), "claim",
                     "overlapped pairs");
    const auto no_change = [](nlohmann::json&) {};
    require_rejected(corrupted(good, "search-cert-swap", no_change, [](std::string& s) { replace(s, "2F0 2I0", "2I0 2F0"); }),
                     "schedule", "cycle");
    require_rejected(corrupted(good, "search-cert-missing", no_change, [](std::string& s) { replace(s, " 0W3", ""); }),
                     "schedule", "0W3 is missing");
    require_rejected(corrupted(good, "search-cert-limit", no_change,
                               [](std::string& s) { replace(s, "memory-limit 3", "memory-limit 2"); }),
                     "schedule", "over the limit 2");
    require_rejected(corrupted(good, "search-cert-costs", no_change,
                               [](std::string& s) { replace(s, "costs F=1,I=1,W=1", "costs F=2,I=1,W=1"); }),
                     "schedule", "the schedule's makespan is");

    // A slower schedule claimed optimal: every rank runs micro-batch by micro-batch (F, I, W), which simulate times
    // (the verifier, not the checker) -- the checker's model finds a faster schedule.
    const std::string slow_rows = "rank 0: 0F0 0I0 0W0 0F1 0I1 0W1 0F2 0I2 0W2 0F3 0I3 0W3\n"
                                  "rank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2 1F3 1I3 1W3\n"
                                  "rank 2: 2F0 2I0 2W0 2F1 2I1 2W1 2F2 2I2 2W2 2F3 2I3 2W3\n";
    std::string slow = slurp(good / "schedule.txt");
    slow = slow.substr(0, slow.find("rank 0:")) + slow_rows;
    const std::string slow_file = pp::test::write_temp("search-cert-slow.txt", slow);
    const auto timed = run_cli("simulate " + slow_file + " --json");
    REQUIRE(timed.exit_code == 0);
    const std::string slow_makespan = nlohmann::json::parse(timed.out)["exact"]["makespan"].get<std::string>();
    REQUIRE(slow_makespan != "14");
    const fs::path claimed = corrupted(
        good, "search-cert-slow",
        [&](nlohmann::json& j) {
            j["value"] = slow_makespan;
            j["lower_bound"] = slow_makespan;
        },
        [&](std::string& s) { s = slow; });
    require_rejected(claimed, "bound", "answers sat");

    // Unreadable: exit 2, the file named.
    const fs::path outside = corrupted(good, "search-cert-path", [](nlohmann::json& j) { j["schedule"] = "../schedule.txt"; });
    const auto refused = run_check(outside.string());
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("search.json"));
    for (const std::string version : {"1e300", "-1", "18446744073709551615", "\"1\""}) {
        CAPTURE(version);
        const fs::path odd = corrupted(good, "search-cert-odd-version", [&](nlohmann::json& j) { j["version"] = nlohmann::json::parse(version); });
        const auto odd_check = run_check(odd.string());
        CHECK(odd_check.exit_code == 2);
        CHECK_THAT(odd_check.err, Catch::Contains("'version' must be a small non-negative integer"));
    }
    // Found by fuzz_search_certificate: a "format" that is not a string aborted pipeproof-check.
    const fs::path numbered = corrupted(good, "search-cert-format", [](nlohmann::json& j) { j["format"] = 1; });
    const auto numbered_check = run_check(numbered.string());
    CHECK(numbered_check.exit_code == 2);
    CHECK_THAT(numbered_check.err, Catch::Contains("expected \"format\": \"pipeproof search certificate\""));
    const fs::path garbled = fresh_dir("search-cert-garbled");
    fs::copy(good, garbled, fs::copy_options::recursive);
    std::ofstream(garbled / "search.json", std::ios::binary) << "{ not json";
    CHECK(run_check(garbled.string()).exit_code == 2);
}

TEST_CASE("search certificates: a search over several placements writes one per placement, each CHECKED",
          "[search-certificate]") {
    const fs::path dir = fresh_dir("search-cert-scope");
    const auto search = run_cli("search -P 2 -M 4 --costs F=1,I=1,W=1 --memory-limit 2 --units rank --placement 1f1b,v "
                                "--time-limit 20 -q --certificate " + dir.string());
    INFO(search.out << search.err);
    REQUIRE(search.exit_code == 0);
    const auto top = run_check(dir.string());
    CHECK(top.exit_code == 2);
    CHECK_THAT(top.err, Catch::Contains("one search certificate per placement"));
    CHECK_THAT(top.err, Catch::Contains("pipeproof-check " + (dir / "1f1b").string()));
    for (const std::string placement : {"1f1b", "v"}) {
        const nlohmann::json claim = nlohmann::json::parse(slurp(dir / placement / "search.json"));
        CHECK(claim["placement"] == placement);
        const auto check = run_check((dir / placement).string());
        INFO(placement << "\n" << check.out << check.err);
        CHECK(check.exit_code == 0);
        CHECK_THAT(check.out, Catch::Contains("\nCHECKED: "));
    }
}

TEST_CASE("search certificates: a 60,000-op certificate is settled by the checker's arithmetic", "[search-certificate]") {
    // One rank, M = 20000, F = I = W = 1: the rank is never idle, so its load, 60000, is the optimum (by hand).
    const fs::path dir = fresh_dir("search-cert-huge");
    fs::create_directories(dir);
    REQUIRE(run_cli("generate zb-h1 -P 1 -M 20000 --costs F=1,I=1,W=1 -o " + (dir / "schedule.txt").string()).exit_code == 0);
    std::ofstream(dir / "search.json") << R"({"format": "pipeproof search certificate", "version": 1, "status": "optimal",
        "objective": "makespan", "placement": "1f1b", "schedule": "schedule.txt", "pairs_allowed": false,
        "value": "60000", "lower_bound": "60000"})";
    const auto check = run_check(dir.string());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("re-derived by the checker's arithmetic"));
    CHECK_THAT(check.out, Catch::Contains("makespan 60000 by the checker's own timing"));
}
