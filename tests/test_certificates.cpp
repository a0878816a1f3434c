// Proof certificates (`prove --certificate DIR`) and their independent checker (`pipeproof-check DIR`): every PROVED
// of the certificate format's scope is CHECKED, z3 and cvc5 agreeing on every obligation; every corruption of a
// certificate -- a number changed, a step removed, a wrong potential, a swapped op -- is rejected, at the step that
// recomputes what was changed; what a certificate does not carry is NOT CHECKED, never passed.
#include "certificate_helpers.hpp"
#include "checker/internal.hpp"
#include "cli_runner.hpp"
#include "formats/certificate_json.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using pp::test::fresh_dir;
using pp::test::run_check;
using pp::test::run_cli;
using pp::test::slurp;
namespace fs = std::filesystem;

// `prove ARGS --certificate DIR`, PROVED, then the checker: CHECKED.
void require_checked(const std::string& prove_args, const std::string& name) {
    const fs::path dir = fresh_dir(name);
    const auto proof = run_cli("prove " + prove_args + " --certificate " + dir.string());
    INFO("prove " << prove_args << "\n" << proof.out << proof.err);
    REQUIRE(proof.exit_code == 0);
    CHECK_THAT(proof.out, Catch::Contains("certificate: " + dir.string()));
    const auto check = run_check(dir.string());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("\nCHECKED: "));
    CHECK_THAT(check.out, !Catch::Contains("FAILED"));
}

using pp::test::certificate_of;
using pp::test::corrupted;
using pp::test::require_rejected;

std::string first_op(const std::string& slots) { return slots.substr(0, slots.find(' ')); }

}  // namespace

TEST_CASE("certificates: the bubble at exact costs, CHECKED for every family with a periodic word", "[certificate]") {
    for (const std::string family : {"1f1b", "dualpipe", "dualpipev", "zb-h1", "zb-h2", "interleaved-1f1b", "zb1p", "zbv"})
        require_checked(family + " -P 4 --costs F=1,I=1,W=1,FB=1.5", "bubble-" + family);
    // Unequal costs, and a larger P.
    require_checked("1f1b -P 3 --costs F=3,I=2,W=1", "bubble-1f1b-unequal");
    require_checked("dualpipe -P 6 --costs F=2,I=1,W=1,FB=3", "bubble-dualpipe-p6");
    // Megatron's tunable order (the multiples of G) and combined 1F1B: step programs too.
    require_checked("interleaved-1f1b -P 4 --group-size 6 --costs F=1,I=1,W=1", "bubble-megatron-g6");
    require_checked("combined-1f1b -P 4 --costs F=1,I=1,W=1,FB=1.5", "bubble-combined-1f1b");
}

TEST_CASE("certificates: the V families' bubble, peaks and order, CHECKED", "[certificate]") {
    for (const std::string family : {"v-min", "v-half", "1f1b-v"}) {
        require_checked(family + " -P 4 --costs F=1,I=1,W=1", "bubble-" + family);
        require_checked(family + " -P 4 --property memory-bound", "memory-" + family);
    }
    require_checked("v-half -P 6 --property memory-bound --memory-bound 8", "memory-bound-v-half");
}

TEST_CASE("certificates: peaks, deadlock-freedom and dependencies for every M, CHECKED", "[certificate]") {
    for (const std::string family : {"1f1b", "dualpipe", "dualpipev", "zb-h2", "zbv"}) {
        require_checked(family + " -P 4 --property memory-bound", "memory-" + family);
        require_checked(family + " -P 4 --property deadlock-free", "deadlock-" + family);
        require_checked(family + " -P 4 --property dependencies", "dependencies-" + family);
    }
    // DualPipe's peak is P + 1 (proofs/catalogue/dualpipe-activation-peak.md): the bound 5 at P = 4 holds.
    require_checked("dualpipe -P 4 --property memory-bound --memory-bound 5", "memory-bound-dualpipe");
}

TEST_CASE("certificates: the bubble at symbolic costs, CHECKED over the region", "[certificate]") {
    // 1F1B: bubble (P - 1)(F + B) on the whole region, by hand; DualPipe and DualPipeV: max-plus polynomials.
    require_checked("1f1b -P 4", "symbolic-1f1b");
    require_checked("dualpipe -P 4", "symbolic-dualpipe");
    require_checked("dualpipev -P 4", "symbolic-dualpipev");
    // ZB-H2 with comm free where compute covers it (proofs/catalogue/zb-h2-bubble.md): the region has assumptions.
    require_checked("zb-h2 -P 4 --symbolic-comm --assume 'F >= W + comm' --assume 'I >= 2*W + comm'", "symbolic-zb-h2-comm");
}

TEST_CASE("certificates: a region bounded by constants carries its point, which the checker tests", "[certificate]") {
    // F >= 3 and W <= 2: no multiple of the rays' sum meets both, so the region's point comes from the prover (a
    // witness the checker tests against every constraint exactly).
    require_checked("1f1b -P 5 --assume 'F >= 3' --assume 'W <= 2'", "region-constants-1f1b");
    require_checked("seq1f1b -P 5 --segments 2 --assume 'F >= 3' --assume 'W <= 2'", "region-constants-seq1f1b");
    const fs::path good = fresh_dir("region-constants");
    REQUIRE(run_cli("prove 1f1b -P 3 --assume 'F >= 3' --assume 'W <= 2' --certificate " + good.string()).exit_code == 0);
    const auto point = pp::test::certificate_of(good)["claim"]["region_point"];
    INFO(point.dump());
    CHECK(pp::parse_rational(point["F"].get<std::string>()).value_or(pp::Rational(0)) >= pp::Rational(3));
    CHECK(pp::parse_rational(point["W"].get<std::string>()).value_or(pp::Rational(3)) <= pp::Rational(2));
    // A point outside the region (F = 1 < 3) is no witness.
    require_rejected(corrupted(good, "region-point-outside", [](nlohmann::json& j) { j["claim"]["region_point"]["F"] = "1"; }),
                     "region");
}

TEST_CASE("certificates: what version 1 does not carry is NOT CHECKED, and only a PROVED has a certificate",
          "[certificate]") {
    // GPipe's zone word: its order is checked, its timing (proofs/method.md §4b) not carried.
    const fs::path zones = fresh_dir("zones");
    const auto proof = run_cli("prove gpipe -P 4 --costs F=1,I=1,W=1 --certificate " + zones.string());
    REQUIRE(proof.exit_code == 0);
    CHECK_THAT(proof.out, Catch::Contains("the checker answers NOT CHECKED"));
    const auto check = run_check(zones.string());
    CHECK(check.exit_code == 1);
    CHECK_THAT(check.out, Catch::Contains("ok     zone word"));
    CHECK_THAT(check.out, Catch::Contains("NOT CHECKED: zone timing: NOT CHECKED: the certificate does not carry every step"));
    // A refuted statement has no proof to certify: no certificate.json.
    const fs::path refuted = fresh_dir("refuted");
    const auto chimera = run_cli("prove chimera -P 4 --costs F=1,I=1,W=1 --certificate " + refuted.string());
    CHECK(chimera.exit_code == 1);
    CHECK_THAT(chimera.out, Catch::Contains("certificate: none (the verdict is REFUTED"));
    CHECK_FALSE(fs::exists(refuted / "certificate.json"));
    CHECK(run_check(refuted.string()).exit_code == 2);
}

TEST_CASE("certificates: every corrupted certificate is rejected, at the step that recomputes it", "[certificate]") {
    // 1F1B at P = 4 with unequal costs: bubble (P-1)(F+B) = 3 x (2 + 3) = 15 for every M >= 4, by hand.
    const fs::path good = fresh_dir("good-1f1b");
    REQUIRE(run_cli("prove 1f1b -P 4 --costs F=2,I=2,W=1 --certificate " + good.string()).exit_code == 0);
    REQUIRE(run_check(good.string()).exit_code == 0);
    const auto j = certificate_of(good);
    REQUIRE(j["bubble"]["value"] == "15");
    const fs::path memory = fresh_dir("good-memory");
    REQUIRE(run_cli("prove dualpipe -P 4 --property memory-bound --memory-bound 5 --certificate " + memory.string()).exit_code == 0);
    REQUIRE(run_check(memory.string()).exit_code == 0);
    const fs::path deps = fresh_dir("good-dependencies");
    REQUIRE(run_cli("prove zb-h1 -P 4 --property dependencies --certificate " + deps.string()).exit_code == 0);
    REQUIRE(run_check(deps.string()).exit_code == 0);

    int cases = 0;
    auto reject = [&](const fs::path& from, const std::string& name, const std::string& step,
                      const std::function<void(nlohmann::json&)>& mutate,
                      const std::function<void(const fs::path&)>& files = {}) {
        require_rejected(corrupted(from, name, mutate, files), step);
        ++cases;
    };
    // One number changed.
    reject(good, "bubble-value", "bubble", [](auto& c) { c["bubble"]["value"] = "14"; });
    reject(good, "lambda", "window", [](auto& c) { c["window"]["lambda"] = "6"; });
    reject(good, "cycle", "window", [](auto& c) { c["window"]["cycle"] = 2; c["window"]["lambda"] = "5/2"; });
    reject(good, "k0-early", "window", [](auto& c) { c["window"]["k0"] = -5; });
    reject(good, "from-m-late", "bubble", [](auto& c) { c["bubble"]["from_m"] = 5; });
    reject(good, "origin-inadmissible", "shape", [](auto& c) { c["word"]["m_origin"] = 3; });
    reject(good, "costs", "window", [](auto& c) { c["claim"]["costs"] = "F=2,I=2,W=2,comm=0"; });
    reject(good, "comm", "window", [](auto& c) { c["claim"]["costs"] = "F=2,I=2,W=1,comm=1"; });
    reject(good, "delta", "word", [](auto& c) { c["word"]["delta"] = nlohmann::json::array({2}); });
    reject(good, "ranks", "shape", [](auto& c) { c["claim"]["ranks"] = 5; });
    reject(good, "potentials-T", "potentials", [](auto& c) { c["potentials"]["T"] = 1; });
    // Instances too large to build are refused, not followed until memory runs out.
    reject(good, "window-T-huge", "window", [](auto& c) { c["window"]["T"] = 2000000000; });
    reject(good, "potentials-T-huge", "potentials", [](auto& c) { c["potentials"]["T"] = 100000000; });
    reject(memory, "peak", "memory", [](auto& c) { c["memory"]["peaks"][0] = "4"; });
    reject(memory, "bound", "memory", [](auto& c) { c["memory"]["bound"] = "4"; });
    // A wrong potential: rank 1's blocks 50 super-steps later, so the data edges into rank 0's blocks go backward.
    reject(good, "sigma", "potentials", [](auto& c) { c["potentials"]["sigma"][1] = 50; });
    reject(good, "alpha", "potentials", [](auto& c) {
        for (auto& a : c["potentials"]["alpha"][0]) a = 100;  // rank 0's warm-up after everything it feeds
    });
    // A step removed.
    reject(good, "no-window", "claim", [](auto& c) { c["window"] = nullptr; });
    reject(good, "no-potentials", "claim", [](auto& c) { c["potentials"] = nullptr; });
    reject(good, "no-word-rank", "shape", [](auto& c) { c["word"]["ranks"].erase(c["word"]["ranks"].size() - 1); });
    reject(good, "no-bubble-field", "bubble.value", [](auto& c) { c["bubble"].erase("value"); });
    // Swapped, changed or dropped ops of the word.
    reject(good, "swapped-ops", "word", [](auto& c) {
        std::string block = c["word"]["ranks"][0]["block"];
        const size_t space = block.find(' ');
        c["word"]["ranks"][0]["block"] = block.substr(space + 1) + " " + block.substr(0, space);
    });
    reject(good, "microbatch", "word", [](auto& c) {
        std::string prefix = c["word"]["ranks"][2]["prefix"];
        prefix[prefix.find('F') + 1] = '7';
        c["word"]["ranks"][2]["prefix"] = prefix;
    });
    reject(good, "dropped-op", "word", [](auto& c) {
        const std::string block = c["word"]["ranks"][0]["block"];
        c["word"]["ranks"][0]["block"] = block.substr(first_op(block).size() + 1);
    });
    // A suffix op dropped leaves a potential without its slot.
    reject(good, "dropped-suffix-op", "shape", [](auto& c) {
        const std::string suffix = c["word"]["ranks"][0]["suffix"];  // rank 0's cool-down backwards
        REQUIRE(suffix.find(' ') != std::string::npos);
        c["word"]["ranks"][0]["suffix"] = suffix.substr(first_op(suffix).size() + 1);
    });
    reject(good, "other-family", "word", [](auto& c) { c["claim"]["family"] = "zb-h1"; });
    // The claim itself.
    reject(good, "verdict", "claim", [](auto& c) { c["claim"]["verdict"] = "UNKNOWN"; });
    reject(good, "not-carried", "claim", [](auto& c) { c["not_carried"].push_back("a step"); });
    reject(good, "version", "version", [](auto& c) { c["version"] = 2; });
    // Forms beside exact costs: each path reads only its own members, so mixing them is refused.
    reject(good, "exact-with-forms", "claim", [](auto& c) {
        c["bubble"]["value"] = nullptr;
        c["bubble"]["value_forms"] = nlohmann::json::array({{{"F", 5}}});
        c["bubble"]["differs_at"] = nullptr;
    });
    // The obligations (the prover's op coverage in linear integer arithmetic): a file that is gone, and one whose
    // query a solver can satisfy.
    reject(deps, "obligation-gone", "obligation", [](auto&) {}, [](const fs::path& dir) {
        for (const auto& f : fs::directory_iterator(dir / "obligations")) fs::remove(f.path());
    });
    reject(deps, "obligation-sat", "obligation", [](auto&) {}, [](const fs::path& dir) {
        for (const auto& f : fs::directory_iterator(dir / "obligations"))
            std::ofstream(f.path()) << "(declare-fun x () Real)\n(assert (> x 0))\n(check-sat)\n";
    });
    // The dependencies certificate: an op on another rank's stage fails the word, a doubled op fails it too.
    reject(deps, "deps-doubled", "word", [](auto& c) {
        std::string block = c["word"]["ranks"][1]["block"];
        c["word"]["ranks"][1]["block"] = block + " " + first_op(block);
    });
    CHECK(cases >= 20);
    // The certificate's own wording is not what CHECKED prints: the claim is rebuilt from the checked numbers.
    const auto reworded = run_check(corrupted(good, "reworded", [](auto& c) { c["claim"]["statement"] = "bubble = 0"; }).string());
    CHECK(reworded.exit_code == 0);
    CHECK_THAT(reworded.out, Catch::Contains("CHECKED: 1f1b at P = 4: bubble = 15 for every admissible M >= 4"));
    CHECK_THAT(reworded.out, Catch::Contains("as the certificate words it (not checked): bubble = 0"));
}

TEST_CASE("certificates: every corrupted symbolic certificate is rejected", "[certificate]") {
    // ZB-V at P = 4 over the default region: constant from M0 = 7 at every cost point (proofs/method.md §4a), the
    // six bubbles below it listed as max-plus polynomials, and a point where bubble(6) differs.
    const fs::path good = fresh_dir("good-symbolic");
    REQUIRE(run_cli("prove zbv -P 4 --certificate " + good.string()).exit_code == 0);
    REQUIRE(run_check(good.string()).exit_code == 0);
    const auto j = certificate_of(good);
    REQUIRE(j["bubble"]["value"].is_null());
    REQUIRE(j["bubble"]["from_m"] == 7);
    REQUIRE(j["bubble"]["early"].size() == 6);
    REQUIRE(j["bubble"]["differs_at"].is_object());
    int cases = 0;
    auto reject = [&](const std::string& name, const std::string& step, const std::function<void(nlohmann::json&)>& mutate) {
        require_rejected(corrupted(good, name, mutate), step);
        ++cases;
    };
    // One coefficient of the value, of lambda, of an early bubble changed.
    reject("symbolic-value", "bubble", [](auto& c) { c["bubble"]["value_forms"][0]["F"] = c["bubble"]["value_forms"][0].value("F", 0) + 1; });
    reject("symbolic-value-form-dropped", "bubble", [](auto& c) { c["bubble"]["value_forms"].erase(0); });
    reject("symbolic-lambda", "window", [](auto& c) { c["window"]["lambda_form"]["F"] = 3; });
    reject("symbolic-window-instance", "window", [](auto& c) { c["window"]["T"] = 3; });  // below T0
    reject("symbolic-k0", "window", [](auto& c) { c["window"]["k0"] = -3; });
    reject("symbolic-from-m", "bubble", [](auto& c) { c["bubble"]["from_m"] = c["bubble"]["from_m"].template get<int>() + 2; });
    // The region: none at all; F >= 0 alone, whose cone holds lines (not pointed); comm free, where the bubble is
    // another function.
    reject("symbolic-region-empty", "claim", [](auto& c) { c["claim"]["region_constraints"] = nlohmann::json::array(); });
    reject("symbolic-region-lines", "region", [](auto& c) {
        c["claim"]["region_constraints"] = nlohmann::json::array({{{"a", {{"F", "1"}}}, {"rel", ">="}, {"b", "0"}}});
    });
    reject("symbolic-region-comm", "window", [](auto& c) {
        auto& rows = c["claim"]["region_constraints"];
        for (size_t k = 0; k < rows.size(); ++k)
            if (rows[k]["rel"] == "=" && rows[k]["a"].contains("comm")) rows[k]["rel"] = ">=";
    });
    // The least M0: a point outside the region, or none.
    reject("symbolic-point-outside", "bubble", [](auto& c) { c["bubble"]["differs_at"]["F"] = "-1"; });
    reject("symbolic-no-point", "bubble", [](auto& c) { c["bubble"]["differs_at"] = nullptr; });
    // A point where bubble(6) and the value agree: every cost equal, where bubble(6) = bubble(7) (checked below).
    reject("symbolic-point-equal", "bubble", [](auto& c) {
        c["bubble"]["differs_at"] = {{"F", "1"}, {"I", "1"}, {"W", "1"}, {"B", "2"}, {"FB", "3"}, {"comm", "0"}};
    });
    reject("symbolic-early", "bubble", [](auto& c) { c["bubble"]["early"][5]["bubble_forms"][0]["F"] = 7; });
    reject("symbolic-early-dropped", "bubble", [](auto& c) { c["bubble"]["early"].erase(5); });
    reject("symbolic-from-m-early", "bubble", [](auto& c) {  // M0 = 6 would need bubble(6) = the value
        c["bubble"]["from_m"] = 6;
        c["bubble"]["early"].erase(5);
    });
    reject("symbolic-lambda-missing", "window.lambda_form", [](auto& c) { c["window"].erase("lambda_form"); });
    // A coefficient above the signed 64-bit range (it would wrap to -1 if read as signed), and a region that is
    // empty (0 > 0), over which any value would hold vacuously.
    reject("symbolic-coefficient-wraps", "bubble.value_forms", [](auto& c) {
        c["bubble"]["value_forms"][0]["F"] = std::numeric_limits<std::uint64_t>::max();
    });
    reject("symbolic-region-void", "region", [](auto& c) {
        c["claim"]["region_constraints"].push_back({{"a", nlohmann::json::object()}, {"rel", ">"}, {"b", "0"}});
    });
    reject("symbolic-region-void-bounds", "region", [](auto& c) {  // F >= 1 and -F >= 0
        c["claim"]["region_constraints"].push_back({{"a", {{"F", "1"}}}, {"rel", ">="}, {"b", "1"}});
        c["claim"]["region_constraints"].push_back({{"a", {{"F", "-1"}}}, {"rel", ">="}, {"b", "0"}});
    });
    // Exact and symbolic members mixed: a number where forms are expected.
    reject("symbolic-scalar-lambda", "claim", [](auto& c) {
        c["window"]["lambda"] = "2";
        c["window"].erase("lambda_form");
    });
    CHECK(cases >= 15);
}

TEST_CASE("certificates: the checker's coverage induction on hand-made words", "[certificate]") {
    // One rank, one stage, M = 1 + t: prefix 0F0, block "0B0 0F1" (raised by j), suffix 0B0 (raised by t). By hand:
    // t = 0 is 0F0 0B0, t = 1 is 0F0 0B0 0F1 0B1 -- every op once. A block that forwards micro-batch 2 instead of 1
    // skips one and repeats another as t grows; a suffix without its backward misses one at every t.
    const std::string header = R"({"format": "pipeproof-certificate", "version": 1, "tool": "", "command": "",
      "claim": {"family": "1f1b", "ranks": 1, "stages_per_rank": null, "admissible_m": {"first": 1, "step": 1},
                "property": "dependencies", "timing_model": "dataflow", "activation_sizes": "F=1,I=0",
                "verdict": "PROVED", "statement": "", "structure_lemma": "", "region": [], "costs": null,
                "block_costs": {}, "ordered_for_costs": false, "ordered_for_sizes": null},
      "potentials": null, "window": null, "bubble": null, "memory": null, "obligations": [], "not_carried": [],
      "word": {"m_origin": 1, "step": 1, "delta": [1], "ranks": [{"prefix": "0F0", "block": ")";
    auto word = [&](const std::string& block, const std::string& suffix) {
        return *pp::parse_certificate(header + block + R"(", "suffix": ")" + suffix + R"("}]}})", "hand.json").word;
    };
    const pp::Placement one = pp::Placement::single(1, {0}, 1);
    CHECK_NOTHROW(pp::check::check_coverage(word("0B0 0F1", "0B0"), one));
    CHECK_THROWS_AS(pp::check::check_coverage(word("0B0 0F2", "0B0"), one), pp::check::Rejected);
    CHECK_THROWS_AS(pp::check::check_coverage(word("0B0 0F1", ""), one), pp::check::Rejected);
    // Split backwards: a W for every I, also in the growing part.
    CHECK_NOTHROW(pp::check::check_coverage(word("0I0 0W0 0F1", "0I0 0W0"), one));
    CHECK_THROWS_AS(pp::check::check_coverage(word("0I0 0F1", "0I0 0W0"), one), pp::check::Rejected);
}

TEST_CASE("certificates: the checker's shared end times are the ones its plain recurrence computes", "[certificate]") {
    // The symbolic simulation takes a slot's end time from an instance timed before (as is, or one block and lambda
    // later) or from the same rank one block earlier, when the recurrence provably matches. Timed without any of
    // that, every slot must come out the same function -- here even the same ray values, term by term.
    pp::Certificate c;
    c.family = "dualpipev";
    c.ranks = 4;
    std::vector<pp::CertificateConstraint> region;
    auto row = [&](std::vector<std::pair<int, int>> a, const std::string& rel) {
        pp::CertificateConstraint k;
        for (auto [var, coefficient] : a) k.a[var] = pp::Rational(coefficient);
        k.rel = rel;
        region.push_back(k);
    };
    // F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0 (the default region)
    row({{0, 1}}, ">"), row({{1, 1}}, ">"), row({{2, 1}}, ">"), row({{3, 1}, {1, -1}, {2, -1}}, "=");
    row({{4, 1}}, ">"), row({{0, 1}, {3, 1}, {4, -1}}, ">="), row({{5, 1}}, "=");
    const pp::check::Cone cone = pp::check::cone_of(region, "test");
    CHECK(cone.rays.size() == 6);
    const pp::CertificateForm lambda{0, 0, 0, 0, 2, 0};  // DualPipeV: two FB pairs per block and rank
    const pp::check::SymbolicPeriod period{{4, 4, 4, 4}, lambda};
    pp::Schedule before = pp::check::generate(c, 9);
    pp::check::Graph before_graph = pp::check::build_graph(before, "test");
    auto before_timing = pp::check::simulate_symbolic(before, before_graph, cone, "test");
    int shared_checks = 0;
    for (int m = 10; m <= 14; ++m) {  // each instance against the one before, as the checker's bubble step does
        pp::Schedule s = pp::check::generate(c, m);
        pp::check::Graph g = pp::check::build_graph(s, "test");
        const pp::check::SymbolicReference ref{&before, &before_graph, &before_timing, lambda};
        auto shared = pp::check::simulate_symbolic(s, g, cone, "test", &ref, &period);
        const auto plain = pp::check::simulate_symbolic(s, g, cone, "test");
        REQUIRE(shared.end.size() == plain.end.size());
        for (size_t v = 0; v < plain.end.size(); ++v) {
            INFO("M = " << m << ", slot " << v);
            CHECK(shared.end[v].same_function(plain.end[v]));
            ++shared_checks;
        }
        CHECK(shared.bubble.same_function(plain.bubble));
        CHECK(shared.taken > plain.end.size() / 2);  // most slots were taken, so the comparison above has teeth
        CHECK(plain.taken == 0);
        before = std::move(s), before_graph = std::move(g), before_timing = std::move(shared);
    }
    CHECK(shared_checks > 100);
}

// Found by fuzz_certificate: a number past a double ("1E111111111") threw nlohmann's out_of_range out of the reader,
// and pipeproof-check aborted. It is bad input: exit 2 with the file named.
TEST_CASE("certificates: a number no double holds is bad input to the checker, not an abort", "[certificate]") {
    const fs::path dir = fresh_dir("overflow");
    fs::create_directories(dir);
    {
        std::ofstream out(dir / "certificate.json");
        out << "{\"format\": \"pipeproof-certificate\", \"version\": 11111111111E111111111}\n";
    }
    const auto check = run_check(dir.string());
    CHECK(check.exit_code == 2);
    CHECK_THAT(check.err, Catch::Contains("certificate.json") && Catch::Contains("not JSON"));
}

TEST_CASE("certificates: a peak proof from a later origin carries the early instances' peaks, which the checker counts",
          "[certificate]") {
    // Megatron's order at P = 5, G = 7, M mod G = 6 is proved on a word re-cut one group later (M = 20 on); the first
    // admissible M, 13, is counted on its own: [16 14 12 10 8], Megatron's warm-up 2(P - 1) + (V - 1) G + 1 on rank 0.
    const auto dir = pp::test::fresh_dir("cert-early-peaks");
    REQUIRE(pp::test::run_cli("prove interleaved-1f1b -P 5 -V 2 --group-size 7 --residue 6 --property memory-bound "
                              "--certificate " + dir.string())
                .exit_code == 0);
    const auto good = pp::test::run_check(dir.string());
    INFO(good.out << good.err);
    REQUIRE(good.exit_code == 0);
    CHECK_THAT(good.out, Catch::Contains("; at M = 13: [16 14 12 10 8]"));
    using pp::test::corrupted;
    using pp::test::require_rejected;
    require_rejected(corrupted(dir, "early-peak", [](auto& c) { c["memory"]["early"][0]["peaks"][0] = "15"; }), "memory");
    require_rejected(corrupted(dir, "early-m", [](auto& c) { c["memory"]["early"][0]["microbatches"] = 20; }), "memory");
    require_rejected(corrupted(dir, "early-extra", [](auto& c) {
                         c["memory"]["early"].push_back(c["memory"]["early"][0]);
                         c["memory"]["early"][1]["microbatches"] = 20;
                     }),
                     "memory");
    require_rejected(corrupted(dir, "early-short", [](auto& c) { c["memory"]["early"][0]["peaks"].erase(4); }), "memory");
    require_rejected(corrupted(dir, "early-type", [](auto& c) { c["memory"]["early"] = "none"; }), "memory.early");
    // An origin moved twice (a later origin, then a re-cut inside it): the early peaks still in M order, counted.
    const auto twice = pp::test::fresh_dir("cert-early-twice");
    REQUIRE(pp::test::run_cli("prove group-interleaved -P 4 -V 3 --group-size 1 --property memory-bound --certificate " +
                              twice.string())
                .exit_code == 0);
    const auto checked = pp::test::run_check(twice.string());
    INFO(checked.out << checked.err);
    CHECK(checked.exit_code == 0);
    CHECK_THAT(checked.out, Catch::Contains("; at M = 1: [3 3 3 3]; at M = 2: [6 5 5 4]; at M = 3: [7 7 6 5]"));
}
