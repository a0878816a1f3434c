// Issue 14 item 3: with --json every outcome is one JSON document on stdout -- usage errors (bad flags or
// values, caught by CLI11 before any option is read), parse errors of schedule files (file, line, column),
// invalid schedules asked to be timed -- and the exit code is the one the text mode gives (2 bad input,
// 1 violations). The human text still goes to stderr.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using pp::test::run_cli;
using pp::test::write_temp;

namespace {

// The whole of stdout is one JSON document (parse throws on anything after it) of the documented shape.
nlohmann::json error_document(const pp::test::CliResult& r, int exit_code) {
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == exit_code);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
    CHECK(j.at("status") == (exit_code == 1 ? "invalid" : exit_code == 3 ? "unknown" : "error"));
    CHECK(j.at("exit_code") == r.exit_code);
    // One vocabulary: an invalid schedule's findings are "violations" (as verify lists them), never "errors".
    const char* list = exit_code == 1 ? "violations" : "errors";
    CHECK(!j.contains(exit_code == 1 ? "errors" : "violations"));
    REQUIRE(j.at(list).is_array());
    REQUIRE(!j.at(list).empty());
    if (exit_code == 1) CHECK(j.at("violation_count") == j.at(list).size());
    for (const auto& e : j.at(list)) {
        CHECK(e.at("message").is_string());
        CHECK(!e.at("message").get<std::string>().empty());
        CHECK(e.at("kind").is_string());
        CHECK((e.at("file").is_string() || e.at("file").is_null()));
        CHECK((e.at("line").is_number_integer() || e.at("line").is_null()));
        CHECK((e.at("column").is_number_integer() || e.at("column").is_null()));
    }
    CHECK(!r.err.empty());  // the text for a human is still there
    return j;
}

}  // namespace

TEST_CASE("json errors: a usage error of every --json command is one JSON document, exit 2", "[cli][json]") {
    // Each a bad flag value or an unknown flag: CLI11 rejects them before the command runs, or the command
    // does when it reads them.
    const std::vector<std::string> commands = {
        "verify 1f1b -P 4 -M 8 --memory-limit x --json",
        "simulate 1f1b -P 4 -M -5 --json",
        "show 1f1b -P 4 -M 8 --costs F=x --json",
        "compare 1f1b dualpipe -P 4 -M eight --json",
        "search -P 0 -M 2 --json",
        "prove dualpipe -P 4 --property nope --json",
        "refute --claim 'bubble <=' dualpipe -P 4 --json",
        "refute --claim 'bubble >= 0' dualpipe -P 4 --basis latin --json",
        "formula dualpipe -P 4 --no-such-flag --json",
        "list --json --no-such-flag",
        "plan --preset no-such-model --gpus 8 --json",
        "chunk --chunk-costs nonsense --json",
        "sweep -P x -M 4",  // sweep's output is JSON lines: its errors are JSON too
        "--json verify",    // no schedule given
    };
    for (const auto& command : commands) {
        INFO(command);
        const auto j = error_document(run_cli(command), 2);
        CHECK(j["errors"][0]["file"].is_null());
    }
}

TEST_CASE("json errors: a schedule file's parse error carries file, line and column", "[cli][json]") {
    // Line 3, the second op: 'X' is not an op kind.
    const std::string path = write_temp("json_parse_error.txt", "ranks 2\nmicrobatches 1\nrank 0: 0F0 0X0\nrank 1: 1F0\n");
    for (const std::string command : {"verify", "simulate", "show"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path + " --json");
        const auto j = error_document(r, 2);
        const auto& e = j["errors"][0];
        CHECK(e["kind"] == "input");
        CHECK(e["file"] == path);
        CHECK(e["line"] == 3);
        CHECK(e["column"].get<int>() > 0);
        // The same position as the text mode's "file:line:column: error:".
        CHECK_THAT(r.err, Catch::Contains(path + ":3:" + std::to_string(e["column"].get<int>()) + ": error:"));
    }
    // A missing file: the file named, no position.
    const auto missing = error_document(run_cli("verify /nonexistent/x.txt --json"), 2);
    CHECK(missing["errors"][0]["line"].is_null());
}

TEST_CASE("json errors: timing an invalid schedule answers with its violations, exit 1", "[cli][json]") {
    // Rank 1 runs its backward before the forward it needs: an order violation (verify exits 1), so simulate
    // has no timing to give.
    const std::string path = write_temp("json_invalid.txt", "ranks 2\nmicrobatches 1\nrank 0: 0F0 0B0\nrank 1: 1B0 1F0\n");
    const auto text = run_cli("simulate " + path);
    CHECK(text.exit_code == 1);
    CHECK(text.out.empty());
    for (const std::string command : {"simulate", "show"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path + " --json");
        const auto j = error_document(r, 1);
        bool located = false;
        for (const auto& e : j["violations"]) {
            CHECK(e["file"] == path);
            located |= e["line"].is_number_integer();
        }
        CHECK(located);  // at least one violation points at its line
    }
    // verify --json keeps its own document (valid: false and the violations), as before.
    const auto v = run_cli("verify " + path + " --json");
    CHECK(v.exit_code == 1);
    CHECK(nlohmann::json::parse(v.out).at("valid") == false);
}

TEST_CASE("json errors: without --json nothing changes: text on stderr, stdout empty", "[cli][json]") {
    const auto r = run_cli("compare 1f1b dualpipe -P 4 -M eight");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(!r.err.empty());
    // "--json" after "--" is a positional (a file of that name), not the flag.
    const auto positional = run_cli("verify -- --json");
    CHECK(positional.exit_code == 2);
    CHECK(positional.out.empty());
}
