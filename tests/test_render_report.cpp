// The HTML report and the published formulas it prints. The page must be self-contained (no scripts,
// no external resources), carry one well-formed timeline per schedule, the compare table and, per family,
// the formula next to the measured value.
#include "cli_runner.hpp"
#include "render/published_formulas.hpp"
#include "test_render_xml.hpp"

#include <catch2/catch.hpp>

using namespace pp;
using pp::test::run_cli;
using pp::test::scratch_dir;
using pp::test::slurp;

namespace {

// The <svg>...</svg> elements of a page, in order.
std::vector<std::string> svg_elements(const std::string& html) {
    std::vector<std::string> out;
    for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
        const size_t end = html.find("</svg>", at);
        REQUIRE(end != std::string::npos);
        out.push_back(html.substr(at, end + 6 - at));
    }
    return out;
}

}  // namespace

TEST_CASE("report: one self-contained page with table, formulas and a picture per schedule", "[render]") {
    const auto path = (scratch_dir() / "report.html").string();
    const auto result = run_cli("report 1f1b zb-h1 dualpipe dualpipev chimera -P 4 -M 8 --costs F=1,I=1,W=1,FB=3 -o " + path);
    REQUIRE(result.exit_code == 0);
    const std::string html = slurp(path);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    // Self-contained: nothing is fetched (the SVG namespace URI is a name, not a resource).
    for (const char* banned : {"<script", "<link", "src=", "@import", "url(http", "href=\"http"}) CHECK(html.find(banned) == std::string::npos);
    const auto svgs = svg_elements(html);
    REQUIRE(svgs.size() == 5);
    for (const auto& svg : svgs) CHECK_NOTHROW(pp::test::parse_xml(svg));
    CHECK(html.find("<table class=\"compare\">") != std::string::npos);
    CHECK(html.find("(PP/2-1)(F&amp;B+B-3W), PP = P") != std::string::npos);
    CHECK(html.find("(P-1)(F+B)") != std::string::npos);
    CHECK(html.find("no bubble formula stated") != std::string::npos);  // chimera
    // Under these costs (I = F, F&B >= 2F, no comm) every stated formula agrees with the simulator.
    CHECK(html.find("differs") == std::string::npos);
    CHECK(html.find("agrees") != std::string::npos);
}

TEST_CASE("report: bad usage is exit 2", "[render]") {
    CHECK(run_cli("report nosuchfamily -P 4 -M 8 -o /dev/null").exit_code == 2);
    CHECK(run_cli("report 1f1b -P 4 -M 8 --tokens-per-microbatch 4096 -o /dev/null").exit_code == 2);
}

TEST_CASE("formulas: evaluated exactly inside their stated conditions only", "[render]") {
    const Costs costs = parse_costs("F=1,I=1,W=1,FB=3");
    // 1F1B: (P-1)(F+B) = 3 * (1 + 2).
    CHECK(published_bubble_formula("1f1b", 4, 8, std::nullopt, costs)->value == Rational(9));
    // DualPipe README: (P/2-1)(F&B+B-3W) = 1 * (3 + 2 - 3) at P=4; DualPipeV uses PP = 2P: 3 * 2.
    CHECK(published_bubble_formula("dualpipe", 4, 8, std::nullopt, costs)->value == Rational(2));
    CHECK(published_bubble_formula("dualpipev", 4, 8, std::nullopt, costs)->value == Rational(6));
    // ZB-H1: (P-1)(F+I-W) = 3, measured as span minus work.
    const auto zb = published_bubble_formula("zb-h1", 4, 8, std::nullopt, costs);
    CHECK(zb->value == Rational(3));
    CHECK(zb->measure == BubbleMeasure::ZbSpanMinusWork);
    // ZB-H2 includes c: (P-1)(F+I+2c-2W) with c = 1/2 -> 3 * 1.
    CHECK(published_bubble_formula("zb-h2", 4, 8, std::nullopt, parse_costs("F=1,I=1,W=1,comm=0.5"))->value == Rational(3));
    // Outside the conditions: comm, per-block costs, divisibility; and a family without a formula.
    CHECK(!published_bubble_formula("1f1b", 4, 8, std::nullopt, parse_costs("F=1,comm=1"))->value);
    Costs per_block = costs;
    per_block.per_block[0] = costs.base;
    CHECK(!published_bubble_formula("dualpipe", 4, 8, std::nullopt, per_block)->value);
    CHECK(!published_bubble_formula("interleaved-1f1b", 4, 6, 2, costs)->value);
    CHECK(!published_bubble_formula("zb-h2", 4, 8, std::nullopt, parse_costs("F=1,I=1,W=2"))->value);
    CHECK(!published_bubble_formula("chimera", 4, 8, std::nullopt, costs));
}
