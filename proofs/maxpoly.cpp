#include "proofs/maxpoly.hpp"

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

}  // namespace


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
        for (size_t r = 0; r < v.size(); ++r) values[k][r] = checked_add(values[k][r], v[r]);
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
        for (std::int64_t v : values[k]) sum[k] = checked_add(sum[k], v);
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
                for (std::int64_t x : p.values[k]) sums[k] = checked_add(sums[k], x);
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
        f.c[static_cast<int>(CostVar::I)] = checked_add(f.c[static_cast<int>(CostVar::I)], b);
        f.c[static_cast<int>(CostVar::W)] = checked_add(f.c[static_cast<int>(CostVar::W)], b);
        f.c[static_cast<int>(CostVar::B)] = 0;
    }
    return f;
}

}  // namespace pp
