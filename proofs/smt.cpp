#include "proofs/smt.hpp"

#include "limits/z3_check.hpp"
#include "proofs/budget.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

namespace pp::smt {

z3::expr cost_var(z3::context& ctx, int index) { return ctx.real_const(cost_var_name(index)); }

z3::expr rational(z3::context& ctx, const Rational& value) {
    const std::string text = value.numerator().to_string() + "/" + value.denominator().to_string();
    return ctx.real_val(text.c_str());
}

z3::expr form(z3::context& ctx, const LinForm& f) {
    z3::expr sum = ctx.real_val(0);
    bool any = false;
    for (int i = 0; i < kCostVars; ++i) {
        if (f.c[i] == 0) continue;
        z3::expr term = f.c[i] == 1 ? cost_var(ctx, i) : ctx.real_val(std::to_string(f.c[i]).c_str()) * cost_var(ctx, i);
        sum = any ? sum + term : term;
        any = true;
    }
    return sum;
}

z3::expr ratform(z3::context& ctx, const RatForm& f) {
    z3::expr sum = rational(ctx, f.constant);
    for (int i = 0; i < kCostVars; ++i)
        if (!(f.c[i] == Rational(0))) sum = sum + rational(ctx, f.c[i]) * cost_var(ctx, i);
    return sum;
}

z3::expr max_of(z3::context& ctx, const MaxPoly& p) {
    z3::expr best = form(ctx, p.forms.at(0));
    for (size_t k = 1; k < p.forms.size(); ++k) {
        z3::expr f = form(ctx, p.forms[k]);
        best = z3::ite(f > best, f, best);
    }
    return best;
}

void assert_region(z3::solver& solver, const CostRegion& region) {
    z3::context& ctx = solver.ctx();
    for (const auto& c : region.constraints) {
        RatForm lhs;
        lhs.c = c.a;
        z3::expr l = ratform(ctx, lhs);
        z3::expr r = rational(ctx, c.b);
        switch (c.rel) {
            case CostConstraint::Ge: solver.add(l >= r); break;
            case CostConstraint::Gt: solver.add(l > r); break;
            case CostConstraint::Eq: solver.add(l == r); break;
        }
    }
}

CostPoint point_from_model(z3::context& ctx, const z3::model& model) {
    CostPoint p{};
    for (int i = 0; i < kCostVars; ++i) {
        z3::expr v = model.eval(cost_var(ctx, i), true);
        std::string text = Z3_get_numeral_string(ctx, v);
        bool negative = !text.empty() && text[0] == '-';
        if (negative) text = text.substr(1);
        auto r = parse_rational(text);
        p[i] = r ? (negative ? -*r : *r) : Rational(0);
    }
    return p;
}

Outcome check(z3::context& ctx, z3::solver& solver, const std::string& title, const std::string& expect,
              unsigned timeout_ms) {
    Outcome out;
    out.smt2 = "; pipeproof obligation: " + title + "\n; expected: " + expect + "\n" + solver.to_smt2();
    const auto t0 = std::chrono::steady_clock::now();
    out.result = limits::check(solver, limits::CheckLimit::within_ms(timeout_ms));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out.result == z3::unknown) budget::check("Z3 checked: " + title);  // unknown because our time ran out?
    if (out.result == z3::sat) out.witness = point_from_model(ctx, solver.get_model());
    return out;
}

Outcome equal_on_region(const MaxPoly& a, const MaxPoly& b, const LinForm& shift, const CostRegion& region,
                        const std::string& title) {
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    assert_region(solver, region);
    solver.add(max_of(ctx, a) != max_of(ctx, b) + form(ctx, shift));
    return check(ctx, solver, title, "unsat");
}

Outcome leq_on_region(const MaxPoly& a, const MaxPoly& b, const CostRegion& region, const std::string& title) {
    z3::context ctx;
    z3::solver solver(ctx);
    smt::keep_ctrl_c(solver);
    assert_region(solver, region);
    solver.add(max_of(ctx, a) > max_of(ctx, b));
    return check(ctx, solver, title, "unsat");
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
    std::filesystem::create_directories(dir);
    const auto path = std::filesystem::path(dir) / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

}  // namespace pp::smt
