// PyTorch schedule CSV: reading the published files, byte-exact writing, strict errors with exact
// positions, letter eras, and PyTorch's own _validate_schedule verdicts.
// Expected values come from the reference files themselves and from hand counts (columns are 1-based
// byte offsets within the line, as counted in the file text), never from this code's own output.
#include "formats/input_error.hpp"
#include "formats/torch_csv.hpp"
#include "verifier/pytorch_compat.hpp"

#include "conformance_files.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace pp;
using pp::test::read_conformance;
using pp::test::to_crlf;

namespace {

struct ExpectedError {
    int line, column;
    std::string fragment;  // part of the message
};

void require_error(const std::string& text, ExpectedError expected, const TorchCsvOptions& options = {}) {
    INFO("input: " << text);
    try {
        read_torch_csv(text, "bad.csv", options);
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        INFO("message: " << e.what());
        CHECK(e.file == "bad.csv");
        CHECK(e.line == expected.line);
        CHECK(e.column == expected.column);
        CHECK_THAT(e.what(), Catch::Contains(expected.fragment));
    }
}

TorchCsvOptions era2024() {
    TorchCsvOptions options;
    options.era = TorchEra::Y2024;
    return options;
}

}  // namespace

TEST_CASE("every conformance file reads, with the shape its name says", "[torch_csv]") {
    SECTION("DualPipeV P=4, M=10: V map, 8 stages, 41 overlapped pairs") {
        Schedule s = read_torch_csv(read_conformance("pytorch/dualpipev_4rank_10mb.csv"), "dualpipev.csv");
        CHECK(s.rank_count() == 4);
        CHECK(s.placement.pipelines[0].microbatches == 10);
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
        std::vector<size_t> cells{38, 36, 34, 33};  // commas + 1 per line of the file
        size_t pairs = 0;
        for (int r = 0; r < 4; ++r) {
            CHECK(s.ranks[r].size() == cells[r]);
            for (const Slot& slot : s.ranks[r]) pairs += slot.is_pair();
        }
        CHECK(pairs == 41);  // occurrences of OVERLAP_F_B in the file
        CHECK(s.gaps.empty());
        CHECK(!s.actions);
        CHECK(detect_torch_csv_format(s) == TorchCsvFormat::ComputeOnly);
        // Line 1, cell 18: (0F7;7B3)OVERLAP_F_B at byte 68; PyTorch's backward half is a full backward.
        const Slot& first_pair = s.ranks[0][17];
        REQUIRE(first_pair.is_pair());
        CHECK(first_pair.ops[0] == Op{OpKind::F, 0, 0, 7});
        CHECK(first_pair.ops[1] == Op{OpKind::B, 0, 7, 3});
        CHECK(first_pair.loc.line == 1);
        CHECK(first_pair.loc.column == 69);
    }
    SECTION("ZB1P compute_only, 2024 letters: B is the input-gradient backward, one bubble per row") {
        Schedule s = read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_compute.csv"), "zb1p.csv", era2024());
        CHECK(s.rank_count() == 2);
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 0, 1});
        CHECK(s.placement.pipelines[0].microbatches == 8);
        CHECK(s.ranks[0].size() == 48);
        CHECK(s.ranks[1].size() == 48);
        CHECK(s.ranks[0][4].ops[0] == Op{OpKind::I, 0, 2, 0});  // "2B0" (the empty cell is no slot)
        CHECK(s.ranks[0][5].ops[0] == Op{OpKind::W, 0, 2, 0});  // "2W0"
        REQUIRE(s.gaps.size() == 2);
        std::vector<int> row0(49, 0), row1(49, 0);
        row0[3] = 1;  // ",," between 2F0 and 2F1
        row1[0] = 1;  // the row starts with a comma
        CHECK(s.gaps[0] == row0);
        CHECK(s.gaps[1] == row1);
    }
    SECTION("ZB1P compute_comms, 2024 letters: BW is the full backward") {
        Schedule s = read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_comms.csv"), "comms.csv", era2024());
        REQUIRE(s.actions);
        CHECK(detect_torch_csv_format(s) == TorchCsvFormat::ComputeComms);
        CHECK((*s.actions)[0].size() == 80);
        CHECK((*s.actions)[1].size() == 96);
        const auto& a = (*s.actions)[0];
        CHECK(a[0].is_compute);
        CHECK(s.ranks[0][a[0].slot].ops[0] == Op{OpKind::F, 0, 0, 0});
        CHECK(!a[1].is_compute);
        CHECK(a[1].comm == CommKind::SendF);
        CHECK(a[1].stage == 0);
        CHECK(a[1].microbatch == 0);
        CHECK(a[2].comm == CommKind::RecvF);
        CHECK(a[2].stage == 2);
        CHECK(a[11].is_compute);  // 2BW0 at byte 79
        CHECK(s.ranks[0][a[11].slot].ops[0] == Op{OpKind::B, 0, 2, 0});
        CHECK(a[11].loc.column == 80);
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 0, 1});
        CHECK(s.gaps.empty());
    }
    SECTION("torchtitan custom schedules, current letters") {
        struct Titan {
            const char* file;
            int ranks, stages, microbatches;
        };
        for (Titan t : {Titan{"torchtitan/2-rank.csv", 2, 4, 8}, Titan{"torchtitan/4-rank.csv", 4, 8, 6},
                        Titan{"torchtitan/8-rank.csv", 8, 8, 10}}) {
            INFO(t.file);
            Schedule s = read_torch_csv(read_conformance(t.file), t.file);
            CHECK(s.rank_count() == t.ranks);
            CHECK(s.placement.pipelines[0].stages() == t.stages);
            CHECK(s.placement.pipelines[0].microbatches == t.microbatches);
            CHECK(s.placement.pipelines[0].stage_rank == loop_stage_map(t.ranks, t.stages));
            CHECK(s.op_count() == static_cast<size_t>(t.stages * t.microbatches * 3));  // F, I, W each
        }
    }
}

TEST_CASE("write_torch_csv reproduces the published files byte for byte (CRLF, as PyTorch writes)", "[torch_csv]") {
    struct Case {
        const char* file;
        TorchEra era;
    };
    for (Case c : {Case{"pytorch/dualpipev_4rank_10mb.csv", TorchEra::Current},
                   Case{"pytorch/zb1p_2rank_2stagep_compute.csv", TorchEra::Y2024},
                   Case{"pytorch/zb1p_2rank_2stagep_comms.csv", TorchEra::Y2024},
                   Case{"torchtitan/2-rank.csv", TorchEra::Current}, Case{"torchtitan/4-rank.csv", TorchEra::Current},
                   Case{"torchtitan/8-rank.csv", TorchEra::Current}}) {
        INFO(c.file);
        TorchCsvOptions options;
        options.era = c.era;
        std::string expected = to_crlf(read_conformance(c.file));
        Schedule from_lf = read_torch_csv(read_conformance(c.file), c.file, options);
        CHECK(write_torch_csv(from_lf, detect_torch_csv_format(from_lf), c.era) == expected);
        Schedule from_crlf = read_torch_csv(expected, c.file, options);
        CHECK(write_torch_csv(from_crlf, detect_torch_csv_format(from_crlf), c.era) == expected);
        Schedule from_bom = read_torch_csv("\xEF\xBB\xBF" + expected, c.file, options);
        CHECK(write_torch_csv(from_bom, detect_torch_csv_format(from_bom), c.era) == expected);
    }
}

TEST_CASE("trailing empty cells and the lone empty cell round-trip", "[torch_csv]") {
    // ZBV with few micro-batches ends rows with ",,,,"; csv writes a row whose only cell is empty as "".
    std::string text = "0F0,,1F0,,,\r\n\"\"\r\n,0B0,1B0\r\n";
    Schedule s = read_torch_csv(text, "t.csv");
    CHECK(s.gaps[0] == std::vector<int>{0, 1, 3});
    CHECK(s.gaps[1] == std::vector<int>{1});
    CHECK(s.ranks[1].empty());
    CHECK(write_torch_csv(s, TorchCsvFormat::ComputeOnly) == text);
}

TEST_CASE("reader details: whitespace, blank rows, REDUCE_GRAD, stage map", "[torch_csv]") {
    SECTION("cells are stripped, whitespace-only cells are bubbles") {
        Schedule s = read_torch_csv(" 0F0 ,\t, 0B0\n", "t.csv");
        REQUIRE(s.ranks[0].size() == 2);
        CHECK(s.ranks[0][0].loc.column == 2);
        CHECK(s.ranks[0][1].loc.column == 10);
        CHECK(s.gaps[0] == std::vector<int>{0, 1, 0});
    }
    SECTION("a blank line in the middle is a rank without actions (csv reads it as an empty row)") {
        Schedule s = read_torch_csv("0F0,0B0\n\n2F0,2B0\n\n\n", "t.csv");
        CHECK(s.rank_count() == 3);
        CHECK(s.ranks[1].empty());
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 2});  // stage 1 unseen: loop default
    }
    SECTION("REDUCE_GRAD in a compute_only file (main-branch GPipe/1F1B IR) does not make it compute_comms") {
        Schedule s = read_torch_csv("0F0,0F1,0B0,0B1,0REDUCE_GRAD\n", "t.csv");
        CHECK(!s.actions);
        CHECK(s.ranks[0].size() == 4);
    }
    SECTION("REDUCE_GRAD, UNSHARD and RESHARD are kept in a compute_comms file") {
        std::string text = "0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\r\n"
                           "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\r\n";
        Schedule s = read_torch_csv(text, "t.csv");
        REQUIRE(s.actions);
        CHECK((*s.actions)[0][5].comm == CommKind::ReduceGrad);
        CHECK((*s.actions)[0][5].microbatch == -1);
        CHECK(write_torch_csv(s, TorchCsvFormat::ComputeComms) == text);
    }
    SECTION("a stage on two ranks is not a parse error: the first rank owns it") {
        Schedule s = read_torch_csv("0F0,1F0,1B0,0B0\n1F1,1B1,0F1,0B1\n", "t.csv");
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 0});
        CHECK(s.ranks[1].size() == 4);
    }
    SECTION("options fix ranks, stages, micro-batches and the map") {
        TorchCsvOptions options;
        options.ranks = 2;
        options.microbatches = 4;
        options.stage_rank = std::vector<int>{1, 0};
        Schedule s = read_torch_csv("1F0,1B0\n0F0,0B0\n", "t.csv", options);
        CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{1, 0});
        CHECK(s.placement.pipelines[0].microbatches == 4);
    }
    SECTION("pairs may name the backward first; the slot keeps the forward first") {
        Schedule s = read_torch_csv("(1B0; 0F1)OVERLAP_F_B\n", "t.csv");
        CHECK(s.ranks[0][0].ops[0] == Op{OpKind::F, 0, 0, 1});
        CHECK(s.ranks[0][0].ops[1] == Op{OpKind::B, 0, 1, 0});
    }
    SECTION("2024 letters: B reads as I, BW as B, and are written back the same way") {
        Schedule s = read_torch_csv("0F0,0B0,0W0,0F1,0BW1\n", "t.csv", era2024());
        CHECK(s.ranks[0][1].ops[0].kind == OpKind::I);
        CHECK(s.ranks[0][4].ops[0].kind == OpKind::B);
        CHECK(write_torch_csv(s, TorchCsvFormat::ComputeOnly, TorchEra::Y2024) == "0F0,0B0,0W0,0F1,0BW1\r\n");
        CHECK(write_torch_csv(s, TorchCsvFormat::ComputeOnly, TorchEra::Current) == "0F0,0I0,0W0,0F1,0B1\r\n");
    }
}

TEST_CASE("writer formats actions as PyTorch's str(action)", "[torch_csv]") {
    Schedule s;
    s.placement = Placement::single(1, {0, 0, 0, 0, 0, 0, 0, 0}, 8);
    s.ranks = {{Slot::single({OpKind::F, 0, 0, 1}), Slot::pair({OpKind::F, 0, 0, 7}, {OpKind::B, 0, 7, 3}),
                Slot::single({OpKind::W, 0, 2, 5})}};
    CHECK(write_torch_csv(s, TorchCsvFormat::ComputeOnly) == "0F1,(0F7;7B3)OVERLAP_F_B,2W5\r\n");
    RankAction send;
    send.is_compute = false;
    send.comm = CommKind::SendB;
    send.stage = 2;
    send.microbatch = 2;
    RankAction reduce;
    reduce.is_compute = false;
    reduce.comm = CommKind::ReduceGrad;
    reduce.stage = 0;
    RankAction first;
    first.slot = 0;
    s.actions = std::vector<std::vector<RankAction>>{{first, send, reduce}};
    CHECK(write_torch_csv(s, TorchCsvFormat::ComputeComms) == "0F1,2SEND_B2,0REDUCE_GRAD\r\n");

    Schedule two = s;
    two.ranks[0][0].ops[0].pipeline = 1;
    CHECK_THROWS_AS(write_torch_csv(two, TorchCsvFormat::ComputeOnly), std::invalid_argument);
    Schedule bidirectional;
    bidirectional.placement = Placement::bidirectional(2, 2);
    bidirectional.ranks.resize(2);
    CHECK_THROWS_AS(write_torch_csv(bidirectional, TorchCsvFormat::ComputeOnly), std::invalid_argument);
    Schedule no_actions = s;
    no_actions.actions.reset();
    CHECK_THROWS_AS(write_torch_csv(no_actions, TorchCsvFormat::ComputeComms), std::invalid_argument);
}

TEST_CASE("letter eras are never silently reinterpreted", "[torch_csv]") {
    SECTION("the 2024-era compute file read with current letters: first W that follows a B of its own micro-batch") {
        // Line 1 is "0F0,0F1,2F0,,2F1,2B0,2W0,...": 2W0 starts at byte 21.
        require_error(read_conformance("pytorch/zb1p_2rank_2stagep_compute.csv"), {1, 22, "--torch-era 2024"});
    }
    SECTION("the 2024-era comms file read with current letters: first BW token (byte 79 of line 1)") {
        require_error(read_conformance("pytorch/zb1p_2rank_2stagep_comms.csv"),
                      {1, 80, "2024-era letter BW; rerun with --torch-era 2024"});
    }
    SECTION("a current file read with 2024 letters: first I token (7I0 at byte 32 of line 1)") {
        require_error(read_conformance("pytorch/dualpipev_4rank_10mb.csv"), {1, 33, "--torch-era current"}, era2024());
    }
    SECTION("B and W of one micro-batch are fine once the file has an I (the verifier judges them)") {
        CHECK_NOTHROW(read_torch_csv("0F0,0B0,0W0,0F1,0I1,0W1\n", "t.csv"));
    }
}

TEST_CASE("malformed CSV: exact line and column", "[torch_csv]") {
    TorchCsvOptions two_stages;
    two_stages.stages = 2;
    TorchCsvOptions two_microbatches;
    two_microbatches.microbatches = 2;
    TorchCsvOptions three_ranks;
    three_ranks.ranks = 3;
    TorchCsvOptions one_rank;
    one_rank.ranks = 1;

    require_error("0F0,0X1\n", {1, 5, "unknown action '0X1'"});
    require_error("0F0,0f1\n", {1, 5, "upper case"});
    require_error("0F0\n1F0,1F1xyz\n", {2, 8, "prefix"});
    require_error("0F0,  0Q0\n", {1, 7, "unknown action"});
    require_error("0F0,F0\n", {1, 5, "expected an action"});
    require_error("0F0,0F\n", {1, 5, "no micro-batch"});
    require_error("-1F0\n", {1, 1, "negative stage"});
    require_error("0F-1\n", {1, 3, "negative micro-batch"});
    require_error("0F1000001\n", {1, 3, "too large"});
    require_error("0F0,12345678F0\n", {1, 5, "too large"});
    require_error("0F0,2F0\n", {1, 5, "stage 2 is out of range"}, two_stages);
    require_error("0F0,0F1\n1F0,1F2\n", {2, 7, "micro-batch 2 is out of range"}, two_microbatches);
    require_error("(0F1;1B0),(0F2;(1B1))OVERLAP_F_B\n", {1, 10, "expected OVERLAP_F_B after ')'"});
    require_error("0F0,(0F2;(1B1))OVERLAP_F_B\n", {1, 10, "nested parentheses"});
    require_error("0F0,(0F2;1B1\n", {1, 5, "unclosed parenthesis"});
    require_error("(0F0;1W0)OVERLAP_F_B\n", {1, 1, "one forward plus one backward"});
    require_error("(0F0;1F1)OVERLAP_F_B\n", {1, 1, "one forward plus one backward"});
    require_error("(0F0;1B0;2B0)OVERLAP_F_B\n", {1, 1, "one forward plus one backward"});
    require_error("(0F0;1B0)OVERLAP_F_Bx\n", {1, 21, "prefix"});
    require_error("0OVERLAP_F_B\n", {1, 1, "must be written as a pair"});
    require_error("", {1, 1, "empty file"});
    require_error("\r\n\r\n", {1, 1, "empty file"});
    require_error(",,\n", {1, 1, "no compute actions"});
    require_error(std::string("0F0,0F1\n1F0,1\0F1\n", 17), {2, 6, "NUL byte"});
    require_error("0F0,0F1\n1F0,\xff\n", {2, 5, "not valid UTF-8"});
    require_error("0F0\n1F0\n", {3, 1, "missing rank 2"}, three_ranks);
    require_error("0F0\n1F0\n", {2, 1, "one row per rank"}, one_rank);
    require_error("0F0,0SEND_F0\n1RECV_F0,,1F0\n", {2, 10, "empty cell in a compute_comms file"});
    require_error("0F0,0BW0\n", {1, 5, "2024-era letter BW; rerun with --torch-era 2024"});
    require_error("0F0,0I0\n", {1, 5, "does not exist in 2024-era files"}, era2024());
    require_error("0F0,0B0,0W0\n", {1, 9, "2024-era file"});
    require_error("0UNSHARD0,0F0\n", {1, 9, "takes no micro-batch"});
    require_error("\xEF\xBB\xBF" "0F0,0X0\n", {1, 5, "unknown action"});  // columns count after the BOM
    require_error("0F0,(0F1;;1B0)OVERLAP_F_B\n", {1, 10, "empty sub-action"});
}

TEST_CASE("PyTorch's _validate_schedule verdicts", "[torch_csv][pytorch_compat]") {
    SECTION("every conformance file is accepted by PyTorch") {
        CHECK(!pytorch_validate_schedule(read_torch_csv(read_conformance("pytorch/dualpipev_4rank_10mb.csv"), "a")));
        CHECK(!pytorch_validate_schedule(
            read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_compute.csv"), "b", era2024())));
        CHECK(!pytorch_validate_schedule(
            read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_comms.csv"), "c", era2024())));
        for (const char* f : {"torchtitan/2-rank.csv", "torchtitan/4-rank.csv", "torchtitan/8-rank.csv"})
            CHECK(!pytorch_validate_schedule(read_torch_csv(read_conformance(f), f)));
    }
    SECTION("TestValidateSchedule: valid B and I/W versions, missing backwards, missing rank") {
        CHECK(!pytorch_validate_schedule(read_torch_csv("0F0,0B0\n1F0,1B0\n", "t")));
        CHECK(!pytorch_validate_schedule(read_torch_csv("0F0,0I0,0W0\n1F0,1I0,1W0\n", "t")));
        CHECK(pytorch_validate_schedule(read_torch_csv("0F0\n1F0\n", "t")) ==
              "Invalid backward microbatches for stage 0: expected 1 total backwards,             but got B=0, I=0, W=0");
        Schedule only_rank0 = read_torch_csv("0F0,0B0\n", "t");
        only_rank0.placement.ranks = 2;
        CHECK(pytorch_validate_schedule(only_rank0) == "Schedule has incorrect number of ranks - expected 2, actual 1");
    }
    SECTION("the mid-2025 1F1B IR's last rank (3F1..3F8) fails at cell 4 of row 3, counting empty cells") {
        std::string ir =
            "0F0,0F1,0F2,,,,,,,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,,0B5,,0B6,,0B7\n"
            ",1F0,1F1,,,,,1F2,1B0,1F3,1B1,1F4,1B2,1F5,1B3,1F6,1B4,1F7,1B5,,1B6,,1B7\n"
            ",,2F0,,,2F1,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,2F6,2B5,2F7,2B6,,2B7\n"
            ",,,3F1,3B0,3F2,3B1,3F3,3B2,3F4,3B3,3F5,3B4,3F6,3B5,3F7,3B6,3F8,3B7\n";
        CHECK(pytorch_validate_schedule(read_torch_csv(ir, "1f1b.csv")) ==
              "Rank 3, step 4: Running Full Backward for stage 3, microbatch 0 without first running Forward");
    }
    SECTION("W after a full B (PyTorch's own v_2_rank_4_stage vector) is rejected at step 8 of rank 0") {
        // Read with 2024 letters to get past our era check, then restore full backwards (PyTorch's meaning).
        Schedule s = read_torch_csv("0F0,0F1,,3F0,3B0,3F1,3B1,0B0,3W0,0B1,3W1,0W0,0W1\n"
                                    ",1F0,2F0,1F1,2F1,2B0,1B0,2B1,1B1,2W0,2W1,1W0,1W1\n",
                                    "v.csv", era2024());
        for (auto& rank : s.ranks)
            for (auto& slot : rank)
                if (slot.ops[0].kind == OpKind::I) slot.ops[0].kind = OpKind::B;
        CHECK(pytorch_validate_schedule(s) ==
              "Rank 0, step 8: Running Backward Weight for stage 3, microbatch 0 without first running Backward Input");
    }
    SECTION("backward before forward, stage on two ranks, F count, I/W counts") {
        CHECK(pytorch_validate_schedule(read_torch_csv("0F0,0I1,0F1,0W0,0I0,0W1\n", "t")) ==
              "Rank 0, step 1: Running Backward Input for stage 0, microbatch 1 without first running Forward");
        CHECK(pytorch_validate_schedule(read_torch_csv("0F0,1F0,1B0,0B0\n1F1,1B1,0F1,0B1\n", "t")) ==
              "Rank 1, step 0: Stage 1 is assigned to both rank 1 and rank 0");
        TorchCsvOptions m3;
        m3.microbatches = 3;
        CHECK(pytorch_validate_schedule(read_torch_csv("0F0,0F1,0B0,0B1\n", "t", m3)) ==
              "Got 2 F microbatches for stage 0, expected 3");
        CHECK(pytorch_validate_schedule(read_torch_csv("0F0,0F1,0I0,0I1,0W0\n", "t")) ==
              "Invalid backward microbatches for stage 0: I and W must have equal counts,             but got I=2, W=1");
    }
}
