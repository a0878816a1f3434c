// f <= max(g_1..g_k) on the cone, shown by convex weights: lambda >= 0 with sum 1 and sum_i lambda_i (g_i - f) >= 0 on
// every ray. Then on the cone (every point a non-negative combination of the rays) f <= sum_i lambda_i g_i <= max g_i.
// The weights come from an exact phase-1 simplex (rational arithmetic, Bland's rule, so it terminates) and are
// re-checked ray by ray before they are believed; when there are none, the caller asks the solvers instead.
#include "checker/internal.hpp"

#include <optional>

namespace pp::check {
namespace {

// Phase 1 of the simplex method on  A x = b, x >= 0  (b >= 0), one artificial variable per row. Returns x, or
// nothing when the artificials cannot all leave (infeasible) or the pivots exceed a generous limit.
std::optional<std::vector<Rational>> feasible_point(const std::vector<std::vector<Rational>>& A, const std::vector<Rational>& b) {
    const size_t m = A.size(), n = A.empty() ? 0 : A[0].size(), cols = n + m;
    std::vector<std::vector<Rational>> t(m, std::vector<Rational>(cols + 1, Rational(0)));
    std::vector<size_t> basis(m);
    for (size_t r = 0; r < m; ++r) {
        for (size_t c = 0; c < n; ++c) t[r][c] = A[r][c];
        t[r][n + r] = Rational(1);
        t[r][cols] = b[r];
        basis[r] = n + r;
    }
    // Reduced costs of "minimise the sum of the artificials": minus the column sums over the rows.
    auto reduced = [&](size_t c) {
        if (c >= n) return Rational(0);
        Rational s(0);
        for (size_t r = 0; r < m; ++r)
            if (basis[r] >= n) s -= t[r][c];
        return s;
    };
    for (int pivots = 0; pivots < 10000; ++pivots) {
        size_t enter = cols;
        for (size_t c = 0; c < n && enter == cols; ++c)
            if (reduced(c) < Rational(0)) enter = c;
        if (enter == cols) break;
        size_t leave = m;
        Rational best(0);
        for (size_t r = 0; r < m; ++r) {
            if (!(t[r][enter] > Rational(0))) continue;
            const Rational ratio = t[r][cols] / t[r][enter];
            if (leave == m || ratio < best || (ratio == best && basis[r] < basis[leave])) leave = r, best = ratio;
        }
        if (leave == m) return std::nullopt;  // unbounded cannot happen in phase 1; be safe
        const Rational p = t[leave][enter];
        for (auto& x : t[leave]) x = x / p;
        for (size_t r = 0; r < m; ++r) {
            if (r == leave || t[r][enter] == Rational(0)) continue;
            const Rational f = t[r][enter];
            for (size_t c = 0; c <= cols; ++c) t[r][c] -= f * t[leave][c];
        }
        basis[leave] = enter;
    }
    std::vector<Rational> x(n, Rational(0));
    for (size_t r = 0; r < m; ++r) {
        if (basis[r] >= n) {
            if (t[r][cols] != Rational(0)) return std::nullopt;  // an artificial stays positive: infeasible
        } else {
            x[basis[r]] = t[r][cols];
        }
    }
    return x;
}

}  // namespace

bool below_max_on_cone(const Term& f, const std::vector<Term>& others) {
    if (others.empty()) return false;
    const size_t rays = f.values.size(), k = others.size();
    // Columns: lambda_1..lambda_k, then one surplus per ray. Rows: one per ray (sum_i lambda_i d_i - s = 0), then
    // sum lambda = 1.
    std::vector<std::vector<Rational>> A(rays + 1, std::vector<Rational>(k + rays, Rational(0)));
    std::vector<Rational> b(rays + 1, Rational(0));
    for (size_t j = 0; j < rays; ++j) {
        for (size_t i = 0; i < k; ++i) A[j][i] = Rational(others[i].values[j]) - Rational(f.values[j]);
        A[j][k + j] = Rational(-1);
    }
    for (size_t i = 0; i < k; ++i) A[rays][i] = Rational(1);
    b[rays] = Rational(1);
    const auto x = feasible_point(A, b);
    if (!x) return false;
    // Re-check the weights exactly: non-negative, summing to 1, and the combination at least f on every ray.
    Rational sum(0);
    for (size_t i = 0; i < k; ++i) {
        if ((*x)[i] < Rational(0)) return false;
        sum += (*x)[i];
    }
    if (sum != Rational(1)) return false;
    for (size_t j = 0; j < rays; ++j) {
        Rational combination(0);
        for (size_t i = 0; i < k; ++i) combination += (*x)[i] * Rational(others[i].values[j]);
        if (combination < Rational(f.values[j])) return false;
    }
    return true;
}

}  // namespace pp::check
