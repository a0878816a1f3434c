#include "proofs/smt.hpp"
#include "proofs/chunk_formula.hpp"

#include "limits/z3_check.hpp"
#include "model/chunk_dag.hpp"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>

namespace pp {
namespace {

ChunkForm unit(Component c) {
    ChunkForm f;
    f.c[static_cast<size_t>(c)] = 1;
    return f;
}

ChunkForm plus(ChunkForm a, const ChunkForm& b) {
    for (int k = 0; k < kComponents; ++k) a.c[static_cast<size_t>(k)] += b.c[static_cast<size_t>(k)];
    return a;
}

bool dominated(const ChunkForm& a, const ChunkForm& b) {  // a <= b coefficient by coefficient
    for (int k = 0; k < kComponents; ++k)
        if (a.c[static_cast<size_t>(k)] > b.c[static_cast<size_t>(k)]) return false;
    return true;
}

void prune(std::vector<ChunkForm>& forms) {
    std::vector<ChunkForm> kept;
    for (size_t i = 0; i < forms.size(); ++i) {
        bool drop = false;
        for (size_t j = 0; j < forms.size() && !drop; ++j)
            if (i != j && dominated(forms[i], forms[j]) && (!(forms[i] == forms[j]) || j < i)) drop = true;
        if (!drop) kept.push_back(forms[i]);
    }
    forms = std::move(kept);
}

// "network side <= compute side" for form - compute <= 0.
std::string inequality(const ChunkForm& form, const ChunkForm& compute) {
    ChunkForm left, right;
    for (int k = 0; k < kComponents; ++k) {
        const std::int64_t d = form.c[static_cast<size_t>(k)] - compute.c[static_cast<size_t>(k)];
        (d > 0 ? left : right).c[static_cast<size_t>(k)] = d > 0 ? d : -d;
    }
    return left.str() + " <= " + right.str();
}

struct Graph {
    SlotDag dag;
    StreamOrder order;
    std::vector<std::vector<int>> preds;  // data + pattern + stream-order edges
    std::vector<int> topo;
};

Graph build(SlotKind kind, const PatternSpec& pattern, int layers, bool shared) {
    ChunkCosts ones;
    ones.resize(layers);
    for (int k = 0; k < kComponents; ++k) {
        const auto c = static_cast<Component>(k);
        const bool is_shared = c == Component::SharedF || c == Component::SharedI || c == Component::SharedW;
        ones.set_all(c, is_shared && !shared ? Rational(0) : Rational(1));
    }
    Graph g;
    g.dag = build_slot_dag(kind, ones);
    if (pattern.kind == PatternKind::Best) throw std::invalid_argument("a symbolic formula needs a fixed pattern (best depends on the costs)");
    g.order = pattern.kind == PatternKind::Custom ? custom_order(pattern, ones, g.dag) : pattern_order(pattern.kind, g.dag);
    const int n = g.dag.node_count();
    g.preds = g.dag.pred;
    for (const auto& [a, b] : g.order.extra) g.preds[static_cast<size_t>(b)].push_back(a);
    for (const auto& list : g.order.lists)
        for (size_t k = 1; k < list.size(); ++k) g.preds[static_cast<size_t>(list[k])].push_back(list[k - 1]);
    std::vector<int> indegree(static_cast<size_t>(n), 0);
    std::vector<std::vector<int>> succ(static_cast<size_t>(n));
    for (int v = 0; v < n; ++v)
        for (int p : g.preds[static_cast<size_t>(v)]) succ[static_cast<size_t>(p)].push_back(v), ++indegree[static_cast<size_t>(v)];
    for (int v = 0; v < n; ++v)
        if (indegree[static_cast<size_t>(v)] == 0) g.topo.push_back(v);
    for (size_t head = 0; head < g.topo.size(); ++head)
        for (int w : succ[static_cast<size_t>(g.topo[head])])
            if (--indegree[static_cast<size_t>(w)] == 0) g.topo.push_back(w);
    if (static_cast<int>(g.topo.size()) != n) throw std::logic_error("chunk formula: the pattern deadlocks");
    return g;
}

// z3: exact timing of the graph over positive real costs; returns the duration expression's variable.
struct Encoding {
    z3::context ctx;
    std::vector<z3::expr> cost;  // per component type
    z3::expr duration{ctx};
    z3::expr compute{ctx};
    z3::expr max_forms{ctx};
};

z3::expr form_expr(Encoding& e, const ChunkForm& f) {
    z3::expr sum = e.ctx.real_val(0);
    for (int k = 0; k < kComponents; ++k)
        if (f.c[static_cast<size_t>(k)] != 0) sum = sum + e.ctx.real_val(static_cast<int>(f.c[static_cast<size_t>(k)])) * e.cost[static_cast<size_t>(k)];
    return sum;
}

// v == max(candidates): v >= each and v equals one of them.
void assert_max(z3::solver& s, const z3::expr& v, const std::vector<z3::expr>& candidates) {
    z3::expr_vector equal(s.ctx());
    for (const auto& c : candidates) {
        s.add(v >= c);
        equal.push_back(v == c);
    }
    s.add(z3::mk_or(equal));
}

void encode(Encoding& e, z3::solver& s, const Graph& g, const ChunkFormula& f) {
    for (int k = 0; k < kComponents; ++k) {
        e.cost.push_back(e.ctx.real_const(component_key(static_cast<Component>(k))));
        s.add(e.cost.back() > 0);
    }
    const int n = g.dag.node_count();
    std::vector<z3::expr> end;
    for (int v = 0; v < n; ++v) end.push_back(e.ctx.real_const(("end_" + g.dag.nodes[static_cast<size_t>(v)].name()).c_str()));
    for (int v : g.topo) {
        std::vector<z3::expr> inputs{e.ctx.real_val(0)};
        for (int p : g.preds[static_cast<size_t>(v)]) inputs.push_back(end[static_cast<size_t>(p)]);
        const z3::expr start = e.ctx.real_const(("start_" + g.dag.nodes[static_cast<size_t>(v)].name()).c_str());
        assert_max(s, start, inputs);
        s.add(end[static_cast<size_t>(v)] == start + e.cost[static_cast<size_t>(g.dag.nodes[static_cast<size_t>(v)].component)]);
    }
    e.duration = e.ctx.real_const("duration");
    assert_max(s, e.duration, end);
    e.compute = form_expr(e, f.compute);
    std::vector<z3::expr> forms;
    for (const auto& form : f.duration) forms.push_back(form_expr(e, form));
    e.max_forms = e.ctx.real_const("max_forms");
    assert_max(s, e.max_forms, forms);
}

z3::expr region_expr(Encoding& e, const ChunkFormula& f) {
    z3::expr_vector all(e.ctx);
    for (const auto& form : f.region_forms) all.push_back(form_expr(e, form) <= e.compute);
    return all.empty() ? e.ctx.bool_val(true) : z3::mk_and(all);
}

ChunkFormulaProof obligation(const Graph& g, const ChunkFormula& f, const std::string& name, const std::string& statement, int which) {
    Encoding e;
    z3::solver s(e.ctx);
    smt::keep_ctrl_c(s);
    encode(e, s, g, f);
    if (which == 0) s.add(e.duration != e.max_forms);
    if (which == 1) s.add(region_expr(e, f) && e.duration - e.compute > 0);
    if (which == 2) s.add(!region_expr(e, f) && e.duration - e.compute <= 0);
    ChunkFormulaProof p{name, statement, false, ""};
    p.smt2 = "; pipeproof chunk formula: " + statement + " -- expected: unsat\n" + s.to_smt2();
    p.holds = limits::check(s) == z3::unsat;
    return p;
}

// Drops every region inequality that the others imply for positive costs (Z3: the others and its negation
// are unsat), so the printed region is irredundant. Forms are tried from the largest down.
void drop_implied(ChunkFormula& f) {
    for (size_t i = f.region_forms.size(); i-- > 0;) {
        z3::context ctx;
        z3::solver s(ctx);
        smt::keep_ctrl_c(s);
        std::vector<z3::expr> x;
        for (int k = 0; k < kComponents; ++k) {
            x.push_back(ctx.real_const(component_key(static_cast<Component>(k))));
            s.add(x.back() > 0);
        }
        auto value = [&](const ChunkForm& form) {
            z3::expr sum = ctx.real_val(0);
            for (int k = 0; k < kComponents; ++k)
                if (form.c[static_cast<size_t>(k)] != 0) sum = sum + ctx.real_val(static_cast<int>(form.c[static_cast<size_t>(k)])) * x[static_cast<size_t>(k)];
            return sum;
        };
        for (size_t j = 0; j < f.region_forms.size(); ++j)
            if (j != i) s.add(value(f.region_forms[j]) <= value(f.compute));
        s.add(value(f.region_forms[i]) > value(f.compute));
        if (limits::check(s) == z3::unsat) f.region_forms.erase(f.region_forms.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

}  // namespace

Rational ChunkForm::at(const ChunkCosts& costs) const {
    Rational sum{0};
    for (int k = 0; k < kComponents; ++k) sum += Rational(c[static_cast<size_t>(k)]) * costs.cost(static_cast<Component>(k), 0);
    return sum;
}

std::string ChunkForm::str() const {
    std::string text;
    for (int k = 0; k < kComponents; ++k) {
        const std::int64_t v = c[static_cast<size_t>(k)];
        if (v == 0) continue;
        text += text.empty() ? "" : " + ";
        text += v == 1 ? std::string(component_key(static_cast<Component>(k))) : fmt::format("{}*{}", v, component_key(static_cast<Component>(k)));
    }
    return text.empty() ? "0" : text;
}

bool ChunkFormula::proved() const {
    return !proofs.empty() && std::all_of(proofs.begin(), proofs.end(), [](const ChunkFormulaProof& p) { return p.holds; });
}

Rational ChunkFormula::duration_at(const ChunkCosts& costs) const {
    Rational best{0};
    for (const auto& f : duration) best = std::max(best, f.at(costs));
    return best;
}

bool ChunkFormula::hidden_at(const ChunkCosts& costs) const {
    for (const auto& f : region_forms)
        if (f.at(costs) > compute.at(costs)) return false;
    return true;
}

ChunkFormula derive_chunk_formula(SlotKind kind, const PatternSpec& pattern, int layers, bool shared, bool prove) {
    const Graph g = build(kind, pattern, layers, shared);
    ChunkFormula f;
    f.kind = kind;
    f.pattern = pattern;
    f.layers = layers;
    f.shared = shared;
    const int n = g.dag.node_count();
    std::vector<std::vector<ChunkForm>> ends(static_cast<size_t>(n));
    for (int v : g.topo) {
        std::vector<ChunkForm> in;
        for (int p : g.preds[static_cast<size_t>(v)]) in.insert(in.end(), ends[static_cast<size_t>(p)].begin(), ends[static_cast<size_t>(p)].end());
        if (in.empty()) in.push_back(ChunkForm{});
        prune(in);
        for (auto& form : in) form = plus(form, unit(g.dag.nodes[static_cast<size_t>(v)].component));
        ends[static_cast<size_t>(v)] = std::move(in);
    }
    for (const auto& e : ends) f.duration.insert(f.duration.end(), e.begin(), e.end());
    prune(f.duration);
    for (const auto& node : g.dag.nodes)
        if (node.stream() == Stream::Compute) f.compute = plus(f.compute, unit(node.component));
    const bool compute_is_a_form = std::find(f.duration.begin(), f.duration.end(), f.compute) != f.duration.end();
    for (const auto& form : f.duration)
        if (!(form == f.compute)) f.region_forms.push_back(form);
    drop_implied(f);
    for (const auto& form : f.region_forms) f.hidden_region.push_back(inequality(form, f.compute));
    if (!compute_is_a_form) f.hidden_region.insert(f.hidden_region.begin(), "false (some path always outlasts the compute stream)");
    if (prove) {
        f.proofs.push_back(obligation(g, f, "formula", "duration = max of the forms, for every positive cost point", 0));
        f.proofs.push_back(obligation(g, f, "hidden", "inside the region, exposed_comm = duration - compute = 0", 1));
        f.proofs.push_back(obligation(g, f, "exposed", "outside the region, exposed_comm > 0", 2));
    }
    return f;
}

std::string format_chunk_formula(const ChunkFormula& f) {
    std::string text = fmt::format("slot {}, pattern {}, {} layer{}{}; per-layer component costs, all > 0, no contention:\n",
                                   slot_kind_name(f.kind), format_pattern(f.pattern), f.layers, f.layers == 1 ? "" : "s",
                                   f.shared ? ", shared expert" : "");
    text += "  duration = max(\n";
    for (const auto& form : f.duration) text += fmt::format("      {}{}\n", form.str(), form == f.compute ? "    [the compute stream]" : "");
    text += "  )\n";
    text += fmt::format("  exposed_comm = duration - ({})\n", f.compute.str());
    if (f.hidden_region.empty()) text += "  all EP communication is hidden for every cost point\n";
    else {
        text += "  all EP communication is hidden iff\n";
        for (const auto& line : f.hidden_region) text += "      " + line + "\n";
    }
    for (const auto& p : f.proofs) text += fmt::format("  [{}] {}: {} (Z3, unsat of the negation)\n", p.holds ? "PROVED" : "NOT PROVED", p.name, p.statement);
    return text;
}

ChunkCosts uniform_chunk_costs(int layers, const std::array<Rational, kComponents>& values) {
    ChunkCosts c;
    c.resize(layers);
    for (int k = 0; k < kComponents; ++k) c.set_all(static_cast<Component>(k), values[static_cast<size_t>(k)]);
    return c;
}

std::optional<std::array<Rational, kComponents>> exposing_point(const ChunkFormula& f, int bound) {
    if (f.region_forms.empty()) return std::nullopt;
    z3::context ctx;
    z3::solver s(ctx);
    smt::keep_ctrl_c(s);
    std::vector<z3::expr> x;
    for (int k = 0; k < kComponents; ++k) {
        const auto c = static_cast<Component>(k);
        const bool is_shared = c == Component::SharedF || c == Component::SharedI || c == Component::SharedW;
        x.push_back(ctx.int_const(component_key(c)));
        if (is_shared && !f.shared) s.add(x.back() == 0);
        else s.add(x.back() >= 1 && x.back() <= bound);
    }
    auto value = [&](const ChunkForm& form) {
        z3::expr sum = ctx.int_val(0);
        for (int k = 0; k < kComponents; ++k)
            if (form.c[static_cast<size_t>(k)] != 0) sum = sum + ctx.int_val(static_cast<int>(form.c[static_cast<size_t>(k)])) * x[static_cast<size_t>(k)];
        return sum;
    };
    z3::expr_vector outside(ctx);
    for (const auto& form : f.region_forms) outside.push_back(value(form) > value(f.compute));
    s.add(z3::mk_or(outside));
    if (limits::check(s) != z3::sat) return std::nullopt;
    const z3::model m = s.get_model();
    std::array<Rational, kComponents> point{};
    for (int k = 0; k < kComponents; ++k) {
        std::int64_t v = 0;
        m.eval(x[static_cast<size_t>(k)], true).is_numeral_i64(v);
        point[static_cast<size_t>(k)] = Rational(v);
    }
    return point;
}

}  // namespace pp
