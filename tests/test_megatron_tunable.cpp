// Megatron-Core's tunable interleaved 1F1B (issue 43): interleaved-1f1b --group-size G and combined-1f1b against
// the orders Megatron's own functions produce (tests/reference/megatron_tunable_orders.txt, README beside it), the
// docstring examples by hand, every instance P <= 8, M <= 4P+1 verified clean, G = P against the orders that
// existed before, and the command line's refusals.
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

using namespace pp;
using pp::test::run_cli;

namespace {

const std::filesystem::path kReference =
    std::filesystem::path(PP_SOURCE_DIR) / "tests" / "reference" / "megatron_tunable_orders.txt";

struct Instance {
    int P = 0, V = 0, G = 0, M = 0;
    bool overlap = false;
    std::optional<std::string> rejected;  // Megatron's exception and message
    std::vector<std::string> ranks;       // "rank R: F0.0 ..." as written
};

std::vector<Instance> read_reference() {
    std::ifstream in(kReference);
    REQUIRE(in.good());
    std::vector<Instance> all;
    const std::regex head("instance P=(\\d+) V=(\\d+) G=(\\d+) M=(\\d+) overlap=([01])");
    std::string line;
    REQUIRE(std::getline(in, line));
    REQUIRE(line.rfind("# Megatron-Core tunable interleaved 1F1B reference orders, NVIDIA/Megatron-LM@", 0) == 0);
    while (std::getline(in, line)) {
        std::smatch m;
        if (line.empty() || line[0] == '#') continue;
        if (std::regex_match(line, m, head)) {
            all.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), m[5] == "1", {}, {}});
        } else if (line.rfind("rejected: ", 0) == 0) {
            REQUIRE(!all.empty());
            all.back().rejected = line.substr(10);
        } else {
            REQUIRE(!all.empty());
            all.back().ranks.push_back(line);
        }
    }
    return all;
}

Schedule generate(const std::string& family, int P, int M, std::optional<int> V, std::optional<int> G) {
    const ScheduleFamily* f = find_family(family);
    REQUIRE(f != nullptr);
    GenerateParams params{P, M, V};
    params.group_size = G;
    return f->generate(params);
}

// The reference's notation: LETTER MICROBATCH . CHUNK, chunk = stage / P (loop map), an F&B pair joined by '+'.
std::string op_text(const Op& op, int P) {
    return std::string(1, kind_letter(op.kind)) + std::to_string(op.microbatch) + "." + std::to_string(op.stage / P);
}

std::string rank_line(const Schedule& s, int r) {
    const int P = s.rank_count();
    std::string line = "rank " + std::to_string(r) + ":";
    for (const Slot& slot : s.ranks[static_cast<size_t>(r)]) {
        line += " ";
        for (int k = 0; k < slot.count; ++k) {
            CHECK(slot.ops[k].stage % P == r);
            line += (k ? "+" : "") + op_text(slot.ops[k], P);
        }
    }
    return line;
}

// Rank r's forward micro-batches, chunks, or Megatron's +/- chunk order (convert_schedule_table_to_order).
std::string forward_microbatches(const Schedule& s, int r) {
    std::string out;
    for (const Slot& slot : s.ranks[static_cast<size_t>(r)])
        for (int k = 0; k < slot.count; ++k)
            if (slot.ops[k].kind == OpKind::F) out += (out.empty() ? "" : " ") + std::to_string(slot.ops[k].microbatch);
    return out;
}

std::string forward_chunks(const Schedule& s, int r) {
    std::string out;
    for (const Slot& slot : s.ranks[static_cast<size_t>(r)])
        for (int k = 0; k < slot.count; ++k)
            if (slot.ops[k].kind == OpKind::F) out += (out.empty() ? "" : " ") + std::to_string(slot.ops[k].stage / s.rank_count());
    return out;
}

std::string signed_chunk_order(const Schedule& s, int r) {
    std::string out;
    for (const Slot& slot : s.ranks[static_cast<size_t>(r)])
        for (int k = 0; k < slot.count; ++k) {
            const int chunk = slot.ops[k].stage / s.rank_count() + 1;
            out += (out.empty() ? "" : " ") + std::to_string(slot.ops[k].kind == OpKind::F ? chunk : -chunk);
        }
    return out;
}

// The ops of every rank in order, slots flattened (PyTorch's idle cells are not slots).
std::vector<std::vector<Op>> ops_of(const Schedule& s) {
    std::vector<std::vector<Op>> out;
    for (const auto& rank : s.ranks) {
        out.emplace_back();
        for (const Slot& slot : rank)
            for (int k = 0; k < slot.count; ++k) out.back().push_back(slot.ops[k]);
    }
    return out;
}

bool megatron_accepts(int P, int G, int M) { return P <= G && G <= M && (M % G == 0 || M % G >= P); }

}  // namespace

TEST_CASE("megatron tunable: order-identical to Megatron-Core's own functions on every instance of the reference file",
          "[conformance][issue43]") {
    const auto instances = read_reference();
    int accepted = 0, rejected = 0, with_overlap = 0, below_p = 0, above_p = 0, not_multiple = 0;
    for (const Instance& in : instances) {
        INFO("P=" << in.P << " V=" << in.V << " G=" << in.G << " M=" << in.M << " overlap=" << in.overlap);
        const std::string family = in.overlap ? "combined-1f1b" : "interleaved-1f1b";
        CHECK(megatron_accepts(in.P, in.G, in.M) == !in.rejected);
        if (in.rejected) {
            CHECK_THROWS_AS(generate(family, in.P, in.M, in.V, in.G), GenerateError);
            CHECK_THROWS_AS(generate("combined-1f1b", in.P, in.M, in.V, in.G), GenerateError);
            // Megatron's message, with its missing space put back.
            const std::string expected = std::regex_replace(in.rejected->substr(in.rejected->find(": ") + 2),
                                                            std::regex("stageshould"), "stage should");
            const std::string head = expected.substr(0, expected.find(". Otherwise"));
            CHECK_THROWS_WITH(generate(family, in.P, in.M, in.V, in.G), Catch::Contains(head));
            if (in.G < in.P) ++below_p;
            ++rejected;
            continue;
        }
        const Schedule s = generate(family, in.P, in.M, in.V, in.G);
        REQUIRE(static_cast<int>(in.ranks.size()) == in.P);
        REQUIRE(s.rank_count() == in.P);
        CHECK(s.gaps.empty());
        for (int r = 0; r < in.P; ++r) CHECK(rank_line(s, r) == in.ranks[static_cast<size_t>(r)]);
        ++accepted;
        with_overlap += in.overlap;
        above_p += in.G > in.P;
        not_multiple += in.M % in.G != 0;
    }
    // tests/reference/README.md: 384 accepted (192 with the overlap), 234 rejected.
    CHECK(accepted == 384);
    CHECK(with_overlap == 192);
    CHECK(rejected == 234);
    CHECK(below_p > 0);
    CHECK(above_p > 0);
    CHECK(not_multiple > 0);
}

TEST_CASE("megatron tunable: the docstring examples of Megatron-Core reproduced exactly", "[issue43]") {
    // model_parallel_config.py, microbatch_group_size_per_vp_stage: "for PP=2 VP=2, when
    // microbatch_group_size_per_vp_stage=2, num_microbatches = 4, we have
    //   rank 0 | 0 1 0 1 2 3 2 3
    //   rank 1 |   0 1 0 1 2 3 2 3"
    const Schedule g2 = generate("interleaved-1f1b", 2, 4, 2, 2);
    CHECK(forward_microbatches(g2, 0) == "0 1 0 1 2 3 2 3");
    CHECK(forward_microbatches(g2, 1) == "0 1 0 1 2 3 2 3");
    // "When microbatch_group_size_per_vp_stage=3, num_microbatches = 5, we have
    //   rank 0 | 0 1 2 0 1 2 3 4 3 4
    //   rank 1 |   0 1 2 0 1 2 3 4 3 4"
    const Schedule g3 = generate("interleaved-1f1b", 2, 5, 2, 3);
    CHECK(forward_microbatches(g3, 0) == "0 1 2 0 1 2 3 4 3 4");
    CHECK(forward_microbatches(g3, 1) == "0 1 2 0 1 2 3 4 3 4");
    // schedules.py, forward_backward_pipelining_with_interleaving: "the tunable schedule table for PP2 N3M5 with VP2
    //   virtual_microbatch_id | 0 1 2 3 4 5 6 7 8 9
    //   microbatch_id         | 0 1 2 0 1 2 3 4 3 4
    //   model_chunk_id        | 0 0 0 1 1 1 0 0 1 1"
    CHECK(forward_chunks(g3, 0) == "0 0 0 1 1 1 0 0 1 1");
    CHECK(forward_chunks(g3, 1) == "0 0 0 1 1 1 0 0 1 1");
    // cuda_graphs.py, convert_schedule_table_to_order, same table: "If num_warmup_microbatches is 5, the output order
    // is: 1 1 1 2 2 2 -2 1 -2 1 -2 2 -1 2 -1 -1 -2 -2 -1 -1". Rank 0 of PP=2 warms up 2(2-0-1) + (2-1)*3 = 5.
    CHECK(signed_chunk_order(g3, 0) == "1 1 1 2 2 2 -2 1 -2 1 -2 2 -1 2 -1 -1 -2 -2 -1 -1");
    // Rank 1 warms up 3: the same walk with w = 3.
    CHECK(signed_chunk_order(g3, 1) == "1 1 1 2 -2 2 -2 2 -2 1 -1 1 -1 2 -1 2 -2 -2 -1 -1");
    // Combined 1F1B (the EP overlap): one more warm-up forward, then the overlapped F&B pairs.
    const Schedule c3 = generate("combined-1f1b", 2, 5, 2, 3);
    CHECK(rank_line(c3, 0) == "rank 0: F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 F3.0+B0.1 F4.0+B1.1 F3.1+B2.1 F4.1+B0.0 B1.0 B2.0 "
                              "B3.1 B4.1 B3.0 B4.0");
}

TEST_CASE("megatron tunable: every accepted P <= 8, M <= 4P+1, V 2..4, G, with and without the overlap, verifies clean",
          "[issue43]") {
    int checked = 0;
    for (int P = 2; P <= 8; ++P)
        for (int V = 2; V <= 4; ++V)
            for (int M = 1; M <= 4 * P + 1; ++M)
                for (int G = 1; G <= M + 1; ++G)
                    for (const char* family : {"interleaved-1f1b", "combined-1f1b"}) {
                        INFO(family << " P=" << P << " V=" << V << " M=" << M << " G=" << G);
                        if (!megatron_accepts(P, G, M)) {
                            CHECK_THROWS_AS(generate(family, P, M, V, G), GenerateError);
                            continue;
                        }
                        const Schedule s = generate(family, P, M, V, G);
                        CHECK(s.placement.pipelines.at(0).stage_rank == loop_stage_map(P, P * V));
                        const VerifyReport report = verify(s, VerifyOptions{});
                        CHECK(report.ok());
                        CHECK(report.ops == static_cast<size_t>(2 * P * V * M));
                        ++checked;
                    }
    CHECK(checked == 2 * 1491);  // 1491 (P, V, M, G) Megatron accepts, two families each
}

TEST_CASE("megatron tunable: G = P against the orders pipeproof had (combined-1f1b, PyTorch's interleaved 1F1B)",
          "[issue43]") {
    for (int P = 2; P <= 8; ++P)
        for (int V = 2; V <= 4; ++V)
            for (int M = P; M <= 4 * P + 1; ++M) {
                INFO("P=" << P << " V=" << V << " M=" << M);
                // combined-1f1b without --group-size is G = P.
                if (M % P == 0)
                    CHECK(ops_of(generate("combined-1f1b", P, M, V, std::nullopt)) == ops_of(generate("combined-1f1b", P, M, V, P)));
                else
                    CHECK_THROWS_AS(generate("combined-1f1b", P, M, V, std::nullopt), GenerateError);
                // PyTorch's ScheduleInterleaved1F1B: rounds R = max(1, floor(M/P)) of M/R micro-batches. Where it
                // accepts M (M mod R == 0), its order -- ops without its idle cells -- is Megatron's at G = M/R. At
                // Megatron's default G = P (which Megatron accepts exactly when P divides M) that is G = P itself.
                const int R = std::max(1, M / P);
                CHECK(megatron_accepts(P, P, M) == (M % P == 0));
                if (M % R != 0) continue;
                const auto pytorch = ops_of(generate("interleaved-1f1b", P, M, V, std::nullopt));
                CHECK(pytorch == ops_of(generate("interleaved-1f1b", P, M, V, M / R)));
                if (M % P == 0) CHECK(pytorch == ops_of(generate("interleaved-1f1b", P, M, V, P)));
                else CHECK(M / R != P);
            }
}

TEST_CASE("megatron tunable: --group-size on the command line, and its refusals (exit 2, with the reason)", "[issue43][cli]") {
    // The docstring's instance, generated and verified by name.
    auto ok = run_cli("generate interleaved-1f1b -P 2 -V 2 -M 5 --group-size 3");
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("interleaved-1f1b(P=2,V=2,G=3,M=5)") != std::string::npos);
    CHECK(run_cli("verify interleaved-1f1b -P 4 -V 2 -M 10 --group-size 5").exit_code == 0);
    CHECK(run_cli("simulate combined-1f1b -P 4 -V 2 -M 12 --group-size 6").exit_code == 0);
    CHECK(run_cli("show interleaved-1f1b -P 2 -V 2 -M 5 --group-size 3").exit_code == 0);
    auto compared = run_cli("compare interleaved-1f1b combined-1f1b -P 4 -M 8 --group-size 8");
    CHECK(compared.exit_code == 0);
    CHECK(compared.out.find("G=8") != std::string::npos);

    // G < P: Megatron's range check.
    auto below = run_cli("generate interleaved-1f1b -P 4 -M 8 --group-size 2");
    CHECK(below.exit_code == 2);
    CHECK(below.err.find("should range in [PP=4 , M=8]") != std::string::npos);
    // A last group of fewer than P micro-batches.
    auto rest = run_cli("verify interleaved-1f1b -P 4 -M 9 --group-size 4");
    CHECK(rest.exit_code == 2);
    CHECK(rest.err.find("but it is 1") != std::string::npos);
    // G > M.
    CHECK(run_cli("simulate combined-1f1b -P 2 -M 4 --group-size 5").exit_code == 2);
    // Zero: the flag's own range.
    CHECK(run_cli("generate interleaved-1f1b -P 2 -M 4 --group-size 0").exit_code == 2);
    // A family without groups, V = 1, a file.
    auto other = run_cli("generate 1f1b -P 2 -M 4 --group-size 2");
    CHECK(other.exit_code == 2);
    CHECK(other.err.find("--group-size applies to interleaved-1f1b") != std::string::npos);
    auto one_stage = run_cli("generate interleaved-1f1b -P 2 -V 1 -M 4 --group-size 2");
    CHECK(one_stage.exit_code == 2);
    CHECK(one_stage.err.find("V >= 2") != std::string::npos);
    const std::string file = pp::test::write_temp("megatron-g.txt", run_cli("generate 1f1b -P 2 -M 4").out);
    auto on_file = run_cli("verify " + file + " --group-size 2");
    CHECK(on_file.exit_code == 2);
    CHECK(on_file.err.find("is a file") != std::string::npos);
    auto none = run_cli("compare 1f1b gpipe -P 2 -M 4 --group-size 2");
    CHECK(none.exit_code == 2);
    CHECK(none.err.find("none is compared") != std::string::npos);

    // compare and report: one G per family (FAMILY=G), so Megatron's (G >= P) and group-interleaved's (G <= P) fit in
    // one table; each row as its family generated alone with that G.
    auto both = run_cli("compare interleaved-1f1b group-interleaved -P 4 -M 12 --group-size interleaved-1f1b=4 "
                        "--group-size group-interleaved=1 --json");
    INFO(both.err);
    REQUIRE(both.exit_code == 0);
    const auto rows = nlohmann::json::parse(both.out).at("rows");
    auto alone = [](const std::string& args) {
        const auto r = run_cli("simulate " + args + " --units rank --json");
        INFO(args << r.err);
        REQUIRE(r.exit_code == 0);
        return nlohmann::json::parse(r.out).at("exact").at("makespan");
    };
    CHECK(rows.at(0).at("exact").at("makespan") == alone("interleaved-1f1b -P 4 -M 12 --group-size 4"));
    CHECK(rows.at(1).at("exact").at("makespan") == alone("group-interleaved -P 4 -M 12 --group-size 1"));
    CHECK_THAT(both.out, Catch::Contains("G=4") && Catch::Contains("G=1"));
    // The flag takes one value: the names after it are the schedules.
    auto before = run_cli("compare --group-size 4 interleaved-1f1b group-interleaved -P 4 -M 8");
    CHECK(before.exit_code == 0);
    CHECK_THAT(before.out, Catch::Contains("interleaved-1f1b(P=4,V=2,G=4,M=8)") && Catch::Contains("G=4)"));
    // A plain G that no row would use is refused, as an unused FAMILY=G is.
    auto unused = run_cli("compare interleaved-1f1b -P 4 -M 8 --group-size 4 --group-size interleaved-1f1b=8");
    CHECK(unused.exit_code == 2);
    CHECK_THAT(unused.err, Catch::Contains("applies to no row"));
    // A G one family refuses: the error names the row.
    auto refused = run_cli("compare group-interleaved interleaved-1f1b -P 4 -M 8 --group-size 2");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("interleaved-1f1b: "));
    // The plain G for the others; a family's own G wins.
    CHECK(run_cli("compare interleaved-1f1b group-interleaved -P 4 -M 12 --group-size 2 --group-size interleaved-1f1b=6")
              .exit_code == 0);
    const std::string page = (pp::test::scratch_dir() / "g-per-family.html").string();
    CHECK(run_cli("report interleaved-1f1b group-interleaved -P 4 -M 12 --group-size interleaved-1f1b=4 -o " + page).exit_code == 0);
    for (const char* bad : {"--group-size x=2", "--group-size 1f1b=2", "--group-size 2 --group-size 3",
                            "--group-size interleaved-1f1b=4 --group-size interleaved-1f1b=6",
                            "--group-size combined-1f1b=4", "--group-size interleaved-1f1b=4x", "--group-size =4"}) {
        const auto r = run_cli(std::string("compare interleaved-1f1b group-interleaved -P 4 -M 12 ") + bad);
        INFO(bad << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--group-size"));
    }

    // list states Megatron's conditions.
    auto list = run_cli("list");
    CHECK(list.out.find("P <= G <= M, and M mod G == 0 or M mod G >= P") != std::string::npos);
}

TEST_CASE("megatron tunable: prove, formula and refute take --group-size, name V and G, and agree with the simulator",
          "[issue43][cli]") {
    // The simulator's bubble at unit costs, on instances the prover's statement covers (M = 4t, P = 4, V = 2, G = 4).
    std::optional<long> simulated;
    for (const int M : {8, 12, 16, 24}) {
        auto s = run_cli("simulate interleaved-1f1b -P 4 -V 2 -M " + std::to_string(M) +
                         " --group-size 4 --costs F=1,I=1,W=1 --json");
        REQUIRE(s.exit_code == 0);
        const auto j = nlohmann::json::parse(s.out);
        if (!simulated) simulated = j.at("bubble").get<long>();
        CHECK(j.at("bubble").get<long>() == *simulated);
    }
    const std::string unit = " --costs F=1,I=1,W=1 --json";

    auto proved = run_cli("prove interleaved-1f1b -P 4 -V 2 --group-size 4" + unit);
    REQUIRE(proved.exit_code == 0);
    const auto p = nlohmann::json::parse(proved.out);
    CHECK(p.at("status") == "proved");
    CHECK(p.at("group_size") == 4);
    CHECK(p.at("stages_per_rank") == 2);
    CHECK(p.at("step") == 4);  // the statement is for the multiples of G
    CHECK(p.at("bubble").get<long>() == *simulated);
    // Without the flag, the field is there and null (one vocabulary: a member is never left out).
    auto plain = run_cli("prove 1f1b -P 4" + unit);
    REQUIRE(plain.exit_code == 0);
    CHECK(nlohmann::json::parse(plain.out).at("group_size").is_null());
    CHECK(nlohmann::json::parse(plain.out).at("stages_per_rank").is_null());
    CHECK(run_cli("prove interleaved-1f1b -P 4 -V 2 --group-size 4 --costs F=1,I=1,W=1").out.find("V=2  G=4") !=
          std::string::npos);

    auto formula = run_cli("formula interleaved-1f1b -P 4 --group-size 4 --json");
    REQUIRE(formula.exit_code == 0);
    const auto f = nlohmann::json::parse(formula.out);
    CHECK(f.at("status") == "proved");
    CHECK(f.at("group_size") == 4);
    CHECK(f.at("stages_per_rank") == 2);  // the default V, said
    CHECK(run_cli("formula interleaved-1f1b -P 4 --group-size 4").out.find("V=2  G=4  M = 4 + 4t") != std::string::npos);

    const std::string claim = "'bubble == " + std::to_string(*simulated) + "'";
    auto holds = run_cli("refute --claim " + claim + " interleaved-1f1b -P 4 -M 4..32 --group-size 4" + unit);
    CHECK(holds.exit_code == 0);
    CHECK(nlohmann::json::parse(holds.out).at("group_size") == 4);
    auto broken = run_cli("refute --claim 'bubble == " + std::to_string(*simulated - 1) +
                          "' interleaved-1f1b -P 4 --group-size 4" + unit);
    REQUIRE(broken.exit_code == 1);
    const auto b = nlohmann::json::parse(broken.out);
    CHECK(b.at("counterexample").at("microbatches").get<int>() % 4 == 0);
    // G below P at the only P asked: nothing to check, said (exit 2).
    auto below = run_cli("refute --claim " + claim + " interleaved-1f1b -P 4 --group-size 3" + unit);
    CHECK(below.exit_code == 2);
    CHECK(below.out.find("G >= P") != std::string::npos);
    // A family without groups.
    CHECK(run_cli("formula 1f1b -P 4 --group-size 4").exit_code == 2);
}

namespace {

// Megatron's walk written again from its functions (schedules.py get_schedule_table, get_pp_rank_microbatches and
// the loop of forward_backward_pipelining_with_interleaving), ops as "F<mb>.<stage>", a combined F&B as "a+b".
std::vector<std::vector<std::string>> megatron_walk(int P, int V, int G, int M, bool overlap) {
    std::vector<std::pair<int, int>> table;  // (micro-batch, chunk)
    for (int first = 0; first < M; first += G)
        for (int c = 0; c < V; ++c)
            for (int mb = first; mb < std::min(first + G, M); ++mb) table.emplace_back(mb, c);
    const int total = M * V;
    std::vector<std::vector<std::string>> out(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r) {
        const int warmup = std::min(2 * (P - r - 1) + (V - 1) * G + (overlap ? 1 : 0), total);
        auto f = [&](int k) { return "F" + std::to_string(table[k].first) + "." + std::to_string(table[k].second * P + r); };
        auto b = [&](int k) {
            return "B" + std::to_string(table[k].first) + "." + std::to_string((V - 1 - table[k].second) * P + r);
        };
        auto& ops = out[static_cast<size_t>(r)];
        for (int k = 0; k < warmup; ++k) ops.push_back(f(k));
        for (int k = 0; k + warmup < total; ++k) {
            if (overlap) ops.push_back(f(k + warmup) + "+" + b(k));
            else ops.push_back(f(k + warmup)), ops.push_back(b(k));
        }
        for (int k = total - warmup; k < total; ++k) ops.push_back(b(k));
    }
    return out;
}

std::vector<std::vector<std::string>> walk_of(const Schedule& s) {
    std::vector<std::vector<std::string>> out;
    auto text = [](const Op& op) {
        return std::string(op.kind == OpKind::F ? "F" : "B") + std::to_string(op.microbatch) + "." + std::to_string(op.stage);
    };
    for (const auto& rank : s.ranks) {
        out.emplace_back();
        for (const Slot& slot : rank) out.back().push_back(slot.count == 2 ? text(slot.ops[0]) + "+" + text(slot.ops[1]) : text(slot.ops[0]));
    }
    return out;
}

}  // namespace

TEST_CASE("megatron tunable: every admissible residue of M mod G runs a step program equal to Megatron's walk",
          "[issue43][step-program]") {
    // The walk above is Megatron's on every accepted instance of the reference file (which has no M >= 3G + R with
    // R > 0, where the generator runs a residue's program), so it stands in for the reference beyond it.
    for (const Instance& in : read_reference()) {
        if (in.rejected) continue;
        const auto walk = megatron_walk(in.P, in.V, in.G, in.M, in.overlap);
        const Schedule s = generate(in.overlap ? "combined-1f1b" : "interleaved-1f1b", in.P, in.M, in.V, in.G);
        INFO("P=" << in.P << " V=" << in.V << " G=" << in.G << " M=" << in.M << " overlap=" << in.overlap);
        CHECK(walk_of(s) == walk);
    }
    int programs = 0;
    for (int P = 2; P <= 4; ++P)
        for (int V = 2; V <= 3; ++V)
            for (int G = P; G <= 2 * P + 1; ++G)
                for (int R = 0; R < G; ++R) {
                    if (R > 0 && R < P) continue;
                    for (const bool overlap : {false, true}) {
                        const std::string family = overlap ? "combined-1f1b" : "interleaved-1f1b";
                        GenerateParams params{P, G + R, V};
                        params.group_size = G;
                        const FamilyStepProgram program = find_family(family)->step_program(params);
                        INFO(family << " P=" << P << " V=" << V << " G=" << G << " R=" << R);
                        CHECK(program.m_origin == 3 * G + R);
                        CHECK(program.m_step == G);
                        CHECK(step_program_lemma2_failure(program) == "");
                        ++programs;
                        for (int M = program.m_origin; M <= program.m_origin + 3 * G; M += G)
                            CHECK(walk_of(generate(family, P, M, V, G)) == megatron_walk(P, V, G, M, overlap));
                    }
                }
    CHECK(programs > 100);
    // prove on a residue: the statement's M are R + G t, and the simulator agrees on them.
    const auto proved = run_cli("prove interleaved-1f1b -P 4 -V 2 --group-size 6 --residue 4 --costs F=1,I=1,W=1 --json");
    REQUIRE(proved.exit_code == 0);
    const auto p = nlohmann::json::parse(proved.out);
    CHECK(p.at("microbatches_from") == 10);
    CHECK(p.at("step") == 6);
    for (const int M : {10, 16, 28, 46}) {
        const auto s = run_cli("simulate interleaved-1f1b -P 4 -V 2 -M " + std::to_string(M) + " --group-size 6 --costs F=1,I=1,W=1 --json");
        REQUIRE(s.exit_code == 0);
        CHECK(nlohmann::json::parse(s.out).at("bubble") == p.at("bubble"));
    }
    CHECK(run_cli("prove interleaved-1f1b -P 4 -V 2 --group-size 6 --residue 3 --costs F=1,I=1,W=1").exit_code == 2);
    CHECK(run_cli("prove 1f1b -P 4 --residue 2 --costs F=1,I=1,W=1").exit_code == 2);
}

TEST_CASE("megatron tunable: residues whose blocks start part-way through a group are proved on a re-cut word",
          "[issue43][prove]") {
    // With G > P and M mod G = R >= P no super-step per rank exists on the fitted word (rank 0's block starts two
    // slots before its neighbours'); re-cut there, the word proves from the next admissible M on and the first
    // instance is settled on its own. Each verdict is checked against the simulator on instances well past the
    // proof's windows, the peaks also against Megatron's warm-up count 2(P - 1) + (V - 1) G + 1 on rank 0, and the
    // certificate by pipeproof-check.
    struct Case {
        int P, V, G, R;
    };
    for (const Case c : {Case{4, 2, 5, 4}, Case{5, 2, 6, 5}, Case{5, 2, 7, 6}, Case{4, 3, 5, 4}}) {
        const std::string family = fmt::format("interleaved-1f1b -P {} -V {} --group-size {}", c.P, c.V, c.G);
        const std::string costs = " --costs F=1,I=1,W=1,comm=1";
        INFO(family << " --residue " << c.R);
        const auto dir = pp::test::fresh_dir(fmt::format("megatron-recut-{}-{}-{}", c.P, c.V, c.G));
        const auto proved = run_cli("prove " + family + " --residue " + std::to_string(c.R) + costs + " --json --certificate " +
                                    dir.string());
        REQUIRE(proved.exit_code == 0);
        const auto p = nlohmann::json::parse(proved.out);
        CHECK(p.at("status") == "proved");
        CHECK(proved.out.find("re-cut where the super-step potentials need it") != std::string::npos);
        CHECK(pp::test::run_check(dir.string()).exit_code == 0);
        const auto peaks = nlohmann::json::parse(
            run_cli("prove " + family + " --residue " + std::to_string(c.R) + " --property memory-bound --json").out);
        REQUIRE(peaks.at("status") == "proved");
        CHECK(peaks.at("peaks").at(0) == 2 * (c.P - 1) + (c.V - 1) * c.G + 1);
        for (const int n : {1, 2, 3, 4, 7, 13}) {
            const int M = c.R + c.G * n;
            const auto s = nlohmann::json::parse(
                run_cli(fmt::format("simulate interleaved-1f1b -P {} -V {} -M {} --group-size {}{} --json", c.P, c.V, M, c.G,
                                    costs))
                    .out);
            INFO("M = " << M);
            if (M >= p.at("constant_from_microbatches").get<int>()) CHECK(s.at("bubble") == p.at("bubble"));
            for (int r = 0; r < c.P; ++r) CHECK(s.at("per_rank").at(r).at("peak_activations") == peaks.at("peaks").at(r));
        }
    }
}
