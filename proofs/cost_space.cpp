#include "proofs/cost_space.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>

namespace pp {

namespace {

constexpr const char* kNames[kCostVars] = {"F", "I", "W", "B", "FB", "comm"};

std::int64_t gcd64(std::int64_t a, std::int64_t b) {
    a = a < 0 ? checked_sub(0, a) : a;
    b = b < 0 ? checked_sub(0, b) : b;
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
    Integer common = 1;  // exact; a component that does not fit in 64 bits throws std::overflow_error
    for (const auto& v : x) common = lcm(common, v.denominator());
    std::array<std::int64_t, kCostVars> out{};
    std::int64_t g = 0;
    for (int i = 0; i < kCostVars; ++i) {
        const Rational scaled = x[i] * Rational(common);
        out[i] = scaled.numerator().to_int64();
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

bool parse_basis(const std::string& text, Basis& out) {
    if (text == "deepseek") return out = Basis::DeepSeek, true;
    if (text == "pytorch") return out = Basis::PyTorch, true;
    if (text == "zero-bubble" || text == "zb") return out = Basis::ZeroBubble, true;
    return false;
}

const char* basis_name(Basis basis) {
    switch (basis) {
        case Basis::DeepSeek: return "deepseek";
        case Basis::PyTorch: return "pytorch";
        case Basis::ZeroBubble: return "zero-bubble";
    }
    return "?";
}

std::string basis_legend(Basis basis) {
    switch (basis) {
        case Basis::DeepSeek: return "DeepSeek's letters (B = full backward = I + W, FB = overlapped F&B; I = B - W)";
        case Basis::PyTorch: return "PyTorch's letters (I = input-gradient backward, W = weight gradient, FB = overlapped pair)";
        case Basis::ZeroBubble:
            return "the Zero Bubble paper's letters (B = input-gradient backward = PyTorch's I, W = weight gradient; "
                   "no letter for the full backward)";
    }
    return "";
}

Basis paper_basis_of(const std::string& family) {
    for (const char* zb : {"zb-h1", "zb-h2", "zbv", "zb1p"})
        if (family == zb) return Basis::ZeroBubble;
    return Basis::DeepSeek;
}

const char* cost_var_name(int index, Basis basis) {
    if (basis == Basis::ZeroBubble && index == static_cast<int>(CostVar::I)) return "B";
    return kNames[index];
}

int cost_var_index(const std::string& name, Basis basis) {
    if (basis != Basis::ZeroBubble) return cost_var_index(name);
    if (name == "B") return static_cast<int>(CostVar::I);
    if (name == "I") return -1;
    return cost_var_index(name);
}

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

std::string format_terms(const std::array<Rational, kCostVars>& coef, const Rational& constant, Basis basis = Basis::PyTorch) {
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
    for (int i = 0; i < kCostVars; ++i) term(coef[i], cost_var_name(i, basis));
    term(constant, "");
    return out.empty() ? "0" : out;
}

}  // namespace

std::string constraint_text(const CostConstraint& constraint) {
    const char* rel = constraint.rel == CostConstraint::Eq ? " == " : constraint.rel == CostConstraint::Gt ? " > " : " >= ";
    return format_terms(constraint.a, Rational(0)) + rel + format_rational(constraint.b);
}

std::string format_ratform(const RatForm& form, bool deepseek_basis) {
    return format_ratform(form, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

std::string format_form(const LinForm& form, bool deepseek_basis) {
    return format_form(form, deepseek_basis ? Basis::DeepSeek : Basis::PyTorch);
}

std::array<Rational, kCostVars> basis_coefficients(std::array<Rational, kCostVars> c, Basis basis) {
    const int I = static_cast<int>(CostVar::I), W = static_cast<int>(CostVar::W), B = static_cast<int>(CostVar::B);
    if (basis == Basis::DeepSeek) {
        c[B] += c[I], c[W] -= c[I], c[I] = Rational(0);  // I = B - W
    } else {
        c[I] += c[B], c[W] += c[B], c[B] = Rational(0);  // B = I + W
    }
    return c;
}

std::string format_ratform(const RatForm& form, Basis basis) {
    // PyTorch's letters keep a B the form states (as format_ratform(form, false) always did): only the letter
    // sets that cannot say it rewrite it.
    if (basis == Basis::PyTorch) return format_terms(form.c, form.constant);
    return format_terms(basis_coefficients(form.c, basis), form.constant, basis);
}

std::string format_form(const LinForm& form, Basis basis) {
    RatForm r;
    for (int i = 0; i < kCostVars; ++i) r.c[i] = Rational(form.c[i]);
    return format_ratform(r, basis);
}



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
    // Equalities of full rank leave only the zero point: no ray (was a negative vector size below).
    if (eq_rank >= kCostVars) throw std::invalid_argument("the cost region is empty (the equalities leave only zero costs)");
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
        for (int i = 0; i < kCostVars; ++i) s = checked_add(s, checked_mul(form.c[i], rays[r][i]));
        out[r] = s;
    }
    return out;
}

CostPoint CostRegion::interior_point(const std::vector<std::int64_t>& weights) const {
    CostPoint p{};
    for (size_t r = 0; r < rays.size(); ++r) {
        const std::int64_t w = r < weights.size() ? weights[r] : 1;
        for (int i = 0; i < kCostVars; ++i) p[i] += Rational(w) * Rational(rays[r][i]);
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

CostRegion with_op_costs_scaled(const CostRegion& region, const Rational& share, const std::string& note) {
    if (share == Rational(1)) return region;
    CostRegion out;
    for (CostConstraint c : region.constraints) {
        const bool mixed = !(c.a[static_cast<int>(CostVar::comm)] == Rational(0));
        if (mixed || !c.homogeneous()) {
            bool scaled = false;
            for (int i = 0; i < kCostVars; ++i)
                if (i != static_cast<int>(CostVar::comm) && !(c.a[i] == Rational(0))) {
                    c.a[i] /= share;
                    scaled = true;
                }
            if (scaled) c.text += note;
        }
        out.add(std::move(c));
    }
    return out;
}

}  // namespace pp
