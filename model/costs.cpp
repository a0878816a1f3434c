#include "model/costs.hpp"

#include "model/cost_presets.hpp"
#include "model/spelling.hpp"

namespace pp {

const OpCosts& Costs::of_block(int block) const {
    auto it = per_block.find(block);
    return it == per_block.end() ? base : it->second;
}

Rational Costs::duration(OpKind kind, int block) const {
    const auto& c = of_block(block);
    switch (kind) {
        case OpKind::F: return c.F;
        case OpKind::I: return c.I;
        case OpKind::W: return c.W;
        case OpKind::B: return c.full_backward();
    }
    return c.F;
}

Rational ActivationModel::scale_of(int pipeline, int stage) const {
    if (stage_scale.empty()) return Rational(1);
    return stage_scale.at(static_cast<size_t>(pipeline)).at(static_cast<size_t>(stage));
}

Rational Costs::pair_duration(const Op& forward, int forward_block, const Op& backward, int backward_block) const {
    const auto& c = of_block(forward_block);
    if (backward.kind == OpKind::I && c.FI) return *c.FI;
    if (c.FB) return *c.FB;
    return duration(forward.kind, forward_block) + duration(backward.kind, backward_block);
}

Costs scaled_op_costs(const Costs& costs, const Rational& factor) {
    auto scale = [&](OpCosts c) {
        c.F = c.F * factor, c.I = c.I * factor, c.W = c.W * factor;
        if (c.B) c.B = *c.B * factor;
        if (c.FB) c.FB = *c.FB * factor;
        if (c.FI) c.FI = *c.FI * factor;
        return c;
    };
    Costs out = costs;
    out.base = scale(costs.base);
    for (auto& [block, c] : out.per_block) c = scale(c);
    return out;
}

ActivationModel scaled_sizes(ActivationModel sizes, const Rational& factor) {
    sizes.forward_alloc = sizes.forward_alloc * factor;
    sizes.input_grad_free = sizes.input_grad_free * factor;
    return sizes;
}

std::vector<Rational> Costs::all_values() const {
    std::vector<Rational> values{comm};
    auto add = [&](const OpCosts& c) {
        values.insert(values.end(), {c.F, c.I, c.W, c.full_backward()});
        if (c.FB) values.push_back(*c.FB);
        if (c.FI) values.push_back(*c.FI);
    };
    add(base);
    for (const auto& [block, c] : per_block) add(c);
    return values;
}

void apply_cost_items(std::string_view text, OpCosts& op_costs, Rational* comm) {
    size_t pos = 0;
    auto is_sep = [](char c) { return c == ',' || c == ' ' || c == '\t'; };
    while (pos < text.size()) {
        while (pos < text.size() && is_sep(text[pos])) ++pos;
        if (pos >= text.size()) break;
        size_t start = pos;
        while (pos < text.size() && !is_sep(text[pos])) ++pos;
        std::string_view item = text.substr(start, pos - start);
        auto eq = item.find('=');
        if (eq == std::string_view::npos) {
            // A published profile by name (model/cost_presets.hpp): its items, then whatever follows overrides them.
            if (const CostPreset* preset = find_cost_preset(item)) {
                Rational no_comm;  // a per-block override has no latency of its own
                apply_cost_items(preset->costs, op_costs, comm ? comm : &no_comm);
                continue;
            }
            std::vector<std::string> names;
            for (const CostPreset& p : cost_presets()) names.push_back(p.name);
            const auto nearest = nearest_spelling(to_lower(item), names);
            throw CostSyntaxError{"expected KEY=VALUE (keys F, I, W, B, FB, comm) or a preset name (pipeproof list --costs), got '" +
                                      std::string(item) + "'" + (nearest ? "; did you mean the preset '" + *nearest + "'?" : ""),
                                  start};
        }
        auto key = item.substr(0, eq);
        auto value = parse_rational(item.substr(eq + 1));
        if (!value)
            throw CostSyntaxError{"expected a non-negative number such as 2, 1.5 or 7/4 after '" + std::string(key) +
                                      "=' (numerator and denominator at most 2^40 = 1099511627776, also for a "
                                      "decimal once reduced), got '" + std::string(item.substr(eq + 1)) + "'",
                                  start + eq + 1};
        if (key == "F") op_costs.F = *value;
        else if (key == "I") op_costs.I = *value;
        else if (key == "W") op_costs.W = *value;
        else if (key == "B") op_costs.B = *value;
        else if (key == "FB" || key == "F&B") op_costs.FB = *value;
        else if (key == "FI" || key == "F&I") op_costs.FI = *value;
        else if ((key == "comm" || key == "c") && comm) *comm = *value;
        else
            throw CostSyntaxError{"unknown cost key '" + std::string(key) + "' (expected F, I, W, B, FB, FI" +
                                      (comm ? ", comm" : "") + ")",
                                  start};
    }
}

Costs parse_costs(std::string_view text) {
    Costs costs;
    apply_cost_items(text, costs.base, &costs.comm);
    return costs;
}

std::string format_op_costs(const OpCosts& c) {
    std::string text = "F=" + format_rational(c.F) + ",I=" + format_rational(c.I) + ",W=" + format_rational(c.W);
    if (c.B) text += ",B=" + format_rational(*c.B);
    if (c.FB) text += ",FB=" + format_rational(*c.FB);
    if (c.FI) text += ",FI=" + format_rational(*c.FI);
    return text;
}

std::string format_costs(const Costs& costs) {
    return format_op_costs(costs.base) + ",comm=" + format_rational(costs.comm);
}

ActivationModel parse_activation_sizes(std::string_view text) {
    ActivationModel model;
    OpCosts sizes;
    sizes.F = model.forward_alloc;
    sizes.I = model.input_grad_free;
    apply_cost_items(text, sizes, nullptr);
    if (sizes.W != Rational(1) || sizes.B || sizes.FB || sizes.FI)
        throw CostSyntaxError{"activation sizes take F (allocated by F) and I (released by I) only", 0};
    if (sizes.I > sizes.F) throw CostSyntaxError{"I cannot release more than F allocated", 0};
    model.forward_alloc = sizes.F;
    model.input_grad_free = sizes.I;
    return model;
}

std::string format_activation_sizes(const ActivationModel& sizes) {
    return "F=" + format_rational(sizes.forward_alloc) + ",I=" + format_rational(sizes.input_grad_free);
}

}  // namespace pp
