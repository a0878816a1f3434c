// Seq1F1B (sequence segments): every rank's order against the orders both references' own code produced
// (tests/reference/seq1f1b_orders.txt, made by scripts/reference-seq1f1b-orders.py), the in-flight count and the
// makespan against their closed forms (tests/reference/SEQ1F1B.md; the makespan is the paper's bubble (P-1)(F+B)/k),
// k = 1 against the 1F1B generator, the segment-order check on broken orders, and the formats that carry segments or
// refuse them.
#include "cli_runner.hpp"
#include "formats/input_error.hpp"
#include "formats/json_schedule.hpp"
#include "formats/native.hpp"
#include "formats/torch_csv.hpp"
#include "proofs/prove.hpp"
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace pp;
using pp::test::run_cli;

namespace {

struct ReferenceInstance {
    int P = 0, M = 0, k = 0;
    std::vector<std::vector<std::string>> ranks;  // "F3.1": forward of micro-batch 3, segment 1
};

std::vector<ReferenceInstance> read_reference() {
    std::ifstream in(std::filesystem::path(PP_SOURCE_DIR) / "tests/reference/seq1f1b_orders.txt");
    REQUIRE(in);
    std::vector<ReferenceInstance> all;
    const std::regex header(R"(instance P=(\d+) M=(\d+) k=(\d+))");
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, header)) {
            all.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), {}});
        } else if (line.rfind("rank ", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            all.back().ranks.emplace_back();
            for (std::string w; words >> w;) all.back().ranks.back().push_back(w);
        }
    }
    return all;
}

// Our op as the reference writes it: letter, micro-batch, '.', segment.
std::string reference_name(const Op& op, int k) {
    return std::string(1, kind_letter(op.kind)) + std::to_string(op.microbatch / k) + "." + std::to_string(op.microbatch % k);
}

Schedule generate(int P, int M, int k) {
    GenerateParams params{P, M};
    params.segments = k;
    return find_family("seq1f1b")->generate(params);
}

Costs costs_of(const std::string& text) { return parse_costs(text); }

}  // namespace

TEST_CASE("seq1f1b: every rank's order is the references'", "[seq1f1b]") {
    const auto reference = read_reference();
    for (const ReferenceInstance& ref : reference) {
        const Schedule schedule = generate(ref.P, ref.M, ref.k);
        INFO("P=" << ref.P << " M=" << ref.M << " k=" << ref.k);
        CHECK(schedule.segments == ref.k);
        REQUIRE(static_cast<int>(ref.ranks.size()) == ref.P);
        for (int r = 0; r < ref.P; ++r) {
            std::vector<std::string> ours;
            for (const Slot& slot : schedule.ranks[r])
                for (const Op& op : slot) {
                    CHECK(op.stage == r);
                    ours.push_back(reference_name(op, ref.k));
                }
            INFO("rank " << r);
            CHECK(ours == ref.ranks[r]);
        }
    }
    CHECK(reference.size() >= 100);
}

TEST_CASE("seq1f1b: P <= 8, M <= 4P+1, k <= 4 verify clean, and peaks and makespans are the closed forms", "[seq1f1b]") {
    const Costs costs = costs_of("F=1,I=1.5,W=0.5");  // F + B = 3
    for (int P = 1; P <= 8; ++P)
        for (int k = 1; k <= 4; ++k)
            for (int M = 1; M <= 4 * P + 1; ++M) {
                const Schedule schedule = generate(P, M, k);
                INFO("P=" << P << " M=" << M << " k=" << k);
                const VerifyReport report = verify(schedule);
                REQUIRE(report.ok());
                // In flight: min(P - r + k - 1, M k) segment units, each 1/k of a micro-batch's stash.
                for (int r = 0; r < P; ++r)
                    CHECK(report.peak_activations[r] == Rational(Integer(std::min(P - r + k - 1, M * k)), Integer(k)));
                // Segments at 1/k of the costs: (M k + P - 1)(F + B) / k, 1F1B's (M + P - 1)(F + B) at k = 1.
                const Simulation sim = simulate(schedule, costs);
                CHECK(sim.scale.to_units(sim.makespan) == Rational(Integer(3 * (M * k + P - 1)), Integer(k)));
            }
}

TEST_CASE("seq1f1b: at k = 1 it is the 1F1B generator's order", "[seq1f1b]") {
    for (int P = 1; P <= 6; ++P)
        for (int M = P; M <= 3 * P; ++M) {
            const Schedule seq = generate(P, M, 1), plain = find_family("1f1b")->generate(GenerateParams{P, M});
            INFO("P=" << P << " M=" << M);
            for (int r = 0; r < P; ++r) {
                REQUIRE(seq.ranks[r].size() == plain.ranks[r].size());
                for (size_t s = 0; s < seq.ranks[r].size(); ++s) CHECK(seq.ranks[r][s].ops[0] == plain.ranks[r][s].ops[0]);
            }
        }
}

TEST_CASE("seq1f1b: segments out of order on their stage are a segment-order violation", "[seq1f1b][verify]") {
    Schedule schedule = generate(2, 2, 2);  // rank 0: F0.0 F0.1 F1.0 B0.1 F1.1 B0.0 B1.1 B1.0
    const auto only = [](const VerifyReport& report, ViolationKind kind) {
        return !report.violations.empty() &&
               std::all_of(report.violations.begin(), report.violations.end(), [&](const Violation& v) { return v.kind == kind; });
    };
    SECTION("forwards") {
        std::swap(schedule.ranks[0][0], schedule.ranks[0][1]);  // F0.1 before F0.0
        const VerifyReport report = verify(schedule);
        REQUIRE(only(report, ViolationKind::SegmentOrder));
        CHECK(report.violations[0].rank == 0);
        CHECK(report.violations[0].position == 0);
        CHECK(report.violations[0].message.find("micro-batch 0, segment 1") != std::string::npos);
        CHECK(report.violations[0].message.find("in order") != std::string::npos);
    }
    SECTION("backwards, on the last rank where no other rule sees it") {
        auto& last = schedule.ranks[1];  // F0.0 F0.1 B0.1 F1.0 B0.0 F1.1 B1.1 B1.0
        std::swap(last[6], last[7]);     // B1.0 before B1.1
        const VerifyReport report = verify(schedule);
        REQUIRE(only(report, ViolationKind::SegmentOrder));
        CHECK(report.violations[0].message.find("reverse order") != std::string::npos);
        CHECK(std::string(violation_name(ViolationKind::SegmentOrder)) == "segment-order");
    }
    SECTION("the same order without segments is a plain, valid schedule") {
        std::swap(schedule.ranks[0][0], schedule.ranks[0][1]);
        schedule.segments = 1;
        CHECK(verify(schedule).ok());
    }
}

TEST_CASE("seq1f1b: native text and JSON carry the segments, PyTorch's CSV refuses them", "[seq1f1b][formats]") {
    const Schedule schedule = generate(3, 4, 3);
    const std::string text = write_native(schedule);
    CHECK(text.find("microbatches 4\n") != std::string::npos);  // micro-batches, not units
    CHECK(text.find("segments 3\n") != std::string::npos);
    for (const Schedule& back : {read_native(text, "t.txt"), read_json(write_json(schedule), "t.json")}) {
        CHECK(back.segments == 3);
        CHECK(same_placement(back.placement, schedule.placement));
        CHECK(back.ranks.size() == schedule.ranks.size());
        for (size_t r = 0; r < back.ranks.size(); ++r) {
            REQUIRE(back.ranks[r].size() == schedule.ranks[r].size());
            for (size_t s = 0; s < back.ranks[r].size(); ++s) CHECK(back.ranks[r][s].ops[0] == schedule.ranks[r][s].ops[0]);
        }
    }
    CHECK_THROWS_WITH(write_torch_csv(schedule, TorchCsvFormat::ComputeOnly, TorchEra::Current),
                      Catch::Contains("no sequence segments"));
    // A unit past M x k is out of range, as any micro-batch past M is.
    std::string bad = text;
    bad.replace(bad.find("microbatches 4"), 14, "microbatches 3");
    CHECK_THROWS_WITH(read_native(bad, "bad.txt"), Catch::Contains("segment unit 9 is not in 0..8 (3 micro-batches x 3 segments)"));
}

TEST_CASE("seq1f1b: --segments on the command line", "[seq1f1b][cli]") {
    auto defaulted = run_cli("generate seq1f1b -P 4 -M 8");
    CHECK(defaulted.exit_code == 0);
    CHECK(defaulted.err.find("k = 2 segments per micro-batch (its default") != std::string::npos);
    CHECK(defaulted.out == run_cli("generate seq1f1b -P 4 -M 8 --segments 2").out);
    auto verified = run_cli("verify seq1f1b -P 4 -M 8 --segments 2");
    CHECK(verified.exit_code == 0);
    CHECK(verified.out.find("8 micro-batches x 2 sequence segments") != std::string::npos);
    CHECK(run_cli("generate 1f1b -P 4 -M 8 --segments 2").exit_code == 2);      // only seq1f1b has segments
    CHECK(run_cli("generate seq1f1b -P 4 -M 8 --segments 0").exit_code == 2);
    CHECK(run_cli("generate seq1f1b -P 4 -M 8 -o x.csv").exit_code == 2);       // the CSV cannot hold them
    // prove, formula and refute take them (below); family_spec refuses seq1f1b unless asked with k.
    std::string why;
    CHECK_FALSE(family_spec("seq1f1b", 4, &why).has_value());
    CHECK(family_spec("seq1f1b", 4, &why, std::nullopt, std::nullopt, 2).has_value());
    CHECK(run_cli("formula 1f1b -P 4 --segments 2").exit_code == 2);
    // equiv sees the segments: the same op numbers over 2 segments are other work than over 1.
    const auto dir = pp::test::scratch_dir();
    CHECK(run_cli("generate seq1f1b -P 4 -M 4 --segments 1 -o " + (dir / "seq1.txt").string()).exit_code == 0);
    CHECK(run_cli("equiv " + (dir / "seq1.txt").string() + " 1f1b -P 4 -M 4").exit_code == 0);
    CHECK(run_cli("generate seq1f1b -P 4 -M 2 --segments 2 -o " + (dir / "seq2.txt").string()).exit_code == 0);
    CHECK(run_cli("equiv " + (dir / "seq2.txt").string() + " 1f1b -P 4 -M 4").exit_code == 1);
    CHECK(run_cli("list").out.find("seq1f1b") != std::string::npos);
}

namespace {

// An independent timing of a one-stage-per-rank schedule of F and B ops: each op starts when its rank's previous
// op and its input are done (forward from the stage before, backward from the stage after or the last stage's
// forward), an op of unit u lasting its kind's cost times share[u mod k].
Rational reference_makespan(const Schedule& s, const Rational& F, const Rational& B, const std::vector<Rational>& share) {
    const int P = s.rank_count(), units = s.placement.total_microbatches();
    std::vector<std::vector<std::optional<Rational>>> end_f(P, std::vector<std::optional<Rational>>(units)), end_b = end_f;
    std::vector<size_t> next(P, 0);
    std::vector<Rational> free(P, Rational(0));
    Rational makespan(0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int r = 0; r < P; ++r)
            while (next[r] < s.ranks[r].size()) {
                const Op op = s.ranks[r][next[r]].ops[0];
                const int u = op.microbatch;
                const std::optional<Rational> input = op.kind == OpKind::F ? (r == 0 ? std::optional(Rational(0)) : end_f[r - 1][u])
                                                      : r == P - 1         ? end_f[r][u]
                                                                           : end_b[r + 1][u];
                if (!input) break;
                const Rational start = std::max(free[r], *input);
                const Rational end = start + (op.kind == OpKind::F ? F : B) * share[u % s.segments];
                (op.kind == OpKind::F ? end_f : end_b)[r][u] = end;
                free[r] = end, makespan = std::max(makespan, end), ++next[r], progress = true;
            }
    }
    return makespan;
}

}  // namespace

TEST_CASE("seq1f1b: per-segment cost shares time as an independent simulation does", "[seq1f1b]") {
    // attention=A: (1 - A)/k + A (2j + 1)/k^2; at k = 2, A = 1/2: 3/8 and 5/8.
    CHECK(parse_segment_cost_shares("attention=1/2", 2) == std::vector<Rational>{Rational(Integer(3), Integer(8)), Rational(Integer(5), Integer(8))});
    CHECK_THROWS_AS(parse_segment_cost_shares("1/4,1/4", 2), CostSyntaxError);     // sums to 1/2
    CHECK_THROWS_AS(parse_segment_cost_shares("1/4,1/4,1/2", 2), CostSyntaxError); // three shares for two segments
    CHECK_THROWS_AS(parse_segment_cost_shares("0,1", 2), CostSyntaxError);         // a segment costs something
    std::mt19937 rng(7);
    const Costs costs = costs_of("F=1,I=1.5,W=0.5");  // B = 2
    int compared = 0;
    for (int P = 1; P <= 5; ++P)
        for (int k = 2; k <= 4; ++k)
            for (int M = 1; M <= 6; ++M) {
                Schedule schedule = generate(P, M, k);
                std::vector<Rational> share;
                Rational left(1);
                for (int j = 0; j + 1 < k; ++j) {
                    share.push_back(left * Rational(Integer(1 + static_cast<int>(rng() % 5)), Integer(8)));
                    left -= share.back();
                }
                share.push_back(left);
                schedule.segment_cost_shares = share;
                const Simulation sim = simulate(schedule, costs);
                INFO("P=" << P << " M=" << M << " k=" << k);
                CHECK(sim.scale.to_units(sim.makespan) == reference_makespan(schedule, Rational(1), Rational(2), share));
                ++compared;
            }
    CHECK(compared == 90);
}

TEST_CASE("seq1f1b: segment costs in files and on the command line", "[seq1f1b][formats][cli]") {
    Schedule schedule = generate(2, 3, 2);
    schedule.segment_cost_shares = parse_segment_cost_shares("attention=1/3", 2);
    const std::string text = write_native(schedule);
    // attention=1/3 at k = 2: (2/3)/2 + (1/3)/4 = 5/12 and (2/3)/2 + (1/3)(3/4) = 7/12.
    CHECK(text.find("segment-costs 5/12,7/12\n") != std::string::npos);
    for (const Schedule& back : {read_native(text, "t.txt"), read_json(write_json(schedule), "t.json")})
        CHECK(back.segment_cost_shares == schedule.segment_cost_shares);
    // Without a segments line the shares have nothing to apply to: file:line:column.
    std::string bad = "ranks 1\nmicrobatches 1\nsegment-costs 1/2,1/2\nrank 0: 0F0 0B0\n";
    try {
        read_native(bad, "bad.txt");
        FAIL("read");
    } catch (const InputError& e) {
        CHECK(e.where() == "bad.txt:3:15");
        CHECK(std::string(e.what()).find("needs a 'segments K' line") != std::string::npos);
    }
    CHECK(run_cli("simulate seq1f1b -P 4 -M 8 --segment-costs 1/4,3/4").exit_code == 0);
    CHECK(run_cli("simulate seq1f1b -P 4 -M 8 --segment-costs 1/4,1/4").exit_code == 2);
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --segment-costs 1/4,3/4").exit_code == 2);
}

TEST_CASE("seq1f1b: an op on another rank neither hides nor fakes a segment-order break", "[seq1f1b][verify]") {
    const auto kinds = [](const std::string& text) {
        std::vector<std::string> out;
        for (const Violation& v : verify(read_native(text, "t.txt")).violations) out.push_back(violation_name(v.kind));
        std::sort(out.begin(), out.end());
        return out;
    };
    const std::string head = "ranks 2\nmicrobatches 1\nsegments 2\n";
    // 1F0 also on rank 0: wrong-rank (and a duplicate), but rank 1 runs its segments in order.
    const auto stray = kinds(head + "rank 0: 0F0 0F1 0B1 0B0 1F0\nrank 1: 1F0 1F1 1B1 1B0\n");
    CHECK(std::count(stray.begin(), stray.end(), "segment-order") == 0);
    CHECK(std::count(stray.begin(), stray.end(), "wrong-rank") == 1);
    // 1B1 misplaced on rank 0, and rank 1 runs 1B0 before 1B1: that break is still reported.
    const auto hidden = kinds(head + "rank 0: 1B1 0F0 0F1 0B1 0B0\nrank 1: 1F0 1F1 1B0 1B1\n");
    CHECK(std::count(hidden.begin(), hidden.end(), "segment-order") == 1);
}

TEST_CASE("seq1f1b: the commands that do not model segments refuse them, and a refused write keeps the file", "[seq1f1b][cli]") {
    const auto dir = pp::test::scratch_dir();
    const std::string file = (dir / "seq-s.txt").string(), csv = (dir / "seq-keep.csv").string();
    REQUIRE(run_cli("generate seq1f1b -P 2 -M 2 --segments 2 -o " + file).exit_code == 0);
    auto searched = run_cli("search --placement " + file + " --time-limit 5 -q");
    CHECK(searched.exit_code == 2);
    CHECK(searched.err.find("sequence segments") != std::string::npos);
    {
        std::ofstream keep(csv);
        keep << "before\n";
    }
    CHECK(run_cli("convert " + file + " -o " + csv).exit_code == 2);
    CHECK(pp::test::slurp(csv) == "before\n");
    auto compared = run_cli("compare seq1f1b 1f1b -P 4 -M 4 --segments 4 --json");
    CHECK(compared.exit_code == 0);
    CHECK(compared.out.find("seq1f1b(P=4,M=4,k=4)") != std::string::npos);
    CHECK(run_cli("compare 1f1b -P 4 -M 4 --segments 4").exit_code == 2);  // nothing compared takes k
    // The trace names micro-batch and segment apart (0F1 is segment 1 of micro-batch 0).
    const std::string trace = (dir / "seq-trace.json").string();
    REQUIRE(run_cli("show seq1f1b -P 2 -M 1 --segments 2 --trace " + trace).exit_code == 0);
    const auto events = nlohmann::json::parse(pp::test::slurp(trace))["traceEvents"];
    bool found = false;
    for (const auto& e : events)
        if (e.contains("args") && e["args"].contains("op") && e["args"]["op"] == "0F1")
            found = e["args"]["microbatch"] == 0 && e["args"]["segment"] == 1;
    CHECK(found);
    // plan prices seq1f1b when named (k = 2): at PP = 4 its worst rank stashes (P + k - 1)/k = 5/2 micro-batches
    // against 1F1B's 4, and its gradient all-reduce hides under half a backward, (I + W)/2 less than 1F1B's.
    auto planned = run_cli("plan --preset dense-70b --gpus 64 --families seq1f1b,1f1b --pp 4 --top 10 --json");
    INFO(planned.out << planned.err);
    REQUIRE(planned.exit_code <= 1);
    const auto plan = nlohmann::json::parse(planned.out);
    std::optional<nlohmann::json> seq, plain;
    for (const auto& o : plan["options"]) (o["family"] == "seq1f1b" ? seq : plain) = o;
    REQUIRE(seq);
    REQUIRE(plain);
    CHECK((*seq)["segments"] == 2);
    CHECK((*seq)["label"].get<std::string>().find("k=2") != std::string::npos);
    CHECK((*seq)["exact"]["peak_stashes"] == "2.5");  // 5/2, written as a finite decimal
    CHECK((*plain)["exact"]["peak_stashes"] == "4");
    const double half_backward = ((*seq)["op_costs_ms"]["I"].get<double>() + (*seq)["op_costs_ms"]["W"].get<double>()) / 2e3;
    CHECK((*seq)["dp_allreduce_exposed_seconds"].get<double>() - (*plain)["dp_allreduce_exposed_seconds"].get<double>() ==
          Approx(half_backward));
    // --segments 4: (P + k - 1)/k = 7/4 stashes, and the all-reduce hides under a quarter of a backward.
    auto four = run_cli("plan --preset dense-70b --gpus 64 --families seq1f1b --segments 4 --pp 4 --top 10 --json");
    REQUIRE(four.exit_code <= 1);
    const auto quarter = nlohmann::json::parse(four.out)["options"].at(0);
    CHECK(quarter["segments"] == 4);
    CHECK(quarter["label"].get<std::string>().find("k=4") != std::string::npos);
    CHECK(quarter["exact"]["peak_stashes"] == "1.75");
    const double quarter_backward = (quarter["op_costs_ms"]["I"].get<double>() + quarter["op_costs_ms"]["W"].get<double>()) / 4e3;
    CHECK(quarter["dp_allreduce_exposed_seconds"].get<double>() - (*plain)["dp_allreduce_exposed_seconds"].get<double>() ==
          Approx(half_backward * 2 - quarter_backward));
    // k = 1 is named too (the option is still Seq1F1B's, at one segment).
    const auto one = nlohmann::json::parse(
        run_cli("plan --preset dense-70b --gpus 64 --families seq1f1b --segments 1 --pp 4 --top 10 --json").out);
    CHECK(one["options"].at(0)["label"].get<std::string>().find("k=1") != std::string::npos);
    // Without seq1f1b among the families --segments would change nothing: refused.
    CHECK(run_cli("plan --preset dense-70b --gpus 64 --segments 4").exit_code == 2);
    CHECK(run_cli("plan --preset dense-70b --gpus 64 --families seq1f1b --segments 65").exit_code == 2);
}

// Seq1F1B's order for every M: its generator runs a step program whose phase counts backward segments in reverse
// (schedules/step_program.hpp), Lemma 2 holds on it, and prove works on the units at 1/k of the costs and stash.
namespace {

// The order as the header of schedules/seq1f1b.cpp writes it, at M*k >= w_r.
std::vector<std::string> closed_form_rank(int P, int r, int M, int k) {
    const int units = M * k, w = std::min(P - r - 2 + k, units);
    auto f = [&](int i) { return "F" + std::to_string(i); };
    auto b = [&](int i) { return "B" + std::to_string(i / k * k + (k - 1 - i % k)); };
    std::vector<std::string> out;
    for (int i = 0; i < w; ++i) out.push_back(f(i));
    for (int i = 0; i < units - w; ++i) out.push_back(f(w + i)), out.push_back(b(i));
    for (int i = units - w; i < units; ++i) out.push_back(b(i));
    return out;
}

}  // namespace

TEST_CASE("seq1f1b: the step program is the published order, and Lemma 2 holds on it", "[seq1f1b][step-program]") {
    for (int P = 1; P <= 8; ++P)
        for (int k = 1; k <= 4; ++k) {
            GenerateParams params{P, 1};
            params.segments = k;
            const FamilyStepProgram program = find_family("seq1f1b")->step_program(params);
            // c_0 = ceil((P - 2 + k)/k): the first M at which rank 0's warm-up fits
            CHECK(program.m_origin == std::max(1, (P - 2 + k + k - 1) / k));
            std::vector<int> delta;
            CHECK(step_program_lemma2_failure(program, &delta) == "");
            CHECK(delta == std::vector<int>{k});
            for (int M = program.m_origin; M <= 4 * P + 1; ++M)
                for (int r = 0; r < P; ++r) {
                    std::vector<std::string> got;
                    for (const Slot& slot : run_step_program(program.ranks[r], M - program.m_origin))
                        got.push_back(std::string(1, kind_letter(slot.ops[0].kind)) + std::to_string(slot.ops[0].microbatch));
                    INFO("P=" << P << " k=" << k << " M=" << M << " rank " << r);
                    CHECK(got == closed_form_rank(P, r, M, k));
                }
        }
    // The segment map commutes only with a raise by a multiple of k: one (F, B) round per block is refused.
    FamilyStepProgram wrong{1, 1, {}};
    wrong.ranks.push_back(StepProgramBuilder({StepPhase{0, 0, 2}}).repeat(0, {forward(0), full_backward(0)}, 1).take());
    CHECK_THAT(step_program_lemma2_failure(wrong), Catch::Contains("not a multiple"));
}

TEST_CASE("seq1f1b: prove gives the closed forms for every M, and pipeproof-check re-derives them", "[seq1f1b][prove]") {
    // Bubble (P - 1)(F + B)/k and rank r's peak (P - r + k - 1)/k stashes (proofs/catalogue/seq1f1b-memory-and-bubble.md,
    // by hand), against the prover and against the simulator at one large M.
    for (int P : {2, 3, 5, 8})
        for (int k : {1, 2, 3}) {
            for (const auto& [text, F, B] : {std::tuple<std::string, int, int>{"F=1,I=1,W=1", 1, 2}, {"F=2,I=3,W=1", 2, 4}}) {
                std::string why;
                const auto spec = family_spec("seq1f1b", P, &why, std::nullopt, std::nullopt, k);
                REQUIRE(spec);
                ProveOptions options;
                options.costs = scaled_op_costs(costs_of(text), Rational(1, k));
                const ProofResult r = prove(*spec, options);
                INFO("P=" << P << " k=" << k << " " << text << "\n" << format_proof(r));
                REQUIRE(r.verdict == Verdict::Proved);
                REQUIRE(r.bubble_exact);
                CHECK(*r.bubble_exact == Rational((P - 1) * (F + B), k));
                const Simulation large = simulate(generate(P, 6 * P, k), costs_of(text));
                CHECK(large.scale.to_units(large.bubble) == *r.bubble_exact);
            }
            ProveOptions memory;
            memory.property = Property::MemoryBound;
            memory.activations = scaled_sizes(ActivationModel{}, Rational(1, k));
            const ProofResult m = prove(*family_spec("seq1f1b", P, nullptr, std::nullopt, std::nullopt, k), memory);
            REQUIRE(m.verdict == Verdict::Proved);
            for (int r = 0; r < P; ++r) CHECK(m.peaks.at(r) == Rational(P - r + k - 1, k));
        }
    // The CLI scales the costs itself, says so, and the certificate is CHECKED.
    const auto dir = pp::test::fresh_dir("seq1f1b-certificate");
    const auto cli = run_cli("prove seq1f1b -P 8 --segments 2 --costs F=1,I=1,W=1 --certificate " + dir.string());
    INFO(cli.out << cli.err);
    CHECK(cli.exit_code == 0);
    CHECK(cli.out.find("bubble = 10.5 for every admissible M >= 4") != std::string::npos);
    CHECK(cli.out.find("k = 2 per micro-batch, each unit at 1/2 of the op costs") != std::string::npos);
    const auto check = pp::test::run_check(dir.string());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK(check.out.find("k = 2 sequence segments per micro-batch") != std::string::npos);
    // The certificate read with another k: the generator's order differs from the word.
    nlohmann::json j = nlohmann::json::parse(pp::test::slurp(dir / "certificate.json"));
    j["claim"]["segments"] = 3;
    std::ofstream(dir / "certificate.json", std::ios::binary) << j.dump(2);
    const auto corrupted = pp::test::run_check(dir.string());
    CHECK(corrupted.exit_code == 1);
    CHECK(corrupted.out.find("NOT CHECKED: word") != std::string::npos);
    // k = 1 is named in the certificate too (the generator's default is 2, which the checker would otherwise build).
    const auto one = pp::test::fresh_dir("seq1f1b-k1");
    REQUIRE(run_cli("prove seq1f1b -P 3 --segments 1 --costs F=1,I=1,W=1 --certificate " + one.string()).exit_code == 0);
    CHECK(pp::test::run_check(one.string()).exit_code == 0);
    CHECK(run_cli("prove seq1f1b -P 4 --property deadlock-free").exit_code == 0);      // needs no costs
    CHECK(run_cli("prove 1f1b -P 4 --segments 2 --costs F=1,I=1,W=1").exit_code == 2);  // only seq1f1b has segments
}

TEST_CASE("seq1f1b: refute states claims in a micro-batch's costs and peaks, for every M", "[seq1f1b][refute]") {
    // (P - 1)(F + B)/k over the whole symbolic region, by Z3 per instance up to each P's proved periodic point.
    const auto holds = run_cli("refute --claim 'bubble == (P-1)*(F+B)/2' seq1f1b -P 2..5 --segments 2");
    INFO(holds.out << holds.err);
    CHECK(holds.exit_code == 0);
    CHECK(holds.out.find("HOLDS") != std::string::npos);
    CHECK(holds.out.find("(pipeproof prove seq1f1b -P 5 --segments 2 --property bubble-constant: PROVED)") !=
          std::string::npos);
    // A wrong k in the formula: refuted, with the counterexample in a micro-batch's costs (F=1, B=2: 1.5, not 1).
    const auto wrong = run_cli("refute --claim 'bubble == (P-1)*(F+B)/3' seq1f1b -P 2..4 --segments 2 --costs F=1,I=1,W=1");
    INFO(wrong.out);
    CHECK(wrong.exit_code == 1);
    CHECK(wrong.out.find("REFUTED: counterexample at P=2, M=1, costs F=1,I=1,W=1") != std::string::npos);
    CHECK(wrong.out.find("bubble = 1.5") != std::string::npos);
    // Peaks in a micro-batch's stashes: at M = 1 rank 0 holds its 2 units, 1 stash, not (P + k - 1)/k = 1.5.
    const auto peak = run_cli("refute --claim 'peak == (P+1)/2' seq1f1b -P 2 --segments 2 --costs F=1,I=1,W=1");
    CHECK(peak.exit_code == 1);
    CHECK(peak.out.find("peak = 1\n") != std::string::npos);
    CHECK(run_cli("refute --claim 'bubble >= 0' 1f1b -P 2 --segments 2").exit_code == 2);
}

namespace {

// max over forms (JSON coefficients by letter) at a cost point given by letter.
Rational max_of_forms(const nlohmann::json& forms, const std::map<std::string, Rational>& point) {
    std::optional<Rational> best;
    for (const auto& form : forms) {
        Rational value(0);
        for (const auto& [letter, coefficient] : form.at("coefficients").items())
            value += Rational(coefficient.get<std::int64_t>()) * point.at(letter);
        if (!best || *best < value) best = value;
    }
    REQUIRE(best);
    return *best;
}

}  // namespace

TEST_CASE("seq1f1b: prove and formula at symbolic costs speak of a unit, and a micro-batch's bubble is the unit's over k",
          "[seq1f1b][prove][formula]") {
    // The prover works on segment units at 1/k of the costs. Its per-unit bubble, and the micro-batch form it prints
    // beside it, against the simulator run at a micro-batch's costs (an independent path) and the closed form
    // (P - 1)(F + B)/k at three cost points.
    const std::vector<std::array<int, 3>> points{{1, 1, 1}, {2, 3, 1}, {5, 1, 4}};
    for (int P : {2, 3, 5})
        for (int k : {1, 2, 3}) {
            const auto out = run_cli(fmt::format("prove seq1f1b -P {} --segments {} --json", P, k));
            INFO("P=" << P << " k=" << k << "\n" << out.out << out.err);
            REQUIRE(out.exit_code == 0);
            const auto j = nlohmann::json::parse(out.out);
            CHECK(j.at("segments") == k);
            CHECK(j.contains("bubble_per_microbatch") == (k > 1));
            for (const auto& [F, I, W] : points) {
                const std::map<std::string, Rational> unit{{"F", Rational(F, k)}, {"I", Rational(I, k)}, {"W", Rational(W, k)}};
                const std::map<std::string, Rational> whole{{"F", Rational(F)}, {"I", Rational(I)}, {"W", Rational(W)}};
                const Rational closed_form(static_cast<std::int64_t>(P - 1) * (F + I + W), k);
                const Simulation large = simulate(generate(P, 6 * P, k), costs_of(fmt::format("F={},I={},W={}", F, I, W)));
                CHECK(large.scale.to_units(large.bubble) == closed_form);
                CHECK(max_of_forms(j.at("bubble_forms"), unit) == closed_form);  // per unit, at a unit's costs
                if (k > 1) {
                    const auto& per_microbatch = j.at("bubble_per_microbatch");
                    CHECK(per_microbatch.at("divisor") == k);
                    CHECK(max_of_forms(per_microbatch.at("forms"), whole) / Rational(k) == closed_form);
                }
            }
        }
    const auto text = run_cli("prove seq1f1b -P 4 --segments 3");
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("in a micro-batch's costs (each letter a whole micro-batch's, comm as it is): bubble = "
                        "(3*F + 3*I + 3*W)/3\n") != std::string::npos);
    CHECK(run_cli("prove seq1f1b -P 1 --segments 3").out.find("comm as it is): bubble = 0\n") != std::string::npos);
    // Exact costs have no region for an assumption to cut: refused, not ignored.
    CHECK(run_cli("prove seq1f1b -P 3 --segments 2 --costs F=3,I=1,W=1 --assume 'F >= 4'").exit_code == 2);
    CHECK(run_cli("formula seq1f1b -P 3 --segments 65").exit_code == 2);  // beyond what prove, which it cites, takes
    // The certificate of the per-unit statement is CHECKED, and names k.
    const auto dir = pp::test::fresh_dir("seq1f1b-symbolic-certificate");
    REQUIRE(run_cli("prove seq1f1b -P 3 --segments 2 --basis paper --certificate " + dir.string()).exit_code == 0);
    const auto check = pp::test::run_check(dir.string());
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK(check.out.find("CHECKED: seq1f1b at P = 3, k = 2 sequence segments") != std::string::npos);
}

TEST_CASE("seq1f1b: an assumption that ties comm to the op costs is read in a micro-batch's costs", "[seq1f1b][prove]") {
    // comm == F of a micro-batch is comm == k F of a unit: the counterexample, printed per unit, says comm = 2F, and
    // the simulator at the micro-batch costs it stands for grows as the proof says (32 every 3 micro-batches from 6).
    const auto out = run_cli("prove seq1f1b -P 3 --segments 2 --symbolic-comm --assume 'comm == F'");
    INFO(out.out << out.err);
    CHECK(out.exit_code == 1);
    CHECK(out.out.find("cost assumption: comm == F (in a micro-batch's costs)") != std::string::npos);
    CHECK(out.out.find("result: bubble grows by 32 every 3 blocks") != std::string::npos);
    CHECK(out.out.find("costs F=2,I=2,W=2,B=4,FB=3,comm=4") != std::string::npos);
    const Costs whole = costs_of("F=4,I=4,W=4,comm=4");
    auto bubble_at = [&](int M) {
        const Simulation s = simulate(generate(3, M, 2), whole);
        return s.scale.to_units(s.bubble);
    };
    CHECK(bubble_at(9) - bubble_at(6) == Rational(32));
    CHECK(bubble_at(12) - bubble_at(9) == Rational(32));
    // The same region written per unit (comm == 2F) gives the same verdict: only the letters' scale moved.
    const auto per_unit = run_cli("prove seq1f1b -P 3 --segments 1 --symbolic-comm --assume 'comm == 2*F'");
    CHECK(per_unit.exit_code == 1);
}

TEST_CASE("seq1f1b: formula gives a unit's idle per rank, as the simulator times it", "[seq1f1b][formula]") {
    const auto out = run_cli("formula seq1f1b -P 3 --segments 2 --json");
    INFO(out.out << out.err);
    REQUIRE(out.exit_code == 0);
    const auto j = nlohmann::json::parse(out.out);
    CHECK(j.at("segments") == 2);
    const Simulation s = simulate(generate(3, 12, 2), costs_of("F=2,I=3,W=1"));
    const std::map<std::string, Rational> unit{{"F", Rational(1)}, {"I", Rational(3, 2)}, {"W", Rational(1, 2)}};
    for (const auto& rank : j.at("per_rank")) {
        const auto& pieces = rank.at("idle_by_residue").at(0);
        REQUIRE(pieces.size() == 1);  // one form everywhere: (P - 1)(F + B) per unit on every rank
        const int r = rank.at("rank");
        nlohmann::json forms = nlohmann::json::array({pieces.at(0).at("value")});
        CHECK(max_of_forms(forms, unit) == s.scale.to_units(s.ranks.at(r).idle));
    }
    const auto text = run_cli("formula seq1f1b -P 3 --segments 2");
    CHECK(text.out.find("(pipeproof prove seq1f1b -P 3 --segments 2 --property bubble-constant)") != std::string::npos);
    CHECK(text.out.find("every cost and size in the formulas below is per unit") != std::string::npos);
}
