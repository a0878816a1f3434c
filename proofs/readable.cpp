#include "proofs/readable.hpp"

#include "proofs/claim.hpp"
#include "proofs/smt.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace pp {

namespace {

LinForm v(CostVar x) { return LinForm::var(x); }

}  // namespace

std::optional<PublishedBubble> published_bubble(const std::string& family, int P, std::optional<int> V,
                                                bool symbolic_comm) {
    // B written as I + W (the region's B = I + W), so that either basis prints it in its own letters.
    const LinForm F = v(CostVar::F), I = v(CostVar::I), W = v(CostVar::W), B = I + W, FB = v(CostVar::FB);
    const std::int64_t p1 = P - 1;
    if (family == "gpipe" || family == "1f1b")
        return PublishedBubble{family == "gpipe" ? "GPipe's (P-1)(F+B)" : "1F1B's (P-1)(F+B)",
                               "GPipe (Huang et al. 2019), PipeDream-Flush / 1F1B (Narayanan et al. 2021)", p1 * (F + B), ""};
    if (family == "interleaved-1f1b" || family == "looped-bfs")
        return PublishedBubble{family == "looped-bfs" ? "Looped BFS's (P-1)(F+B) per chunk"
                                                      : "Megatron's (P-1)(F+B)/V (= (P-1)(F+B) in per-chunk costs)",
                               family == "looped-bfs" ? "Lamy-Poirier 2023 (Breadth-First Pipeline Parallelism)"
                                                      : "Narayanan et al. 2021 (Megatron-LM interleaved schedule)",
                               p1 * (F + B), ""};
    // The ZB paper writes B for the input gradient: its (p-1)(T_F+T_B-T_W) is (P-1)(F+I-W) in PyTorch letters.
    if (family == "zb-h1" || (family == "zb1p" && V.value_or(1) == 1))
        return PublishedBubble{"the ZB paper's ZB-H1 (p-1)(T_F+T_B-T_W) = (P-1)(F+I-W)", "Qi et al., ICLR 2024, §3",
                               p1 * (F + I - W), "F >= W && I >= W"};
    if (family == "zb-h2") {
        LinForm f = p1 * (F + I - 2 * W);
        if (symbolic_comm) f += 2 * p1 * v(CostVar::comm);
        return PublishedBubble{"the ZB paper's ZB-H2 (p-1)(T_F+T_B+2T_comm-2T_W) = (P-1)(F+I+2c-2W)",
                               "Qi et al., ICLR 2024, §3", f, "F >= W && I >= 2*W"};
    }
    if (family == "dualpipe" || family == "dualpipev") {
        const std::int64_t PP = family == "dualpipe" ? P : 2 * P;
        return PublishedBubble{family == "dualpipe" ? "DeepSeek's (PP/2-1)(F&B+B-3W), PP = P"
                                                    : "DeepSeek's (PP/2-1)(F&B+B-3W), PP = 2P",
                               "github.com/deepseek-ai/DualPipe README, bubble table", (PP / 2 - 1) * (FB + B - 3 * W),
                               "I == F && W <= F && FB >= B"};
    }
    return std::nullopt;
}

namespace {

// Is the bubble equal to the formula on `region`? Fills differs_at on a counterexample.
bool equal_on(const MaxPoly& bubble, const LinForm& value, const CostRegion& region, PublishedMatch& m) {
    const auto out = smt::equal_on_region(bubble, MaxPoly::of(value, region), LinForm{}, region, "published formula");
    if (out.result == z3::unsat) return true;
    if (out.result == z3::unknown) m.undecided = true;
    if (out.witness) {
        m.differs_at = out.witness;
        m.bubble_there = bubble.eval(*out.witness);
        m.formula_there = value.eval(*out.witness);
    }
    return false;
}

std::string point_text(const CostPoint& p, Basis basis) {
    std::string s;
    for (int i = 0; i < kCostVars; ++i) {
        const auto var = static_cast<CostVar>(i);
        if (var == CostVar::comm && p[i] == Rational(0)) continue;
        if (basis == Basis::DeepSeek && var == CostVar::I) continue;
        if (basis != Basis::DeepSeek && var == CostVar::B) continue;
        s += fmt::format("{}{}={}", s.empty() ? "" : ", ", cost_var_name(i, basis), format_rational(p[i]));
    }
    return s;
}

// "I = F, W <= F, FB >= B" from the claim syntax "I == F && W <= F && FB >= B" (PyTorch's letters, which
// DeepSeek's read the same). In the Zero Bubble paper's letters B means the input gradient, so each
// inequality is rewritten there (B = I + W, then I printed as B): "F >= W && I >= W" is "F >= W, B >= W".
std::string condition_text(std::string c, Basis basis) {
    if (basis == Basis::ZeroBubble) {
        std::string out;
        for (const CostConstraint& k : parse_constraints(c)) {
            const auto a = basis_coefficients(k.a, basis);
            RatForm lhs, rhs;
            for (int i = 0; i < kCostVars; ++i) (a[i] > Rational(0) ? lhs : rhs).c[i] = a[i] > Rational(0) ? a[i] : -a[i];
            rhs.constant = k.b;  // a . x REL b
            const char* rel = k.rel == CostConstraint::Eq ? " = " : k.rel == CostConstraint::Gt ? " > " : " >= ";
            out += (out.empty() ? "" : ", ") + format_ratform(lhs, basis) + rel + format_ratform(rhs, basis);
        }
        return out;
    }
    for (std::string::size_type k; (k = c.find(" && ")) != std::string::npos;) c.replace(k, 4, ", ");
    for (std::string::size_type k; (k = c.find("==")) != std::string::npos;) c.replace(k, 2, "=");
    return c;
}

}  // namespace

ReadableBubble readable_bubble(const std::string& family, int P, std::optional<int> V, const MaxPoly& bubble,
                               const CostRegion& region) {
    ReadableBubble out;
    out.pieces = pieces_of(bubble, region);
    out.published = match_published(family, P, V, bubble, region);
    return out;
}

std::optional<PublishedMatch> match_published(const std::string& family, int P, std::optional<int> V,
                                              const MaxPoly& bubble, const CostRegion& region) {
    const auto pub = published_bubble(family, P, V, region.may_be_positive(CostVar::comm));
    if (!pub) return std::nullopt;
    PublishedMatch m;
    m.formula = *pub;
    m.equal_everywhere = equal_on(bubble, pub->value, region, m);
    if (!m.equal_everywhere && !pub->condition.empty()) {
        CostRegion cut = region;
        try {
            for (auto& c : parse_constraints(pub->condition)) cut.add(std::move(c));
            cut.finish();
            m.condition_applies = true;
        } catch (const std::invalid_argument&) {
            // the condition leaves nothing of the region: nothing to compare
        }
        if (m.condition_applies) {
            // A difference found here replaces the one on the whole region (which stays when they are equal here).
            m.equal_on_condition = equal_on(bubble, pub->value, cut, m);
        }
    }
    return m;
}

std::string format_published(const PublishedMatch& m, Basis basis) {
    std::string s = fmt::format("published formula: {} ({}) = {}: ", m.formula.name, m.formula.source,
                                format_form(m.formula.value, basis));
    auto differs = [&] {
        if (!m.differs_at) return m.undecided ? std::string(" (Z3: unknown)") : std::string();
        return fmt::format(" (e.g. at {}: bubble {}, formula {})", point_text(*m.differs_at, basis),
                           format_rational(m.bubble_there), format_rational(m.formula_there));
    };
    if (m.equal_everywhere) return s + "equal to the bubble on the whole region (Z3)";
    if (m.formula.condition.empty()) return s + "not equal to the bubble" + differs();
    if (!m.condition_applies)
        return s + "not equal to the bubble" + differs() + "; its condition " + condition_text(m.formula.condition, basis) +
               " leaves nothing of the region";
    if (m.equal_on_condition)
        return s + "= the bubble on " + condition_text(m.formula.condition, basis) + " (within the region; Z3), not elsewhere" +
               differs();
    return s + "not equal to the bubble even on " + condition_text(m.formula.condition, basis) + differs();
}

std::string format_readable(const ReadableBubble& r, Basis basis, const std::string& indent) {
    std::string s;
    if (r.pieces.pieces.size() == 1 && r.pieces.pieces[0].conditions.empty()) {
        s += indent + "bubble = " + format_form(r.pieces.pieces[0].value, basis) + " on the whole region\n";
    } else {
        s += indent + fmt::format("bubble by region ({} pieces: the simplest form where each is the largest):\n",
                                  r.pieces.pieces.size());
        for (const auto& piece : r.pieces.pieces) {
            s += indent + "    " + format_form(piece.value, basis) + "   where ";
            for (size_t k = 0; k < piece.conditions.size(); ++k)
                s += (k ? ", " : "") + format_condition(piece.conditions[k], basis);
            if (piece.conditions.empty()) s += "everywhere";
            s += "\n";
        }
    }
    if (r.published) s += indent + format_published(*r.published, basis) + "\n";
    return s;
}

}  // namespace pp
