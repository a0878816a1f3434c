#pragma once
// Z3 glue for the prover: cost variables as reals, linear forms, max-plus polynomials as nested ites, the
// cost region's constraints, counterexample points, and SMT-LIB2 files a stock `z3 FILE` re-checks.
#include "proofs/symbolic.hpp"

#include <z3++.h>

#include <optional>
#include <string>

namespace pp::smt {

// Z3 installs its own SIGINT handler during check() unless told not to, and then swallows Ctrl-C: the
// check returns unknown and the command runs on. With it off, Ctrl-C ends a long proof the usual way.
// (limits::check sets it too; this keeps it off for anything else that might reach Z3's check.)
inline void keep_ctrl_c(z3::solver& solver) {
    z3::params params(solver.ctx());
    params.set("ctrl_c", false);
    solver.set(params);
}

z3::expr cost_var(z3::context& ctx, int index);
z3::expr rational(z3::context& ctx, const Rational& value);
z3::expr form(z3::context& ctx, const LinForm& f);
z3::expr ratform(z3::context& ctx, const RatForm& f);
z3::expr max_of(z3::context& ctx, const MaxPoly& p);
void assert_region(z3::solver& solver, const CostRegion& region);
// The model's value of every cost variable (0 for unconstrained ones).
CostPoint point_from_model(z3::context& ctx, const z3::model& model);

struct Outcome {
    z3::check_result result = z3::unknown;
    std::optional<CostPoint> witness;  // when sat
    double seconds = 0;
    std::string smt2;                  // the query as SMT-LIB2 (expected status in a comment)
};
// Runs the solver under the run's limits and `timeout_ms` of its own (limits/z3_check.hpp); when sat, reads
// the cost point. `expect` is written into the SMT-LIB2 text.
Outcome check(z3::context& ctx, z3::solver& solver, const std::string& title, const std::string& expect,
              unsigned timeout_ms = 60000);

// Is  a == b + shift  on the whole region? unsat of the negation proves it.
Outcome equal_on_region(const MaxPoly& a, const MaxPoly& b, const LinForm& shift, const CostRegion& region,
                        const std::string& title);

// Is  a <= b  on the whole region? unsat of  a > b  proves it.
Outcome leq_on_region(const MaxPoly& a, const MaxPoly& b, const CostRegion& region, const std::string& title);

// Writes text to DIR/name (creating DIR); returns the path.
std::string write_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace pp::smt
