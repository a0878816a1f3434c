// Issue 14 item 6: `--basis paper` means the letters of the family's own paper. The notations clash on B:
// DeepSeek's B is the full backward (PyTorch's I + W), the Zero Bubble paper's B is the input-gradient
// backward (PyTorch's I). So for zb-h1 the paper's ZB-H1 bubble (p-1)(T_F+T_B-T_W) (Qi et al., ICLR 2024, §3;
// the authors' simulator asserts span - m(F+B+W) = (p-1)(F+B-W), reference notes) is read with B = I, and the
// same bubble is (P-1)(F+B-2W) in DeepSeek's letters (DeepSeek-V3's ZB1P entry) and (P-1)(F+I-W) in PyTorch's.
#include "cli_runner.hpp"
#include "proofs/claim.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using pp::test::run_cli;

TEST_CASE("basis: claims are read in the letters asked for -- B = I in the Zero Bubble paper's", "[refute][basis]") {
    CHECK(pp::in_parser_letters("bubble == (P-1)(F+B-W) && F&B >= 2B", pp::Basis::ZeroBubble) ==
          "bubble == (P-1)(F+I-W) && F&B >= 2I");
    CHECK(pp::in_parser_letters("(P-1)*(F+B-2*W)", pp::Basis::DeepSeek) == "(P-1)*(F+B-2*W)");
    CHECK(pp::in_parser_letters("bubble(M+2) > bubble(M)", pp::Basis::ZeroBubble) == "bubble(M+2) > bubble(M)");
    CHECK_THROWS_AS(pp::in_parser_letters("F+B-I", pp::Basis::ZeroBubble), pp::ClaimError);

    // F = 2, input gradient 2, W = 1 (so F >= W and I >= W, where the paper's form is the bubble): the three
    // spellings of one formula hold; the grid is written in the same letters as the claim.
    const auto zb = run_cli("refute --claim 'bubble == (P-1)*(F+B-W)' zb-h1 -P 2..4 --costs F=2,B=2,W=1 --basis paper");
    CHECK(zb.exit_code == 0);
    CHECK_THAT(zb.out, Catch::Contains("the Zero Bubble paper's letters"));
    CHECK_THAT(zb.out, Catch::Contains("read as: bubble == (P-1)*(F+I-W)"));
    const auto explicit_zb = run_cli("refute --claim 'bubble == (P-1)*(F+B-W)' zb-h1 -P 2..4 --costs F=2,B=2,W=1 --basis zero-bubble");
    CHECK(explicit_zb.exit_code == 0);
    const auto torch = run_cli("refute --claim 'bubble == (P-1)*(F+I-W)' zb-h1 -P 2..4 --costs F=2,I=2,W=1 --basis pytorch");
    CHECK(torch.exit_code == 0);
    const auto deepseek = run_cli("refute --claim 'bubble == (P-1)*(F+B-2*W)' zb-h1 -P 2..4 --costs F=2,I=2,W=1 --basis deepseek");
    CHECK(deepseek.exit_code == 0);
    // The ZB spelling read in PyTorch's letters means B = I + W = 3: (P-1)(F+B-W) = 4(P-1), but the bubble is
    // (P-1) max(F, I, F+I-W) = 3(P-1) -- refuted. The letters decide the verdict.
    const auto misread = run_cli("refute --claim 'bubble == (P-1)*(F+B-W)' zb-h1 -P 2..4 --costs F=2,I=2,W=1 --basis pytorch");
    CHECK(misread.exit_code == 1);
    // Symbolic costs, every M: the ZB spelling under the paper's condition F >= W, B >= W (in its letters).
    const auto symbolic = run_cli("refute --claim 'bubble == (P-1)*(F+B-W)' zb-h1 -P 2..3 --assume 'F >= W && B >= W' --basis paper");
    // The same text in the default letters (PyTorch's: B = I + W) is another claim, refuted at F = 2, I = 1, W = 1.
    CHECK(run_cli("refute --claim 'bubble == (P-1)*(F+B-W)' zb-h1 -P 2..4 --costs F=2,B=2,W=1").exit_code == 1);
    CHECK(symbolic.exit_code == 0);
    const auto symbolic_torch =
        run_cli("refute --claim 'bubble == (P-1)*(F+I-W)' zb-h1 -P 2..3 --assume 'F >= W && I >= W' --basis pytorch");
    CHECK(symbolic_torch.exit_code == 0);
    // DualPipe's paper is DeepSeek's: B stays the full backward under --basis paper.
    CHECK(run_cli("refute --claim 'bubble == (PP/2-1)(F&B+B-3W)' dualpipe -P 4 --costs F=1,B=2,W=1,FB=2.5 --basis paper").exit_code == 0);
}

TEST_CASE("basis: B and I together in the Zero Bubble paper's letters, or an unknown basis, are usage errors",
          "[refute][basis]") {
    const auto both = run_cli("refute --claim 'bubble <= (P-1)*(F+B+I)' zb-h1 -P 2..3 --basis paper");
    CHECK(both.exit_code == 2);
    CHECK_THAT(both.err, Catch::Contains("input-gradient"));
    const auto unknown = run_cli("formula zb-h1 -P 4 --basis latin");
    CHECK(unknown.exit_code == 2);
    for (const char* name : {"paper", "deepseek", "zero-bubble", "pytorch"}) CHECK_THAT(unknown.err, Catch::Contains(name));
}

TEST_CASE("basis: prove and formula for zb-h1 print the Zero Bubble paper's letters under --basis paper",
          "[prove][basis]") {
    // The ZB paper's ZB-H1 formula at p = 4 is 3 T_F + 3 T_B - 3 T_W; in its letters that is 3*F + 3*B - 3*W.
    const auto prove = run_cli("prove zb-h1 -P 4 --basis paper");
    CHECK(prove.exit_code == 0);
    CHECK_THAT(prove.out, Catch::Contains("letters: the Zero Bubble paper's letters (B = input-gradient backward"));
    CHECK_THAT(prove.out, Catch::Contains("(P-1)(F+I-W) (Qi et al., ICLR 2024, §3) = 3*F + 3*B - 3*W:"));
    CHECK_THAT(prove.out, Catch::Contains("= the bubble on F >= W, B >= W"));
    // The same proof in DeepSeek's letters: B is the full backward there.
    const auto deepseek = run_cli("prove zb-h1 -P 4 --basis deepseek");
    CHECK_THAT(deepseek.out, Catch::Contains("= 3*F - 6*W + 3*B:"));

    // PyTorch's letters are the default (issue 31): I is the input gradient, named so in the JSON.
    const auto by_default = nlohmann::json::parse(run_cli("formula zb-h1 -P 4 --json").out);
    CHECK(by_default["basis"] == "pytorch");
    CHECK(by_default["bubble_readable"]["published"]["value"]["coefficients"] == nlohmann::json({{"F", 3}, {"I", 3}, {"W", -3}}));
    CHECK(run_cli("refute --claim 'bubble <= (P-1)*(F+B+I)' zb-h1 -P 2..3").exit_code != 2);  // B = I + W here

    const auto formula = run_cli("formula zb-h1 -P 4 --json --basis paper");
    REQUIRE(formula.exit_code == 0);
    const auto j = nlohmann::json::parse(formula.out);
    CHECK(j["basis"] == "zero-bubble");
    const auto& published = j["bubble_readable"]["published"]["value"]["coefficients"];
    CHECK(published == nlohmann::json({{"F", 3}, {"B", 3}, {"W", -3}}));
    for (const auto& piece : j["bubble_readable"]["pieces"]) {
        CHECK(!piece["value"]["coefficients"].contains("I"));    // no PyTorch letter
        CHECK(!piece["example"].contains("I"));
    }
    // Below M0 too: ZB-V's bubble at M = 1 is 6F - 6W + 6B in DeepSeek's letters (catalogue, zbv-bubble.md before
    // issue 14) = 6F + 6I, which the Zero Bubble paper's letters write 6*F + 6*B.
    const auto zbv = run_cli("prove zbv -P 4 --json --basis paper");
    REQUIRE(zbv.exit_code == 0);
    const auto z = nlohmann::json::parse(zbv.out);
    CHECK(z["basis"] == "zero-bubble");
    CHECK(z["before_microbatches_from"][0]["microbatches"] == 1);
    CHECK(z["before_microbatches_from"][0]["bubble_formula"] == "6*F + 6*B");
    CHECK_THAT(z["result"].get<std::string>(), Catch::StartsWith("bubble = max(") && Catch::Contains("bubble(1) = 6*F + 6*B"));
    CHECK(nlohmann::json::parse(run_cli("prove zbv -P 4 --json --basis deepseek").out)["before_microbatches_from"][0]["bubble_formula"] ==
          "6*F - 6*W + 6*B");
    const std::string torch_letters = nlohmann::json::parse(run_cli("prove zbv -P 4 --json").out)["before_microbatches_from"][0]["bubble_formula"];
    CHECK((torch_letters == "6*F + 6*I" || torch_letters == "6*F - 6*W + 6*B"));  // B = I + W in PyTorch's letters
    const auto text = run_cli("formula zb-h1 -P 4 --basis paper");
    CHECK_THAT(text.out, Catch::Contains("letters: the Zero Bubble paper's letters"));
    // 1F1B and DualPipe keep DeepSeek's letters (B = full backward) under --basis paper.
    CHECK(nlohmann::json::parse(run_cli("formula dualpipe -P 4 --json --basis paper").out)["basis"] == "deepseek");
}
