// Issue 11: derived costs feed every command. formula and refute take exact chunk costs whose full backward
// is cheaper than I + W (a lone B hides part of its all-to-all under its own weight gradient); search writes
// the chunk costs it searched under and prints the exposed all-to-all; the report's table has the exposed
// all-to-all column. Case A's slot costs are those timed by hand in test_chunk_timing.cpp:
// F = 7, I = 10 (combine_b [0,1], mlp_i [1,4], dispatch_b [4,8], attn_i [8,10]), W = 3, B = 11, F&B = 13.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

using pp::test::run_cli;

namespace {

const std::string kCaseA = "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1";

nlohmann::json json_of(const pp::test::CliResult& r) {
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return nlohmann::json::parse(r.out);
}

// Evaluates a printed linear form such as "F + I - W - 2*B + FB" (integer coefficients) at a cost point.
long evaluate_form(const std::string& form, const std::map<std::string, long>& at) {
    std::istringstream in(form);
    std::string token;
    long total = 0, sign = 1;
    while (in >> token) {
        if (token == "+") { sign = 1; continue; }
        if (token == "-") { sign = -1; continue; }
        long k = 1;
        if (token[0] == '-') sign = -sign, token = token.substr(1);
        if (const size_t star = token.find('*'); star != std::string::npos) k = std::stol(token.substr(0, star)), token = token.substr(star + 1);
        const auto it = at.find(token);
        total += sign * k * (it == at.end() ? std::stol(token) : it->second);
    }
    return total;
}

}  // namespace

TEST_CASE("chunk commands: formula and refute take exact chunk costs whose B is less than I + W", "[chunk][formula][refute][cli]") {
    const std::map<std::string, long> point{{"F", 7}, {"I", 10}, {"W", 3}, {"B", 11}, {"FB", 13}, {"comm", 0}};
    const auto f = run_cli("formula dualpipe -P 4 --chunk-costs " + kCaseA);
    INFO(f.out << f.err);
    REQUIRE(f.exit_code == 0);
    // B = 11 < I + W = 13: the formula may not be written with I = B - W.
    CHECK_THAT(f.out, !Catch::Contains("letters: DeepSeek's"));
    CHECK_THAT(f.out, Catch::Contains("letters: PyTorch's"));
    const std::string head = "bubble (largest idle), for every M >= 8:\n    ";
    const size_t at = f.out.find(head);
    REQUIRE(at != std::string::npos);
    const std::string rest = f.out.substr(at + head.size());
    const std::string form = rest.substr(0, rest.find("   (everywhere)"));
    // The formula at the derived point = the simulator's bubble with the same chunk costs, at two M.
    for (const int m : {8, 12}) {
        const auto sim = json_of(run_cli("simulate dualpipe -P 4 -M " + std::to_string(m) + " --chunk-costs " + kCaseA + " --json"));
        CHECK(evaluate_form(form, point) == sim["bubble"].get<long>());
    }
    // refute evaluates the same point (was: "no grid point lies in the cost region").
    const auto r = run_cli("refute --claim 'bubble <= 0' dualpipe -P 4 -M 8 --chunk-costs " + kCaseA + " --json");
    CHECK(r.exit_code == 1);
    const auto j = json_of(r);
    CHECK(j["counterexample"]["costs"]["B"] == 11);
    CHECK(j["counterexample"]["values"]["bubble"] == "16");  // = simulate dualpipe -P 4 -M 8 (checked above at M = 8)
    // Equalities that leave only zero costs: a clear error, not a crash.
    const auto empty = run_cli("formula dualpipe -P 4 --assume 'F == 2*I && F == 3*I && W == I && FB == I'");
    CHECK(empty.exit_code == 2);
    CHECK_THAT(empty.err, Catch::Contains("empty"));
}

TEST_CASE("chunk commands: search writes the chunk costs it searched under and prints the exposed all-to-all", "[chunk][search][cli]") {
    const std::string out = (pp::test::scratch_dir() / "chunk_search.txt").string();
    const auto s = run_cli("search -P 2 -M 2 --chunk-costs " + kCaseA + " --time-limit 30 --json -o " + out);
    INFO(s.err);
    REQUIRE(s.exit_code == 0);
    const auto j = json_of(s);
    REQUIRE(j["exposed_comm_per_rank"].size() == 2);
    const std::string file = pp::test::slurp(out);
    CHECK_THAT(file, Catch::Contains("\nchunks layers=1,") && !Catch::Contains("\ncosts "));
    // Re-timing the written file re-derives the same costs: the same makespan and exposure.
    const auto sim = json_of(run_cli("simulate " + out + " --json"));
    CHECK(sim["makespan"] == j["makespan"]);
    for (int r = 0; r < 2; ++r) CHECK(sim["per_rank"][r]["exposed_comm"] == j["exposed_comm_per_rank"][r]);
    const auto text = run_cli("search -P 2 -M 2 --chunk-costs " + kCaseA + " --time-limit 30");
    CHECK_THAT(text.out, Catch::Contains("EP all-to-all per rank"));
}

TEST_CASE("chunk commands: the report's table has the exposed all-to-all per rank", "[chunk][report][cli]") {
    const std::string out = (pp::test::scratch_dir() / "chunk_report.html").string();
    REQUIRE(run_cli("report 1f1b -P 4 -M 8 --chunk-costs " + kCaseA + " -o " + out).exit_code == 0);
    // 1F1B runs 8 F (exposed 2 each) and 8 B (exposed 3) per rank: 40 of 56 exposed, 2/7 hidden.
    const std::string html = pp::test::slurp(out);
    CHECK_THAT(html, Catch::Contains("exposed all-to-all<br>per rank") && Catch::Contains("<td>40 40 40 40 (28.6%)</td>"));
}

TEST_CASE("chunk commands: slot timelines use a round scale", "[chunk][cli]") {
    // Pair of case A: 13 long, shortest component 1; 0.1 per column fits 160 columns, a mark every 1.
    const auto r = run_cli("chunk --chunk-costs " + kCaseA);
    CHECK_THAT(r.out, Catch::Contains("|0        |1        |2        |3"));
}

TEST_CASE("chunk commands: show --json and plan --json carry the exposed all-to-all", "[chunk][cli][json]") {
    const std::string one_rank = pp::test::write_temp("chunk_show_one_rank.txt", "ranks 1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0) 0B1\n");
    // F0 exposes 2, the pair 0, B1 3 (hand timelines): 5 of 2 + 7 + 5 = 14.
    const auto show = json_of(run_cli("show " + one_rank + " --chunk-costs " + kCaseA + " --json"));
    CHECK(show["per_rank"][0]["exposed_comm"] == 5);
    CHECK(show["per_rank"][0]["network_comm"] == 14);
    const auto plan = json_of(run_cli("plan --preset deepseek-v3 --gpus 2048 --json"));
    REQUIRE(plan.contains("ep_all_to_all"));
    bool dualpipe = false;
    for (const auto& row : plan["ep_all_to_all"]["rows"])
        if (row["family"] == "dualpipe" && !row.contains("error")) {
            dualpipe = true;
            CHECK(row.contains("exposed_comm_worst_rank_us"));
        }
    CHECK(dualpipe);
}
