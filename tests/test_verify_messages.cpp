// What the verifier says about a mistake: where it is, what the likely fix is, and nothing that merely follows
// from it (issue 14, item 4). Expected texts and positions are derived by hand from the inputs below.
#include "cli_runner.hpp"
#include "formats/native.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pp;

namespace {

// DualPipe P=4, M=8 as the generator writes it (rank lines at lines 6..9).
const std::string kDualPipeHeader = "# DualPipe P=4 M=8\n# by hand\nranks 4\nmicrobatches 8\nplacement bidirectional\n";
const std::string kRank0 = "rank 0: 0F0 0F1 0F2 3F0@1 3I0@1 3W0@1 3F1@1 (0F3;3B1@1) (3F2@1;0B0) 3B2@1 (3F3@1;0B1) 3B3@1 0I2 0W2 0I3 0W3\n";
const std::string kRank1 = "rank 1: 1F0 2F0@1 1F1 2F1@1 1F2 2B0@1 (2F2@1;1B0) (1F3;2B1@1) (2F3@1;1B1) 2B2@1 1B2 2I3@1 1I3 2W3@1 1W3\n";
const std::string kRank2 = "rank 2: 1F0@1 2F0 1F1@1 2F1 1F2@1 2B0 (2F2;1B0@1) (1F3@1;2B1) (2F3;1B1@1) 2B2 1B2@1 2I3 1I3@1 2W3 1W3@1\n";
const std::string kRank3 = "rank 3: 0F0@1 0F1@1 0F2@1 3F0 3I0 3W0 3F1 (0F3@1;3B1) (3F2;0B0@1) 3B2 (3F3;0B1@1) 3B3 0I2@1 0W2@1 0I3@1 0W3@1\n";

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("verify: the unmodified DualPipe text is clean (the base of the cases below)", "[verify][messages]") {
    const Schedule s = read_native(kDualPipeHeader + kRank0 + kRank1 + kRank2 + kRank3, "dp.txt");
    CHECK(verify(s).ok());
}

TEST_CASE("verify: a forgotten @1 is reported once, at the wrong op, with the fix", "[verify][messages]") {
    // Rank 0 writes 3F0 (stage 3 of pipeline 0, held by rank 3, which runs it too) where 3F0@1 was meant.
    const std::string rank0 = replace_once(kRank0, "0F2 3F0@1", "0F2 3F0");
    const Schedule s = read_native(kDualPipeHeader + rank0 + kRank1 + kRank2 + kRank3, "dp.txt");
    const VerifyReport report = verify(s);
    REQUIRE(report.violations.size() == 1);
    const Violation& v = report.violations[0];
    CHECK(v.kind == ViolationKind::WrongRank);
    CHECK(v.loc.line == 6);
    CHECK(v.loc.column == 21);
    CHECK_THAT(v.message, Catch::Contains("3F0 runs on rank 0, but its stage is held by rank 3"));
    CHECK_THAT(v.message, Catch::Contains("which also runs it: rank 3"));
    CHECK_THAT(v.message, Catch::Contains("did you mean 3F0@1?"));
    CHECK(report.follow_on >= 1);  // 3F0@1 missing: the same mistake
}

TEST_CASE("verify: a missing op names the line of the rank that should run it", "[verify][messages]") {
    const Schedule s = read_native("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0\nrank 1: 1F0 1B0 1F1 1B1\n", "m.txt");
    const VerifyReport report = verify(s);
    REQUIRE(report.violations.size() == 1);
    const Violation& v = report.violations[0];
    CHECK(v.kind == ViolationKind::Missing);
    CHECK(v.rank == 0);
    CHECK(v.loc.line == 3);
    CHECK_THAT(v.message, Catch::Contains("neither 0B1 nor 0I1"));
    CHECK_THAT(v.message, Catch::Contains("rank 0's line (line 3) should hold it"));
}

TEST_CASE("verify: the deadlock a misplaced op causes is not a second error", "[verify][messages]") {
    // 0W3 moved from the end of rank 0's line to position 1 of rank 1's: rank 1 then waits for 0I3 before
    // 2F0@1, which the pipelines need first -- a cycle, but only because of the misplaced op.
    std::string rank0 = replace_once(kRank0, " 0W3\n", "\n");
    std::string rank1 = replace_once(kRank1, "rank 1: 1F0 ", "rank 1: 1F0 0W3 ");
    const Schedule s = read_native(kDualPipeHeader + rank0 + rank1 + kRank2 + kRank3, "dp.txt");
    const VerifyReport report = verify(s);
    REQUIRE(report.violations.size() == 1);
    CHECK(report.violations[0].kind == ViolationKind::WrongRank);
    CHECK(report.violations[0].loc.line == 7);
    CHECK(report.violations[0].loc.column == 13);
    CHECK(report.follow_on >= 1);
}

TEST_CASE("verify: violations come in file order, and a same-rank duplicate is a violation", "[verify][messages]") {
    // Found in the order duplicate (rank 1) then missing (rank 0); listed by line.
    const Schedule s = read_native("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0\nrank 1: 1F0 1B0 1F1 1B1 1F0\n", "o.txt");
    const VerifyReport report = verify(s);
    REQUIRE(report.violations.size() == 2);
    CHECK(report.violations[0].kind == ViolationKind::Missing);
    CHECK(report.violations[0].loc.line == 3);
    CHECK(report.violations[1].kind == ViolationKind::Duplicate);
    CHECK(report.violations[1].loc.line == 4);
    CHECK(report.violations[1].loc.column == 25);
    CHECK_THAT(report.violations[1].message, Catch::Contains("1F0 occurs a second time on rank 1"));
}

TEST_CASE("verify CLI: a duplicate in a PyTorch CSV is a violation at its cell (exit 1)", "[verify][messages][cli]") {
    // Stage 0 first appears on rank 0, so the 0F0 at the end of rank 1's row is the misplaced one.
    const auto path = pp::test::write_temp("dup.csv", "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1,0F0\n");
    const auto r = pp::test::run_cli("verify " + path);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("dup.csv:2:17: error [wrong-rank]"));
    CHECK_THAT(r.out, Catch::Contains("0F0 runs on rank 1, but its stage is held by rank 0 (which also runs it: rank 0)"));
    CHECK_THAT(r.out, Catch::Contains("1 violation\n"));
}

TEST_CASE("verify CLI: a batched deadlock is explained in ops and ranks", "[verify][messages][cli][batched]") {
    // ZB-H2 P=2 M=4 under the generic batched rule deadlocks (tests/test_batched.cpp derives the cycle).
    const auto path = pp::test::write_temp("zbh2.txt", "");
    REQUIRE(pp::test::run_cli("generate zb-h2 -P 2 -M 4 -o " + path).exit_code == 0);
    const auto r = pp::test::run_cli("verify " + path + " --comm-model batched");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("rank 0 cannot start 0I1: the batch before it sends the activation of 0F3 to rank 1"));
    CHECK_THAT(r.out, Catch::Contains("rank 1 is stuck before 1W0"));
}
