// pipeproof equiv: a port's file against the family it should equal (PyTorch's DualPipeV CSV against our
// dualpipev, which tests/test_schedules_dualpipe.cpp ties to DeepSeek's order), a file with two ops swapped
// (the first difference named, with its position in the file), a file written with ranks and stages counted from
// the other end (equivalent, the renaming reported), and a different instance (the placement named).
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using pp::test::run_cli;
const std::string kDualPipeV = std::string(PP_SHARED_DIR) + "/conformance/pytorch/dualpipev_4rank_10mb.csv";

std::string write_scratch(const std::string& name, const std::string& text) {
    const auto path = (pp::test::scratch_dir() / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

}  // namespace

TEST_CASE("equiv: PyTorch's DualPipeV CSV orders what dualpipev orders", "[equiv]") {
    const auto r = run_cli("equiv " + kDualPipeV + " dualpipev -P 4 -M 10");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    // The op count is the file's, as verify reads it (an independent path: verify's own count).
    const auto verified = run_cli("verify " + kDualPipeV + " --json");
    const auto ops = nlohmann::json::parse(verified.out).at("ops").get<long long>();
    CHECK_THAT(r.out, Catch::StartsWith("equivalent: ") && Catch::Contains("the same " + std::to_string(ops) + " ops"));
    CHECK_THAT(r.out, !Catch::Contains("renaming"));
}

TEST_CASE("equiv: two ops swapped in the file: the first difference, where it is in the file", "[equiv]") {
    std::string text = pp::test::slurp(kDualPipeV);
    // Row 0 (rank 0) begins 0F0,0F1,...,0F6,7F0,7I0: swap its 8th and 9th cells (7F0 and 7I0).
    const std::string from = "0F6,7F0,7I0,", to = "0F6,7I0,7F0,";
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(at < text.find('\n'));
    text.replace(at, from.size(), to);
    const std::string swapped = write_scratch("dualpipev-swapped.csv", text);
    const auto r = run_cli("equiv " + swapped + " dualpipev -P 4 -M 10");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    // Slot 7 of rank 0 (0-based), in column 1 + 4 * 7 = 29 of line 1 (each of the seven cells before it, "0F0,", is
    // 4 characters).
    CHECK_THAT(r.out, Catch::Contains("different: rank 0, slot 7: 7I0 in the first, 7F0 in the second"));
    CHECK_THAT(r.out, Catch::Contains(swapped + ":1:29"));
    const auto j = nlohmann::json::parse(run_cli("equiv " + swapped + " dualpipev -P 4 -M 10 --json").out);
    CHECK(j.at("status") == "different");
    CHECK(j.at("difference").at("slot_index") == 7);
    CHECK(j.at("difference").at("first").at("column") == 29);
}

TEST_CASE("equiv: ranks and stages counted from the other end are the same schedule, and it says so", "[equiv]") {
    // DualPipe P = 2, M = 4 as generate writes it, and the same with rank r written as rank 1 - r and every stage s as
    // 1 - s (both pipelines have two stages): written by hand from the generated file, checked op by op below.
    const auto generated = run_cli("generate dualpipe -P 2 -M 4 -o -");
    REQUIRE(generated.exit_code == 0);
    REQUIRE_THAT(generated.out, Catch::Contains("rank 0: 0F0 1F0@1 0F1 1B0@1 (1F1@1;0B0) 1B1@1 0I1 0W1\n"
                                                "rank 1: 0F0@1 1F0 0F1@1 1B0 (1F1;0B0@1) 1B1 0I1@1 0W1@1\n"));
    const std::string mirrored = write_scratch("dualpipe-mirrored.txt",
                                               "ranks 2\nmicrobatches 4\nplacement bidirectional\n"
                                               "rank 0: 1F0@1 0F0 1F1@1 0B0 (0F1;1B0@1) 0B1 1I1@1 1W1@1\n"
                                               "rank 1: 1F0 0F0@1 1F1 0B0@1 (0F1@1;1B0) 0B1@1 1I1 1W1\n");
    const auto r = run_cli("equiv dualpipe " + mirrored + " -P 2 -M 4");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("renaming: ranks and stages reversed in " + mirrored));
    const auto j = nlohmann::json::parse(run_cli("equiv dualpipe " + mirrored + " -P 2 -M 4 --json").out);
    CHECK(j.at("renaming") == "ranks and stages reversed");
}

TEST_CASE("equiv: another instance differs in its placement, named before any op", "[equiv]") {
    const std::string other = (pp::test::scratch_dir() / "dualpipev-m12.csv").string();
    REQUIRE(run_cli("generate dualpipev -P 4 -M 12 -o " + other).exit_code == 0);
    const auto r = run_cli("equiv " + kDualPipeV + " " + other);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("different: pipeline 0: 10 micro-batches against 12"));
    const auto j = nlohmann::json::parse(run_cli("equiv " + kDualPipeV + " " + other + " --json").out);
    CHECK(j.at("difference").at("kind") == "placement");
    // Bad input is exit 2, as everywhere.
    CHECK(run_cli("equiv " + kDualPipeV + " no-such-file.csv").exit_code == 2);
}
