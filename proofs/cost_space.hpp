#pragma once
// The cost space of symbolic proofs: the six cost variables F, I, W, B, FB and comm, integer linear forms over
// them (LinForm), and the region the stated assumptions cut out (CostRegion): a polyhedral cone given by linear
// constraints, with its extreme rays. A linear form is >= another on the whole cone iff it is >= on every
// extreme ray, so forms are compared exactly by their values on the rays. Times are homogeneous in the costs
// (scaling every cost scales every time), which is why a cone suffices.
#include "model/rational.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp {

// The symbolic layer's integers (coefficients of linear forms, their values on the integer rays, sums of those)
// are 64-bit and checked: a result that would wrap throws std::overflow_error instead of giving a wrong
// comparison. (Coefficients count ops along a path and rays are coprime integers from the stated assumptions,
// so in practice they stay small; exact times are Rationals and never pass through here.)
inline std::int64_t checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("linear form coefficient overflows 64 bits");
    return r;
}
inline std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) throw std::overflow_error("linear form coefficient overflows 64 bits");
    return r;
}
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("linear form coefficient overflows 64 bits");
    return r;
}

enum class CostVar : int { F = 0, I = 1, W = 2, B = 3, FB = 4, comm = 5 };
inline constexpr int kCostVars = 6;
const char* cost_var_name(int index);
int cost_var_index(const std::string& name);  // -1 when not a cost variable ("F&B" is accepted for FB)

// The letters a symbolic result (or a claim) is written in; the notations clash on B (README, "Units and letters"):
//   PyTorch     F, I (input gradient), W, B = I + W (full backward), FB (a pair)  -- printed without B
//   DeepSeek    F, B = full backward, W, F&B (a pair)                             -- printed without I (I = B - W)
//   ZeroBubble  the Zero Bubble paper's F, B = the input gradient (PyTorch's I), W; no full-backward letter
// Rewriting between them uses B = I + W, so DeepSeek's and the Zero Bubble paper's letters are only for
// regions where that holds.
enum class Basis { DeepSeek, PyTorch, ZeroBubble };
// "deepseek" | "pytorch" | "zero-bubble" (also "zb"); "paper" is resolved per family by paper_basis_of.
bool parse_basis(const std::string& text, Basis& out);
const char* basis_name(Basis basis);          // "deepseek" | "pytorch" | "zero-bubble"
std::string basis_legend(Basis basis);        // one line saying what the letters mean
// The letters of the family's own paper: the Zero Bubble paper's for zb-h1, zb-h2, zbv and zb1p, DeepSeek's
// for everything else (DualPipe and DualPipeV; GPipe's and 1F1B's F + B read the same in DeepSeek's letters).
Basis paper_basis_of(const std::string& family);
// The name of cost variable `index` in a basis' letters: I is "B" in the Zero Bubble paper's.
const char* cost_var_name(int index, Basis basis);
// The cost variable a name means in a basis' letters (-1 when none): "B" is I in the Zero Bubble paper's, and
// "I" has no meaning there (the caller says so rather than guessing).
int cost_var_index(const std::string& name, Basis basis);

using CostPoint = std::array<Rational, kCostVars>;

struct LinForm {
    std::array<std::int64_t, kCostVars> c{};

    static LinForm var(CostVar v) {
        LinForm f;
        f.c[static_cast<int>(v)] = 1;
        return f;
    }
    LinForm& operator+=(const LinForm& o) {
        for (int i = 0; i < kCostVars; ++i) c[i] = checked_add(c[i], o.c[i]);
        return *this;
    }
    LinForm& operator-=(const LinForm& o) {
        for (int i = 0; i < kCostVars; ++i) c[i] = checked_sub(c[i], o.c[i]);
        return *this;
    }
    friend LinForm operator+(LinForm a, const LinForm& b) { return a += b; }
    friend LinForm operator-(LinForm a, const LinForm& b) { return a -= b; }
    friend LinForm operator*(std::int64_t k, LinForm a) {
        for (auto& x : a.c) x = checked_mul(x, k);
        return a;
    }
    friend bool operator==(const LinForm&, const LinForm&) = default;
    friend auto operator<=>(const LinForm&, const LinForm&) = default;
    bool zero() const {
        for (auto x : c)
            if (x != 0) return false;
        return true;
    }
    Rational eval(const CostPoint& point) const;
};

// "2*FB + B - 3*W"; in DeepSeek's basis (I written as B - W) when deepseek_basis is set and B = I + W holds.
std::string format_form(const LinForm& form, bool deepseek_basis = false);
std::string format_form(const LinForm& form, Basis basis);
// A form with rational coefficients (formulas such as (P/2-1)*(...) for odd P/2 are still integral, but
// claims may divide).
struct RatForm {
    std::array<Rational, kCostVars> c{};
    Rational constant{0};
};
std::string format_ratform(const RatForm& form, bool deepseek_basis = false);
// In a basis' letters (B = I + W assumed for DeepSeek's and the Zero Bubble paper's): no I in DeepSeek's, no
// full backward in the others, and the input gradient printed as B in the Zero Bubble paper's.
std::string format_ratform(const RatForm& form, Basis basis);
// The coefficients of a form rewritten into a basis' variables (B = I + W): DeepSeek's have no I, the others no B.
std::array<Rational, kCostVars> basis_coefficients(std::array<Rational, kCostVars> c, Basis basis);

// One linear constraint  a . x  REL  b  over the cost variables.
struct CostConstraint {
    enum Rel { Ge, Gt, Eq };
    std::array<Rational, kCostVars> a{};
    Rational b{0};
    Rel rel = Ge;
    std::string text;  // as stated
    bool homogeneous() const { return b == Rational(0); }
};

// "1/2*F - 3*comm >= 3": the constraint as `--assume` reads it back (PyTorch's letters).
std::string constraint_text(const CostConstraint& constraint);

// The cost space under the stated assumptions.
struct CostRegion {
    std::vector<CostConstraint> constraints;
    // Extreme rays of the closed homogeneous part, scaled to coprime integers. Filled by finish().
    std::vector<std::array<std::int64_t, kCostVars>> rays;
    bool b_is_i_plus_w = false;  // the constraint B = I + W is among the assumptions
    bool comm_zero = false;

    // The default assumptions: F, I, W > 0, B = I + W, 0 < FB <= F + B, and comm = 0 (comm >= 0 when comm_free).
    // comm_free = false adds comm = 0.
    static CostRegion standard(bool comm_free);
    void add(CostConstraint constraint);
    // Computes the rays; throws std::invalid_argument if the cone is not pointed or empty.
    void finish();
    std::vector<std::string> describe() const;
    // The values of a form on the rays (exact integers).
    std::vector<std::int64_t> ray_values(const LinForm& form) const;
    // Whether some ray gives the variable a non-zero value (needs finish()).
    bool may_be_positive(CostVar v) const;
    // A point strictly inside (the sum of the rays, plus a small multiple of each ray when weights given).
    CostPoint interior_point(const std::vector<std::int64_t>& weights = {}) const;
    bool contains(const CostPoint& point) const;
};

// `region`, stated over costs x, restated over the costs y = share * x of the ops (comm as it is): a unit of a
// stage at its rank share, a sequence segment at 1/k. A homogeneous constraint on the op costs alone (F > 0,
// B = I + W, FB <= F + B) means the same over both; one with comm or a constant has its op coefficients divided
// by share, and `note` appended to its text (what its letters mean). Unfinished: call finish().
CostRegion with_op_costs_scaled(const CostRegion& region, const Rational& share, const std::string& note = "");

}  // namespace pp
