// The native format: valid files read as written, round-trips, and malformed files fail with exit code 2
// at the exact line:column (positions worked out by hand from the text of each case).
#include "cli_runner.hpp"
#include "formats/input_error.hpp"
#include "formats/native.hpp"
#include "verifier/verify.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>

using namespace pp;

namespace {

const std::string kHeader = "ranks 2\nmicrobatches 2\n";
const std::string kRank1 = "rank 1: 1F0 1B0 1F1 1B1\n";

struct BadCase {
    const char* name;
    std::string text;
    int line, column;
    const char* says;  // a fragment the message must contain
};

std::vector<BadCase> bad_cases() {
    return {
        {"empty file", "", 1, 1, "empty schedule"},
        {"only a comment", "# nothing here\n", 1, 1, "empty schedule"},
        {"unknown directive", "rankz 2\n", 1, 1, "unknown directive"},
        {"unknown op letter", kHeader + "rank 0: 0F0 0X1 0B0 0B1\n" + kRank1, 3, 14, "unknown op letter 'X'"},
        {"truncated line", kHeader + "rank 0: 0F0 0F1 0B0 0\n" + kRank1, 3, 22, "expected an op letter"},
        {"stage out of range", kHeader + "rank 0: 0F0 0F1 0B0 5B1\n" + kRank1, 3, 21, "stage 5 is not in 0..1"},
        {"micro-batch out of range", kHeader + "rank 0: 0F0 0F7 0B0 0B1\n" + kRank1, 3, 13, "micro-batch 7 is not in 0..1"},
        {"missing rank", kHeader + "rank 0: 0F0 0F1 0B0 0B1\n", 1, 1, "rank 1 has no 'rank 1:' line"},
        {"negative number", "ranks -2\n", 1, 7, "whole number"},
        {"huge number", "ranks 2\nmicrobatches 99999999999\n", 2, 14, "too large"},
        {"error after a BOM", "\xEF\xBB\xBFranks x\n", 1, 7, "whole number"},
        {"CRLF line ends", "ranks 2\r\nmicrobatches 2\r\nrank 0: 0F0 0Q1 0B0 0B1\r\n", 3, 14, "unknown op letter 'Q'"},
        {"binary garbage (NUL)", std::string("ranks 2\n\0\x01\x02", 11), 2, 1, "NUL"},
        {"invalid UTF-8", "ranks 2\nmicro\xff\n", 2, 6, "UTF-8"},
        {"BW token (PyTorch 2024 letter)", kHeader + "rank 0: 0F0 0F1 0BW0 0B1\n" + kRank1, 3, 18, "2024"},
        {"rank line before ranks", "microbatches 2\nrank 0: 0F0\n", 2, 1, "'ranks N'"},
        {"rank number out of range", kHeader + "rank 5: 0F0\n", 3, 6, "rank 5 is not in 0..1"},
        {"missing colon", kHeader + "rank 0 0F0 0F1\n", 3, 7, "expected ':'"},
        {"rank line twice", kHeader + "rank 0: 0F0\nrank 0: 0F1\n", 4, 1, "second line"},
        {"unclosed pair", kHeader + "rank 0: (0F0;0B0 0F1\n", 3, 17, "')'"},
        {"pair of two forwards", kHeader + "rank 0: (0F0;0F1)\n", 3, 9, "one F and one backward"},
        {"nested pair", kHeader + "rank 0: ((0F0;0B0);0F1)\n", 3, 10, "nested"},
        {"trailing junk", kHeader + "rank 0: 0F0xyz\n", 3, 12, "unexpected 'xyz'"},
        {"bad cost value", kHeader + "costs F=abc\n", 3, 9, "non-negative number"},
        {"unknown cost key", kHeader + "costs X=1\n", 3, 7, "unknown cost key"},
        {"directive after rank lines", kHeader + "rank 0: 0F0\nmemory-limit 3\n", 4, 1, "before the first rank line"},
        {"directive twice", "ranks 2\nranks 3\n", 2, 1, "given twice"},
        {"placement on a missing rank", "ranks 2\nmicrobatches 2\nplacement 0 5\nrank 0: 0F0\n", 3, 13, "rank 5 is not in 0..1"},
        {"micro-batch number missing", kHeader + "rank 0: 0F\n", 3, 11, "micro-batch"},
        {"pipeline that does not exist", kHeader + "rank 0: 0F0@1\n", 3, 9, "pipeline 1 does not exist"},
    };
}

}  // namespace

TEST_CASE("native: malformed files fail at the exact line and column", "[native][errors]") {
    for (const auto& c : bad_cases()) {
        INFO(c.name);
        try {
            read_native(c.text, "bad.txt");
            FAIL("accepted");
        } catch (const InputError& e) {
            CHECK(e.line == c.line);
            CHECK(e.column == c.column);
            CHECK_THAT(e.what(), Catch::Contains(c.says));
        }
    }
}

TEST_CASE("native: the CLI exits with code 2 and prints file:line:column", "[native][errors][cli]") {
    int n = 0;
    for (const auto& c : bad_cases()) {
        INFO(c.name);
        const std::string path = test::write_temp("bad" + std::to_string(n++) + ".txt", c.text);
        const auto result = test::run_cli("verify " + path);
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::StartsWith(path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: "));
    }
    CHECK(n >= 25);
}

TEST_CASE("native: a hand-written file reads as written", "[native]") {
    const std::string text =
        "\xEF\xBB\xBF# 1F1B on two ranks\r\n"
        "ranks 2\r\n"
        "microbatches 2   # total\r\n"
        "costs F=1 I=1.5 W=1/2 FB=2 comm=0.25\r\n"
        "stage-costs 1 F=3\r\n"
        "memory-limit 2\r\n"
        "\r\n"
        "rank 1: 1F0 1I0 . 1F1 1W0 1B1\r\n"
        "rank 0: 0F0 0F1 (0F0@0;0B0)\r\n";
    // rank 0 repeats 0F0 inside the pair: a duplicate, which the verifier reports (the reader accepts the
    // text), so first check a variant without it.
    const std::string valid = text.substr(0, text.rfind("rank 0:")) + "rank 0: 0F0 0F1 0B0 0B1\r\n";
    const Schedule s = read_native(valid, "hand.txt");
    REQUIRE(s.placement.ranks == 2);
    REQUIRE(s.placement.pipelines.size() == 1);
    CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1});
    CHECK(s.placement.pipelines[0].microbatches == 2);
    REQUIRE(s.costs);
    CHECK(s.costs->base.I == Rational(3, 2));
    CHECK(s.costs->base.W == Rational(1, 2));
    CHECK(*s.costs->base.FB == Rational(2));
    CHECK(s.costs->comm == Rational(1, 4));
    CHECK(s.costs->per_block.at(1).F == Rational(3));
    CHECK(s.costs->per_block.at(1).I == Rational(3, 2));  // inherits the base line
    CHECK(*s.memory_limit == Rational(2));
    REQUIRE(s.ranks[1].size() == 5);
    CHECK(format_slot(s.ranks[1][1]) == "1I0");
    CHECK(s.ranks[1][1].loc.line == 8);
    CHECK(s.ranks[1][1].loc.column == 13);
    REQUIRE(s.gaps.size() == 2);
    CHECK(s.gaps[1] == std::vector<int>{0, 0, 1, 0, 0, 0});
    // Rank 0's line (line 9): "rank 0: 0F0 0F1 (0F0@0;0B0)" repeats 0F0 at column 18 and lacks 0B1.
    const VerifyReport duplicate = verify(read_native(text, "hand.txt"));
    REQUIRE(duplicate.violations.size() == 2);
    CHECK(duplicate.violations[0].kind == ViolationKind::Missing);
    CHECK(duplicate.violations[0].loc.line == 9);
    CHECK(duplicate.violations[1].kind == ViolationKind::Duplicate);
    CHECK(duplicate.violations[1].loc.line == 9);
    CHECK(duplicate.violations[1].loc.column == 17);
}

TEST_CASE("native: pairs, pipelines and placements", "[native]") {
    const std::string text =
        "ranks 2\n"
        "pipeline 0 microbatches 1 ranks 0 1\n"
        "pipeline 1 microbatches 1 ranks 1 0\n"
        "rank 0: 1F0@1 (0F0;1B0@1)OVERLAP_F_B 0B0\n"
        "rank 1: (0F0@1;1B0) 1F0 \n";
    const Schedule s = read_native(text, "pairs.txt");
    REQUIRE(s.placement.pipeline_count() == 2);
    CHECK(s.placement.pipelines[1].stage_rank == std::vector<int>{1, 0});
    REQUIRE(s.ranks[0][1].is_pair());
    CHECK(s.ranks[0][1].ops[0] == Op{OpKind::F, 0, 0, 0});
    CHECK(s.ranks[0][1].ops[1] == Op{OpKind::B, 1, 1, 0});
    // Every block has two copies: the bidirectional placement's "2x parameters".
    CHECK(s.placement.copies_per_block() == std::vector<int>{2, 2});
    CHECK(s.placement.blocks_on_rank(0) == std::vector<int>{0, 1});
}

TEST_CASE("native: write then read gives the same schedule for every family", "[native][roundtrip]") {
    for (const auto& family : schedule_families()) {
        INFO(family.name);
        Schedule original;
        try {
            original = family.generate({4, 16, family.name == "interleaved-1f1b" || family.name == "looped-bfs" ||
                                                        family.name == "zb1p"
                                                    ? std::optional<int>(2)
                                                    : std::nullopt});
        } catch (const GenerateError& e) {
            WARN(family.name << ": " << e.what());
            continue;
        }
        const Schedule back = read_native(write_native(original), "roundtrip.txt");
        CHECK(back.placement.ranks == original.placement.ranks);
        REQUIRE(back.placement.pipeline_count() == original.placement.pipeline_count());
        for (int p = 0; p < back.placement.pipeline_count(); ++p) {
            CHECK(back.placement.pipelines[p].stage_rank == original.placement.pipelines[p].stage_rank);
            CHECK(back.placement.pipelines[p].microbatches == original.placement.pipelines[p].microbatches);
        }
        REQUIRE(back.ranks.size() == original.ranks.size());
        for (size_t r = 0; r < back.ranks.size(); ++r) {
            REQUIRE(back.ranks[r].size() == original.ranks[r].size());
            for (size_t k = 0; k < back.ranks[r].size(); ++k)
                CHECK(format_slot(back.ranks[r][k]) == format_slot(original.ranks[r][k]));
        }
    }
}
