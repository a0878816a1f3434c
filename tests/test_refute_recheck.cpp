// refute cites the `pipeproof prove` runs that close its search over every M, formula the one its formulas rest on.
// Each cited command must re-run the proof it names: the same verdict, at the grid point's costs as prove reads them
// (a micro-batch's for sequence segments, a decoder layer's under --layout) and over the region's assumptions
// restated in a stage's costs.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

using pp::test::run_cli;

namespace {

struct Cited {
    std::string command;  // without the leading "pipeproof "
    std::string verdict;  // PROVED, REFUTED or UNKNOWN, as the note says
};

std::vector<Cited> cited_proofs(const std::string& out) {
    static const std::regex proved(R"(\(pipeproof (prove [^`]*?)(?:, and likewise at the other points)?: PROVED\))");
    static const std::regex failed(R"(`pipeproof (prove [^`]*)` is (REFUTED|UNKNOWN))");
    std::vector<Cited> found;
    for (std::sregex_iterator it(out.begin(), out.end(), proved), end; it != end; ++it) found.push_back({(*it)[1], "PROVED"});
    for (std::sregex_iterator it(out.begin(), out.end(), failed), end; it != end; ++it) found.push_back({(*it)[1], (*it)[2]});
    return found;
}

struct Rerun {
    std::string command, out;
};

// Re-runs every cited command; returns them with their outputs in citation order.
std::vector<Rerun> rerun_each(const std::string& refute_args, size_t expected) {
    const auto r = run_cli("refute " + refute_args);
    INFO(r.out << r.err);
    const auto cited = cited_proofs(r.out);
    REQUIRE(cited.size() == expected);
    std::vector<Rerun> outputs;
    for (const Cited& c : cited) {
        const auto again = run_cli(c.command);
        INFO(c.command << "\n" << again.out << again.err);
        CHECK(again.exit_code == (c.verdict == "PROVED" ? 0 : c.verdict == "REFUTED" ? 1 : 3));
        CHECK_THAT(again.out, Catch::Contains("verdict: " + c.verdict));
        outputs.push_back({c.command, again.out});
    }
    return outputs;
}

}  // namespace

TEST_CASE("refute: a grid point's cited proof runs at that point's costs, a micro-batch's for segments", "[refute]") {
    // The grid is read per micro-batch and the prover runs per segment unit (1/2 of it): the command must name the
    // micro-batch's costs again. At F=1, B=2 the closed form (P - 1)(F + B)/k gives 3 * 3 / 2 = 4.5.
    const auto outs = rerun_each("seq1f1b -P 4 --segments 2 --claim 'bubble == 3*(F+B)/2' --costs 'F=1|2,I=1,W=1'", 1);
    CHECK_THAT(outs[0].command, Catch::Contains("--segments 2 --costs F=1,I=1,W=1,B=2,"));
    CHECK_THAT(outs[0].out, Catch::Contains("result: bubble = 4.5 for every admissible M"));
}

TEST_CASE("refute --layout: the cited proofs carry the layout and a decoder layer's costs", "[refute][layout]") {
    // Blocks E+t (stash 0 + 1) and t+t+L (1 + 1 + 2): 1F1B's rank 0 holds its two warm-up stashes (2), rank 1 one
    // stash of its block (4), by hand.
    const std::string layout = "--layout 'Et|ttL' --layer-costs 'L:F=1,I=1,W=0' --layer-sizes E=0,L=2";
    const auto peak = rerun_each("1f1b -P 2 " + layout + " --claim 'peak <= 4' --costs 'F=1,I=1,W=1'", 1);
    CHECK_THAT(peak[0].out, Catch::Contains("result: activation peak per rank = [2 4] for every M"));
    // Two layers per block at F = I = W = 1: 1F1B's (P - 1)(F + B) per block is 2 * 3 = 6 in layer costs.
    const auto bubble = rerun_each("1f1b -P 2 --layout 'tt|tt' --claim 'bubble == 2*(F+B)' --costs 'F=1,I=1,W=1|2'", 1);
    CHECK_THAT(bubble[0].out, Catch::Contains("result: bubble = 6 for every admissible M"));
}

TEST_CASE("refute over the region: the cited proof restates the assumptions in a stage's costs", "[refute]") {
    // In rank units a ZBV stage runs at half of the rank's costs: F_rank >= 2 is 2 F_stage >= 2 for prove.
    const auto restated = rerun_each("zbv -P 4 --units rank --claim 'bubble >= 0' --assume 'F >= 2'", 1);
    CHECK_THAT(restated[0].command, Catch::EndsWith("--assume '2*F >= 2' --property bubble-constant"));
    // A proof that fails is cited with its verdict, and the command gives that verdict again.
    rerun_each("zbv -P 4 --units rank --claim 'bubble >= 0' --assume 'F >= 2*comm' --symbolic-comm", 1);
}

TEST_CASE("formula: the cited periodicity proof takes the same region", "[formula]") {
    const auto f = run_cli("formula zb-h1 -P 4 --assume 'W <= F'");
    INFO(f.out);
    const std::regex cited(R"(periodicity: PROVED \(pipeproof (prove [^)]*)\))");
    std::smatch m;
    REQUIRE(std::regex_search(f.out, m, cited));
    CHECK_THAT(m[1].str(), Catch::Contains("--assume 'W <= F'"));
    const auto again = run_cli(m[1].str());
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("cost assumption: W <= F"));
}

TEST_CASE("formula at chunk costs cites the prove run at that point, without the region's assumptions", "[formula]") {
    // prove refuses --assume at exact costs: the cited run names the chunk costs only, and reproduces the proof.
    const auto f = run_cli("formula dualpipev -P 4 --chunk-costs 'layers=2,attn_f=1,dispatch_f=1,mlp_f=2,combine_f=1,"
                           "combine_b=1,mlp_i=2,mlp_w=1,dispatch_b=1,attn_i=1,attn_w=1' --assume 'W <= F'");
    INFO(f.out << f.err);
    const std::regex cited(R"(periodicity: PROVED \(pipeproof (prove [^)]*)\))");
    std::smatch m;
    REQUIRE(std::regex_search(f.out, m, cited));
    CHECK(m[1].str().find("--assume") == std::string::npos);
    const auto again = run_cli(m[1].str());
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("verdict: PROVED"));
}
