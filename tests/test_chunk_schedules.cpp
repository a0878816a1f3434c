// Issue 11: Megatron-Core's combined 1F1B family against the public documentation's examples and the
// research note's hand derivation, the megatron pattern against the documented issue order, the planner's
// component costs against the formulas, and the EP-heavy comparison of the README.
#include "model/overlap_pattern.hpp"
#include "planner/chunk_plan.hpp"
#include "planner/plan_spec.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <sstream>

using namespace pp;

namespace {

std::string row(const Schedule& s, int r) {
    std::string text;
    for (const Slot& slot : s.ranks[static_cast<size_t>(r)]) {
        if (!text.empty()) text += ' ';
        text += format_slot(slot);
    }
    return text;
}

// The research note's notation "F0.s3", "(F1.s7+B0.s7)" to ours "3F0", "(7F1;7B0)".
std::string from_note(const std::string& note) {
    std::istringstream in(note);
    std::string token, out;
    auto op = [](const std::string& t) {  // "F12.s5" -> "5F12"
        const size_t dot = t.find(".s");
        return t.substr(dot + 2) + t.substr(0, 1) + t.substr(1, dot - 1);
    };
    while (in >> token) {
        if (!out.empty()) out += " ";
        if (token.front() == '(') {
            const size_t plus = token.find('+');
            out += fmt::format("({};{})", op(token.substr(1, plus - 1)), op(token.substr(plus + 1, token.size() - plus - 2)));
        } else {
            out += op(token);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("combined 1F1B: PP=1 is the documentation's phase table", "[chunk][combined]") {
    // docs/user-guide/features/moe_a2a_overlap.md: phase 0 forward mb 0; phase i forward mb i with backward mb i-1;
    // phase N backward mb N-1.
    const Schedule s = find_family("combined-1f1b")->generate({1, 4, std::nullopt});
    CHECK(row(s, 0) == "0F0 (0F1;0B0) (0F2;0B1) (0F3;0B2) 0B3");
    CHECK(verify(s).ok());
    CHECK(row(find_family("combined-1f1b")->generate({1, 1, std::nullopt}), 0) == "0F0 0B0");
}

TEST_CASE("combined 1F1B: P=4 M=8 V=2 is the research note's derivation of Megatron's table", "[chunk][combined]") {
    // moe-overlap-research.md §2.6 (warm-up 2(P-r-1) + (V-1)G + 1, pairs F(k+w) with B(k), chunk reversed for B).
    const std::vector<std::string> note = {
        "F0.s0 F1.s0 F2.s0 F3.s0 F0.s4 F1.s4 F2.s4 F3.s4 F4.s0 F5.s0 F6.s0 (F7.s0+B0.s4) (F4.s4+B1.s4) (F5.s4+B2.s4) (F6.s4+B3.s4) "
        "(F7.s4+B0.s0) B1.s0 B2.s0 B3.s0 B4.s4 B5.s4 B6.s4 B7.s4 B4.s0 B5.s0 B6.s0 B7.s0",
        "F0.s1 F1.s1 F2.s1 F3.s1 F0.s5 F1.s5 F2.s5 F3.s5 F4.s1 (F5.s1+B0.s5) (F6.s1+B1.s5) (F7.s1+B2.s5) (F4.s5+B3.s5) (F5.s5+B0.s1) "
        "(F6.s5+B1.s1) (F7.s5+B2.s1) B3.s1 B4.s5 B5.s5 B6.s5 B7.s5 B4.s1 B5.s1 B6.s1 B7.s1",
        "F0.s2 F1.s2 F2.s2 F3.s2 F0.s6 F1.s6 F2.s6 (F3.s6+B0.s6) (F4.s2+B1.s6) (F5.s2+B2.s6) (F6.s2+B3.s6) (F7.s2+B0.s2) (F4.s6+B1.s2) "
        "(F5.s6+B2.s2) (F6.s6+B3.s2) (F7.s6+B4.s6) B5.s6 B6.s6 B7.s6 B4.s2 B5.s2 B6.s2 B7.s2",
        "F0.s3 F1.s3 F2.s3 F3.s3 F0.s7 (F1.s7+B0.s7) (F2.s7+B1.s7) (F3.s7+B2.s7) (F4.s3+B3.s7) (F5.s3+B0.s3) (F6.s3+B1.s3) (F7.s3+B2.s3) "
        "(F4.s7+B3.s3) (F5.s7+B4.s7) (F6.s7+B5.s7) (F7.s7+B6.s7) B7.s7 B4.s3 B5.s3 B6.s3 B7.s3",
    };
    const Schedule s = find_family("combined-1f1b")->generate({4, 8, 2});
    for (int r = 0; r < 4; ++r) CHECK(row(s, r) == from_note(note[static_cast<size_t>(r)]));
    CHECK(verify(s).ok());
}

TEST_CASE("combined 1F1B: valid wherever Megatron runs it, refused where it refuses", "[chunk][combined]") {
    for (const auto& [P, M, V] : std::vector<std::tuple<int, int, int>>{{2, 4, 2}, {2, 8, 3}, {4, 4, 2}, {4, 16, 2}, {8, 16, 4}}) {
        INFO(P << " " << M << " " << V);
        const Schedule s = find_family("combined-1f1b")->generate({P, M, V});
        CHECK(verify(s).ok());
        // Every pair holds two different micro-batches or chunks: its halves are independent.
        for (const auto& slots : s.ranks)
            for (const Slot& slot : slots)
                if (slot.is_pair()) CHECK(!(slot.ops[0].stage == slot.ops[1].stage && slot.ops[0].microbatch == slot.ops[1].microbatch));
    }
    CHECK_THROWS_AS(find_family("combined-1f1b")->generate({4, 8, 1}), GenerateError);   // PP > 1 needs VPP
    CHECK_THROWS_AS(find_family("combined-1f1b")->generate({4, 6, 2}), GenerateError);   // M not a multiple of P
    CHECK_THROWS_AS(find_family("combined-1f1b")->generate({4, 2, 2}), GenerateError);   // M < P
}

TEST_CASE("megatron pattern: per-stream order of the documented issue order, layers paired j with L-1-j", "[chunk][combined]") {
    // Docs: paired four-layer chunks run F.layer[0]+B.layer[3], ..., F.layer[3]+B.layer[0]; one layer pair issues
    // F.attn, B.combine, F.dispatch, B.expert dgrad (+ delayed wgrad), B.dispatch, F.expert, F.combine, B.attn (+ wgrad).
    const int L = 4;
    std::vector<std::string> compute, network;
    for (int j = 0; j < L; ++j) {
        const int m = L - 1 - j;
        const std::vector<std::pair<std::string, bool>> issue = {
            {fmt::format("attn_f{}", j), false},     {fmt::format("combine_b{}", m), true}, {fmt::format("dispatch_f{}", j), true},
            {fmt::format("mlp_i{}", m), false},      {fmt::format("mlp_w{}", m), false},    {fmt::format("dispatch_b{}", m), true},
            {fmt::format("mlp_f{}", j), false},      {fmt::format("combine_f{}", j), true}, {fmt::format("attn_i{}", m), false},
            {fmt::format("attn_w{}", m), false}};
        for (const auto& [name, comm] : issue) (comm ? network : compute).push_back(name);
    }
    const ChunkCosts chunk = parse_chunk_costs("layers=4,attn_f=1,dispatch_f=1,mlp_f=1,combine_f=1,combine_b=1,mlp_i=1,mlp_w=1,dispatch_b=1,"
                                               "attn_i=1,attn_w=1");
    const SlotDag dag = build_slot_dag(SlotKind::PairFB, chunk);
    for (const PatternKind kind : {PatternKind::Megatron, PatternKind::DeepSeek}) {
        const StreamOrder order = pattern_order(kind, dag);
        std::vector<std::string> got_c, got_n;
        for (int v : order.lists[0]) got_c.push_back(dag.nodes[static_cast<size_t>(v)].name());
        for (int v : order.lists[1]) got_n.push_back(dag.nodes[static_cast<size_t>(v)].name());
        CHECK(got_c == compute);
        CHECK(got_n == network);
    }
}

TEST_CASE("planner: component costs follow the stated formulas", "[chunk][planner]") {
    plan::PlanRequest r;
    plan::apply_settings(r, {{"preset", "deepseek-v3"}, {"gpus", "2048"}});
    // PP 16 with 16 blocks: 61/16 layers per block, modelled as L = 4 scaled by 61/64.
    const ChunkCosts c = plan::component_costs(r, 16, 16);
    REQUIRE(c.layers == 4);
    const double f = 61.0 / 16 / 4, moe = 58.0 / 61, tokens = 4096;
    // dispatch_f: tokens x top-8 x 7168 x 1 byte (FP8) x 63/64 over 50 GB/s, x MoE share, in microseconds.
    const double dispatch_us = tokens * 8 * 7168 * 1.0 * 63 / 64 / 50e9 * moe * f * 1e6;
    auto us = [](const Rational& r) { return static_cast<double>(r.numerator()) / static_cast<double>(r.denominator()); };
    CHECK(std::abs(us(c.cost(Component::DispatchF, 0)) - dispatch_us) <= 0.05);
    CHECK(us(c.cost(Component::CombineF, 0)) == Approx(2 * us(c.cost(Component::DispatchF, 0))).margin(0.1));  // BF16
    // mlp_f: 2 x routed active per token per MoE layer; routed = (37e9 - 671e9 x 0.03) / 58; at 989 TFLOP/s x 0.4.
    const double routed = (37e9 - 671e9 * (1 - 0.97)) / 58;
    const double mlp_us = tokens * 2 * routed / (989e12 * 0.4) * moe * f * 1e6;
    CHECK(std::abs(us(c.cost(Component::MlpF, 0)) - mlp_us) <= 0.05);
    // pp: 4096 x 7168 x 2 bytes over 50 GB/s.
    REQUIRE(c.pp);
    CHECK(std::abs(us(*c.pp) - tokens * 7168 * 2 / 50e9 * 1e6) <= 0.05);
}

TEST_CASE("chunk compare: on EP-heavy costs DualPipe's pairs hide all-to-all that 1F1B and ZB1P expose", "[chunk][compare]") {
    // Per layer forward compute 3, all-to-all 3 (the report's 1:1); two layers per block.
    const ChunkCosts chunk = parse_chunk_costs("layers=2,attn_f=1.5,dispatch_f=1,mlp_f=1.5,combine_f=2,combine_b=1,mlp_i=1.5,mlp_w=1.5,"
                                               "dispatch_b=2,attn_i=1.5,attn_w=1.5");
    const ChunkTable table = derive_chunk_table(chunk, PatternSpec{});
    auto exposed_total = [&](const std::string& family, std::optional<int> V) {
        const Schedule s = find_family(family)->generate({4, 8, V});
        return exposure_per_rank(s, table).total_exposed();
    };
    const Rational one_f_one_b = exposed_total("1f1b", std::nullopt), dual = exposed_total("dualpipe", std::nullopt);
    // 1F1B: every chunk alone: F exposes its 2 x 3 of all-to-all, B its 2 x 3 minus what its own W hides.
    CHECK(one_f_one_b > dual);
    CHECK(exposed_total("zb1p", 2) >= exposed_total("combined-1f1b", 2));
}

TEST_CASE("combined 1F1B: without Megatron's extra warm-up forward the last rank pairs a backward with its own forward",
          "[chunk][combined]") {
    // Rebuilt here from the research note's rule (warm-up w = 2(P-r-1) + (V-1)P + extra, pairs F(k+w) with B(k)).
    const int P = 4, M = 8, V = 2;
    auto build = [&](int extra) {
        std::vector<std::pair<int, int>> table;  // (micro-batch, chunk), groups of P micro-batches per chunk
        for (int first = 0; first < M; first += P)
            for (int c = 0; c < V; ++c)
                for (int mb = first; mb < first + P; ++mb) table.emplace_back(mb, c);
        Schedule s;
        s.placement = Placement::single(P, loop_stage_map(P, P * V), M);
        s.ranks.assign(P, {});
        const int total = M * V;
        for (int r = 0; r < P; ++r) {
            const int w = std::min(2 * (P - r - 1) + (V - 1) * P + extra, total);
            auto f = [&](int k) { return Op{OpKind::F, 0, table[static_cast<size_t>(k)].second * P + r, table[static_cast<size_t>(k)].first}; };
            auto b = [&](int k) {
                return Op{OpKind::B, 0, (V - 1 - table[static_cast<size_t>(k)].second) * P + r, table[static_cast<size_t>(k)].first};
            };
            for (int k = 0; k < w; ++k) s.ranks[static_cast<size_t>(r)].push_back(Slot::single(f(k)));
            for (int k = 0; k + w < total; ++k) s.ranks[static_cast<size_t>(r)].push_back(Slot::pair(f(k + w), b(k)));
            for (int k = total - w; k < total; ++k) s.ranks[static_cast<size_t>(r)].push_back(Slot::single(b(k)));
        }
        return s;
    };
    const Schedule with = build(1), generated = find_family("combined-1f1b")->generate({P, M, V});
    for (int r = 0; r < P; ++r) CHECK(row(with, r) == row(generated, r));
    const VerifyReport without = verify(build(0));
    REQUIRE(!without.ok());
    CHECK(without.violations.front().kind == ViolationKind::OrderContradicts);
    CHECK(without.violations.front().rank == P - 1);
    CHECK_THAT(without.violations.front().message, Catch::Contains("(7F0;7B0)"));
}
