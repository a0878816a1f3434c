#pragma once
// The Zero Bubble paper's Table 5 instances (Qi et al., ICLR 2024) as search problems: Table 9's costs (ms; the
// paper's TB is our I), Table 5's printed bubble rates of its heuristic, Table 1's size model. Shared by
// `pipeproof_bench zb-table` and the heuristic's tests; tests/test_zb_table.cpp keeps its own copy of Table 9 on
// purpose (it re-checks the committed table against the paper, independently of this file).
#include "model/rational.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"

#include <string>
#include <vector>

namespace pp::zb_table {

struct Cell {
    const char* model;
    int p, m;
    const char *F, *I, *W, *comm;  // Table 9, ms
    const char *paper_1p, *paper_2p;  // Table 5's bubble rates of the paper's heuristic
};

inline const std::vector<Cell>& table9() {
    static const std::vector<Cell> rows = {
        {"1.5B", 8, 24, "18.522", "18.086", "9.337", "0.601", "0.1585", "0.0433"},
        {"1.5B", 8, 32, "18.513", "18.086", "9.331", "0.626", "0.1242", "0.0039"},
        {"1.5B", 8, 64, "18.546", "18.097", "9.321", "0.762", "0.0674", "0.0026"},
        {"6.2B", 8, 24, "29.718", "29.444", "19.927", "0.527", "0.1323", "0.0029"},
        {"6.2B", 8, 32, "29.802", "29.428", "19.530", "0.577", "0.1045", "0.0022"},
        {"6.2B", 8, 64, "29.935", "29.621", "19.388", "0.535", "0.0554", "0.0010"},
        {"14.6B", 16, 48, "11.347", "11.248", "8.132", "0.377", "0.1397", "0.0066"},
        {"14.6B", 16, 64, "11.307", "11.254", "8.101", "0.379", "0.1088", "0.0054"},
        {"14.6B", 16, 128, "11.325", "11.308", "8.109", "0.378", "0.0576", "0.0028"},
        {"28.3B", 32, 96, "10.419", "10.207", "7.715", "0.408", "0.1421", "0.0038"},
        {"28.3B", 32, 128, "10.408", "10.204", "7.703", "0.408", "0.1106", "0.0029"},
        {"28.3B", 32, 256, "10.402", "10.248", "7.698", "0.460", "0.0594", "0.0018"},
    };
    return rows;
}

inline Rational exact(const char* text) { return *parse_rational(text); }

// M_W / M_B = 32h / (34h + 5as) (Table 1): 1.5B has h = 2304, a = 24, s = 1024; the others h/a = 128, s = 1024.
inline Rational weight_share(const std::string& model) {
    if (model == "1.5B") return Rational(32 * 2304) / Rational(34 * 2304 + 5 * 24 * 1024);  // 48/131
    return Rational(32 * 128) / Rational(34 * 128 + 5 * 1024);                               // 16/37
}

// The cell under limit factor*p (ZB-1p: 1, ZB-2p: 2): the 1F1B placement, F allocates 1 and I releases
// 1 - M_W/M_B, the cap in units of M_B, the span objective.
inline SearchProblem cell_problem(const Cell& c, int factor) {
    SearchProblem problem;
    problem.placement = placement_from_name("1f1b", c.p, c.m);
    problem.costs.base.F = exact(c.F);
    problem.costs.base.I = exact(c.I);
    problem.costs.base.W = exact(c.W);
    problem.costs.comm = exact(c.comm);
    problem.activations = {Rational(1), Rational(1) - weight_share(c.model)};
    problem.memory_limit = Rational(factor * c.p);
    problem.objective = Objective::Span;
    return problem;
}

}  // namespace pp::zb_table
