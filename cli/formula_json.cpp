#include "cli/formula_json.hpp"

#include "cli/common.hpp"

namespace pp::cli {

nlohmann::json form_json(const LinForm& form, Basis basis) {
    // Coefficients in the basis' letters (both use B = I + W): paper has no I, PyTorch no B.
    LinForm f = form;
    const int I = static_cast<int>(CostVar::I), W = static_cast<int>(CostVar::W), B = static_cast<int>(CostVar::B);
    if (paper_basis(basis)) f.c[B] += f.c[I], f.c[W] -= f.c[I], f.c[I] = 0;
    else f.c[I] += f.c[B], f.c[W] += f.c[B], f.c[B] = 0;
    nlohmann::json coefficients = nlohmann::json::object();
    for (int i = 0; i < kCostVars; ++i)
        if (f.c[i] != 0) coefficients[cost_var_name(i)] = f.c[i];
    return {{"text", format_form(form, paper_basis(basis))}, {"coefficients", coefficients}};
}

nlohmann::json pieces_json(const PiecewiseLinear& pw, Basis basis) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& piece : pw.pieces) {
        nlohmann::json where = nlohmann::json::array();
        for (const LinForm& c : piece.conditions) {
            nlohmann::json w = form_json(c, basis);
            w["text"] = format_condition(c, paper_basis(basis));
            w["relation"] = ">= 0";  // the coefficients' form is >= 0 on the piece
            where.push_back(w);
        }
        nlohmann::json example = nlohmann::json::object();
        for (int i = 0; i < kCostVars; ++i) example[cost_var_name(i)] = exact_json(piece.example[i]);
        out.push_back({{"value", form_json(piece.value, basis)}, {"where", where}, {"example", example}});
    }
    return out;
}

nlohmann::json published_json(const PublishedMatch& m, Basis basis) {
    nlohmann::json j{{"name", m.formula.name},
                     {"source", m.formula.source},
                     {"value", form_json(m.formula.value, basis)},
                     {"condition", m.formula.condition},
                     {"equal_on_region", m.equal_everywhere}};
    if (!m.formula.condition.empty() && !m.equal_everywhere) {
        j["condition_leaves_region"] = m.condition_applies;
        j["equal_on_condition"] = m.equal_on_condition;
    }
    if (m.differs_at) {
        nlohmann::json at = nlohmann::json::object();
        for (int i = 0; i < kCostVars; ++i) at[cost_var_name(i)] = exact_json((*m.differs_at)[i]);
        j["differs_at"] = {{"costs", at}, {"bubble", exact_json(m.bubble_there)}, {"formula", exact_json(m.formula_there)}};
    }
    if (m.undecided) j["undecided"] = true;
    return j;
}

nlohmann::json readable_json(const ReadableBubble& r, Basis basis) {
    nlohmann::json j{{"basis", paper_basis(basis) ? "paper" : "pytorch"}, {"pieces", pieces_json(r.pieces, basis)}};
    if (r.published) j["published"] = published_json(*r.published, basis);
    return j;
}

}  // namespace pp::cli
