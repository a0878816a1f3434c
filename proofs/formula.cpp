#include "proofs/formula.hpp"

#include "limits/z3_check.hpp"
#include "proofs/budget.hpp"
#include "proofs/smt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace pp {

namespace {

// One query about the pieces: 20 s of its own (an undecided one keeps the form, which is safe), and when the
// run's time limit or a stop request cut it short, the formula as a whole ends UNKNOWN (budget::Exhausted).
z3::check_result check_within_budget(z3::solver& solver) {
    const z3::check_result r = limits::check(solver, limits::CheckLimit::within_ms(20000));
    if (r == z3::unknown) budget::check("deciding which forms are pieces of the formula");
    return r;
}

LinForm normalize(const LinForm& f, const CostRegion& region) { return normalize_form(f, region); }

LinForm reduce_gcd(LinForm f) {
    std::int64_t g = 0;
    for (auto x : f.c) g = std::gcd(g, x < 0 ? checked_sub(0, x) : x);
    if (g > 1)
        for (auto& x : f.c) x /= g;
    return f;
}

}  // namespace

std::string format_condition(const LinForm& form, bool deepseek_basis) {
    return format_condition(form, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

std::string format_condition(const LinForm& form, Basis basis) {
    RatForm r;
    for (int i = 0; i < kCostVars; ++i) r.c[i] = Rational(form.c[i]);
    // PyTorch's letters print the form as it is (a B it states stays B); the others rewrite with B = I + W.
    if (basis != Basis::PyTorch) r.c = basis_coefficients(r.c, basis);
    RatForm lhs, rhs;
    for (int i = 0; i < kCostVars; ++i) (r.c[i] > Rational(0) ? lhs : rhs).c[i] = r.c[i] > Rational(0) ? r.c[i] : -r.c[i];
    return format_ratform(lhs, basis) + " >= " + format_ratform(rhs, basis);  // a second rewrite changes nothing
}

namespace {

struct StrictMaxima {
    std::vector<bool> is_piece;
    std::vector<CostPoint> example;
};

// The forms that are the strict maximum at some point of the region. Dropping all the others leaves the
// function unchanged: where a dropped form attains the max, a kept one does too (two distinct linear forms tied
// at the max split a neighbourhood in the convex region, and one of them is strictly largest on each side;
// forms equal as functions were already merged by MaxPoly::prune). Z3's unknown keeps a form.
StrictMaxima strict_maxima(const MaxPoly& poly, const CostRegion& region, z3::context& ctx, z3::solver& solver,
                           const std::vector<z3::expr>& exprs) {
    const size_t n = poly.forms.size();
    StrictMaxima out;
    out.is_piece.assign(n, false);
    out.example.resize(n);
    // 1. Definite pieces: the unique maximum at some interior sample point (exact integer arithmetic: the
    //    points are positive integer combinations of the integer rays).
    std::uint64_t seed = 0x2545F4914F6CDD1DULL;
    const size_t R = region.rays.size();
    for (int sample = 0; sample < 600 && n > 0; ++sample) {
        std::vector<std::int64_t> w(R);
        for (auto& x : w) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            x = 1 + static_cast<std::int64_t>(seed % (sample < 200 ? 4 : sample < 400 ? 16 : 64));
        }
        std::int64_t best = 0;
        size_t arg = 0, ties = 0;
        for (size_t i = 0; i < n; ++i) {
            std::int64_t v = 0;
            for (size_t r = 0; r < R; ++r) v = checked_add(v, checked_mul(w[r], poly.row(i)[r]));
            if (i == 0 || v > best) best = v, arg = i, ties = 1;
            else if (v == best) ++ties;
        }
        if (ties == 1 && !out.is_piece[arg]) {
            // The rays ignore constraints with a constant term; such a point may lie outside.
            const CostPoint point = region.interior_point(w);
            if (!region.contains(point)) continue;
            out.is_piece[arg] = true;
            out.example[arg] = point;
        }
    }
    // 2a. Where a known piece p is the largest of the known pieces is a polyhedral cone (the region's cone cut by
    //     p >= q); a form that is <= p on every extreme ray of p's cone, for every p, never exceeds the known
    //     pieces. (The region's constraints with a constant term are left out, which only enlarges the cones.)
    std::vector<std::pair<size_t, std::vector<std::array<std::int64_t, kCostVars>>>> cells;
    bool cells_ok = false;
    auto build_cells = [&] {
        cells.clear();
        cells_ok = true;
        for (size_t p = 0; p < n && cells_ok; ++p) {
            if (!out.is_piece[p]) continue;
            CostRegion cell;
            for (const auto& c : region.constraints)
                if (c.homogeneous()) cell.add(c);
            for (size_t q = 0; q < n; ++q) {
                if (q == p || !out.is_piece[q]) continue;
                CostConstraint c;
                for (int v = 0; v < kCostVars; ++v) c.a[v] = Rational(poly.forms[p].c[v] - poly.forms[q].c[v]);
                cell.add(c);
            }
            try {
                cell.finish();
                cells.emplace_back(p, cell.rays);
            } catch (const std::invalid_argument&) {
                cells_ok = false;
            }
        }
    };
    auto below_known_pieces = [&](size_t i) {
        if (!cells_ok || cells.empty()) return false;
        for (const auto& [p, rays] : cells)
            for (const auto& ray : rays) {
                std::int64_t fi = 0, fp = 0;
                for (int v = 0; v < kCostVars; ++v)
                    fi = checked_add(fi, checked_mul(poly.forms[i].c[v], ray[v])),
                    fp = checked_add(fp, checked_mul(poly.forms[p].c[v], ray[v]));
                if (fi > fp) return false;
            }
        return true;
    };
    build_cells();
    // 2b. Every other form: no point where it beats the known pieces => never the strict maximum. Where it does,
    //     the unique largest form at that point is a new piece (and the cells are rebuilt); only ties fall back
    //     to asking against every form.
    for (size_t i = 0; i < n; ++i) {
        while (!out.is_piece[i] && !below_known_pieces(i)) {
            solver.push();
            for (size_t j = 0; j < n; ++j)
                if (j != i && out.is_piece[j]) solver.add(exprs[i] > exprs[j]);
            const z3::check_result r = check_within_budget(solver);
            std::optional<CostPoint> at;
            if (r == z3::sat) at = smt::point_from_model(ctx, solver.get_model());
            solver.pop();
            if (r == z3::unsat) break;  // redundant
            if (at && region.contains(*at)) {
                size_t arg = 0, ties = 0;
                Rational best{0};
                for (size_t j = 0; j < n; ++j) {
                    const Rational v = poly.forms[j].eval(*at);
                    if (j == 0 || v > best) best = v, arg = j, ties = 1;
                    else if (v == best) ++ties;
                }
                if (ties == 1 && !out.is_piece[arg]) {
                    out.is_piece[arg] = true;
                    out.example[arg] = *at;
                    build_cells();
                    continue;
                }
            }
            solver.push();
            for (size_t j = 0; j < n; ++j)
                if (j != i) solver.add(exprs[i] > exprs[j]);
            const z3::check_result all = check_within_budget(solver);
            if (all == z3::sat) out.example[i] = smt::point_from_model(ctx, solver.get_model());
            solver.pop();
            if (all != z3::unsat) out.is_piece[i] = true;  // sat, or unknown: kept
            break;
        }
    }
    return out;
}

struct RegionSolver {
    z3::context ctx;
    z3::solver solver{ctx};
    std::vector<z3::expr> exprs;
    RegionSolver(const MaxPoly& poly, const CostRegion& region) {
        smt::assert_region(solver, region);
        for (const auto& f : poly.forms) exprs.push_back(smt::form(ctx, f));
    }
};

}  // namespace

MaxPoly needed_forms(const MaxPoly& poly_in, const CostRegion& region) {
    MaxPoly poly = poly_in;
    poly.prune();  // strict_maxima needs distinct functions
    if (poly.forms.size() <= 1) return poly;
    RegionSolver z(poly, region);
    const StrictMaxima sm = strict_maxima(poly, region, z.ctx, z.solver, z.exprs);
    MaxPoly out;
    out.rays = poly.rays;
    for (size_t i = 0; i < poly.forms.size(); ++i)
        if (sm.is_piece[i]) out.push(poly.forms[i], poly.row(i));
    return out;
}

PiecewiseLinear pieces_of(const MaxPoly& poly, const CostRegion& region) {
    PiecewiseLinear out;
    const size_t n = poly.forms.size();
    RegionSolver z(poly, region);
    z3::context& ctx = z.ctx;
    z3::solver& solver = z.solver;
    const StrictMaxima sm = strict_maxima(poly, region, ctx, solver, z.exprs);
    const std::vector<bool>& is_piece = sm.is_piece;
    const std::vector<CostPoint>& example = sm.example;
    // 3. Each piece holds where it is >= every other piece (the other forms never exceed the maximum of the
    //    pieces); keep an irredundant set of those conditions.
    for (size_t i = 0; i < n; ++i) {
        if (!is_piece[i]) continue;
        FormulaPiece piece;
        piece.value = normalize(poly.forms[i], region);
        piece.example = example[i];
        std::vector<LinForm> working;
        for (size_t j = 0; j < n; ++j) {
            if (j == i || !is_piece[j]) continue;
            const LinForm d = poly.forms[i] - poly.forms[j];
            const auto values = region.ray_values(d);
            if (std::all_of(values.begin(), values.end(), [](std::int64_t v) { return v >= 0; })) continue;
            const LinForm c = reduce_gcd(normalize(d, region));
            if (std::find(working.begin(), working.end(), c) == working.end()) working.push_back(c);
        }
        for (size_t k = 0; k < working.size();) {
            solver.push();
            for (size_t m = 0; m < working.size(); ++m)
                if (m != k) solver.add(smt::form(ctx, working[m]) >= 0);
            solver.add(smt::form(ctx, working[k]) < 0);
            const bool implied = check_within_budget(solver) == z3::unsat;
            solver.pop();
            if (implied)
                working.erase(working.begin() + static_cast<long>(k));
            else
                ++k;
        }
        piece.conditions = working;
        out.pieces.push_back(piece);
    }
    return out;
}

namespace {
void derive_pieces(const FamilySpec& family, const CostRegion& region, FormulaResult& fr);
}  // namespace

FormulaResult derive_formula(const FamilySpec& family, const CostRegion& region_in, const std::string& prove_flags) {
    FormulaResult fr;
    CostRegion region = region_in;
    region.finish();
    ProveOptions po;
    po.property = Property::BubbleConstant;
    po.region = region;
    fr.proof = prove(family, po);
    fr.prove_command = prove_command(family, "bubble-constant", prove_flags);
    const ProofResult& p = fr.proof;
    if (p.idle.empty() || p.makespan_symbolic.empty()) {
        fr.missing = p.verdict == Verdict::Refuted
                         ? "the idle times are not eventually constant in M on this region (counterexample below); "
                           "restrict the region with --assume or use exact costs"
                         : "the periodicity proof did not go through: " + p.missing;
        return fr;
    }
    try {
        derive_pieces(family, region, fr);
    } catch (const budget::Exhausted& e) {
        // --time-limit, --memory-budget or a signal: the proof above stands, the pieces are not claimed.
        fr.ranks.clear();
        fr.bubble = {};
        fr.missing = e.what + "; the pieces of the formula were not all derived, nothing is claimed about them";
    }
    return fr;
}

namespace {

void derive_pieces(const FamilySpec& family, const CostRegion& region, FormulaResult& fr) {
    const ProofResult& p = fr.proof;
    const int t_end = static_cast<int>(p.makespan_symbolic.size());
    const int c = p.cycle;
    std::vector<std::pair<MaxPoly, PiecewiseLinear>> cache;
    for (size_t r = 0; r < p.idle.size(); ++r) {
        RankFormula rf;
        rf.rank = static_cast<int>(r);
        std::vector<MaxPoly> values;
        for (int t = 0; t < t_end; ++t) values.push_back(idle_symbolic(p, static_cast<int>(r), t));
        for (int k = 0; k < c; ++k) {
            const MaxPoly& poly = values[p.t_periodic + k];
            const PiecewiseLinear* cached = nullptr;
            for (const auto& [prev, pw] : cache)
                if (prev.same_forms(poly)) cached = &pw;
            if (!cached) {
                cache.emplace_back(poly, pieces_of(poly, region));
                cached = &cache.back().second;
            }
            rf.by_residue.push_back(*cached);
        }
        // The first t from which every value equals its residue's periodic value.
        int from = p.t_periodic;
        for (int t = p.t_periodic - 1; t >= 0; --t) {
            const int rep = p.t_periodic + ((t - p.t_periodic) % c + c) % c;
            if (values[t].same_forms(values[rep]) ||
                smt::equal_on_region(values[t], values[rep], LinForm{}, region, "idle base").result == z3::unsat)
                from = t;
            else
                break;
        }
        rf.valid_from_m = family.microbatches(from);
        for (int t = 0; t < from; ++t) rf.exceptions.push_back({family.microbatches(t), values[t]});
        fr.ranks.push_back(std::move(rf));
        (void)t_end;
    }
    if (p.bubble_symbolic) {
        // The bubble's pieces are among the ranks' pieces (a form strictly maximal over all ranks' forms is
        // strictly maximal within its own rank's forms), so only those are candidates.
        MaxPoly candidates;
        for (const auto& rf : fr.ranks)
            for (const auto& pw : rf.by_residue)
                for (const auto& piece : pw.pieces) candidates.merge(MaxPoly::of(piece.value, region));
        candidates.prune();
        fr.bubble = pieces_of(candidates, region);
    }
    fr.bubble_from_m = family.m0;
}

}  // namespace

std::string format_formula(const FormulaResult& fr, bool deepseek_basis) {
    return format_formula(fr, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

std::string format_formula(const FormulaResult& fr, Basis basis) {
    const ProofResult& p = fr.proof;
    std::string out = fmt::format("family: {}  P={}{}{}  M = {} + {}t\n", p.family, p.ranks,
                                  p.stages_per_rank ? fmt::format("  V={}", *p.stages_per_rank) : "",
                                  p.group_size ? fmt::format("  G={}", *p.group_size) : "", p.m_origin, p.step);
    out += "cost region:\n";
    for (const auto& a : p.assumptions) out += "  - " + a + "\n";
    if (!fr.missing.empty()) {
        out += "no formula: " + fr.missing + "\n";
        if (p.counterexample) out += "  counterexample: " + p.counterexample->what + "\n";
        return out;
    }
    out += fmt::format("periodicity: {} ({}); idle times repeat every {} block(s) from M = {}\n", verdict_name(p.verdict),
                       p.verdict == Verdict::Proved ? fr.prove_command : p.missing,
                       p.cycle, p.m_origin + p.step * p.t_periodic);
    out += "letters: " + basis_legend(basis) + "\n";
    auto piece_text = [&](const PiecewiseLinear& pw, const std::string& indent) {
        std::string s;
        if (pw.pieces.size() == 1 && pw.pieces[0].conditions.empty()) return indent + format_form(pw.pieces[0].value, basis) + "   (everywhere)\n";
        for (const auto& piece : pw.pieces) {
            s += indent + format_form(piece.value, basis) + "   where ";
            if (piece.conditions.empty()) s += "everywhere";
            for (size_t k = 0; k < piece.conditions.size(); ++k)
                s += (k ? ", " : "") + format_condition(piece.conditions[k], basis);
            s += "\n";
        }
        return s;
    };
    for (const auto& rf : fr.ranks) {
        out += fmt::format("rank {}: idle, for every M >= {}{}\n", rf.rank, rf.valid_from_m,
                           rf.by_residue.size() > 1 ? " (by residue of the block count)" : "");
        for (size_t k = 0; k < rf.by_residue.size(); ++k) {
            if (rf.by_residue.size() > 1) out += fmt::format("  residue {}:\n", k);
            out += piece_text(rf.by_residue[k], "    ");
        }
        for (const auto& [m, v] : rf.exceptions) out += fmt::format("    (at M = {}: {})\n", m, v.str(basis));
    }
    out += fmt::format("bubble (largest idle), for every M >= {}:\n", fr.bubble_from_m);
    out += piece_text(fr.bubble, "    ");
    return out;
}

}  // namespace pp
