// Group-interleaved 1F1B (PipeOffload's compute order): every rank's order against the orders the reference's own
// scheduler produced (tests/reference/pipeoffload_orders.txt, made by scripts/reference-pipeoffload-orders.py; the
// offload pass's transfer and barrier ops are set aside, it never reorders compute), the reference's device peak
// before offload against our memory count, every instance P <= 8, M <= 4P+1 verified clean, and the refusals.
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"
#include "solver/search_generators.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace pp;
using pp::test::run_cli;

namespace {

struct ReferenceInstance {
    int P = 0, V = 0, M = 0, G = 0, K = 0;
    bool rejected = false;
    std::vector<int> peak_before;
    std::vector<std::vector<std::string>> ranks;  // compute ops as "F3.1" (micro-batch 3, chunk 1)
};

std::vector<ReferenceInstance> read_reference() {
    std::ifstream in(std::filesystem::path(PP_SOURCE_DIR) / "tests/reference/pipeoffload_orders.txt");
    REQUIRE(in);
    std::vector<ReferenceInstance> all;
    const std::regex header(R"(instance P=(\d+) V=(\d+) M=(\d+) G=(\d+) K=(\d+) .*)");
    const std::regex compute(R"([FIW]\d+\.\d+)");
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, header)) {
            all.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5])});
        } else if (line.rfind("rejected:", 0) == 0) {
            all.back().rejected = true;
        } else if (line.rfind("memory: before=[", 0) == 0) {
            std::string list = line.substr(16, line.find(']') - 16);
            std::replace(list.begin(), list.end(), ',', ' ');
            std::istringstream numbers(list);
            for (int x; numbers >> x;) all.back().peak_before.push_back(x);
        } else if (line.rfind("rank ", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            all.back().ranks.emplace_back();
            for (std::string w; words >> w;)
                if (std::regex_match(w, compute)) all.back().ranks.back().push_back(w);
        }
    }
    return all;
}

// Our op as the reference writes it: letter, micro-batch, '.', chunk (stage = chunk * P + rank).
std::string reference_name(const Op& op, int P) {
    return std::string(1, op.kind == OpKind::F ? 'F' : op.kind == OpKind::I ? 'I' : 'W') + std::to_string(op.microbatch) + "." +
           std::to_string(op.stage / P);
}

Schedule generate(int P, int M, int V, int G) {
    GenerateParams params{P, M, V};
    params.group_size = G;
    return find_family("group-interleaved")->generate(params);
}

}  // namespace

TEST_CASE("group-interleaved: every rank's compute order is the reference's, and so is its device peak", "[group-interleaved]") {
    const auto reference = read_reference();
    int compared = 0, peaks = 0, on_program = 0;
    for (const ReferenceInstance& ref : reference) {
        if (ref.rejected) continue;  // refused by the offload pass: no order written
        const Schedule schedule = generate(ref.P, ref.M, ref.V, ref.G);
        GenerateParams params{ref.P, ref.M, ref.V};
        params.group_size = ref.G;
        const FamilyStepProgram program = find_family("group-interleaved")->step_program(params);
        if (ref.M % ref.G == 0 && ref.M >= program.m_origin) ++on_program;  // the generator ran the program
        INFO("P=" << ref.P << " V=" << ref.V << " M=" << ref.M << " G=" << ref.G << " K=" << ref.K);
        REQUIRE(static_cast<int>(ref.ranks.size()) == ref.P);
        for (int r = 0; r < ref.P; ++r) {
            std::vector<std::string> ours;
            for (const Slot& slot : schedule.ranks[r])
                for (const Op& op : slot) ours.push_back(reference_name(op, ref.P));
            INFO("rank " << r);
            CHECK(ours == ref.ranks[r]);
        }
        ++compared;
        if (ref.K == 0) {  // without offload the reference's peak is the stash count, F to W, in chunk stashes
            const VerifyReport report = verify(schedule);
            REQUIRE(report.ok());
            for (int r = 0; r < ref.P; ++r) CHECK(report.peak_activations[r] == Rational(ref.peak_before[r]));
            ++peaks;
        }
    }
    CHECK(compared >= 150);
    CHECK(peaks >= 70);
    CHECK(on_program >= 100);
}

TEST_CASE("group-interleaved: on whole groups the generator is a step program, so prove answers for every M",
          "[group-interleaved][prove]") {
    for (int P = 1; P <= 8; ++P)
        for (int V = 1; V <= 3; ++V)
            for (int G = 1; G <= P; ++G) {
                GenerateParams params{P, G, V};
                params.group_size = G;
                const FamilyStepProgram program = find_family("group-interleaved")->step_program(params);
                INFO("P=" << P << " V=" << V << " G=" << G);
                CHECK(step_program_lemma2_failure(program).empty());
                CHECK(program.m_step == G);
            }
    // At equal costs (the order's own grid) the bubble is constant for every M; the proof's value, its certificate
    // and the simulator agree, on instances far past the proof's window.
    const auto dir = pp::test::fresh_dir("group-interleaved-proof");
    const auto proved = run_cli("prove group-interleaved -P 4 --costs F=1,I=1,W=1 --json --certificate " + dir.string());
    REQUIRE(proved.exit_code == 0);
    const auto p = nlohmann::json::parse(proved.out);
    CHECK(p.at("status") == "proved");
    CHECK(pp::test::run_check(dir.string()).exit_code == 0);
    const auto peaks = nlohmann::json::parse(run_cli("prove group-interleaved -P 4 --property memory-bound --json").out);
    REQUIRE(peaks.at("status") == "proved");
    auto simulated = [](int M, const std::string& costs) {
        return nlohmann::json::parse(run_cli("simulate group-interleaved -P 4 -M " + std::to_string(M) + " --costs " + costs +
                                             " --json")
                                         .out);
    };
    for (const int M : {2, 4, 6, 10, 16, 30, 64}) {
        INFO("M = " << M);
        const auto s = simulated(M, "F=1,I=1,W=1");
        if (M >= p.at("constant_from_microbatches").get<int>()) CHECK(s.at("bubble") == p.at("bubble"));
        if (M >= peaks.at("peaks_from_microbatches").get<int>())
            for (int r = 0; r < 4; ++r) CHECK(s.at("per_rank").at(r).at("peak_activations") == peaks.at("peaks").at(r));
    }
    // The program is built only where it is about an instance's size: a one-micro-batch instance at a large P and G
    // is made from the slot formulas; a proof whose program would pass the size limit says so (UNKNOWN), not more.
    CHECK(run_cli("generate group-interleaved -P 1000 --group-size 1000 -V 10 -M 1").exit_code == 0);
    const auto too_large = run_cli("prove group-interleaved -P 2048 --property deadlock-free");
    CHECK(too_large.exit_code == 3);
    CHECK_THAT(too_large.out, Catch::Contains("group-interleaved's step program at P = 2048, G = 1024 need at least"));
    // A forward twice as long as the grid assumes: the bubble grows, by the slope the proof names (5 per group of 2).
    const auto refuted = run_cli("prove group-interleaved -P 4 --costs F=2,I=1,W=1,comm=1");
    CHECK(refuted.exit_code == 1);
    CHECK_THAT(refuted.out, Catch::Contains("bubble grows by 5 per block for M >= 12"));
    for (const int M : {12, 14, 20, 40})
        CHECK(simulated(M + 2, "F=2,I=1,W=1,comm=1").at("bubble").get<double>() -
                  simulated(M, "F=2,I=1,W=1,comm=1").at("bubble").get<double>() ==
              5);
}

TEST_CASE("group-interleaved: every instance P <= 8, M <= 4P+1, V <= 3, 1 <= G <= P verifies clean", "[group-interleaved]") {
    for (int P = 1; P <= 8; ++P)
        for (int V = 1; V <= 3; ++V)
            for (int G = 1; G <= P; ++G)
                for (int M = 1; M <= 4 * P + 1; ++M) {
                    const VerifyReport report = verify(generate(P, M, V, G));
                    INFO("P=" << P << " V=" << V << " G=" << G << " M=" << M);
                    REQUIRE(report.ok());
                }
}

TEST_CASE("group-interleaved: G is at most P, its default ceil(P/2) is noted, and list states it", "[group-interleaved][cli]") {
    auto defaulted = run_cli("generate group-interleaved -P 5 -M 8 -V 2");
    CHECK(defaulted.exit_code == 0);
    CHECK(defaulted.err.find("G = 3 (its default") != std::string::npos);
    CHECK(defaulted.out == run_cli("generate group-interleaved -P 5 -M 8 -V 2 --group-size 3").out);
    CHECK(run_cli("generate group-interleaved -P 4 -M 8 --group-size 5").exit_code == 2);
    CHECK(run_cli("generate group-interleaved -P 4 -M 8 --group-size 0").exit_code == 2);
    CHECK(run_cli("verify group-interleaved -P 4 -M 8 -V 2 --group-size 2").exit_code == 0);
    CHECK(run_cli("list").out.find("group-interleaved") != std::string::npos);
    // prove, formula and refute say which G they ran at; refute over several P needs it given (the default moves).
    for (const std::string command : {"prove group-interleaved -P 4 -V 2", "formula group-interleaved -P 4 -V 2",
                                      "refute --claim 'bubble >= 0' group-interleaved -P 4 -V 2 -M 1..5"}) {
        auto r = run_cli(command + (command.rfind("formula", 0) == 0 ? "" : " --costs F=1,I=1,W=1"));
        INFO(command << "\n" << r.err);
        CHECK(r.err.find("G = 2 (its default") != std::string::npos);
        CHECK(r.out.find("G=2") != std::string::npos);
    }
    CHECK(run_cli("refute --claim 'bubble >= 0' group-interleaved -P 3..4 -V 2 -M 1..5 --costs F=1,I=1,W=1").exit_code == 2);
    // report takes G as compare does, and refuses it when no family in the report takes one.
    const std::string page = (pp::test::scratch_dir() / "group-report.html").string();
    CHECK(run_cli("report group-interleaved 1f1b -P 4 -M 8 --group-size 4 -o " + page).exit_code == 0);
    CHECK(pp::test::slurp(page).find("group-interleaved(P=4,V=2,M=8,G=4)") != std::string::npos);
    CHECK(run_cli("report 1f1b -P 4 -M 8 --group-size 4 -o " + page).exit_code == 2);
}

TEST_CASE("group-interleaved: a search's warm start names the G it ran at", "[issue43][search]") {
    // On the interleaved:2 placement the generators run at their defaults: group-interleaved at G = ceil(P/2).
    bool seen = false;
    for (const WarmStart& w : generator_warm_starts(placement_from_name("interleaved:2", 4, 8))) {
        CHECK(w.origin != "generator:group-interleaved");  // never without its G
        if (w.origin == "generator:group-interleaved(G=2)") {
            seen = true;
            CHECK_THAT(w.schedule.source, Catch::Contains("G=2"));
        }
    }
    CHECK(seen);
}
