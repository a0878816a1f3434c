// The HTML report and the published formulas it prints. The page must be self-contained (no scripts,
// no external resources), carry one well-formed timeline per schedule, the compare table and, per family,
// the formula next to the measured value.
#include "cli_runner.hpp"
#include "render/published_formulas.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"
#include "test_render_xml.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

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
    // Under these costs (I = F, W <= F, F&B >= B, no comm) every stated formula agrees with the simulator.
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

// Issue 14 item 12: the report's condition for DualPipe's README formula must be the region the catalogue
// proves, and that region must actually be where the formula equals the simulated bubble.
TEST_CASE("formulas: DualPipe README condition is the catalogue's proved region", "[render]") {
    std::ifstream in(std::string(PP_SOURCE_DIR) + "/proofs/catalogue/dualpipe-readme-formula.md");
    const std::string catalogue((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!catalogue.empty());
    std::string statement = catalogue.substr(catalogue.find("1. **Holds** on the region"));
    statement = statement.substr(0, statement.find('\n'));
    // The catalogue writes "I = F (i.e. B − W = F), W ≤ F, FB ≥ B"; the report's text is the same without the gloss.
    CHECK(statement.find("**I = F (i.e. B − W = F), W ≤ F, FB ≥ B**") != std::string::npos);
    CHECK(std::string(kDualPipeReadmeRegion) == "I = F, W ≤ F, FB ≥ B");
    const auto formula = published_bubble_formula("dualpipe", 8, 16, std::nullopt, parse_costs("F=1,I=1,W=1,FB=3"));
    REQUIRE(formula);
    CHECK(formula->condition.find(kDualPipeReadmeRegion) != std::string::npos);
    CHECK(formula->condition.find("2F") == std::string::npos);
    CHECK(formula->source.find("shared/") == std::string::npos);

    const auto bubble = [](const char* costs) {
        const Schedule s = find_family("dualpipe")->generate({8, 16, std::nullopt});
        const Simulation sim = simulate(s, parse_costs(costs));
        return sim.scale.to_units(sim.bubble);
    };
    const auto predicted = [](const char* costs) {
        return *published_bubble_formula("dualpipe", 8, 16, std::nullopt, parse_costs(costs))->value;
    };
    // Inside the region (I = F, W <= F, FB >= B): equal. Outside (the catalogue's counterexamples): not.
    for (const char* inside : {"F=1,I=1,W=1,FB=2", "F=2,I=2,W=1,FB=3.5", "F=3,I=3,W=2,FB=6"})
        CHECK(bubble(inside) == predicted(inside));
    for (const char* outside : {"F=1,I=1.5,W=0.5,FB=2", "F=1,I=1,W=1,FB=1.5"})
        CHECK(bubble(outside) != predicted(outside));
}
