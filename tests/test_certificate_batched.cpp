// Batched timing in certificates (docs/certificates.md): the checker's own batched graph against the verifier's
// rendezvous run (two implementations of docs/model.md's blocking batches that share no code), batched PROVEDs
// CHECKED, and corrupted batched certificates rejected at the step that recomputes them.
#include "certificate_helpers.hpp"
#include "checker/internal.hpp"
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace {

namespace fs = std::filesystem;
using pp::test::fresh_dir;
using pp::test::run_check;
using pp::test::run_cli;
using pp::test::slurp;

pp::Costs costs_of(const std::string& text) { return pp::parse_costs(text); }

// The checker's makespan and bubble against simulate_batched's, on one instance.
void require_same_timing(const pp::Schedule& s, const pp::Costs& costs) {
    const pp::check::Graph g = pp::check::build_batched_graph(s, "test");
    REQUIRE(g.acyclic());
    const pp::check::Timing mine = pp::check::simulate(s, g, costs, "test");
    const pp::Simulation theirs = pp::simulate_batched(s, costs);
    CHECK(mine.makespan == theirs.scale.to_units(theirs.makespan));
    CHECK(mine.bubble == theirs.scale.to_units(theirs.bubble));
}

}  // namespace

TEST_CASE("certificates: the checker's batched timing is the rendezvous run's", "[certificate][batched]") {
    struct Case {
        std::string family;
        int P;
        std::vector<int> M;
    };
    const std::vector<Case> cases = {{"1f1b", 2, {2, 3, 7}},         {"1f1b", 4, {4, 5, 9}},        {"zb-h1", 4, {4, 6, 9}},
                                     {"dualpipe", 2, {4, 6, 10}},    {"dualpipe", 4, {8, 10, 14}},  {"dualpipe", 6, {12, 16}},
                                     {"dualpipev", 2, {4, 5, 9}},    {"dualpipev", 4, {8, 9, 13}},  {"dualpipev", 5, {10, 13}},
                                     {"chimera", 2, {2, 4, 6}},      {"gpipe", 4, {1, 4, 7}}};
    int compared = 0;
    for (const auto& c : cases)
        for (int M : c.M)
            for (const std::string text : {"F=1,I=1,W=1,FB=3/2", "F=2,I=1,W=3/2,FB=5/2", "F=1,I=2,W=1,FB=2,comm=1/2",
                                           "F=3,I=1,W=1,FB=7/2,comm=5/4"}) {
                INFO(c.family << " P=" << c.P << " M=" << M << " costs " << text);
                const pp::Schedule s = pp::find_family(c.family)->generate({c.P, M, std::nullopt});
                require_same_timing(s, costs_of(text));  // comm > 0 too: no slot waits on posts at time 0 alone
                ++compared;
            }
    CHECK(compared >= 80);
}

TEST_CASE("certificates: the checker's batched graph refuses an inconsistent program", "[certificate][batched]") {
    const pp::Schedule good = pp::find_family("1f1b")->generate({3, 3, std::nullopt});
    const pp::CommProgram program = pp::check::generic_program(good);
    // The checker's generic rule is the verifier's (written apart).
    const pp::CommProgram verifiers = pp::generic_comm_program(good);
    REQUIRE(program.size() == verifiers.size());
    for (size_t r = 0; r < program.size(); ++r) {
        REQUIRE(program[r].size() == verifiers[r].size());
        for (size_t k = 0; k < program[r].size(); ++k) {
            CHECK(program[r][k].batch == verifiers[r][k].batch);
            CHECK(program[r][k].slot == verifiers[r][k].slot);
        }
    }
    auto refused = [&](const std::function<void(pp::CommProgram&)>& edit, const std::string& why) {
        pp::Schedule s = good;
        pp::CommProgram p = program;
        edit(p);
        s.comm_program = p;
        INFO(why);
        try {
            pp::check::build_batched_graph(s, "program");
            FAIL("accepted");
        } catch (const pp::check::Rejected& r) {
            CHECK_THAT(r.reason, Catch::Contains(why));
        }
    };
    // Rank 1's second slot is F1 of micro-batch 1 (1F1B, P = 3: 1F0 1F1 ...); its input arrives in batch 1.
    refused([](auto& p) { p[1][1].batch.clear(); }, "received in no batch");
    refused([](auto& p) { std::swap(p[0][1].batch, p[0][2].batch); }, "has not computed it");
    refused([](auto& p) { p[0].push_back(pp::CommStep{{}, -1}); p[0].push_back(pp::CommStep{{}, -1}); }, "trailing commit");
    // Rank 0 posts F0's activation after F1's, in one batch: each is sent after it is computed, but rank 1 receives
    // them the other way round.
    refused([](auto& p) {
        REQUIRE(p[0][1].batch.size() == 1);
        REQUIRE(p[0][2].batch.size() == 1);
        p[0][2].batch.push_back(p[0][1].batch[0]);
        p[0][1].batch.clear();
    }, "expects");
    refused([](auto& p) {
        for (auto& step : p[0])
            for (auto& op : step.batch) op.peer = 2;
    }, "not where it goes");
}

using pp::test::certificate_of;
using pp::test::corrupted;
using pp::test::require_rejected;

TEST_CASE("certificates: batched PROVEDs are CHECKED, and corrupted ones rejected", "[certificate][batched]") {
    // DualPipe at P = 8, F = I = W = 1, FB = 3/2: 5.5 under blocking batches (the rendezvous run below), 4.5 under
    // dataflow (proofs/catalogue/dualpipe-bubble-constant.md).
    const fs::path good = fresh_dir("batched-dualpipe");
    const auto proof = run_cli("prove dualpipe -P 8 --model batched --costs F=1,I=1,W=1,FB=1.5 --certificate " + good.string());
    INFO(proof.out << proof.err);
    REQUIRE(proof.exit_code == 0);
    const auto check = run_check(good.string());
    INFO(check.out << check.err);
    REQUIRE(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("ok     program"));
    CHECK_THAT(check.out, Catch::Contains("CHECKED: dualpipe at P = 8: bubble = 5.5 for every admissible M >= 16"));
    CHECK_THAT(check.out, Catch::Contains("under batched timing"));
    CHECK_THAT(check.out, Catch::Contains("assuming also that the communication program is a periodic word"));
    const pp::Simulation at_20 = pp::simulate_batched(pp::find_family("dualpipe")->generate({8, 20, std::nullopt}),
                                                      costs_of("F=1,I=1,W=1,FB=3/2"));
    CHECK(at_20.scale.to_units(at_20.bubble) == pp::Rational(11, 2));
    // The generic rule (1F1B), and the default symbolic region (DualPipeV).
    for (const std::string args : {"1f1b -P 4 --model batched --costs F=2,I=1,W=1", "dualpipev -P 4 --model batched"}) {
        const fs::path dir = fresh_dir("batched-other");
        REQUIRE(run_cli("prove " + args + " --certificate " + dir.string()).exit_code == 0);
        const auto other = run_check(dir.string());
        INFO(args << "\n" << other.out << other.err);
        CHECK(other.exit_code == 0);
    }

    int cases = 0;
    auto reject = [&](const std::string& name, const std::string& step, const std::function<void(nlohmann::json&)>& mutate) {
        require_rejected(corrupted(good, name, mutate), step);
        ++cases;
    };
    const auto written = certificate_of(good);
    REQUIRE(!written["program"]["ranks"][0]["block"].empty());
    // The dataflow bubble claimed for the batched schedule, and the batched one timed as dataflow.
    reject("batched-value", "bubble", [](auto& c) { c["bubble"]["value"] = "4.5"; });
    reject("as-dataflow", "bubble", [](auto& c) {
        c["claim"]["timing_model"] = "dataflow";
        c.erase("program");
    });
    reject("program-without-batched", "claim", [](auto& c) { c["claim"]["timing_model"] = "dataflow"; });
    reject("batched-without-program", "claim", [](auto& c) { c.erase("program"); });
    reject("unknown-model", "claim", [](auto& c) { c["claim"]["timing_model"] = "async"; });
    // The program word itself: a batch emptied, a message's micro-batch changed, batches swapped, one dropped.
    reject("batch-emptied", "program", [](auto& c) {
        for (auto& b : c["program"]["ranks"][3]["block"])
            if (!b.empty()) {
                b = nlohmann::json::array();
                break;
            }
    });
    reject("message-microbatch", "program", [](auto& c) {
        for (auto& b : c["program"]["ranks"][2]["prefix"])
            if (!b.empty()) {
                std::string op = b[0];
                const size_t digit = op.find_first_of("FB") + 1;
                op[digit] = op[digit] == '9' ? '8' : static_cast<char>(op[digit] + 1);
                b[0] = op;
                break;
            }
    });
    reject("batches-swapped", "program", [](auto& c) {
        auto& block = c["program"]["ranks"][1]["block"];
        REQUIRE(block.size() >= 2);
        std::swap(block[0], block[1]);
    });
    reject("batch-dropped", "program", [](auto& c) { c["program"]["ranks"][5]["block"].erase(0); });
    reject("program-delta", "program", [](auto& c) { c["program"]["delta"][0] = 2; });
    reject("program-rank-dropped", "program", [](auto& c) { c["program"]["ranks"].erase(7); });
    reject("message-unreadable", "program.ranks", [](auto& c) {
        for (auto& b : c["program"]["ranks"][0]["prefix"])
            if (!b.empty()) {
                b[0] = "send 0W0 to 1";
                break;
            }
    });
    CHECK(cases >= 12);
}
