#include "render/published_formulas.hpp"

#include <algorithm>

namespace pp {
namespace {

// Costs as the formulas name them: F, I, W, B (full backward), FB (a pair), c (P2P latency).
struct Symbols {
    Rational F, I, W, B, FB, c;
    explicit Symbols(const Costs& costs)
        : F(costs.base.F), I(costs.base.I), W(costs.base.W), B(costs.base.full_backward()),
          FB(costs.base.FB ? *costs.base.FB : costs.base.F + costs.base.full_backward()), c(costs.comm) {}
};

PublishedFormula make(std::string text, std::string source, std::string condition, BubbleMeasure measure) {
    return {std::move(text), std::move(source), std::move(condition), measure, std::nullopt, {}};
}

// The formulas assume every block costs the same and (unless they name c) free communication.
bool uniform_and_free(const Costs& costs, PublishedFormula& f, bool formula_has_comm = false) {
    if (!costs.per_block.empty()) {
        f.why_not = "per-block costs are given; the formula assumes uniform costs";
        return false;
    }
    if (!formula_has_comm && costs.comm != Rational(0)) {
        f.why_not = "comm > 0; the formula assumes no P2P latency";
        return false;
    }
    return true;
}

PublishedFormula one_f_one_b_like(std::string_view family, int P, const Costs& costs, const Symbols& s) {
    auto f = make("(P-1)(F+B)", std::string("schedules/") + std::string(family) + ".cpp (GPipe/1F1B paper bound)",
                  "uniform F, B; no comm", BubbleMeasure::LargestIdle);
    if (uniform_and_free(costs, f)) f.value = Rational(P - 1) * (s.F + s.B);
    return f;
}

// Megatron's (P-1)(F+B)/V with stage costs is (P-1)(F+B) in our per-chunk op costs.
PublishedFormula interleaved(std::string_view family, int P, int M, int V, const Costs& costs, const Symbols& s) {
    const bool loop = family == "looped-bfs";
    auto f = make("(P-1)(F+B)  [F, B per chunk; = (P-1)(F+B)/V in whole-stage costs]",
                  loop ? "schedules/looped_bfs.cpp" : "schedules/interleaved_1f1b.cpp (Megatron)",
                  loop ? "uniform per-chunk F, B; no comm; M >= P" : "uniform per-chunk F, B; no comm; M a multiple of P",
                  BubbleMeasure::LargestIdle);
    if (!uniform_and_free(costs, f)) return f;
    if (loop ? M < P : M % P != 0) {
        f.why_not = loop ? "M < P" : "M is not a multiple of P";
        return f;
    }
    (void)V;
    f.value = Rational(P - 1) * (s.F + s.B);
    return f;
}

PublishedFormula zero_bubble_h1(std::string_view family, int P, std::optional<int> V, const Costs& costs, const Symbols& s) {
    auto f = make("(P-1)(F+I-W)", family == "zb1p" ? "schedules/zb1p.cpp (= ZB-H1 for V = 1)" : "schedules/zb_h1.cpp (ZB paper, ICLR 2024)",
                  "no comm; V = 1", BubbleMeasure::ZbSpanMinusWork);
    if (!uniform_and_free(costs, f)) return f;
    if (V.value_or(1) != 1) {
        f.why_not = "stated for V = 1 only";
        return f;
    }
    f.value = Rational(P - 1) * (s.F + s.I - s.W);
    return f;
}

PublishedFormula zero_bubble_h2(int P, const Costs& costs, const Symbols& s) {
    auto f = make("(P-1)(F+I+2c-2W)", "schedules/zb_h2.cpp (ZB paper, ICLR 2024)", "F+I+2c >= 2W (zero at equality)",
                  BubbleMeasure::ZbSpanMinusWork);
    if (!uniform_and_free(costs, f, true)) return f;
    const Rational term = s.F + s.I + Rational(2) * s.c - Rational(2) * s.W;
    if (term < Rational(0)) {
        f.why_not = "F+I+2c < 2W";
        return f;
    }
    f.value = Rational(P - 1) * term;
    return f;
}

PublishedFormula zero_bubble_v(int P, int M, const Costs& costs, const Symbols& s) {
    auto f = make("0", "schedules/zbv.cpp (ZB paper §6)", "F = I = W, no comm, M >= 2P-1", BubbleMeasure::ZbSpanMinusWork);
    if (!uniform_and_free(costs, f)) return f;
    if (!(s.F == s.I && s.I == s.W) || M < 2 * P - 1) {
        f.why_not = "needs F = I = W and M >= 2P-1";
        return f;
    }
    f.value = Rational(0);
    return f;
}

// DualPipe's README: (PP/2-1)(F&B+B-3W); PP = P for DualPipe, 2P stages for DualPipeV.
PublishedFormula dualpipe(bool v_shape, int P, const Costs& costs, const Symbols& s) {
    auto f = make(v_shape ? "(PP/2-1)(F&B+B-3W), PP = 2P" : "(PP/2-1)(F&B+B-3W), PP = P",
                  "DualPipe README (github.com/deepseek-ai/DualPipe), bubble table",
                  std::string("no comm; proved equal to the bubble for every M on ") + kDualPipeReadmeRegion +
                      " (proofs/catalogue/dualpipe-readme-formula.md); not in general",
                  BubbleMeasure::LargestIdle);
    if (!uniform_and_free(costs, f)) return f;
    const int PP = v_shape ? 2 * P : P;
    f.value = Rational(PP / 2 - 1) * (s.FB + s.B - Rational(3) * s.W);
    return f;
}

}  // namespace

const char* measure_name(BubbleMeasure measure) {
    return measure == BubbleMeasure::LargestIdle ? "largest idle" : "span - M(F+I+W)";
}

std::optional<PublishedFormula> published_bubble_formula(std::string_view family, int P, int M,
                                                         std::optional<int> V, const Costs& costs) {
    const Symbols s(costs);
    if (family == "gpipe" || family == "1f1b") return one_f_one_b_like(family, P, costs, s);
    if (family == "interleaved-1f1b" || family == "looped-bfs") return interleaved(family, P, M, V.value_or(1), costs, s);
    if (family == "zb-h1" || family == "zb1p") return zero_bubble_h1(family, P, family == "zb1p" ? V : std::nullopt, costs, s);
    if (family == "zb-h2") return zero_bubble_h2(P, costs, s);
    if (family == "zbv") return zero_bubble_v(P, M, costs, s);
    if (family == "dualpipe") return dualpipe(false, P, costs, s);
    if (family == "dualpipev") return dualpipe(true, P, costs, s);
    return std::nullopt;
}

}  // namespace pp
