// Exact minimisation of max-plus polynomials: a form that is nowhere the strict maximum on the region's cone is
// dropped. By Gordan's alternative (on the cone spanned by the rays) that is the case exactly when its ray values are
// at most a convex combination of the other forms' ray values, ray by ray: f <= sum_i lambda_i g_i <= max_i g_i.
//
// The combination is searched with a small floating-point simplex (phase 1: R + 1 rows, one column per other form)
// on the *differences* g_i - f, so that adding one linear form to every form changes nothing it sees (the pruning is
// translation-equivariant, as the shift shortcuts of proofs/symbolic.hpp need), and then *certified exactly*:
// integer weights n_i >= 0 summing to D > 0 with sum_i n_i (g_i - f) >= 0 on every ray, checked in 128-bit
// integers. A form without a certificate stays, which never changes the function. Forms are visited in canonical
// order and each is tested against the forms still kept, so every removal keeps the function (proofs/method.md §4).
#include "proofs/maxpoly.hpp"

#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

namespace pp {

namespace {

// Best rational approximation p/q of x with q <= max_q (continued fractions); nullopt if not within tol.
std::optional<std::pair<std::int64_t, std::int64_t>> rational_near(double x, std::int64_t max_q, double tol) {
    std::int64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
    double y = x;
    for (int k = 0; k < 64; ++k) {
        const double a = std::floor(y);
        if (a > 1e15) break;
        if (q1 > 0 && a > static_cast<double>(max_q)) break;  // q2 >= a would pass max_q: stop before a product can wrap
        const auto ai = static_cast<std::int64_t>(a);
        std::int64_t p2 = 0, q2 = 0;
        if (__builtin_mul_overflow(ai, p1, &p2) || __builtin_add_overflow(p2, p0, &p2) ||
            __builtin_mul_overflow(ai, q1, &q2) || __builtin_add_overflow(q2, q0, &q2))
            break;
        if (q2 > max_q) break;
        p0 = p1, q0 = q1, p1 = p2, q1 = q2;
        if (std::fabs(x - static_cast<double>(p1) / static_cast<double>(q1)) <= tol) return std::make_pair(p1, q1);
        const double frac = y - a;
        if (frac < 1e-15) break;
        y = 1.0 / frac;
    }
    if (q1 > 0 && std::fabs(x - static_cast<double>(p1) / static_cast<double>(q1)) <= tol) return std::make_pair(p1, q1);
    return std::nullopt;
}

// Phase-1 simplex for: lambda >= 0, sum lambda = 1, sum_j lambda_j d_j[r] >= 0 for every r. Returns lambda (one per
// column) when feasible. d is column-major: d[j * R + r]. Bland's rule (no cycling); tiny dense tableau.
std::optional<std::vector<double>> convex_certificate(const std::vector<double>& d, size_t n, size_t R) {
    const size_t m = R + 1, cols = n + R + 1;  // lambda_j, s_r, a
    std::vector<double> T(m * (cols + 1), 0.0);  // rows, last column rhs
    auto at = [&](size_t row, size_t col) -> double& { return T[row * (cols + 1) + col]; };
    for (size_t r = 0; r < R; ++r) {
        for (size_t j = 0; j < n; ++j) at(r, j) = -d[j * R + r];
        at(r, n + r) = 1.0;  // s_r basic, value 0
    }
    for (size_t j = 0; j < n; ++j) at(R, j) = 1.0;
    at(R, n + R) = 1.0;  // a basic
    at(R, cols) = 1.0;
    std::vector<size_t> basis(m);
    for (size_t r = 0; r < R; ++r) basis[r] = n + r;
    basis[R] = n + R;
    // Objective: minimise a = 1 - sum lambda (in terms of the initial non-basics); z[col] = reduced cost, and
    // z[cols] = minus the current objective value (so one row operation updates all of z).
    std::vector<double> z(cols + 1, 0.0);
    for (size_t j = 0; j < n; ++j) z[j] = -1.0;
    z[cols] = -1.0;
    constexpr double eps = 1e-9;
    for (int iter = 0; iter < 64 * static_cast<int>(m + n); ++iter) {
        size_t enter = cols;
        for (size_t c = 0; c < cols && enter == cols; ++c)
            if (z[c] < -eps) enter = c;  // Bland: the first improving column
        if (enter == cols) break;
        size_t leave = m;
        double best = 0;
        for (size_t row = 0; row < m; ++row) {
            const double a = at(row, enter);
            if (a <= eps) continue;
            const double ratio = at(row, cols) / a;
            if (leave == m || ratio < best - eps || (std::fabs(ratio - best) <= eps && basis[row] < basis[leave]))
                leave = row, best = ratio;
        }
        if (leave == m) return std::nullopt;  // unbounded: cannot happen for a bounded objective
        const double piv = at(leave, enter);
        for (size_t c = 0; c <= cols; ++c) at(leave, c) /= piv;
        for (size_t row = 0; row < m; ++row) {
            if (row == leave) continue;
            const double f = at(row, enter);
            if (f == 0.0) continue;
            for (size_t c = 0; c <= cols; ++c) at(row, c) -= f * at(leave, c);
        }
        const double f = z[enter];
        for (size_t c = 0; c <= cols; ++c) z[c] -= f * at(leave, c);
        basis[leave] = enter;
    }
    if (-z[cols] > 1e-7) return std::nullopt;  // the artificial variable cannot reach 0: infeasible
    std::vector<double> lambda(n, 0.0);
    for (size_t row = 0; row < m; ++row)
        if (basis[row] < n) lambda[basis[row]] = std::max(0.0, at(row, cols));
    return lambda;
}

// Exact check of weights near `lambda`: integers n_j >= 0 with sum D > 0 and sum_j n_j d_j >= 0 on every ray.
// Every product and sum is checked: an overflow answers "not certified", which only keeps a form (sound).
bool certified(const std::vector<double>& lambda, const std::vector<std::int64_t>& di, size_t n, size_t R) {
    std::vector<std::int64_t> num(n, 0), den(n, 1);
    std::int64_t D = 1;
    for (size_t j = 0; j < n; ++j) {
        if (lambda[j] < 1e-12) continue;
        const auto q = rational_near(lambda[j], std::int64_t{1} << 16, 1e-9);
        if (!q) return false;
        num[j] = q->first, den[j] = q->second;
        D = std::lcm(D, den[j]);
        if (D > (std::int64_t{1} << 40)) return false;
    }
    std::int64_t total = 0;
    std::vector<std::int64_t> w(n, 0);
    for (size_t j = 0; j < n; ++j) {
        if (num[j] == 0) continue;
        if (num[j] < 0 || __builtin_mul_overflow(num[j], D / den[j], &w[j]) || __builtin_add_overflow(total, w[j], &total))
            return false;
    }
    if (total != D || D <= 0) return false;
    for (size_t r = 0; r < R; ++r) {
        __int128 s = 0;
        for (size_t j = 0; j < n; ++j) {
            if (w[j] == 0) continue;
            // |w| < 2^63 and |d| < 2^63: the product fits 127 bits; only the sum can wrap.
            if (__builtin_add_overflow(s, static_cast<__int128>(w[j]) * di[j * R + r], &s)) return false;
        }
        if (s < 0) return false;
    }
    return true;
}


// Marks the forms that are the strict maximum of all forms at some point of the cone, tried at a fixed set of
// points with positive integer weights on the rays (each ray, the sum of all, pairs, and a few spread mixtures).
// Such a form is needed in any subset too, so it never needs a certificate search. Exact (128-bit sums); the
// points depend only on the ray count, so the outcome is unchanged when one form is added to all (as prune needs).
std::vector<char> witnessed_needed(const MaxPoly& p) {
    const size_t R = p.rays, n = p.forms.size();
    std::vector<char> needed(n, 0);
    std::vector<std::vector<std::int64_t>> weights;
    for (size_t r = 0; r < R; ++r) {
        std::vector<std::int64_t> w(R, 0);
        w[r] = 1;
        weights.push_back(w);
    }
    weights.emplace_back(R, 1);
    for (size_t a = 0; a < R; ++a)
        for (size_t b = a + 1; b < R; ++b) {
            std::vector<std::int64_t> w(R, 1);
            w[a] = w[b] = 8;
            weights.push_back(w);
            std::vector<std::int64_t> v(R, 0);
            v[a] = v[b] = 1;
            weights.push_back(v);
        }
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
        std::vector<std::int64_t> w(R);
        std::uint64_t x = seed * 0x9E3779B97F4A7C15ull;
        for (size_t r = 0; r < R; ++r) {
            x ^= x >> 29, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 32;
            w[r] = 1 + static_cast<std::int64_t>(x % 64);
        }
        weights.push_back(w);
    }
    for (const auto& w : weights) {
        __int128 best = 0;
        size_t arg = 0, ties = 0;
        for (size_t k = 0; k < n; ++k) {
            __int128 v = 0;
            const std::int64_t* row = p.row(k);
            for (size_t r = 0; r < R; ++r) v += static_cast<__int128>(w[r]) * row[r];
            if (k == 0 || v > best) best = v, arg = k, ties = 1;
            else if (v == best) ++ties;
        }
        if (ties == 1) needed[arg] = 1;
    }
    return needed;
}

}  // namespace

void MaxPoly::drop_convex_dominated() {
    const size_t R = rays;
    if (forms.size() < 3 || R < 2 || R > 16) return;
    const std::vector<char> needed = witnessed_needed(*this);
    std::vector<char> kept(forms.size(), 1);
    size_t live = forms.size();
    std::vector<std::int64_t> di;
    std::vector<double> d;
    for (size_t k = 0; k < forms.size() && live >= 3; ++k) {
        if (needed[k]) continue;
        // Columns: g - f for every other kept form g (differences: translation-invariant input).
        di.clear();
        size_t n = 0;
        bool overflow = false;
        for (size_t g = 0; g < forms.size(); ++g) {
            if (g == k || !kept[g]) continue;
            for (size_t r = 0; r < R; ++r) {
                std::int64_t x;
                overflow |= __builtin_sub_overflow(row(g)[r], row(k)[r], &x);
                di.push_back(x);
            }
            ++n;
        }
        if (overflow) continue;
        d.assign(di.begin(), di.end());
        const auto lambda = convex_certificate(d, n, R);
        if (lambda && certified(*lambda, di, n, R)) kept[k] = 0, --live;
    }
    if (live == forms.size()) return;
    MaxPoly out;
    out.rays = rays;
    out.forms.reserve(live);
    out.values.reserve(live * R);
    for (size_t k = 0; k < forms.size(); ++k)
        if (kept[k]) out.push(forms[k], row(k));
    *this = std::move(out);
}

}  // namespace pp
