// The command line as a user meets it: conformance files verify as PyTorch says, exit codes, JSON fields,
// deadlock witnesses, conversions that round-trip, generated orders identical to published files.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>

using pp::test::run_cli;

namespace {

const std::string kConformance = std::string(PP_SHARED_DIR) + "/conformance/";

std::string without_cr(std::string text) {
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    return text;
}

}  // namespace

TEST_CASE("cli: every conformance file verifies clean and PyTorch's validator agrees", "[cli][conformance]") {
    // Eras from the reference notes: the zb1p artifacts use the 2024 letters (B = input-grad, BW = full).
    const std::vector<std::pair<std::string, std::string>> files = {
        {"pytorch/dualpipev_4rank_10mb.csv", "current"},   {"pytorch/zb1p_2rank_2stagep_compute.csv", "2024"},
        {"pytorch/zb1p_2rank_2stagep_comms.csv", "2024"}, {"torchtitan/2-rank.csv", "current"},
        {"torchtitan/4-rank.csv", "current"},            {"torchtitan/8-rank.csv", "current"},
    };
    for (const auto& [file, era] : files) {
        INFO(file);
        const auto result = run_cli("verify " + kConformance + file + " --torch-era " + era + " --pytorch-compat --json");
        CHECK(result.exit_code == 0);
        const auto j = nlohmann::json::parse(result.out);
        CHECK(j["valid"] == true);
        CHECK(j["pytorch"]["valid"] == true);
    }
}

TEST_CASE("cli: 2024-era files read with current letters are reported, not reinterpreted", "[cli][conformance]") {
    // Positions from the files: row 1 cell 7 of the compute file is 2W0 after 2B0 (byte 22); the comms file's
    // first BW token 2BW0 starts at byte 80 of row 1.
    const auto compute = run_cli("verify " + kConformance + "pytorch/zb1p_2rank_2stagep_compute.csv");
    CHECK(compute.exit_code == 2);
    CHECK_THAT(compute.err, Catch::Contains("zb1p_2rank_2stagep_compute.csv:1:22: error:") && Catch::Contains("2024"));
    const auto comms = run_cli("verify " + kConformance + "pytorch/zb1p_2rank_2stagep_comms.csv");
    CHECK(comms.exit_code == 2);
    CHECK_THAT(comms.err, Catch::Contains("zb1p_2rank_2stagep_comms.csv:1:80: error:") && Catch::Contains("BW"));
}

TEST_CASE("cli: a deadlocked schedule exits 1 and prints its cycle", "[cli][deadlock]") {
    const std::string path = pp::test::write_temp(
        "deadlock.txt", "ranks 2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1\n");
    const auto result = run_cli("verify " + path);
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.out, Catch::Contains(path + ":4:13: error [deadlock]") &&
                               Catch::Contains("rank 1 waits at 1F1 for 0F1, which rank 0 runs after 0B0, which waits "
                                               "for 1B0, which rank 1 runs after 1F1"));
    const auto json = run_cli("verify " + path + " --json");
    CHECK(json.exit_code == 1);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j["valid"] == false);
    REQUIRE(j["violations"].size() == 1);
    CHECK(j["violations"][0]["kind"] == "deadlock");
    CHECK(j["violations"][0]["witness"].size() == 4);
    // An invalid schedule has no timing: simulate says why and exits 1.
    CHECK(run_cli("simulate " + path).exit_code == 1);
}

TEST_CASE("cli: simulate --json gives the documented fields with exact values", "[cli][simulate]") {
    // 1F1B P=4 M=8 with F=1, B=2: makespan (M+P-1)(F+B) = 33, each rank idles (P-1)(F+B) = 9.
    const auto result = run_cli("simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --json");
    REQUIRE(result.exit_code == 0);
    const auto j = nlohmann::json::parse(result.out);
    CHECK(j["makespan"] == 33);
    CHECK(j["bubble"] == 9);
    CHECK(j["exact"]["bubble_fraction"] == "3/11");  // 4 * 9 / (4 * 33)
    REQUIRE(j["per_rank"].size() == 4);
    for (const auto& rank : j["per_rank"]) {
        CHECK(rank["busy"] == 24);
        CHECK(rank["idle"] == 9);
    }
    CHECK(j["per_rank"][0]["peak_activations"] == 4);  // rank r of 1F1B holds P - r activations
    CHECK(j["per_rank"][3]["peak_activations"] == 1);
    // Rational costs stay exact: F = 1/3 makes the makespan 11 * 7/3 = 77/3.
    const auto thirds = nlohmann::json::parse(run_cli("simulate 1f1b -P 4 -M 8 --costs F=1/3,B=2 --json").out);
    CHECK(thirds["exact"]["makespan"] == "77/3");
    CHECK(thirds["makespan"].get<double>() == Approx(77.0 / 3));  // a number, whatever the value (issue 14)
}

TEST_CASE("cli: generated orders equal the published PyTorch files byte for byte", "[cli][conformance]") {
    // The stored copies have LF line ends, as CSVs are written by default; CRLF (Python's csv module's
    // default) on request.
    const auto dualpipev = run_cli("generate dualpipev -P 4 -M 10 --format torch-csv");
    CHECK(dualpipev.exit_code == 0);
    CHECK(dualpipev.out == pp::test::slurp(kConformance + "pytorch/dualpipev_4rank_10mb.csv"));
    const auto zb1p = run_cli("generate zb1p -P 2 -V 2 -M 8 --format torch-csv --torch-era 2024");
    CHECK(zb1p.out == pp::test::slurp(kConformance + "pytorch/zb1p_2rank_2stagep_compute.csv"));
    const auto crlf = run_cli("generate zb1p -P 2 -V 2 -M 8 --format torch-csv --torch-era 2024 --csv-line-end crlf");
    CHECK(without_cr(crlf.out) == zb1p.out);
    CHECK(std::count(crlf.out.begin(), crlf.out.end(), '\r') == std::count(zb1p.out.begin(), zb1p.out.end(), '\n'));
}

TEST_CASE("cli: convert round-trips through native and JSON", "[cli][convert]") {
    const std::string source = kConformance + "torchtitan/4-rank.csv";
    const std::string native = pp::test::write_temp("t4.txt", "");
    const std::string json = pp::test::write_temp("t4.json", "");
    const std::string back = pp::test::write_temp("t4.csv", "");
    REQUIRE(run_cli("convert " + source + " -o " + native).exit_code == 0);
    REQUIRE(run_cli("convert " + native + " -o " + json).exit_code == 0);
    REQUIRE(run_cli("convert " + json + " -o " + back).exit_code == 0);
    CHECK(pp::test::slurp(back) == pp::test::slurp(source));  // LF by default, as the source: byte for byte
}

TEST_CASE("cli: usage errors and unreadable files exit 2", "[cli][errors]") {
    CHECK(run_cli("verify").exit_code == 2);
    CHECK(run_cli("frobnicate").exit_code == 2);
    CHECK(run_cli("verify /nonexistent/file.txt").exit_code == 2);
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --costs F=x").exit_code == 2);
    const auto generate = run_cli("generate dualpipe -P 3 -M 8");
    CHECK(generate.exit_code == 2);
    CHECK_THAT(generate.err, Catch::Contains("num_ranks % 2 == 0"));
    const std::string bad_json = pp::test::write_temp("bad.json", "{\"ranks\": 2,\n \"pipelines\": [}\n");
    const auto parsed = run_cli("verify " + bad_json);
    CHECK(parsed.exit_code == 2);
    CHECK_THAT(parsed.err, Catch::StartsWith(bad_json + ":2:16: error: invalid JSON"));
}

TEST_CASE("cli: memory limit violations exit 1 with the rank and position", "[cli][memory]") {
    // 1F1B P=4 M=8: rank 0 holds up to 4 activations; with a limit of 3 its 4th forward (position 3) breaks it.
    const auto result = run_cli("verify 1f1b -P 4 -M 8 --memory-limit 3 --json");
    CHECK(result.exit_code == 1);
    const auto j = nlohmann::json::parse(result.out);
    REQUIRE(j["violations"].size() == 1);
    CHECK(j["violations"][0]["kind"] == "memory-limit");
    CHECK(j["violations"][0]["rank"] == 0);
    CHECK(j["violations"][0]["position"] == 3);
}

TEST_CASE("cli: a file holding DualPipe's order runs its reference P2P program under batched timing", "[cli][batched]") {
    // Files carry no communication order; the generic rule deadlocks or mismatches DualPipe's channels
    // (verifier/batched.hpp), so the reference program must be recognised from the order itself.
    const std::string file = (pp::test::scratch_dir() / "dualpipe_p8_m16.txt").string();
    REQUIRE(run_cli("generate dualpipe -P 8 -M 16 -o " + file).exit_code == 0);
    CHECK(run_cli("verify " + file + " --comm-model batched").exit_code == 0);
    // Issue 6: DualPipe P=8, F=I=W=1, FB=1.75 idles 3.75 under dataflow and 4.25 under batched.
    const auto batched = run_cli("simulate " + file + " --costs F=1,I=1,W=1,FB=1.75 --comm-model batched --json");
    REQUIRE(batched.exit_code == 0);
    CHECK(nlohmann::json::parse(batched.out)["bubble"] == 4.25);
    const auto dataflow = run_cli("simulate " + file + " --costs F=1,I=1,W=1,FB=1.75 --json");
    REQUIRE(dataflow.exit_code == 0);
    CHECK(nlohmann::json::parse(dataflow.out)["bubble"] == 3.75);
    // Rank 0's last "0W6 0I7" swapped: still a valid order, but not the reference's, so no reference
    // program is assumed and the generic rule's channel mismatch is reported.
    std::string text = pp::test::slurp(file);
    const auto swap = text.find("0W6 0I7 0W7\n");
    REQUIRE(swap != std::string::npos);
    text.replace(swap, 7, "0I7 0W6");
    const std::string edited = pp::test::write_temp("dualpipe_edited.txt", text);
    CHECK(run_cli("verify " + edited).exit_code == 0);
    const auto generic = run_cli("verify " + edited + " --comm-model batched");
    CHECK(generic.exit_code == 1);
    CHECK(generic.out.find("comm-mismatch") != std::string::npos);
}
