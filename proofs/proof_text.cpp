// Names and the printed proof: statement, verdict, counterexample, assumptions, obligations.
#include "proofs/claim.hpp"
#include "proofs/prover.hpp"

#include <fmt/format.h>

namespace pp {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string join_ints(const std::vector<int>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
    return s + "]";
}

std::string costs_text(const CostPoint& p) {
    return fmt::format("F={},I={},W={},B={},FB={},comm={}", format_rational(p[0]), format_rational(p[1]),
                       format_rational(p[2]), format_rational(p[3]), format_rational(p[4]), format_rational(p[5]));
}

const char* property_name(Property property) {
    switch (property) {
        case Property::BubbleConstant: return "bubble-constant";
        case Property::Dependencies: return "dependencies";
        case Property::DeadlockFree: return "deadlock-free";
        case Property::MemoryBound: return "memory-bound";
    }
    return "?";
}

std::optional<Property> parse_property(const std::string& name) {
    for (Property p : {Property::BubbleConstant, Property::Dependencies, Property::DeadlockFree, Property::MemoryBound})
        if (name == property_name(p)) return p;
    return std::nullopt;
}

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::Proved: return "PROVED";
        case Verdict::Refuted: return "REFUTED";
        case Verdict::Unknown: return "UNKNOWN";
    }
    return "?";
}

std::string format_proof(const ProofResult& r, bool deepseek_basis) {
    return format_proof(r, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    if (from.empty() || from == to) return;
    for (size_t k = text.find(from); k != std::string::npos; k = text.find(from, k + to.size())) text.replace(k, from.size(), to);
}

}  // namespace

std::string deepseek_text_in(const std::string& text, Basis basis) {
    if (basis == Basis::DeepSeek) return text;
    // One form, or max(...) of forms separated by ", " (MaxPoly::str); each is claim syntax with B the full
    // backward, which is how the claim parser reads B.
    const bool is_max = text.rfind("max(", 0) == 0 && !text.empty() && text.back() == ')';
    const std::string inner = is_max ? text.substr(4, text.size() - 5) : text;
    std::string out;
    try {
        for (size_t from = 0; from <= inner.size();) {
            size_t comma = inner.find(", ", from);
            if (comma == std::string::npos) comma = inner.size();
            const auto constraints = parse_constraints(inner.substr(from, comma - from) + " >= 0");
            if (constraints.size() != 1) throw ClaimError{"not one form", 0};
            RatForm form;
            // In the basis' own letters: PyTorch's B (the full backward the text states) becomes I + W.
            form.c = basis_coefficients(constraints[0].a, basis);
            form.constant = -constraints[0].b;
            out += (out.empty() ? "" : ", ") + format_ratform(form, basis);
            from = comma + 2;
        }
    } catch (const ClaimError&) {
        return text + " [DeepSeek's letters]";
    }
    return is_max ? "max(" + out + ")" : out;
}

std::string format_proof(const ProofResult& r, Basis basis) {
    std::string out;
    // The prover writes its summary in DeepSeek's letters; the bubble in it is rewritten in the ones asked for.
    std::string summary = r.summary;
    const bool symbolic = r.bubble_symbolic && r.region;
    std::string deepseek_bubble, basis_bubble;
    if (symbolic) {
        deepseek_bubble = r.bubble_symbolic->str(*r.region, Basis::DeepSeek);
        basis_bubble = r.bubble_symbolic->str(*r.region, basis);
        replace_all(summary, deepseek_bubble, basis_bubble);
    }
    // The values below M0 ("bubble(1) = 6*F - 6*W + 6*B") likewise.
    std::vector<std::pair<std::string, std::string>> early;
    if (symbolic && basis != Basis::DeepSeek)
        for (const auto& [m, text] : r.early_bubbles) {
            const std::string from = fmt::format("bubble({}) = {}", m, text);
            early.emplace_back(from, fmt::format("bubble({}) = {}", m, deepseek_text_in(text, basis)));
            replace_all(summary, early.back().first, early.back().second);
        }
    out += fmt::format("family: {}  P={}{}{}  M = {} + {}t\n", r.family, r.ranks,
                       r.stages_per_rank ? fmt::format("  V={}", *r.stages_per_rank) : "",
                       r.group_size ? fmt::format("  G={}", *r.group_size) : "", r.m_origin, r.step);
    out += "statement: " + r.statement + "\n";
    out += fmt::format("verdict: {}\n", verdict_name(r.verdict));
    if (symbolic) out += "letters: " + basis_legend(basis) + "\n";
    if (!summary.empty()) out += "result: " + summary + "\n";
    if (r.verdict == Verdict::Unknown && !r.missing.empty()) out += "missing: " + r.missing + "\n";
    if (r.counterexample) {
        const auto& cx = *r.counterexample;
        out += fmt::format("counterexample: P={} M={}", cx.ranks, cx.microbatches);
        if (cx.other_microbatches) out += fmt::format(" (vs M={})", *cx.other_microbatches);
        if (!cx.kind.empty()) out += " kind " + cx.kind;
        if (cx.for_every_m_from) out += fmt::format(" (for every M >= {})", *cx.for_every_m_from);
        if (cx.costs) out += (basis == Basis::ZeroBubble ? " costs (PyTorch's letters) " : " costs ") + costs_text(*cx.costs);
        out += "\n  " + cx.what + "\n";
    }
    // The region is stated in PyTorch's letters; in the Zero Bubble paper's, B would read as the input gradient.
    out += basis == Basis::ZeroBubble ? "assumptions (in PyTorch's letters: I = input gradient, B = I + W):\n" : "assumptions:\n";
    for (const auto& a : r.assumptions) out += "  - " + a + "\n";
    if (symbolic && basis != Basis::DeepSeek)
        out += "obligations (their working in " + basis_legend(Basis::DeepSeek) + ", the bubble in the letters above):\n";
    else
        out += "obligations:\n";
    int k = 1;
    for (const auto& o : r.obligations) {
        out += fmt::format("  [{}] {} ({}){}\n", k++, o.name, o.holds ? "holds" : "FAILS",
                           o.seconds > 0 ? fmt::format(", {:.3f} s", o.seconds) : "");
        std::string statement = o.statement;
        if (symbolic) replace_all(statement, deepseek_bubble, basis_bubble);
        for (const auto& [from, to] : early) replace_all(statement, from, to);
        out += "      statement: " + statement + "\n";
        out += "      discharged: " + o.method + "\n";
        if (!o.file.empty()) out += "      smt-lib2: " + o.file + "\n";
    }
    return out;
}

}  // namespace pp
