// Readable symbolic results (proofs/readable.*, the --basis and --json of prove, formula and refute): the pieces
// and the published-formula comparison are checked against exact simulation of the generator's output and against
// the formulas written out by hand here, not against the prover's own numbers.
#include "cli_runner.hpp"

#include "proofs/readable.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cctype>
#include <random>

using namespace pp;
using pp::test::run_cli;

namespace {

FamilySpec spec_of(const std::string& family, int P) {
    std::string why;
    auto spec = family_spec(family, P, &why);
    INFO(why);
    REQUIRE(spec);
    return *spec;
}

// bubble = max over ranks of (makespan - busy), busy summed here from the costs.
Rational sim_bubble(const std::string& family, int P, int M, const CostPoint& p) {
    const Schedule s = find_family(family)->generate({P, M, std::nullopt});
    const Simulation sim = simulate(s, costs_at(p));
    Rational makespan{0};
    for (Ticks e : sim.end) makespan = std::max(makespan, sim.scale.to_units(e));
    Rational worst{0};
    for (const auto& rank : s.ranks) {
        Rational busy{0};
        for (const Slot& slot : rank) busy += slot_form(slot).eval(p);
        worst = std::max(worst, makespan - busy);
    }
    return worst;
}

CostRegion default_region() {
    CostRegion r = CostRegion::standard(false);
    r.finish();
    return r;
}

ProofResult proved(const FamilySpec& spec) {
    ProveOptions o;
    o.region = default_region();
    ProofResult r = prove(spec, o);
    REQUIRE(r.verdict == Verdict::Proved);
    REQUIRE(r.bubble_symbolic);
    return r;
}

}  // namespace

TEST_CASE("readable: published formulas are the papers' at this P", "[readable]") {
    const CostPoint p{Rational(2), Rational(3), Rational(1), Rational(4), Rational(5), Rational(0)};  // F I W B FB comm
    // DeepSeek's (PP/2-1)(F&B+B-3W): PP = P for DualPipe, 2P for DualPipeV.
    CHECK(published_bubble("dualpipe", 8, std::nullopt, false)->value.eval(p) == Rational(3 * (5 + 4 - 3)));
    CHECK(published_bubble("dualpipev", 4, std::nullopt, false)->value.eval(p) == Rational(3 * (5 + 4 - 3)));
    CHECK(published_bubble("1f1b", 4, std::nullopt, false)->value.eval(p) == Rational(3 * (2 + 4)));
    CHECK(published_bubble("zb-h1", 4, std::nullopt, false)->value.eval(p) == Rational(3 * (2 + 3 - 1)));
    CHECK(!published_bubble("chimera", 4, std::nullopt, false));
}

TEST_CASE("readable: DualPipe's README formula equals the bubble exactly on its condition, as simulation shows",
          "[readable]") {
    const FamilySpec spec = spec_of("dualpipe", 4);
    const ProofResult r = proved(spec);
    const CostRegion region = default_region();
    const ReadableBubble rb = readable_bubble("dualpipe", 4, std::nullopt, *r.bubble_symbolic, region);
    REQUIRE(rb.published);
    const PublishedMatch& m = *rb.published;
    CHECK_FALSE(m.equal_everywhere);
    CHECK(m.condition_applies);
    CHECK(m.equal_on_condition);
    // Off the condition: the point Z3 gave differs in simulation too. (It was found on the whole region.)
    REQUIRE(m.differs_at);
    const int M = 2 * r.constant_from_m + 2;
    CHECK(sim_bubble("dualpipe", 4, M, *m.differs_at) == m.bubble_there);
    CHECK(m.bubble_there != m.formula_there);
    // On the condition (I = F, W <= F, FB >= B): simulation equals the formula at random points.
    std::mt19937_64 rng(5);
    for (int k = 0; k < 6; ++k) {
        const Rational F(1 + static_cast<std::int64_t>(rng() % 9), 1 + static_cast<std::int64_t>(rng() % 3));
        const Rational W = F * Rational(1 + static_cast<std::int64_t>(rng() % 4), 4);
        const Rational B = F + W;
        const Rational FB = B + (F + B - B) * Rational(static_cast<std::int64_t>(rng() % 5), 4);  // B <= FB <= F + B
        const CostPoint p{F, F, W, B, FB, Rational(0)};
        CHECK(sim_bubble("dualpipe", 4, M, p) == Rational(1) * (FB + B - Rational(3) * W));
    }
    // Every piece's value is the bubble at the piece's own example point (simulated).
    for (const auto& piece : rb.pieces.pieces) CHECK(sim_bubble("dualpipe", 4, M, piece.example) == piece.value.eval(piece.example));
}

TEST_CASE("readable: 1F1B's (P-1)(F+B) equals the bubble on the whole region", "[readable]") {
    const ProofResult r = proved(spec_of("1f1b", 4));
    const auto m = match_published("1f1b", 4, std::nullopt, *r.bubble_symbolic, default_region());
    REQUIRE(m);
    CHECK(m->equal_everywhere);
    CHECK(format_published(*m, Basis::DeepSeek).find("equal to the bubble on the whole region") != std::string::npos);
}

TEST_CASE("readable: prove, formula and refute print pieces and the published formula, in either basis, and JSON",
          "[readable][cli]") {
    const auto paper = run_cli("prove dualpipe -P 4 --basis paper");
    CHECK(paper.exit_code == 0);
    CHECK_THAT(paper.out, Catch::Contains("bubble by region ("));
    CHECK_THAT(paper.out, Catch::Contains("DeepSeek's (PP/2-1)(F&B+B-3W), PP = P"));
    CHECK_THAT(paper.out, Catch::Contains("= the bubble on I = F, W <= F, FB >= B"));
    const auto torch = run_cli("prove dualpipe -P 4 --basis pytorch");
    CHECK(torch.exit_code == 0);
    // The PyTorch letters have no B: every line with the result or a piece is written in F, I, W, FB.
    const auto result_line = torch.out.substr(torch.out.find("result: "), torch.out.find('\n', torch.out.find("result: ")) - torch.out.find("result: "));
    auto has_letter = [](const std::string& text, char letter) {  // a standalone variable name, not FB's B
        for (size_t k = 0; k < text.size(); ++k)
            if (text[k] == letter && (k == 0 || !std::isalpha(static_cast<unsigned char>(text[k - 1]))) &&
                (k + 1 == text.size() || !std::isalpha(static_cast<unsigned char>(text[k + 1]))))
                return true;
        return false;
    };
    CHECK_FALSE(has_letter(result_line, 'B'));
    CHECK(has_letter(result_line, 'I'));
    const auto paper_line = paper.out.substr(paper.out.find("result: "), paper.out.find('\n', paper.out.find("result: ")) - paper.out.find("result: "));
    CHECK(has_letter(paper_line, 'B'));
    CHECK_FALSE(has_letter(paper_line, 'I'));
    CHECK(run_cli("prove dualpipe -P 4 --basis latin").exit_code == 2);

    const auto js = run_cli("formula dualpipe -P 4 --json --basis pytorch");
    REQUIRE(js.exit_code == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["basis"] == "pytorch");
    REQUIRE(j["bubble_readable"]["pieces"].size() >= 2);
    for (const auto& piece : j["bubble_readable"]["pieces"]) {
        REQUIRE(piece["where"].is_array());
        for (const auto& w : piece["where"]) {
            CHECK(w["relation"] == ">= 0");
            CHECK(w["coefficients"].is_object());
            CHECK(!w["coefficients"].contains("B"));  // pytorch basis: B = I + W written out
        }
    }
    CHECK(j["bubble_readable"]["published"]["equal_on_condition"] == true);

    const auto rf = run_cli("refute --claim 'bubble == (P/2-1)*(FB+B-3*W)' dualpipe -P 4 --json");
    CHECK(rf.exit_code == 1);
    const auto rj = nlohmann::json::parse(rf.out);
    CHECK(rj["bubble_readable"]["ranks"] == 4);
    CHECK(rj["bubble_readable"]["published"]["equal_on_region"] == false);
}
