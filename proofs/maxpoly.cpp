#include "proofs/maxpoly.hpp"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
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
    p.rays = static_cast<std::uint32_t>(region.rays.size());
    p.forms.push_back(form);
    p.values = region.ray_values(form);
    return p;
}

void MaxPoly::push(const LinForm& form, const std::int64_t* row_values) {
    forms.push_back(form);
    values.insert(values.end(), row_values, row_values + rays);
}

void MaxPoly::erase(size_t k) {
    forms.erase(forms.begin() + static_cast<long>(k));
    values.erase(values.begin() + static_cast<long>(k * rays), values.begin() + static_cast<long>((k + 1) * rays));
}

void MaxPoly::shift(const LinForm& add, const CostRegion& region) {
    if (add.zero()) return;
    const auto v = region.ray_values(add);
    for (auto& f : forms) f += add;
    for (size_t k = 0; k < forms.size(); ++k)
        for (size_t r = 0; r < rays; ++r) values[k * rays + r] = checked_add(values[k * rays + r], v[r]);
}

void MaxPoly::merge(const MaxPoly& other) {
    if (other.empty()) return;
    if (empty()) rays = other.rays;
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
        for (size_t r = 0; r < rays; ++r) sum[k] = checked_add(sum[k], values[k * rays + r]);
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
            for (size_t r = 0; r < rays && le; ++r) le = values[a * rays + r] <= values[b * rays + r];
            if (le) {
                dominated = true;
                break;
            }
        }
        if (!dominated) kept.push_back(a);
    }
    // Canonical order.
    std::sort(kept.begin(), kept.end(), [&](size_t x, size_t y) { return forms[x] < forms[y]; });
    MaxPoly out;
    out.rays = rays;
    out.forms.reserve(kept.size());
    out.values.reserve(kept.size() * rays);
    for (size_t k : kept) out.push(forms[k], row(k));
    *this = std::move(out);
    drop_convex_dominated();
}

namespace {

// One side of merge_pruned: the forms only it has, by decreasing ray sum, with narrow copies of their ray values.
struct Side {
    std::vector<std::int64_t> sum;
    std::vector<std::uint32_t> index;  // form index in its polynomial
};

Side side_of(const std::vector<std::uint32_t>& only, const MaxPoly& p) {
    Side s;
    s.index = only;
    std::vector<std::int64_t> sums(p.forms.size(), 0);
    for (std::uint32_t k : only) {
        const std::int64_t* v = p.row(k);
        for (size_t r = 0; r < p.rays; ++r) sums[k] = checked_add(sums[k], v[r]);
    }
    std::sort(s.index.begin(), s.index.end(), [&](std::uint32_t x, std::uint32_t y) { return sums[x] > sums[y]; });
    s.sum.reserve(s.index.size());
    for (std::uint32_t k : s.index) s.sum.push_back(sums[k]);
    return s;
}

// Marks in keep_x the forms of side X dominated by a form of side Y (f <= g on every ray; of two equal forms the
// canonical, smaller one stays): f <= g on every ray needs sum(f) <= sum(g), so each form is compared only with
// Y's forms of at least its sum. `rows` gives each side's ray values, 8 per form when narrow.
template <typename N, typename AnyAbove>
void mark_dominated(const Side& X, const N* xrows, const MaxPoly& xp, const Side& Y, const N* yrows, const MaxPoly& yp,
                    size_t width, AnyAbove any_above, std::vector<char>& keep_x) {
    // Y's rows in blocks of kBlock (in decreasing-sum order) with each block's componentwise maximum: a block whose
    // maximum is below x on some ray holds no row that dominates x, and is skipped whole.
    constexpr size_t kBlock = 16;
    const size_t ny = Y.sum.size(), blocks = (ny + kBlock - 1) / kBlock;
    std::vector<N> top(blocks * width);
    for (size_t b = 0; b < blocks; ++b) {
        N* m = &top[b * width];
        std::copy(yrows + b * kBlock * width, yrows + b * kBlock * width + width, m);
        for (size_t y = b * kBlock + 1; y < std::min(ny, (b + 1) * kBlock); ++y)
            for (size_t r = 0; r < width; ++r) m[r] = std::max(m[r], yrows[y * width + r]);
    }
    for (size_t x = 0; x < X.sum.size(); ++x) {
        const N* fx = xrows + x * width;
        bool dominated = false;
        for (size_t b = 0; b < blocks && !dominated && Y.sum[b * kBlock] >= X.sum[x]; ++b) {
            if (any_above(fx, &top[b * width])) continue;
            for (size_t y = b * kBlock; y < std::min(ny, (b + 1) * kBlock) && Y.sum[y] >= X.sum[x]; ++y) {
                if (any_above(fx, yrows + y * width)) continue;
                if (X.sum[x] == Y.sum[y] && xp.forms[X.index[x]] < yp.forms[Y.index[y]]) continue;
                keep_x[X.index[x]] = 0;
                dominated = true;
                break;
            }
        }
    }
}

template <typename N>
std::vector<N> narrow_rows(const Side& S, const MaxPoly& p) {
    std::vector<N> out(S.index.size() * 8, 0);
    for (size_t x = 0; x < S.index.size(); ++x) {
        const std::int64_t* v = p.row(S.index[x]);
        for (size_t r = 0; r < p.rays; ++r) out[x * 8 + r] = static_cast<N>(v[r]);
    }
    return out;
}

}  // namespace

void MaxPoly::merge_pruned(const MaxPoly& o) {
    if (o.empty()) return;
    if (empty()) {
        *this = o;
        return;
    }
    // Both are antichains in canonical order. A form of both survives (nothing in either dominates it); a form
    // of only one side can only be dominated by a form of only the other side.
    std::vector<std::uint32_t> only_a, only_b;
    size_t i = 0, j = 0;
    while (i < forms.size() || j < o.forms.size()) {
        if (j == o.forms.size() || (i < forms.size() && forms[i] < o.forms[j])) only_a.push_back(static_cast<std::uint32_t>(i++));
        else if (i == forms.size() || o.forms[j] < forms[i]) only_b.push_back(static_cast<std::uint32_t>(j++));
        else ++i, ++j;
    }
    if (only_b.empty()) return;
    std::vector<char> keep_a(forms.size(), 1), keep_b(o.forms.size(), 1);
    if (!only_a.empty()) {
        const Side A = side_of(only_a, *this), B = side_of(only_b, o);
        std::int64_t lo = 0, hi = 0;
        for (std::uint32_t k : only_a)
            for (size_t r = 0; r < rays; ++r) lo = std::min(lo, row(k)[r]), hi = std::max(hi, row(k)[r]);
        for (std::uint32_t k : only_b)
            for (size_t r = 0; r < rays; ++r) lo = std::min(lo, o.row(k)[r]), hi = std::max(hi, o.row(k)[r]);
        // The common case (at most 8 rays, values within 16 or 32 bits): a branch-free test of all rays at once on
        // narrow copies padded with zeros (0 <= 0 on the padding), vectorised. Same verdicts as the 64-bit test.
        const bool narrow = rays <= 8 && lo >= INT32_MIN && hi <= INT32_MAX;
        if (narrow && lo >= INT16_MIN && hi <= INT16_MAX) {
            const auto a8 = narrow_rows<std::int16_t>(A, *this), b8 = narrow_rows<std::int16_t>(B, o);
            mark_dominated(A, a8.data(), *this, B, b8.data(), o, 8, any_above8<std::int16_t>, keep_a);
            mark_dominated(B, b8.data(), o, A, a8.data(), *this, 8, any_above8<std::int16_t>, keep_b);
        } else if (narrow) {
            const auto a8 = narrow_rows<std::int32_t>(A, *this), b8 = narrow_rows<std::int32_t>(B, o);
            mark_dominated(A, a8.data(), *this, B, b8.data(), o, 8, any_above8<std::int32_t>, keep_a);
            mark_dominated(B, b8.data(), o, A, a8.data(), *this, 8, any_above8<std::int32_t>, keep_b);
        } else {
            // 64-bit rows, compared in place through a gathered copy in side order.
            auto gather = [](const Side& S, const MaxPoly& p) {
                std::vector<std::int64_t> out;
                out.reserve(S.index.size() * p.rays);
                for (std::uint32_t k : S.index) out.insert(out.end(), p.row(k), p.row(k) + p.rays);
                return out;
            };
            const auto a64 = gather(A, *this), b64 = gather(B, o);
            const size_t R = rays;
            auto any_above = [R](const std::int64_t* f, const std::int64_t* g) {
                for (size_t r = 0; r < R; ++r)
                    if (f[r] > g[r]) return true;
                return false;
            };
            mark_dominated(A, a64.data(), *this, B, b64.data(), o, R, any_above, keep_a);
            mark_dominated(B, b64.data(), o, A, a64.data(), *this, R, any_above, keep_b);
        }
    }
    // The result in canonical order, written straight into sized arrays.
    size_t kept = 0;
    for (char k : keep_a) kept += k != 0;
    for (std::uint32_t k : only_b) kept += keep_b[k] != 0;
    MaxPoly out;
    out.rays = rays;
    out.forms.resize(kept);
    out.values.resize(kept * rays);
    size_t n = 0;
    auto put = [&](const LinForm& f, const std::int64_t* v) {
        out.forms[n] = f;
        std::memcpy(out.values.data() + n * rays, v, rays * sizeof(std::int64_t));
        ++n;
    };
    i = 0, j = 0;
    while (i < forms.size() || j < o.forms.size()) {
        const bool take_a = j == o.forms.size() || (i < forms.size() && !(o.forms[j] < forms[i]));
        if (take_a) {
            const bool same = j < o.forms.size() && forms[i] == o.forms[j];
            if (keep_a[i]) put(forms[i], row(i));
            ++i;
            if (same) ++j;
        } else {
            if (keep_b[j]) put(o.forms[j], o.row(j));
            ++j;
        }
    }
    *this = std::move(out);
    drop_convex_dominated();
}

Rational MaxPoly::eval(const CostPoint& point) const {
    if (forms.empty()) throw std::logic_error("MaxPoly::eval of an empty max");
    Rational best = forms[0].eval(point);
    for (size_t k = 1; k < forms.size(); ++k) best = std::max(best, forms[k].eval(point));
    return best;
}

bool MaxPoly::same_forms(const MaxPoly& other) const {
    if (forms == other.forms) return true;  // the ray values are those of the forms
    if (forms.size() != other.forms.size() || rays != other.rays) return false;
    auto rows_of = [](const MaxPoly& p) {
        std::vector<std::vector<std::int64_t>> out;
        for (size_t k = 0; k < p.forms.size(); ++k) out.emplace_back(p.row(k), p.row(k) + p.rays);
        std::sort(out.begin(), out.end());
        return out;
    };
    return rows_of(*this) == rows_of(other);
}

std::string MaxPoly::str(bool deepseek_basis) const { return str(deepseek_basis ? Basis::DeepSeek : Basis::PyTorch); }

std::string MaxPoly::str(Basis basis) const {
    if (forms.empty()) return "-inf";
    if (forms.size() == 1) return format_form(forms[0], basis);
    std::string out = "max(";
    for (size_t k = 0; k < forms.size(); ++k) out += (k ? ", " : "") + format_form(forms[k], basis);
    return out + ")";
}

std::string MaxPoly::str(const CostRegion& region, bool deepseek_basis) const {
    return str(region, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

std::string MaxPoly::str(const CostRegion& region, Basis basis) const {
    MaxPoly n;
    for (const auto& f : forms) {
        const LinForm g = normalize_form(f, region);
        if (std::find(n.forms.begin(), n.forms.end(), g) == n.forms.end()) n.forms.push_back(g);
    }
    std::sort(n.forms.begin(), n.forms.end());
    return n.str(basis);
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
