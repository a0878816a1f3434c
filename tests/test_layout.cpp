// Uneven and empty stages from a Megatron layout string (--layout): the parser against layouts counted by hand
// (including Megatron's documented example), its refusals with their columns and bounds, block costs summed by hand,
// and on the command line the same timing as the per-block costs written out (--stage-costs) and per-rank peaks
// against 1F1B's stash count P - r (M >= P) times the rank's layers.
#include "cli_runner.hpp"
#include "model/layout.hpp"
#include "model/rational.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace pp;
using pp::test::run_cli;

namespace {

BlockLayers layers(int E, int t, int m, int L) { return BlockLayers{{E, t, m, L}}; }

size_t error_offset(const std::string& text) {
    try {
        (void)parse_stage_layout(text);
    } catch (const CostSyntaxError& e) {
        return e.offset;
    }
    FAIL("'" << text << "' was accepted");
    return 0;
}

nlohmann::json simulate_json(const std::string& args) {
    const auto r = run_cli("simulate " + args + " --json");
    INFO(args << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("layout: Megatron's example and an empty block parse to the blocks counted by hand", "[layout]") {
    // Megatron's docs: 'Et*3|(tt|)*29,m|L' -- 32 blocks: E and 3 t, then 29 blocks of two t, then the MTP layer, then loss.
    const StageLayout layout = parse_stage_layout("Et*3|(tt|)*29,m|L");
    REQUIRE(layout.blocks.size() == 32);
    CHECK(layout.blocks[0] == layers(1, 3, 0, 0));
    for (int b = 1; b <= 29; ++b) CHECK(layout.blocks[b] == layers(0, 2, 0, 0));
    CHECK(layout.blocks[30] == layers(0, 0, 1, 0));
    CHECK(layout.blocks[31] == layers(0, 0, 0, 1));
    CHECK(format_block_layers(layout.blocks[0]) == "E+3t");

    const StageLayout empty = parse_stage_layout("E||t, t|L");
    REQUIRE(empty.blocks.size() == 4);
    CHECK(empty.blocks[1].empty());
    CHECK(format_block_layers(empty.blocks[1]) == "-");
    CHECK(empty.blocks[2] == layers(0, 2, 0, 0));
    CHECK(parse_stage_layout("((t)*2|)*2t").blocks.size() == 3);  // nested: tt|tt|t
    CHECK(parse_stage_layout("((t)*2|)*2t").blocks[2] == layers(0, 1, 0, 0));
}

TEST_CASE("layout: bad layouts are refused at the column that is wrong, and repetition is bounded", "[layout]") {
    CHECK(error_offset("Et*|t") == 3);   // a count after '*'
    CHECK(error_offset("Ex|t") == 1);    // not a layer
    CHECK(error_offset("(tt|") == 0);    // '(' without ')'
    CHECK(error_offset("tt)") == 2);     // ')' without '('
    CHECK(error_offset("(t)|t") == 3);   // a parenthesised piece needs '*N'
    CHECK(error_offset("") == 0);        // no layer at all
    CHECK(error_offset("|||") == 0);
    // A million blocks of a million layers is refused before it is written out.
    CHECK_THROWS_AS(parse_stage_layout("(t*1000000|)*1000000"), CostSyntaxError);
    CHECK_THROWS_AS(parse_stage_layout("t*99999999999999999999999"), CostSyntaxError);
    CHECK_THROWS_AS(parse_stage_layout(std::string(65, '(') + "t" + std::string(65, ')')), CostSyntaxError);
    CHECK_THROWS_AS(parse_stage_layout("(|)*70000t"), CostSyntaxError);  // more than 65536 blocks
    // Pieces repeated zero times still count as work: many of them are refused, not expanded for a minute.
    std::string discarded;
    for (int k = 0; k < 200; ++k) discarded += "(t*1000000)*0";
    CHECK_THROWS_AS(parse_stage_layout(discarded + "t"), CostSyntaxError);
    CHECK(parse_stage_layout("(t)*0|t").blocks.size() == 2);
}

TEST_CASE("layout: a block costs and stashes the sum of its layers", "[layout]") {
    LayerCosts costs(OpCosts{Rational(2), Rational(1), Rational(1), std::nullopt, std::nullopt, std::nullopt});
    costs.apply_costs("E:F=1,I=0,W=0");
    costs.apply_sizes("E=1/2,L=3");
    const OpCosts c = block_costs(layers(1, 3, 0, 0), costs);
    CHECK(c.F == Rational(7));  // 1 + 3*2
    CHECK(c.I == Rational(3));
    CHECK(c.W == Rational(3));
    CHECK_FALSE(c.B.has_value());  // no layer gave its own B: I + W applies to the sums
    CHECK(block_stash(layers(1, 3, 0, 0), costs) == Rational(7, 2));
    CHECK(block_stash(layers(0, 0, 0, 1), costs) == Rational(3));
    CHECK(block_stash(layers(0, 0, 0, 0), costs) == Rational(0));
    const OpCosts m = block_costs(layers(0, 0, 2, 0), costs);  // MTP costs as a decoder layer by default
    CHECK(m.F == Rational(4));
    CHECK_THROWS_AS(costs.apply_costs("X:F=1"), CostSyntaxError);
    CHECK_THROWS_AS(costs.apply_sizes("t=-1"), CostSyntaxError);
}

TEST_CASE("layout: prove at exact costs, the bubble and the peaks those of simulate, certificates CHECKED",
          "[layout][prove][certificate]") {
    using pp::test::run_check;
    namespace fs = std::filesystem;
    // 1F1B P = 4, two decoder layers per block, E stashing 1 and L 3 layers' worth: stages stash 3, 2, 2, 5, so the
    // peaks are (P - r) stashes of rank r's stage: 12, 6, 4, 5 (by hand); the stages run at twice a layer's costs
    // (F = 2, B = 4), so the bubble is (P - 1)(F + B) = 18 (1F1B's formula at those costs).
    const std::string layout = " --costs F=1,I=1,W=1 --layout 'E,t*2|t*2|t*2|t*2,L' --layer-sizes E=1,L=3";
    const fs::path bubble_dir = pp::test::scratch_dir() / "layout-bubble", memory_dir = pp::test::scratch_dir() / "layout-memory";
    fs::remove_all(bubble_dir);
    fs::remove_all(memory_dir);
    const auto bubble = run_cli("prove 1f1b -P 4" + layout + " --certificate " + bubble_dir.string());
    INFO(bubble.out << bubble.err);
    REQUIRE(bubble.exit_code == 0);
    CHECK_THAT(bubble.out, Catch::Contains("result: bubble = 18 for every admissible M >= 4") &&
                               Catch::Contains("per-block costs (block 0: F=2,I=2,W=2;"));
    for (int M : {4, 9, 17}) {  // an independent path: the simulator on instances
        const auto sim = simulate_json("1f1b -P 4 -M " + std::to_string(M) + layout);
        CHECK(sim["exact"]["bubble"] == "18");
        const std::vector<int> peaks = {12, 6, 4, 5};
        for (int r = 0; r < 4; ++r) CHECK(sim["per_rank"][r]["peak_activations"] == peaks[r]);
    }
    const auto memory = run_cli("prove 1f1b -P 4 --property memory-bound" + layout + " --certificate " + memory_dir.string());
    INFO(memory.out << memory.err);
    REQUIRE(memory.exit_code == 0);
    CHECK_THAT(memory.out, Catch::Contains("activation peak per rank = [12 6 4 5]") &&
                               Catch::Contains("each stage's stash scaled by [3 2 2 5]"));
    CHECK(run_cli("prove 1f1b -P 4 --property memory-bound --memory-bound 11" + layout).exit_code == 1);
    CHECK(run_cli("prove 1f1b -P 4 --property memory-bound --memory-bound 12" + layout).exit_code == 0);
    for (const fs::path& dir : {bubble_dir, memory_dir}) {
        const auto check = run_check(dir.string());
        INFO(check.out << check.err);
        CHECK(check.exit_code == 0);
    }
    CHECK_THAT(run_check(memory_dir.string()).out, Catch::Contains("scaled by [3 2 2 5]"));
    // A stage scale changed in the certificate: the checker's own peaks differ from the claim.
    nlohmann::json j = nlohmann::json::parse(pp::test::slurp(memory_dir / "certificate.json"));
    REQUIRE(j["claim"]["stage_scale"] == nlohmann::json::array({nlohmann::json::array({"3", "2", "2", "5"})}));
    j["claim"]["stage_scale"][0][3] = "4";
    std::ofstream(memory_dir / "certificate.json", std::ios::binary) << j.dump(2);
    const auto corrupted = run_check(memory_dir.string());
    INFO(corrupted.out);
    CHECK(corrupted.exit_code == 1);
    CHECK_THAT(corrupted.out, Catch::Contains("FAILED memory"));
    // A stage or block the placement does not have: refused at the checker's shape step.
    for (const std::string member : {"stage_scale", "block_costs"}) {
        const fs::path dir = pp::test::scratch_dir() / ("layout-extra-" + member);
        fs::remove_all(dir);
        fs::copy(member == "stage_scale" ? memory_dir : bubble_dir, dir, fs::copy_options::recursive);
        nlohmann::json extra = nlohmann::json::parse(pp::test::slurp(dir / "certificate.json"));
        if (member == "stage_scale")
            extra["claim"]["stage_scale"] = nlohmann::json::array({nlohmann::json::array({"3", "2", "2", "5", "1"})});
        else
            extra["claim"]["block_costs"]["4"] = "F=9,I=9,W=9";
        std::ofstream(dir / "certificate.json", std::ios::binary) << extra.dump(2);
        const auto r = run_check(dir.string());
        INFO(member << ": " << r.out);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.out, Catch::Contains("FAILED shape"));
    }
    // A certificate whose numbers would pass the format's 2^40 is not written (the checker could not read it).
    const fs::path huge = pp::test::scratch_dir() / "layout-huge";
    fs::remove_all(huge);
    const auto too_big = run_cli("prove zb-h1 -P 4 --costs F=1,I=1,W=1 --layout 't*2|t*2|t*2|t*2,L' --layer-sizes "
                                 "L=1/2000003 --activation-sizes F=1,I=1/2000029 --property memory-bound --certificate " +
                                 huge.string());
    CHECK(too_big.exit_code == 2);
    CHECK_THAT(too_big.err, Catch::Contains("would not read back"));
    CHECK_FALSE(fs::exists(huge / "certificate.json"));
    // What prove refuses under a layout: symbolic costs, rank units, a family ordered for one cost set.
    CHECK(run_cli("prove 1f1b -P 4 --layout 't|t|t|t'").exit_code == 2);
    CHECK(run_cli("prove 1f1b -P 4 --costs symbolic --layout 't|t|t|t'").exit_code == 2);
    CHECK(run_cli("prove 1f1b -P 4 --costs F=1,I=1,W=1 --layout 't|t|t|t' --units rank").exit_code == 2);
    CHECK(run_cli("prove v-zb -P 2 --costs F=1,I=1,W=1 --layout 't|t|t|t'").exit_code == 2);
    CHECK(run_cli("prove 1f1b -P 4 --costs F=1,I=1,W=1 --layout 't|t|t'").exit_code == 2);  // 3 blocks for 4 stages
}

TEST_CASE("layout: simulate times a layout as its per-block costs written out, peaks as 1F1B's stash count",
          "[layout][cli]") {
    // Random decoder-only layouts of 1F1B at P = 4: block b holds n_b layers, so it runs at n_b times the layer's costs
    // (the same run with --stage-costs), and 1F1B's rank r stashes P - r micro-batches (M >= P) of n_r layers each.
    std::mt19937 rng(43);
    const int P = 4;
    for (int trial = 0; trial < 6; ++trial) {
        const int M = P + static_cast<int>(rng() % 5);  // 1F1B takes M >= P
        std::vector<int> n(P);
        std::string layout, stage_costs;
        for (int b = 0; b < P; ++b) {
            n[b] = 1 + static_cast<int>(rng() % 4);
            layout += (b ? "|" : "") + std::string("t*") + std::to_string(n[b]);
            stage_costs += " --stage-costs " + std::to_string(b) + ":F=" + std::to_string(n[b]) + ",I=" +
                           std::to_string(2 * n[b]) + ",W=" + std::to_string(n[b]);
        }
        const std::string instance = "1f1b -P 4 -M " + std::to_string(M) + " --costs F=1,I=2,W=1";
        const auto by_layout = simulate_json(instance + " --layout '" + layout + "'");
        const auto written_out = simulate_json(instance + stage_costs);
        INFO(layout << " M=" << M);
        CHECK(by_layout["exact"]["makespan"] == written_out["exact"]["makespan"]);
        for (int r = 0; r < P; ++r)
            CHECK(by_layout["per_rank"][r]["peak_activations"] == n[r] * (P - r));
    }
}

TEST_CASE("layout: embedding and loss stash what --layer-sizes says, and the note names the defaults used",
          "[layout][cli]") {
    // Et|tt|tt|tL with L = 2: rank stashes 1, 2, 2, 3 layers per micro-batch, 1F1B at M = 8 holds 4, 3, 2, 1 of them.
    const auto r = run_cli("simulate 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --layout 'Et|tt|tt|tL' --layer-sizes L=2 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const std::vector<int> expected = {4, 6, 4, 3};
    for (int rank = 0; rank < 4; ++rank) CHECK(j["per_rank"][rank]["peak_activations"] == expected[rank]);
    CHECK(j["units"] == "stage");
    CHECK(r.err.find("E costs nothing, E stashes 0, L costs nothing") != std::string::npos);
    // verify holds the file's limit against the uneven stashes: 5 is over rank 1's 6.
    CHECK(run_cli("verify 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --layout 'Et|tt|tt|tL' --layer-sizes L=2 --memory-limit 5").exit_code ==
          1);
    CHECK(run_cli("verify 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --layout 'Et|tt|tt|tL' --layer-sizes L=2 --memory-limit 6").exit_code ==
          0);
    // compare gives the same peaks (each row its own stashes) and times the blocks as given.
    const auto c = run_cli("compare 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --layout 'Et|tt|tt|tL' --layer-sizes L=2 --json");
    REQUIRE(c.exit_code == 0);
    const auto row = nlohmann::json::parse(c.out)["rows"][0];
    CHECK(row["exact"]["makespan"] == j["exact"]["makespan"]);
    for (int rank = 0; rank < 4; ++rank) CHECK(row["peak_activations"][rank] == expected[rank]);
}

TEST_CASE("layout: an interleaved layout maps block b to rank b mod P", "[layout][cli]") {
    // P = 2, V = 2: blocks 0, 2 on rank 0 and 1, 3 on rank 1. Written out as stage costs, the same run.
    const std::string instance = "interleaved-1f1b -P 2 -V 2 -M 4 --costs F=1,I=1,W=1";
    const auto by_layout = simulate_json(instance + " --layout 't*3|t|t*2|t'");
    const auto written_out = simulate_json(instance + " --stage-costs 0:F=3,I=3,W=3 --stage-costs 2:F=2,I=2,W=2");
    CHECK(by_layout["exact"]["makespan"] == written_out["exact"]["makespan"]);
    // Two layers in every block: every stash twice as large, so every rank's peak twice the even one's.
    const auto doubled = simulate_json(instance + " --layout 't*2|t*2|t*2|t*2'");
    const auto even = simulate_json(instance);
    for (int rank = 0; rank < 2; ++rank)
        CHECK(doubled["per_rank"][rank]["peak_activations"] == 2 * even["per_rank"][rank]["peak_activations"].get<int>());
}

TEST_CASE("layout: refusals name the flag and exit 2", "[layout][cli]") {
    const std::string base = "simulate 1f1b -P 4 -M 4 ";
    auto no_costs = run_cli(base + "--layout 't|t|t|t'");
    CHECK(no_costs.exit_code == 2);
    CHECK(no_costs.err.find("--layout needs --costs") != std::string::npos);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t|t' --stage-costs 0:F=2").exit_code == 2);
    auto blocks = run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t'");
    CHECK(blocks.exit_code == 2);
    CHECK(blocks.err.find("has 3 blocks") != std::string::npos);
    auto column = run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t*|t|t'");
    CHECK(column.exit_code == 2);
    CHECK(column.err.find("column 5") != std::string::npos);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layer-sizes L=2").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t|t' --layer-costs Q:F=1").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t|t' --units rank").exit_code == 2);
    CHECK(run_cli("compare 1f1b -P 4 -M 4 --costs F=1,I=1,W=1 --layout 't|t|t|t' --units rank").exit_code == 2);
    for (const std::string command : {"formula 1f1b -P 4", "sweep -P 4 -M 4", "plan --gpus 8"}) {
        auto refused = run_cli(command + " --layout 't|t|t|t'");
        INFO(command);
        CHECK(refused.exit_code == 2);
        CHECK((refused.err + refused.out).find("does not take uneven stages (--layout) yet") != std::string::npos);
    }
    CHECK(run_cli("search -P 2 -M 2 --costs F=1,I=1,W=1 --layout 't|t' --placement any").exit_code == 2);
    CHECK(run_cli("search -P 2 -M 2 --costs F=1,I=1,W=1,FB=2 --layout 't|t'").exit_code == 2);  // pairs per block
    // E stashes nothing, so Et|t stashes alike (1, 1) and the cap applies; Et|tt does not (1, 2).
    CHECK(run_cli("search -P 2 -M 2 --costs F=1,I=1,W=1 --layout 'Et|t' --memory-limit 2").exit_code == 0);
    auto uneven_cap = run_cli("search -P 2 -M 2 --costs F=1,I=1,W=1 --layout 'Et|tt' --memory-limit 2");
    CHECK(uneven_cap.exit_code == 2);
    CHECK(uneven_cap.err.find("stash 1, 2") != std::string::npos);
    // Pairs join two blocks' layers: no per-layer pair cost.
    CHECK(run_cli(base + "--costs F=1,I=1,W=1,FB=2 --layout 't|t|t|t'").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 'Et|t|t|t' --layer-costs E:F=1,FB=1").exit_code == 2);
    // A decoder layer's costs are --costs; each kind once; costs after ':'.
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t|m' --layer-costs t:F=5").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 'Et|t|t|t' --layer-costs E:F=1 --layer-costs E:F=2").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 'Et|t|t|t' --layer-costs E:").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 'Et|t|t|t' --layer-sizes E=1,E=2").exit_code == 2);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 'Et|t|t|t' --layer-sizes 'E=1 , L=2'").exit_code == 0);
    auto pattern = run_cli(base + "--costs F=1,I=1,W=1 --layout 't|t|t|t' --pattern megatron");
    CHECK(pattern.exit_code == 2);
    CHECK(pattern.err.find("--pattern") != std::string::npos);
    // Counts are refused at the count, a byte that is no character is shown as a byte.
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout 't*1114112'").err.find("column 3") != std::string::npos);
    CHECK(run_cli(base + "--costs F=1,I=1,W=1 --layout \"$(printf 't\\303|t')\"").err.find("0xC3") != std::string::npos);
}

TEST_CASE("layout: a schedule file's own block costs and memory limit are not mixed with a layout", "[layout][cli]") {
    const std::string file = pp::test::write_temp(
        "layout-file.txt", "ranks 2\nmicrobatches 2\nstages 2\nplacement loop\ncosts F=1,I=1,W=1\nstage-costs 1 F=20,I=20,W=10\n"
                           "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\nrank 1: 1F0 1I0 1W0 1F1 1I1 1W1\n");
    for (const std::string command : {"simulate ", "verify "}) {
        auto stage_costs = run_cli(command + file + " --costs F=1,I=1,W=1 --layout 'tt|t'");
        CHECK(stage_costs.exit_code == 2);
        CHECK(stage_costs.err.find("stage-costs") != std::string::npos);
    }
    const std::string limited = pp::test::write_temp(
        "layout-limit.txt", "ranks 2\nmicrobatches 2\nstages 2\nplacement loop\nmemory-limit 3\n"
                            "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\nrank 1: 1F0 1I0 1W0 1F1 1I1 1W1\n");
    auto limit = run_cli("simulate " + limited + " --costs F=1,I=1,W=1 --layout 'tt|t'");
    CHECK(limit.exit_code == 2);
    CHECK(limit.err.find("memory-limit") != std::string::npos);
    // verify --memory-limit states the limit in decoder-layer stashes: rank 0 holds two of two layers.
    CHECK(run_cli("verify " + limited + " --costs F=1,I=1,W=1 --layout 'tt|t' --memory-limit 4").exit_code == 0);
    CHECK(run_cli("verify " + limited + " --costs F=1,I=1,W=1 --layout 'tt|t' --memory-limit 3").exit_code == 1);
}

TEST_CASE("layout: stashes scale any activation sizes, whatever their denominators", "[layout][cli]") {
    // Every block twice a layer: every peak twice the plain run's at the same sizes (I releases part of the stash).
    for (const std::string sizes : {"F=1,I=1/2", "F=1/3,I=0", "F=2/3,I=1/7"}) {
        const std::string instance = "zb-h1 -P 2 -M 4 --costs F=1,I=1,W=1 --activation-sizes " + sizes;
        const auto doubled = simulate_json(instance + " --layout 'tt|tt'");
        const auto plain = simulate_json(instance);
        for (int rank = 0; rank < 2; ++rank) {
            const Rational two_plain = Rational(2) * *parse_rational(plain["per_rank"][rank]["exact"]["peak_activations"].get<std::string>());
            CHECK(*parse_rational(doubled["per_rank"][rank]["exact"]["peak_activations"].get<std::string>()) == two_plain);
        }
    }
}

TEST_CASE("layout: search optimises a layout as the same instance written out, and its cap counts decoder layers",
          "[layout][cli][search]") {
    auto search = [](const std::string& args) {
        const auto r = run_cli("search -P 4 -M 6 --time-limit 60 --json " + args);
        INFO(args << "\n" << r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["status"] == "optimal");
        return j["exact"]["makespan"].get<std::string>();
    };
    // Two decoder layers a block, a cap of 4 decoder-layer stashes: two micro-batches of F=I=W=2 in flight.
    CHECK(search("--costs F=1,I=1,W=1 --layout 't*2|t*2|t*2|t*2' --memory-limit 4") ==
          search("--costs F=2,I=2,W=2 --memory-limit 2"));
    // Uneven blocks without a cap: the per-block costs written out.
    CHECK(search("--costs F=1,I=1,W=1 --layout 'Et|tt|tt|tL'") ==
          search("--costs F=1,I=1,W=1 --stage-costs 1:F=2,I=2,W=2 --stage-costs 2:F=2,I=2,W=2"));
    // The file -o writes re-checks with the same flags: the makespan found, the peaks within the cap.
    const std::string out = (pp::test::scratch_dir() / "layout-search.txt").string();
    const std::string flags = " --costs F=1,I=1,W=1 --layout 't*2|t*2|t*2|t*2'";
    const std::string found = search(flags.substr(1) + " --memory-limit 4 -o " + out);
    CHECK(simulate_json(out + flags)["exact"]["makespan"] == found);
    CHECK(run_cli("verify " + out + flags + " --memory-limit 4").exit_code == 0);
    CHECK(run_cli("verify " + out + flags + " --memory-limit 3").exit_code == 1);
    // A file placement takes its own costs and limit: no layout over them.
    CHECK(run_cli("search --placement " + out + flags).exit_code == 2);
}

TEST_CASE("layout: refute at a grid's costs, each point one decoder layer's, against the blocks written out",
          "[layout][refute][cli]") {
    // 1F1B, P = 2, block 1 twice block 0 ('t|tt'): the claim (M + 1)(F + B) for M = 2..6 at four decoder costs; each
    // value re-timed here with the per-block costs written out by hand (--stage-costs, not the layout's code).
    const std::string grid = "F=1..2@1,I=1..2@1,W=1";
    const auto holds = run_cli("refute --claim 'bubble == (M+1)*(F+B)' 1f1b -P 2 -M 2..6 --costs " + grid + " --layout 't|tt'");
    INFO(holds.out << holds.err);
    CHECK(holds.exit_code == 0);
    CHECK(holds.out.find("HOLDS: no counterexample among 5 instance(s), 20 cost point(s)") != std::string::npos);
    CHECK(holds.out.find("note: --layout: the grid's and the claim's costs are one decoder layer's") != std::string::npos);
    for (int F : {1, 2})
        for (int I : {1, 2})
            for (int M = 2; M <= 6; ++M) {
                const auto sim = simulate_json(fmt::format("1f1b -P 2 -M {} --costs F={},I={},W=1 --stage-costs "
                                                           "1:F={},I={},W=2", M, F, I, 2 * F, 2 * I));
                INFO("F=" << F << " I=" << I << " M=" << M);
                CHECK(sim.at("bubble").get<double>() == (M + 1) * (F + I + 1));
            }
    const auto wrong = run_cli("refute --claim 'bubble == M*(F+B)' 1f1b -P 2 -M 2..6 --costs " + grid + " --layout 't|tt'");
    CHECK(wrong.exit_code == 1);
    CHECK(wrong.out.find("REFUTED: counterexample at P=2, M=2, costs F=1,I=1,W=1") != std::string::npos);
    CHECK(wrong.out.find("bubble = 9\n") != std::string::npos);
    // Even layers (E and L cost nothing): 1F1B's (P - 1)(F + B) for every M, through the periodicity proof at each
    // grid point.
    const auto every_m = run_cli("refute --claim 'bubble == 3*(F+B)' 1f1b -P 4 --costs F=1..2@1,I=1,W=1 --layout 'Et|t|t|tL'");
    INFO(every_m.out);
    CHECK(every_m.exit_code == 0);
    CHECK(every_m.out.find("covers every M") != std::string::npos);
    // Peaks count decoder-layer stashes: E = 1 and L = 3 make both stages stash 2 + 2 and 4 (by hand: rank 0 holds
    // two micro-batches of block Et, rank 1 one of tL).
    const std::string sized = " 1f1b -P 2 --costs F=1,I=1,W=1 --layout 'Et|tL' --layer-sizes E=1,L=3";
    CHECK(run_cli("refute --claim 'peak <= 4'" + sized).exit_code == 0);
    const auto peak = run_cli("refute --claim 'peak <= 3'" + sized);
    CHECK(peak.exit_code == 1);
    CHECK(peak.out.find("peak = 4\n") != std::string::npos);
    CHECK(peak.out.find("idle 3 peak 4\n") != std::string::npos);  // the timeline counts the same stashes
    // What a layout cannot take here: symbolic costs, a P range, pair costs, segments, a mismatched block count.
    const std::string claim = "refute --claim 'bubble >= 0' ";
    CHECK(run_cli(claim + "1f1b -P 4 --layout 't|t|t|t'").err.find("needs a --costs grid") != std::string::npos);
    CHECK(run_cli(claim + "1f1b -P 2..4 --costs F=1,I=1,W=1 --layout 't|t'").exit_code == 2);
    CHECK(run_cli(claim + "dualpipe -P 2 --costs F=1,I=1,W=1,FB=2 --layout 't|t'").exit_code == 2);
    CHECK(run_cli(claim + "dualpipe -P 2 --costs 'F=1,I=1,W=1,F&B=2' --layout 't|t'").exit_code == 2);  // its other spelling
    CHECK(run_cli(claim + "seq1f1b -P 2 --costs F=1,I=1,W=1 --layout 't|t'").exit_code == 2);
    CHECK(run_cli(claim + "1f1b -P 4 --costs F=1,I=1,W=1 --layout 't|t|t'").err.find("has 3 blocks") != std::string::npos);
    CHECK(run_cli(claim + "1f1b -P 4 --costs F=1,I=1,W=1 --layer-sizes L=2").exit_code == 2);
    CHECK(run_cli(claim + "1f1b -P 4 --costs F=1,I=1,W=1 --layout 't|t|t|t' --units rank").exit_code == 2);
}
