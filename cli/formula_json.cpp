#include "cli/formula_json.hpp"

#include "cli/common.hpp"

namespace pp::cli {

nlohmann::json form_json(const LinForm& form, Basis basis) {
    // Coefficients in the basis' letters (B = I + W): DeepSeek's have no I, PyTorch's no B, and the Zero Bubble
    // paper's call the input gradient B. Integral forms stay integral (the rewrite only adds and subtracts).
    std::array<Rational, kCostVars> c{};
    for (int i = 0; i < kCostVars; ++i) c[i] = Rational(form.c[i]);
    c = basis_coefficients(c, basis);
    nlohmann::json coefficients = nlohmann::json::object();
    for (int i = 0; i < kCostVars; ++i)
        if (c[i] != Rational(0)) coefficients[cost_var_name(i, basis)] = number_json(c[i]);
    return {{"text", format_form(form, basis)}, {"coefficients", coefficients}};
}

nlohmann::json pieces_json(const PiecewiseLinear& pw, Basis basis) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& piece : pw.pieces) {
        nlohmann::json where = nlohmann::json::array();
        for (const LinForm& c : piece.conditions) {
            nlohmann::json w = form_json(c, basis);
            w["text"] = format_condition(c, basis);
            w["relation"] = ">= 0";  // the coefficients' form is >= 0 on the piece
            where.push_back(w);
        }
        out.push_back({{"value", form_json(piece.value, basis)}, {"where", where}, {"example", cost_point_json(piece.example, basis)}});
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
        j["differs_at"] = {{"costs", cost_point_json(*m.differs_at, basis)}};
        put_number(j["differs_at"], "bubble", m.bubble_there);
        put_number(j["differs_at"], "formula", m.formula_there);
    }
    if (m.undecided) j["undecided"] = true;
    return j;
}

nlohmann::json readable_json(const ReadableBubble& r, Basis basis) {
    nlohmann::json j{{"basis", basis_name(basis)}, {"pieces", pieces_json(r.pieces, basis)}};
    if (r.published) j["published"] = published_json(*r.published, basis);
    return j;
}

}  // namespace pp::cli
