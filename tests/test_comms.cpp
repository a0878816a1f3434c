// SEND/RECV lowering, the lock-step dry run and the compute_comms checks, against PyTorch's unit-test
// vectors (test_schedule.py: test_send_recv, test_merge_bw, test_csv) and hand-derived cases.
#include "formats/torch_csv.hpp"
#include "verifier/comms.hpp"

#include "conformance_files.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

using namespace pp;
using pp::test::read_conformance;
using pp::test::to_crlf;

namespace {

using Rows = std::vector<std::vector<std::string>>;

// A compute-only schedule in the notation of PyTorch's unit tests ("0F0", "" = None), built without our
// CSV reader so that these tests do not depend on it (and so that PyTorch's W-after-full-B vector can be
// expressed at all).
Schedule from_rows(int microbatches, std::vector<int> stage_rank, const Rows& rows) {
    static const std::regex token(R"((\d+)([FIWB])(\d+))");
    Schedule s;
    s.placement = Placement::single(static_cast<int>(rows.size()), std::move(stage_rank), microbatches);
    for (const auto& row : rows) {
        s.ranks.emplace_back();
        s.gaps.push_back({0});
        for (const std::string& cell : row) {
            if (cell.empty()) {
                ++s.gaps.back().back();
                continue;
            }
            std::smatch m;
            REQUIRE(std::regex_match(cell, m, token));
            OpKind kind = m[2] == "F" ? OpKind::F : m[2] == "I" ? OpKind::I : m[2] == "W" ? OpKind::W : OpKind::B;
            s.ranks.back().push_back(Slot::single(Op{kind, 0, std::stoi(m[1]), std::stoi(m[3])}));
            s.gaps.back().push_back(0);
        }
    }
    return s;
}

// PyTorch's str(action) for every entry of the lowered lists, written out here independently.
Rows texts(const Schedule& schedule, const std::vector<std::vector<RankAction>>& lists) {
    Rows out;
    for (size_t r = 0; r < lists.size(); ++r) {
        out.emplace_back();
        for (const RankAction& a : lists[r]) {
            if (a.is_compute) {
                out.back().push_back(format_slot(schedule.ranks[r][a.slot]));
            } else {
                out.back().push_back(std::to_string(a.stage) + comm_kind_name(a.comm) +
                                     (a.microbatch >= 0 ? std::to_string(a.microbatch) : ""));
            }
        }
    }
    return out;
}

Rows split_words(const std::vector<std::string>& lines) {
    Rows rows;
    for (const auto& line : lines) {
        std::istringstream in(line);
        rows.emplace_back();
        for (std::string w; in >> w;) rows.back().push_back(w);
    }
    return rows;
}

Schedule with_lowering(Schedule s) {
    s.actions = lower_send_recv(s);
    return s;
}

}  // namespace

TEST_CASE("test_send_recv simple_2_rank_2_stage: exact lowering and 11 lock-step steps", "[comms]") {
    Schedule s = from_rows(2, {0, 1}, {{"0F0", "0F1", "", "0B0", "", "0B1"}, {"", "1F0", "1B0", "1F1", "1B1", ""}});
    auto lowered = lower_send_recv(s);
    CHECK(texts(s, lowered) == split_words({"0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1",
                                            "1RECV_F0 1RECV_F1 1F0 1B0 1SEND_B0 1F1 1B1 1SEND_B1"}));
    s.actions = lowered;
    LockStepResult sim = simulate_comms_lockstep(s);
    CHECK(sim.completed);
    CHECK(sim.steps == 11);
    CHECK(sim.blocked_position_per_rank == std::vector<int>{-1, -1});
    CHECK(check_comms(s).empty());
}

TEST_CASE("test_send_recv v_2_rank_4_stage: same-rank neighbours need no SEND/RECV, 24 steps", "[comms]") {
    Schedule s = from_rows(
        2, {0, 1, 1, 0},
        {{"0F0", "0F1", "", "3F0", "3B0", "3F1", "3B1", "0B0", "3W0", "0B1", "3W1", "0W0", "0W1"},
         {"", "1F0", "2F0", "1F1", "2F1", "2B0", "1B0", "2B1", "1B1", "2W0", "2W1", "1W0", "1W1"}});
    auto lowered = lower_send_recv(s);
    CHECK(texts(s, lowered) ==
          split_words({"0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 3F0 3B0 3SEND_B0 3RECV_F1 3F1 3B1 3SEND_B1 0RECV_B0 0B0 "
                       "3W0 0RECV_B1 0B1 3W1 0W0 0W1",
                       "1RECV_F0 1RECV_F1 1F0 2F0 2SEND_F0 1F1 2RECV_B0 2F1 2SEND_F1 2B0 2RECV_B1 1B0 1SEND_B0 2B1 "
                       "1B1 1SEND_B1 2W0 2W1 1W0 1W1"}));
    s.actions = lowered;
    LockStepResult sim = simulate_comms_lockstep(s);
    CHECK(sim.completed);
    CHECK(sim.steps == 24);
    CHECK(check_comms(s).empty());
}

TEST_CASE("test_merge_bw: an I directly followed by its W becomes B", "[comms]") {
    Schedule s = from_rows(3, {0}, {{"0F0", "0F1", "0F2", "0I0", "0I1", "0W0", "", "0I2", "", "0W2", "0W1"}});
    Schedule merged = merge_bw(s);
    CHECK(merged.gaps.empty());
    std::vector<std::string> got;
    for (const Slot& slot : merged.ranks[0]) got.push_back(format_slot(slot));
    CHECK(got == std::vector<std::string>{"0F0", "0F1", "0F2", "0I0", "0I1", "0W0", "0B2", "0W1"});
}

TEST_CASE("test_csv zb1p_2rank_2stagep: merge_bw + lowering of the compute file equals the comms file", "[comms]") {
    TorchCsvOptions y2024;
    y2024.era = TorchEra::Y2024;
    Schedule compute = read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_compute.csv"), "compute.csv", y2024);
    Schedule lowered = with_lowering(merge_bw(compute));
    CHECK(write_torch_csv(lowered, TorchCsvFormat::ComputeComms, TorchEra::Y2024) ==
          to_crlf(read_conformance("pytorch/zb1p_2rank_2stagep_comms.csv")));
    LockStepResult sim = simulate_comms_lockstep(lowered);
    CHECK(sim.completed);
    CHECK(sim.steps == 113);

    Schedule artifact = read_torch_csv(read_conformance("pytorch/zb1p_2rank_2stagep_comms.csv"), "comms.csv", y2024);
    CHECK(texts(artifact, *artifact.actions) == texts(lowered, *lowered.actions));
    CHECK(simulate_comms_lockstep(artifact).steps == 113);
    CHECK(check_comms(artifact).empty());
}

TEST_CASE("torchtitan custom schedules lower and run in lock-step", "[comms]") {
    struct Titan {
        const char* file;
        int steps;
    };
    for (Titan t : {Titan{"torchtitan/2-rank.csv", 114}, Titan{"torchtitan/4-rank.csv", 129},
                    Titan{"torchtitan/8-rank.csv", 108}}) {
        INFO(t.file);
        Schedule s = with_lowering(read_torch_csv(read_conformance(t.file), t.file));
        LockStepResult sim = simulate_comms_lockstep(s);
        CHECK(sim.completed);
        CHECK(sim.steps == t.steps);
        CHECK(check_comms(s).empty());
    }
}

TEST_CASE("lowering with overlapped pairs (DualPipeV) is consistent and deadlock-free", "[comms]") {
    Schedule s = with_lowering(read_torch_csv(read_conformance("pytorch/dualpipev_4rank_10mb.csv"), "dualpipev.csv"));
    // Rank 0 holds stages 0 and 7: the pair (0F7;7B3) sends 0F7 forward and 7B3's gradient back.
    const auto& r0 = (*s.actions)[0];
    auto pair_at = std::find_if(r0.begin(), r0.end(), [&](const RankAction& a) {
        return a.is_compute && s.ranks[0][a.slot].is_pair();
    });
    REQUIRE(pair_at != r0.end());
    CHECK(!pair_at[1].is_compute);
    CHECK(pair_at[1].comm == CommKind::SendF);
    CHECK(pair_at[1].stage == 0);
    CHECK(pair_at[1].microbatch == 7);
    CHECK(pair_at[2].comm == CommKind::SendB);
    CHECK(pair_at[2].stage == 7);
    CHECK(pair_at[2].microbatch == 3);
    CHECK(simulate_comms_lockstep(s).completed);
    CHECK(check_comms(s).empty());
}

TEST_CASE("lock-step run steps over UNSHARD, RESHARD and REDUCE_GRAD", "[comms]") {
    // Hand count: 1 UNSHARD both; 2 0F0 (r1 waits); 3 SEND/RECV F; 4 1F0; 5 1B0; 6 1SEND_B0 and, in the
    // second pass, 0RECV_B0; 7 0B0 / 1REDUCE_GRAD; 8 0REDUCE_GRAD / 1RESHARD; 9 0RESHARD.
    Schedule s = read_torch_csv("0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
                                "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n",
                                "t.csv");
    LockStepResult sim = simulate_comms_lockstep(s);
    CHECK(sim.completed);
    CHECK(sim.steps == 9);
    CHECK(check_comms(s).empty());
}

TEST_CASE("PyTorch's own ZBV compute_comms dump (V map, in-memory hand-over on rank 1) checks clean", "[comms]") {
    Schedule s = read_torch_csv(
        "0UNSHARD,3UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,0F2,0SEND_F2,3F0,3RECV_F1,3I0,3SEND_B0,3W0,3F1,3I1,"
        "3SEND_B1,0RECV_B0,3W1,0F3,0SEND_F3,3RECV_F2,0I0,0W0,3F2,3I2,3SEND_B2,0RECV_B1,3W2,0I1,3RECV_F3,0W1,3F3,3I3,"
        "3SEND_B3,0RECV_B2,3W3,3REDUCE_GRAD,0RECV_B3,3RESHARD,0I2,0W2,0I3,0W3,0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,2UNSHARD,1RECV_F0,1F0,1RECV_F1,2F0,2SEND_F0,1RECV_F2,1F1,2F1,2SEND_F1,2RECV_B0,2I0,2W0,1F2,2RECV_B1,"
        "1I0,1SEND_B0,1W0,1RECV_F3,2F2,2SEND_F2,2I1,2W1,1F3,2RECV_B2,1I1,1SEND_B1,1W1,2F3,2SEND_F3,2I2,2W2,2RECV_B3,"
        "1I2,1SEND_B2,2I3,1I3,1SEND_B3,1W2,2W3,2REDUCE_GRAD,2RESHARD,1W3,1REDUCE_GRAD,1RESHARD\n",
        "zbv.csv");
    CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 1, 0});
    CHECK(check_comms(s).empty());
    CHECK(simulate_comms_lockstep(s).completed);
}

TEST_CASE("check_comms catches mismatched SEND/RECV orders", "[comms]") {
    // Rank 0 sends micro-batch 0 then 1; rank 1 receives 1 then 0: NCCL pairs them in posting order.
    Schedule s = read_torch_csv("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
                                "1RECV_F1,1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
                                "swap.csv");
    auto violations = check_comms(s);
    REQUIRE(violations.size() == 1);
    const Violation& v = violations[0];
    CHECK(v.kind == ViolationKind::CommMismatch);
    CHECK(v.rank == 0);
    CHECK(v.position == 1);
    CHECK(v.loc.line == 1);
    CHECK(v.loc.column == 5);
    REQUIRE(v.op);
    CHECK(*v.op == Op{OpKind::F, 0, 0, 0});
    CHECK_THAT(v.message, Catch::Contains("0SEND_F0 (rank 0, position 1)"));
    CHECK_THAT(v.message, Catch::Contains("1RECV_F1 (rank 1, position 0)"));
}

TEST_CASE("check_comms catches a missing RECV", "[comms]") {
    Schedule s = read_torch_csv("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
                                "1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
                                "missing.csv");
    auto violations = check_comms(s);
    REQUIRE(violations.size() == 2);
    CHECK(violations[0].kind == ViolationKind::CommMismatch);  // 0SEND_F1 is never received
    CHECK(violations[0].rank == 0);
    CHECK(violations[0].position == 3);
    CHECK_THAT(violations[0].message, Catch::Contains("no matching receive"));
    CHECK(violations[1].kind == ViolationKind::CommMissing);
    CHECK(violations[1].rank == 1);
    CHECK(violations[1].position == 4);
    REQUIRE(violations[1].op);
    CHECK(*violations[1].op == Op{OpKind::F, 0, 1, 1});
    CHECK(violations[1].loc.line == 2);
    CHECK(violations[1].loc.column == 27);
}

TEST_CASE("check_comms catches a rendezvous deadlock: both ranks RECV first", "[comms]") {
    Schedule s = read_torch_csv("0RECV_B0,0F0,0SEND_F0,0B0\n"
                                "1RECV_F0,1F0,1B0,1SEND_B0\n",
                                "deadlock.csv");
    LockStepResult sim = simulate_comms_lockstep(s);
    CHECK(!sim.completed);
    CHECK(sim.steps == 1);
    CHECK(sim.blocked_position_per_rank == std::vector<int>{0, 0});
    CHECK_THAT(sim.message, Catch::Contains("Schedule is not progressing"));

    auto violations = check_comms(s);
    REQUIRE(violations.size() == 1);
    const Violation& v = violations[0];
    CHECK(v.kind == ViolationKind::CommDeadlock);
    CHECK(v.rank == 0);
    CHECK(v.position == 0);
    CHECK(v.loc.line == 1);
    CHECK(v.loc.column == 1);
    REQUIRE(v.witness.size() == 2);
    CHECK(v.witness[0] == "rank 0, position 0: 0RECV_B0 waits for 1SEND_B0 on rank 1");
    CHECK(v.witness[1] == "rank 1, position 0: 1RECV_F0 waits for 0SEND_F0 on rank 0");
}

TEST_CASE("lowering a compute order that cannot make progress fails as PyTorch does", "[comms]") {
    // Rank 0 wants 0B0 before its own forward; rank 1 waits for that forward.
    Schedule s = from_rows(1, {0, 1}, {{"0B0", "0F0"}, {"1F0", "1B0"}});
    CHECK_THROWS_WITH(lower_send_recv(s), Catch::Contains("Malformed compute schedule, can't schedule sends/recvs"));
    CHECK(check_comms(s).empty());  // no action list: nothing to check
}
