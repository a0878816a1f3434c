// Issue 14 item 6: refute speaks the papers' notation (PP, F&B, products by juxtaposition), lists the names
// it knows on a typo, and closes a cost grid over every M with the prover's periodicity proof at each point.
#include "cli_runner.hpp"
#include "proofs/claim.hpp"

#include <catch2/catch.hpp>

using pp::test::run_cli;

TEST_CASE("refute: DeepSeek's notation as published", "[refute]") {
    // The DualPipe README's formula, written as in its table; on the proved region it holds (catalogue:
    // dualpipe-readme-formula.md), so a grid inside it must HOLD for every M, not stay undecided.
    const auto holds = run_cli("refute --claim '(PP/2-1)(F&B+B-3W) == bubble' dualpipe -P 4..8 --costs 'F=1,B=2,W=1,FB=2..3@0.5'");
    CHECK(holds.exit_code == 0);
    CHECK_THAT(holds.out, Catch::Contains("HOLDS"));
    CHECK_THAT(holds.out, Catch::Contains("at each of the 3 grid point(s)"));
    const auto pytorch_letters = run_cli("refute --claim 'bubble == (PP/2-1)*(F&B+B-3*W)' dualpipe -P 4 --costs 'F=1,I=1,W=1,FB=2..3@0.5'");
    CHECK(pytorch_letters.exit_code == 0);
    // Outside the region (F&B < B) the same formula is refuted, with the catalogue's counterexample value.
    const auto refuted = run_cli("refute --claim 'bubble == (PP/2-1)(F&B+B-3W)' dualpipe -P 8 --costs 'F=1,I=1,W=1,FB=1.5'");
    CHECK(refuted.exit_code == 1);
    CHECK_THAT(refuted.out, Catch::Contains("4.5"));
}

TEST_CASE("refute: PP is the number of pipeline stages (2P for DualPipeV)", "[refute]") {
    CHECK(run_cli("refute --claim 'PP == P' dualpipe -P 2..6 -M 8..8 --costs F=1,I=1,W=1").exit_code == 0);
    CHECK(run_cli("refute --claim 'PP == 2*P' dualpipev -P 2..4 -M 8..8 --costs F=1,I=1,W=1").exit_code == 0);
    CHECK(run_cli("refute --claim 'PP == P' dualpipev -P 2 -M 8..8 --costs F=1,I=1,W=1").exit_code == 1);
}

TEST_CASE("claims: juxtaposition is multiplication, F&B is a name, && still a conjunction", "[refute]") {
    const auto text = [](const char* claim) { return pp::parse_claim(claim)->text; };
    CHECK(pp::parse_claim("3W")->kind == pp::ClaimNode::Mul);
    CHECK(pp::parse_claim("(P-1)(F+B)")->kind == pp::ClaimNode::Mul);
    CHECK(pp::parse_claim("F&B")->kind == pp::ClaimNode::Name);
    CHECK(pp::parse_claim("F>0&&W>0")->kind == pp::ClaimNode::And);
    CHECK(text("bubble == (P-1)(F+B)") == "bubble == (P-1)(F+B)");
    // Same verdicts with and without explicit '*'.
    const auto implicit = run_cli("refute --claim 'bubble == (P-1)(F+B)' 1f1b -P 2..4 --costs 'F=1,I=1,W=1..2@0.5'");
    const auto explicit_ = run_cli("refute --claim 'bubble == (P-1)*(F+B)' 1f1b -P 2..4 --costs 'F=1,I=1,W=1..2@0.5'");
    CHECK(implicit.exit_code == explicit_.exit_code);
    CHECK(implicit.exit_code == 0);
}

TEST_CASE("refute: an unknown name is exit 2 with a suggestion and the list of names", "[refute]") {
    const auto r = run_cli("refute --claim 'bubble == (PPP/2-1)*(F&B+B-3W)' dualpipe -P 4");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown name 'PPP' (did you mean 'PP'?)"));
    for (const std::string& name : pp::claim_names()) CHECK_THAT(r.err, Catch::Contains(name));
    const auto call = run_cli("refute --claim 'peek(M+1) >= 0' dualpipe -P 4");
    CHECK(call.exit_code == 2);
    CHECK_THAT(call.err, Catch::Contains("did you mean 'peak'?"));
}
