#include "proofs/symbolic.hpp"

#include "verifier/simulate.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pp {

namespace {

// Whether a[r] > b[r] for some r < 8 (the dominance test of merge_pruned on narrow copies).
template <typename N>
bool any_above8(const N* a, const N* b) {
    int above = 0;
    for (int r = 0; r < 8; ++r) above |= a[r] > b[r];
    return above != 0;
}
#if defined(__SSE2__)
template <>
bool any_above8<std::int16_t>(const std::int16_t* a, const std::int16_t* b) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    return _mm_movemask_epi8(_mm_cmpgt_epi16(x, y)) != 0;
}
template <>
bool any_above8<std::int32_t>(const std::int32_t* a, const std::int32_t* b) {
    const __m128i lo = _mm_cmpgt_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
    const __m128i hi = _mm_cmpgt_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 4)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 4)));
    return _mm_movemask_epi8(_mm_or_si128(lo, hi)) != 0;
}
#endif

constexpr const char* kNames[kCostVars] = {"F", "I", "W", "B", "FB", "comm"};

std::int64_t gcd64(std::int64_t a, std::int64_t b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b != 0) {
        const std::int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// Reduced row echelon form over the rationals; returns the pivot column of each row.
std::vector<int> rref(std::vector<std::array<Rational, kCostVars>>& rows) {
    std::vector<int> pivots;
    size_t r = 0;
    for (int col = 0; col < kCostVars && r < rows.size(); ++col) {
        size_t pivot = r;
        while (pivot < rows.size() && rows[pivot][col] == Rational(0)) ++pivot;
        if (pivot == rows.size()) continue;
        std::swap(rows[r], rows[pivot]);
        const Rational lead = rows[r][col];
        for (auto& x : rows[r]) x /= lead;
        for (size_t o = 0; o < rows.size(); ++o) {
            if (o == r || rows[o][col] == Rational(0)) continue;
            const Rational factor = rows[o][col];
            for (int k = 0; k < kCostVars; ++k) rows[o][k] -= factor * rows[r][k];
        }
        pivots.push_back(col);
        ++r;
    }
    rows.resize(r);
    return pivots;
}

int rank_of(std::vector<std::array<Rational, kCostVars>> rows) { return static_cast<int>(rref(rows).size()); }

// The null space of rows when it is one-dimensional (else empty).
std::optional<std::array<Rational, kCostVars>> null_line(std::vector<std::array<Rational, kCostVars>> rows) {
    const auto pivots = rref(rows);
    if (pivots.size() != kCostVars - 1) return std::nullopt;
    int free_col = 0;
    for (int col = 0; col < kCostVars; ++col)
        if (std::find(pivots.begin(), pivots.end(), col) == pivots.end()) free_col = col;
    std::array<Rational, kCostVars> x{};
    x[free_col] = Rational(1);
    for (size_t r = 0; r < pivots.size(); ++r) x[pivots[r]] = -rows[r][free_col];
    return x;
}

std::array<std::int64_t, kCostVars> integral(const std::array<Rational, kCostVars>& x) {
    std::int64_t lcm = 1;
    for (const auto& v : x) lcm = lcm / gcd64(lcm, v.denominator()) * v.denominator();
    std::array<std::int64_t, kCostVars> out{};
    std::int64_t g = 0;
    for (int i = 0; i < kCostVars; ++i) {
        const Rational scaled = x[i] * Rational(lcm);
        out[i] = scaled.numerator();
        g = gcd64(g, out[i]);
    }
    if (g > 1)
        for (auto& v : out) v /= g;
    return out;
}

Rational dot(const std::array<Rational, kCostVars>& a, const std::array<Rational, kCostVars>& x) {
    Rational s{0};
    for (int i = 0; i < kCostVars; ++i) s += a[i] * x[i];
    return s;
}

}  // namespace

const char* cost_var_name(int index) { return kNames[index]; }

int cost_var_index(const std::string& name) {
    for (int i = 0; i < kCostVars; ++i)
        if (name == kNames[i]) return i;
    if (name == "F&B") return static_cast<int>(CostVar::FB);
    if (name == "c") return static_cast<int>(CostVar::comm);
    return -1;
}

Rational LinForm::eval(const CostPoint& point) const {
    Rational s{0};
    for (int i = 0; i < kCostVars; ++i)
        if (c[i] != 0) s += Rational(c[i]) * point[i];
    return s;
}

namespace {

std::string format_terms(const std::array<Rational, kCostVars>& coef, const Rational& constant) {
    std::string out;
    auto term = [&](const Rational& k, const std::string& name) {
        if (k == Rational(0)) return;
        const bool negative = k < Rational(0);
        const Rational mag = negative ? -k : k;
        if (out.empty())
            out += negative ? "-" : "";
        else
            out += negative ? " - " : " + ";
        if (name.empty())
            out += format_rational(mag);
        else if (mag == Rational(1))
            out += name;
        else
            out += format_rational(mag) + "*" + name;
    };
    for (int i = 0; i < kCostVars; ++i) term(coef[i], kNames[i]);
    term(constant, "");
    return out.empty() ? "0" : out;
}

}  // namespace

std::string format_ratform(const RatForm& form, bool deepseek_basis) {
    auto c = form.c;
    if (deepseek_basis) {
        // I = B - W: move I's coefficient onto B and W.
        const Rational i = c[static_cast<int>(CostVar::I)];
        c[static_cast<int>(CostVar::B)] += i;
        c[static_cast<int>(CostVar::W)] -= i;
        c[static_cast<int>(CostVar::I)] = Rational(0);
    }
    return format_terms(c, form.constant);
}

std::string format_form(const LinForm& form, bool deepseek_basis) {
    RatForm r;
    for (int i = 0; i < kCostVars; ++i) r.c[i] = Rational(form.c[i]);
    return format_ratform(r, deepseek_basis);
}

// ---------------------------------------------------------------------------------------------------
// CostRegion

CostRegion CostRegion::standard(bool comm_free) {
    CostRegion region;
    auto constraint = [](std::initializer_list<std::pair<CostVar, int>> terms, CostConstraint::Rel rel,
                         std::string text) {
        CostConstraint c;
        for (auto [v, k] : terms) c.a[static_cast<int>(v)] = Rational(k);
        c.rel = rel;
        c.text = std::move(text);
        return c;
    };
    using V = CostVar;
    region.add(constraint({{V::F, 1}}, CostConstraint::Gt, "F > 0"));
    region.add(constraint({{V::I, 1}}, CostConstraint::Gt, "I > 0"));
    region.add(constraint({{V::W, 1}}, CostConstraint::Gt, "W > 0"));
    region.add(constraint({{V::B, 1}, {V::I, -1}, {V::W, -1}}, CostConstraint::Eq, "B = I + W"));
    region.add(constraint({{V::FB, 1}}, CostConstraint::Gt, "FB > 0"));
    region.add(constraint({{V::F, 1}, {V::B, 1}, {V::FB, -1}}, CostConstraint::Ge, "FB <= F + B"));
    if (comm_free)
        region.add(constraint({{V::comm, 1}}, CostConstraint::Ge, "comm >= 0"));
    else
        region.add(constraint({{V::comm, 1}}, CostConstraint::Eq, "comm = 0"));
    return region;
}

void CostRegion::add(CostConstraint constraint) {
    // Recognise the two equalities the printers use.
    auto is = [&](std::initializer_list<std::pair<CostVar, int>> terms) {
        std::array<int, kCostVars> a{0, 0, 0, 0, 0, 0};
        for (auto [v, k] : terms) a[static_cast<int>(v)] = k;
        bool same = true, negated = true;
        for (int i = 0; i < kCostVars; ++i) {
            same = same && constraint.a[i] == Rational(a[i]);
            negated = negated && constraint.a[i] == Rational(-a[i]);
        }
        return (same || negated) && constraint.b == Rational(0) && constraint.rel == CostConstraint::Eq;
    };
    if (is({{CostVar::B, 1}, {CostVar::I, -1}, {CostVar::W, -1}})) b_is_i_plus_w = true;
    if (is({{CostVar::comm, 1}})) comm_zero = true;
    constraints.push_back(std::move(constraint));
    rays.clear();
}

void CostRegion::finish() {
    rays.clear();
    std::vector<std::array<Rational, kCostVars>> equalities, inequalities;
    for (const auto& c : constraints) {
        if (!c.homogeneous()) continue;  // pruning on a larger cone is still exact (see header)
        (c.rel == CostConstraint::Eq ? equalities : inequalities).push_back(c.a);
    }
    auto all = equalities;
    all.insert(all.end(), inequalities.begin(), inequalities.end());
    if (rank_of(all) < kCostVars)
        throw std::invalid_argument("the cost region is not a pointed cone: bound every cost variable from below");
    const int eq_rank = rank_of(equalities);
    const int need = kCostVars - 1 - eq_rank;
    const int n = static_cast<int>(inequalities.size());
    std::vector<int> pick(need);
    std::iota(pick.begin(), pick.end(), 0);
    auto consider = [&]() {
        auto rows = equalities;
        for (int k : pick) rows.push_back(inequalities[k]);
        auto line = null_line(rows);
        if (!line) return;
        for (int sign : {1, -1}) {
            auto x = *line;
            if (sign < 0)
                for (auto& v : x) v = -v;
            bool ok = true;
            for (const auto& g : inequalities) ok = ok && dot(g, x) >= Rational(0);
            if (!ok) continue;
            auto ray = integral(x);
            if (std::find(rays.begin(), rays.end(), ray) == rays.end()) rays.push_back(ray);
        }
    };
    if (need == 0) {
        pick.clear();
        consider();
    } else if (need <= n) {
        while (true) {
            consider();
            int k = need - 1;
            while (k >= 0 && pick[k] == n - need + k) --k;
            if (k < 0) break;
            ++pick[k];
            for (int j = k + 1; j < need; ++j) pick[j] = pick[j - 1] + 1;
        }
    }
    if (rays.empty()) throw std::invalid_argument("the cost region is empty");
    std::sort(rays.begin(), rays.end());
}

std::vector<std::string> CostRegion::describe() const {
    std::vector<std::string> out;
    for (const auto& c : constraints) out.push_back(c.text);
    return out;
}

std::vector<std::int64_t> CostRegion::ray_values(const LinForm& form) const {
    std::vector<std::int64_t> out(rays.size());
    for (size_t r = 0; r < rays.size(); ++r) {
        std::int64_t s = 0;
        for (int i = 0; i < kCostVars; ++i) s += form.c[i] * rays[r][i];
        out[r] = s;
    }
    return out;
}

CostPoint CostRegion::interior_point(const std::vector<std::int64_t>& weights) const {
    CostPoint p{};
    for (size_t r = 0; r < rays.size(); ++r) {
        const std::int64_t w = r < weights.size() ? weights[r] : 1;
        for (int i = 0; i < kCostVars; ++i) p[i] += Rational(w * rays[r][i]);
    }
    return p;
}

bool CostRegion::may_be_positive(CostVar v) const {
    for (std::int64_t value : ray_values(LinForm::var(v)))
        if (value != 0) return true;
    return false;
}

bool CostRegion::contains(const CostPoint& point) const {
    for (const auto& c : constraints) {
        const Rational lhs = dot(c.a, point);
        if (c.rel == CostConstraint::Eq && !(lhs == c.b)) return false;
        if (c.rel == CostConstraint::Ge && lhs < c.b) return false;
        if (c.rel == CostConstraint::Gt && lhs <= c.b) return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------------
// MaxPoly

MaxPoly MaxPoly::of(const LinForm& form, const CostRegion& region) {
    MaxPoly p;
    p.forms.push_back(form);
    p.values.push_back(region.ray_values(form));
    return p;
}

void MaxPoly::shift(const LinForm& add, const CostRegion& region) {
    if (add.zero()) return;
    const auto v = region.ray_values(add);
    for (size_t k = 0; k < forms.size(); ++k) {
        forms[k] += add;
        for (size_t r = 0; r < v.size(); ++r) values[k][r] += v[r];
    }
}

void MaxPoly::merge(const MaxPoly& other) {
    forms.insert(forms.end(), other.forms.begin(), other.forms.end());
    values.insert(values.end(), other.values.begin(), other.values.end());
}

void MaxPoly::prune() {
    const size_t n = forms.size();
    if (n <= 1) return;
    // A form dominated on every ray has a ray sum no larger than its dominator's, so visiting forms by
    // decreasing ray sum, each one only needs comparing with the forms already kept (the maximal ones).
    // Among forms equal as functions the smallest coefficient vector comes first and is the one kept.
    std::vector<std::int64_t> sum(n, 0);
    for (size_t k = 0; k < n; ++k)
        for (std::int64_t v : values[k]) sum[k] += v;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        if (sum[x] != sum[y]) return sum[x] > sum[y];
        return forms[x] < forms[y];
    });
    std::vector<size_t> kept;
    for (size_t a : order) {
        bool dominated = false;
        for (size_t b : kept) {
            bool le = true;
            for (size_t r = 0; r < values[a].size() && le; ++r) le = values[a][r] <= values[b][r];
            if (le) {
                dominated = true;
                break;
            }
        }
        if (!dominated) kept.push_back(a);
    }
    // Canonical order.
    std::sort(kept.begin(), kept.end(), [&](size_t x, size_t y) { return forms[x] < forms[y]; });
    std::vector<LinForm> f2;
    std::vector<std::vector<std::int64_t>> v2;
    f2.reserve(kept.size());
    v2.reserve(kept.size());
    for (size_t k : kept) f2.push_back(forms[k]), v2.push_back(std::move(values[k]));
    forms = std::move(f2);
    values = std::move(v2);
}

void MaxPoly::merge_pruned(const MaxPoly& o) {
    if (o.empty()) return;
    if (empty()) {
        *this = o;
        return;
    }
    // Both are antichains in canonical order. A form of both survives (nothing in either dominates it); a form
    // of only one side can only be dominated by a form of only the other side.
    std::vector<size_t> only_a, only_b;
    size_t i = 0, j = 0;
    while (i < forms.size() || j < o.forms.size()) {
        if (j == o.forms.size() || (i < forms.size() && forms[i] < o.forms[j])) only_a.push_back(i++);
        else if (i == forms.size() || o.forms[j] < forms[i]) only_b.push_back(j++);
        else ++i, ++j;
    }
    if (only_b.empty()) return;
    std::vector<bool> keep_a(forms.size(), true), keep_b(o.forms.size(), true);
    if (!only_a.empty()) {
        // Flat copies sorted by decreasing ray sum: f <= g on every ray needs sum(f) <= sum(g), so each form is
        // compared only with the other side's forms of at least its sum.
        const size_t R = values[0].size();
        struct Side {
            std::vector<std::int64_t> v, sum;
            std::vector<const LinForm*> form;
            std::vector<size_t> index;
        };
        auto side = [&](const std::vector<size_t>& idx, const MaxPoly& p) {
            std::vector<size_t> order(idx);
            std::vector<std::int64_t> sums(p.forms.size(), 0);
            for (size_t k : idx)
                for (std::int64_t x : p.values[k]) sums[k] += x;
            std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return sums[x] > sums[y]; });
            Side s;
            s.v.reserve(order.size() * R);
            for (size_t k : order) {
                s.v.insert(s.v.end(), p.values[k].begin(), p.values[k].end());
                s.sum.push_back(sums[k]);
                s.form.push_back(&p.forms[k]);
                s.index.push_back(k);
            }
            return s;
        };
        const Side A = side(only_a, *this), B = side(only_b, o);
        // The common case (at most 8 rays, values within 16 or 32 bits): a branch-free test of all rays at once on
        // narrow copies padded with zeros (0 <= 0 on the padding), which the compiler vectorises. Same verdicts.
        std::int64_t lo = 0, hi = 0;
        for (const Side* S : {&A, &B})
            for (std::int64_t x : S->v) lo = std::min(lo, x), hi = std::max(hi, x);
        auto mark_narrow = [&](auto zero) {
            using N = decltype(zero);
            auto narrow_copy = [R](const Side& S) {
                std::vector<N> out(S.sum.size() * 8, 0);
                for (size_t x = 0; x < S.sum.size(); ++x)
                    for (size_t r = 0; r < R; ++r) out[x * 8 + r] = static_cast<N>(S.v[x * R + r]);
                return out;
            };
            const std::vector<N> A8 = narrow_copy(A), B8 = narrow_copy(B);
            auto mark8 = [](const Side& X, const std::vector<N>& X8, const Side& Y, const std::vector<N>& Y8,
                            std::vector<bool>& keep) {
                for (size_t x = 0; x < X.sum.size(); ++x) {
                    const N* fx = &X8[x * 8];
                    for (size_t y = 0; y < Y.sum.size() && Y.sum[y] >= X.sum[x]; ++y) {
                        const N* gy = &Y8[y * 8];
                        if (any_above8(fx, gy)) continue;
                        if (X.sum[x] == Y.sum[y] && *X.form[x] < *Y.form[y]) continue;  // equal: the smaller stays
                        keep[X.index[x]] = false;
                        break;
                    }
                }
            };
            mark8(A, A8, B, B8, keep_a);
            mark8(B, B8, A, A8, keep_b);
        };
        const bool narrow = R <= 8 && lo >= INT32_MIN && hi <= INT32_MAX;
        if (narrow && lo >= INT16_MIN && hi <= INT16_MAX)
            mark_narrow(std::int16_t{0});
        else if (narrow)
            mark_narrow(std::int32_t{0});
        // f is dropped for g when f <= g on every ray, unless they are equal and f is the canonical (smaller) one.
        auto mark = [R](const Side& X, const Side& Y, std::vector<bool>& keep) {
            for (size_t x = 0; x < X.sum.size(); ++x) {
                const std::int64_t* fx = &X.v[x * R];
                for (size_t y = 0; y < Y.sum.size() && Y.sum[y] >= X.sum[x]; ++y) {
                    const std::int64_t* gy = &Y.v[y * R];
                    size_t r = 0;
                    while (r < R && fx[r] <= gy[r]) ++r;
                    if (r < R) continue;
                    if (X.sum[x] == Y.sum[y] && *X.form[x] < *Y.form[y]) continue;  // equal: the smaller stays
                    keep[X.index[x]] = false;
                    break;
                }
            }
        };
        if (!narrow) {
            mark(A, B, keep_a);
            mark(B, A, keep_b);
        }
    }
    MaxPoly out;
    out.forms.reserve(forms.size() + only_b.size());
    out.values.reserve(forms.size() + only_b.size());
    i = 0, j = 0;
    while (i < forms.size() || j < o.forms.size()) {
        const bool take_a = j == o.forms.size() || (i < forms.size() && !(o.forms[j] < forms[i]));
        if (take_a) {
            const bool same = j < o.forms.size() && forms[i] == o.forms[j];
            if (keep_a[i]) out.forms.push_back(forms[i]), out.values.push_back(std::move(values[i]));
            ++i;
            if (same) ++j;
        } else {
            if (keep_b[j]) out.forms.push_back(o.forms[j]), out.values.push_back(o.values[j]);
            ++j;
        }
    }
    *this = std::move(out);
}

Rational MaxPoly::eval(const CostPoint& point) const {
    if (forms.empty()) throw std::logic_error("MaxPoly::eval of an empty max");
    Rational best = forms[0].eval(point);
    for (size_t k = 1; k < forms.size(); ++k) best = std::max(best, forms[k].eval(point));
    return best;
}

bool MaxPoly::same_forms(const MaxPoly& other) const {
    if (forms == other.forms) return true;  // the ray values are those of the forms
    auto a = values, b = other.values;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

std::string MaxPoly::str(bool deepseek_basis) const {
    if (forms.empty()) return "-inf";
    if (forms.size() == 1) return format_form(forms[0], deepseek_basis);
    std::string out = "max(";
    for (size_t k = 0; k < forms.size(); ++k) out += (k ? ", " : "") + format_form(forms[k], deepseek_basis);
    return out + ")";
}

std::string MaxPoly::str(const CostRegion& region, bool deepseek_basis) const {
    MaxPoly n;
    for (const auto& f : forms) {
        const LinForm g = normalize_form(f, region);
        if (std::find(n.forms.begin(), n.forms.end(), g) == n.forms.end()) n.forms.push_back(g);
    }
    std::sort(n.forms.begin(), n.forms.end());
    return n.str(deepseek_basis);
}

LinForm normalize_form(LinForm f, const CostRegion& region) {
    if (region.comm_zero) f.c[static_cast<int>(CostVar::comm)] = 0;
    if (region.b_is_i_plus_w) {
        const std::int64_t b = f.c[static_cast<int>(CostVar::B)];
        f.c[static_cast<int>(CostVar::I)] += b;
        f.c[static_cast<int>(CostVar::W)] += b;
        f.c[static_cast<int>(CostVar::B)] = 0;
    }
    return f;
}

// ---------------------------------------------------------------------------------------------------

LinForm slot_form(const Slot& slot) {
    if (slot.is_pair()) return LinForm::var(CostVar::FB);
    switch (slot.ops[0].kind) {
        case OpKind::F: return LinForm::var(CostVar::F);
        case OpKind::I: return LinForm::var(CostVar::I);
        case OpKind::W: return LinForm::var(CostVar::W);
        case OpKind::B: return LinForm::var(CostVar::B);
    }
    return LinForm{};
}

Costs costs_at(const CostPoint& point) {
    Costs costs;
    costs.base.F = point[0];
    costs.base.I = point[1];
    costs.base.W = point[2];
    costs.base.B = point[3];
    costs.base.FB = point[4];
    costs.comm = point[5];
    return costs;
}

CostPoint point_of(const Costs& costs) {
    CostPoint p{};
    p[0] = costs.base.F;
    p[1] = costs.base.I;
    p[2] = costs.base.W;
    p[3] = costs.base.full_backward();
    p[4] = costs.base.FB ? *costs.base.FB : costs.base.F + costs.base.full_backward();
    p[5] = costs.comm;
    return p;
}

TimedDag timed_dag(const ScheduleGraph& graph) {
    TimedDag dag;
    const std::uint32_t n = graph.slot_count();
    dag.preds.resize(n);
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            dag.preds[v].push_back({u, graph.graph[e].cross_rank});
            ++indegree[v];
        }
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) dag.topo.push_back(s);
    for (size_t head = 0; head < dag.topo.size(); ++head) {
        const std::uint32_t u = dag.topo[head];
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            if (--indegree[v] == 0) dag.topo.push_back(v);
        }
    }
    return dag;
}

SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region) {
    return symbolic_simulate(schedule, graph, region, SymbolicOptions{});
}

SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                 const SymbolicOptions& options) {
    const TimedDag dag = timed_dag(graph);
    if (!dag.acyclic()) throw SimulationError("the schedule deadlocks: it cannot be timed");
    const std::uint32_t n = graph.slot_count();
    SymbolicTiming t;
    if (options.keep_start) t.start.resize(n);
    t.end.resize(n);
    const LinForm comm = LinForm::var(CostVar::comm);
    const MaxPoly zero = MaxPoly::of(LinForm{}, region);
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> source(n, kNone);   // shifted: the slot whose end time + step this one's is
    std::vector<std::uint32_t> checked(n, kNone);  // a slot q with end(q) + step == end(this one) (checked)
    auto equals_shifted = [&](std::uint32_t u, std::uint32_t q) {
        if (source[u] == q || checked[u] == q) return true;
        const MaxPoly& a = t.end[u];
        const MaxPoly& b = t.end[q];
        if (a.forms.size() != b.forms.size()) return false;
        for (size_t k = 0; k < a.forms.size(); ++k)
            if (!(a.forms[k] == b.forms[k] + options.step)) return false;
        checked[u] = q;
        return true;
    };
    for (std::uint32_t v : dag.topo) {
        const LinForm duration = slot_form(graph.slot(schedule, v));
        const std::uint32_t r = graph.slot_rank[v], pos = graph.slot_position[v];
        if (r < options.period.size() && options.period[r] > 0 && pos >= options.period[r] && !dag.preds[v].empty()) {
            const std::uint32_t w = v - options.period[r];  // slot (r, pos - period[r])
            const auto& p = dag.preds[v];
            const auto& q = dag.preds[w];
            bool same = graph.slot_rank[w] == r && graph.slot_position[w] == pos - options.period[r] &&
                        p.size() == q.size() && duration == slot_form(graph.slot(schedule, w));
            for (size_t k = 0; same && k < p.size(); ++k)
                same = p[k].second == q[k].second && equals_shifted(p[k].first, q[k].first);
            if (same) {
                source[v] = w;
                if (options.keep_start) {
                    t.start[v] = t.start[w];
                    t.start[v].shift(options.step, region);
                }
                t.end[v] = t.end[w];
                t.end[v].shift(options.step, region);
                continue;
            }
        }
        MaxPoly start;
        for (auto [u, cross] : dag.preds[v]) {
            if (!cross) {
                start.merge_pruned(t.end[u]);
                continue;
            }
            MaxPoly arrival = t.end[u];
            arrival.shift(comm, region);
            start.merge_pruned(arrival);
        }
        if (start.empty()) start = zero;
        MaxPoly end = start;
        end.shift(duration, region);
        if (options.keep_start) t.start[v] = std::move(start);
        t.end[v] = std::move(end);
    }
    t.busy.resize(schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& s : schedule.ranks[r]) t.busy[r] += slot_form(s);
    // Slots of a rank run one after another, so the makespan is the latest end of a rank's last slot.
    for (size_t r = 0; r + 1 < graph.rank_begin.size(); ++r)
        if (graph.rank_begin[r + 1] > graph.rank_begin[r]) t.makespan.merge_pruned(t.end[graph.rank_begin[r + 1] - 1]);
    return t;
}

SymbolicPrevious symbolic_previous(const SymbolicReference& reference) {
    const ScheduleGraph& g = *reference.graph;
    SymbolicPrevious prev;
    prev.valid = true;
    prev.rank_begin = g.rank_begin;
    prev.dag = reference.dag;
    const std::uint32_t n = g.slot_count();
    prev.duration.resize(n);
    prev.base.resize(n);
    prev.offset.assign(n, LinForm{});
    for (std::uint32_t v = 0; v < n; ++v) {
        prev.duration[v] = slot_form(g.slot(*reference.schedule, v));
        prev.base[v] = &reference.timing->end[v];
    }
    prev.makespan = reference.timing->makespan;
    return prev;
}

SymbolicTiming symbolic_simulate_reusing(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                         const SymbolicReference& reference, SymbolicPrevious* previous,
                                         const LinForm* step, ReuseCounts* counts) {
    TimedDag dag = timed_dag(graph);
    if (!dag.acyclic()) throw SimulationError("the schedule deadlocks: it cannot be timed");
    const std::uint32_t n = graph.slot_count();
    const ScheduleGraph& rg = *reference.graph;
    const SymbolicTiming& rt = *reference.timing;
    if (rt.end.size() != rg.slot_count() || reference.dag.preds.size() != rg.slot_count())
        throw std::logic_error("symbolic_simulate_reusing: the reference is not a full timing of its graph");
    SymbolicPrevious local;
    SymbolicPrevious& prev = previous ? *previous : local;
    const bool shifting = prev.valid && step;
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> image(n, kNone);    // taken: the reference slot with the identical end time
    std::vector<std::uint32_t> source(n, kNone);   // shifted: the previous instance's slot it is `step` after
    std::vector<std::uint32_t> checked(n, kNone);  // a previous slot q whose end time + step equals v's (checked)
    std::vector<LinForm> duration(n);
    std::vector<MaxPoly> own;
    own.reserve(n);  // never reallocated: base points into it
    std::vector<const MaxPoly*> base(n, nullptr);
    std::vector<LinForm> offset(n);
    const LinForm comm = LinForm::var(CostVar::comm);
    const MaxPoly zero = MaxPoly::of(LinForm{}, region);
    ReuseCounts count;
    // end(u) == end_prev(q) + step, form by form (the ray values follow from the forms).
    auto equals_shifted = [&](std::uint32_t u, std::uint32_t q) {
        if (source[u] == q || checked[u] == q) return true;
        const MaxPoly& a = *base[u];
        const MaxPoly& b = *prev.base[q];
        if (a.forms.size() != b.forms.size()) return false;
        const LinForm d = prev.offset[q] + *step - offset[u];  // a + offset[u] == b + prev.offset[q] + step
        for (size_t k = 0; k < a.forms.size(); ++k)
            if (!(a.forms[k] == b.forms[k] + d)) return false;
        checked[u] = q;
        return true;
    };
    for (std::uint32_t v : dag.topo) {
        const std::uint32_t r = graph.slot_rank[v], pos = graph.slot_position[v];
        duration[v] = slot_form(graph.slot(schedule, v));
        const auto& p = dag.preds[v];
        if (r + 1 < rg.rank_begin.size() && pos < rg.rank_begin[r + 1] - rg.rank_begin[r]) {
            const std::uint32_t w = rg.rank_begin[r] + pos;
            const auto& q = reference.dag.preds[w];
            bool same = p.size() == q.size() && duration[v] == slot_form(rg.slot(*reference.schedule, w));
            for (size_t k = 0; same && k < p.size(); ++k)
                same = image[p[k].first] == q[k].first && p[k].second == q[k].second;
            if (same) {
                image[v] = w;
                base[v] = &rt.end[w];
                ++count.taken;
                continue;
            }
        }
        if (shifting && !p.empty() && r + 1 < prev.rank_begin.size()) {
            const std::int64_t len = graph.rank_begin[r + 1] - graph.rank_begin[r];
            const std::int64_t prev_len = prev.rank_begin[r + 1] - prev.rank_begin[r];
            const std::int64_t prev_pos = static_cast<std::int64_t>(pos) - (len - prev_len);
            if (prev_pos >= 0 && prev_pos < prev_len) {
                const std::uint32_t w = prev.rank_begin[r] + static_cast<std::uint32_t>(prev_pos);
                const auto& q = prev.dag.preds[w];
                bool same = p.size() == q.size() && duration[v] == prev.duration[w];
                for (size_t k = 0; same && k < p.size(); ++k)
                    same = p[k].second == q[k].second && equals_shifted(p[k].first, q[k].first);
                if (same) {
                    source[v] = w;
                    base[v] = prev.base[w];
                    offset[v] = prev.offset[w] + *step;
                    ++count.shifted;
                    continue;
                }
            }
        }
        // As in symbolic_simulate (operands materialised: base + offset).
        MaxPoly start;
        for (auto [u, cross] : p) {
            const LinForm add = cross ? offset[u] + comm : offset[u];
            if (add.zero()) {
                start.merge_pruned(*base[u]);
                continue;
            }
            MaxPoly arrival = *base[u];
            if (cross) arrival.shift(offset[u], region), arrival.shift(comm, region);
            else arrival.shift(offset[u], region);
            start.merge_pruned(arrival);
        }
        if (start.empty()) start = zero;
        start.shift(duration[v], region);
        own.push_back(std::move(start));
        base[v] = &own.back();
        ++count.computed;
    }
    if (counts) *counts = count;
    SymbolicTiming t;
    t.busy.resize(schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& s : schedule.ranks[r]) t.busy[r] += slot_form(s);
    bool all_last_shifted = shifting && prev.rank_begin.size() == graph.rank_begin.size();
    for (size_t r = 0; all_last_shifted && r + 1 < graph.rank_begin.size(); ++r) {
        const bool here = graph.rank_begin[r + 1] > graph.rank_begin[r], there = prev.rank_begin[r + 1] > prev.rank_begin[r];
        all_last_shifted = here == there && (!here || source[graph.rank_begin[r + 1] - 1] == prev.rank_begin[r + 1] - 1);
    }
    if (all_last_shifted) {
        t.makespan = prev.makespan;
        t.makespan.shift(*step, region);
    } else {
        for (size_t r = 0; r + 1 < graph.rank_begin.size(); ++r) {
            if (graph.rank_begin[r + 1] == graph.rank_begin[r]) continue;
            const std::uint32_t last = graph.rank_begin[r + 1] - 1;
            if (offset[last].zero()) {
                t.makespan.merge_pruned(*base[last]);
                continue;
            }
            MaxPoly e = *base[last];
            e.shift(offset[last], region);
            t.makespan.merge_pruned(e);
        }
    }
    if (previous) {
        prev.valid = true;
        prev.rank_begin = graph.rank_begin;
        prev.dag = std::move(dag);
        prev.duration = std::move(duration);
        prev.base = std::move(base);
        prev.offset = std::move(offset);
        prev.makespan = t.makespan;
        if (!own.empty()) prev.store.push_back(std::move(own));  // the buffer moves, base stays valid
    }
    return t;
}

}  // namespace pp
