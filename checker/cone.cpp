// The symbolic region's cone and its extreme rays, enumerated here from the constraints by brute force: a pointed
// polyhedral cone in R^6 is the conic hull of its extreme rays (Minkowski), and each extreme ray is the line where
// five linearly independent constraints are tight. So a linear form is >= another on the cone iff it is >= on
// every ray. The non-homogeneous constraints (F >= 2) are dropped and strict ones closed, which only enlarges the
// set every comparison is made on (proofs/method.md §4, "Symbolic costs").
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace pp::check {
namespace {

using Row = CertificatePoint;
constexpr int kVars = kCertificateCostVars;

// A basis of { x : row . x = 0 for every row }, by Gauss-Jordan elimination over the rationals.
std::vector<Row> null_space(const std::vector<Row>& rows) {
    std::vector<Row> m = rows;
    std::vector<int> pivot_col;
    size_t r = 0;
    for (int col = 0; col < kVars && r < m.size(); ++col) {
        size_t p = r;
        while (p < m.size() && m[p][col] == Rational(0)) ++p;
        if (p == m.size()) continue;
        std::swap(m[p], m[r]);
        const Rational lead = m[r][col];
        for (auto& x : m[r]) x = x / lead;
        for (size_t q = 0; q < m.size(); ++q)
            if (q != r && m[q][col] != Rational(0)) {
                const Rational f = m[q][col];
                for (int k = 0; k < kVars; ++k) m[q][k] = m[q][k] - f * m[r][k];
            }
        pivot_col.push_back(col);
        ++r;
    }
    std::vector<Row> basis;
    for (int free = 0; free < kVars; ++free) {
        if (std::find(pivot_col.begin(), pivot_col.end(), free) != pivot_col.end()) continue;
        Row v{};
        v[free] = Rational(1);
        for (size_t k = 0; k < pivot_col.size(); ++k) v[pivot_col[k]] = Rational(0) - m[k][free];
        basis.push_back(v);
    }
    return basis;
}

Rational dot(const Row& a, const Row& x) {
    Rational s(0);
    for (int k = 0; k < kVars; ++k) s += a[k] * x[k];
    return s;
}

// The ray through v as coprime integers.
CertificateForm primitive(const Row& v) {
    Integer scale(1);
    for (const Rational& x : v) scale = lcm(scale, x.denominator());
    std::array<Integer, kVars> whole;
    Integer g(0);
    for (int k = 0; k < kVars; ++k) {
        whole[k] = v[k].numerator() * (scale / v[k].denominator());
        g = gcd(g, whole[k]);
    }
    CertificateForm out{};
    for (int k = 0; k < kVars; ++k) out[k] = (whole[k] / g).to_int64();
    return out;
}

}  // namespace

Cone cone_of(const std::vector<CertificateConstraint>& constraints, const std::string& step) {
    Cone cone;
    cone.constraints = constraints;
    std::vector<Row> equal, at_least;
    for (const CertificateConstraint& k : constraints) {
        if (k.b != Rational(0)) continue;
        (k.rel == "=" ? equal : at_least).push_back(k.a);
    }
    if (at_least.size() > 16) reject(step, fmt::format("{} homogeneous inequalities: more than the 16 the checker enumerates", at_least.size()));
    std::vector<Row> all = equal;
    all.insert(all.end(), at_least.begin(), at_least.end());
    if (!null_space(all).empty()) reject(step, "the region's cone contains a line (it is not pointed), so its rays do not span it");
    std::set<CertificateForm> rays;
    const auto m = static_cast<int>(at_least.size());
    for (unsigned mask = 0; mask < (1u << m); ++mask) {
        if (__builtin_popcount(mask) > kVars - 1) continue;
        std::vector<Row> tight = equal;
        for (int k = 0; k < m; ++k)
            if (mask >> k & 1u) tight.push_back(at_least[k]);
        const std::vector<Row> line = null_space(tight);
        if (line.size() != 1) continue;
        for (const int sign : {1, -1}) {
            Row v = line[0];
            for (auto& x : v) x = x * Rational(sign);
            if (std::all_of(at_least.begin(), at_least.end(), [&](const Row& a) { return dot(a, v) >= Rational(0); }))
                rays.insert(primitive(v));
        }
    }
    if (rays.empty()) reject(step, "the region's cone is the origin alone");
    if (rays.size() > kMaxRays) reject(step, fmt::format("{} extreme rays: more than the {} the checker handles", rays.size(), kMaxRays));
    cone.rays.assign(rays.begin(), rays.end());
    return cone;
}

RayValues Cone::values(const CertificateForm& form) const {
    RayValues out;
    out.n = static_cast<std::uint8_t>(rays.size());
    size_t at = 0;
    for (const auto& ray : rays) {
        std::int64_t s = 0;
        for (int k = 0; k < kVars; ++k) {
            std::int64_t term;
            if (__builtin_mul_overflow(form[k], ray[k], &term) || __builtin_add_overflow(s, term, &s))
                throw std::overflow_error("a form's value on a ray overflows 64 bits");
        }
        out[at++] = s;
    }
    return out;
}

// The sum of the rays lies in the relative interior of the cone, so every homogeneous constraint that is not an
// equality on the whole cone is strict there; scaled up or down, it may meet the constant terms as well. A point that
// satisfies every constraint exactly shows the region is not empty (a claim over an empty region says nothing).
CertificatePoint point_inside(const Cone& cone, const std::string& step, const std::optional<CertificatePoint>& given) {
    if (given) {
        if (!cone.contains(*given)) reject(step, "the certificate's point of the region does not satisfy its constraints");
        return *given;
    }
    CertificatePoint sum{};
    for (const auto& ray : cone.rays)
        for (int k = 0; k < kVars; ++k) sum[k] += Rational(ray[k]);
    for (int e = -20; e <= 40; ++e) {
        Integer power(1);
        for (int k = 0; k < (e < 0 ? -e : e); ++k) power = power * Integer(2);
        const Rational scale = e >= 0 ? Rational(power) : Rational(Integer(1), power);
        CertificatePoint p = sum;
        for (auto& x : p) x = x * scale;
        if (cone.contains(p)) return p;
    }
    reject(step, "no point of the region found (the sum of its rays, scaled by 2^-20 .. 2^40, satisfies not every "
                 "constraint): a claim over an empty region would say nothing");
}

bool Cone::contains(const CertificatePoint& point) const {
    for (const CertificateConstraint& k : constraints) {
        const Rational lhs = dot(k.a, point);
        if (k.rel == "=" ? lhs != k.b : k.rel == ">" ? !(lhs > k.b) : lhs < k.b) return false;
    }
    return true;
}

}  // namespace pp::check
