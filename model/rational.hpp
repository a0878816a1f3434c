#pragma once
// Exact time. Durations are rationals written as "3", "1.75" or "7/4"; the simulator converts them to
// integer ticks over a common denominator so that every makespan is exact (no floating-point drift).
#include <compare>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace pp {

// An exact fraction of 64-bit integers, always reduced with a positive denominator. (boost::rational of
// Boost 1.74 recurses forever on `rational == int` under C++20's rewritten comparisons, so we keep our own.)
// Intermediate products use 128 bits; a result that does not fit in 64 bits throws std::overflow_error.
class Rational {
public:
    constexpr Rational(std::int64_t whole = 0) : num_(whole), den_(1) {}  // NOLINT: integers are rationals
    Rational(std::int64_t numerator, std::int64_t denominator);

    std::int64_t numerator() const { return num_; }
    std::int64_t denominator() const { return den_; }

    Rational& operator+=(const Rational& other);
    Rational& operator-=(const Rational& other);
    Rational& operator*=(const Rational& other);
    Rational& operator/=(const Rational& other);
    friend Rational operator+(Rational a, const Rational& b) { return a += b; }
    friend Rational operator-(Rational a, const Rational& b) { return a -= b; }
    friend Rational operator*(Rational a, const Rational& b) { return a *= b; }
    friend Rational operator/(Rational a, const Rational& b) { return a /= b; }
    Rational operator-() const { return Rational(-num_, den_); }

    friend bool operator==(const Rational& a, const Rational& b) { return a.num_ == b.num_ && a.den_ == b.den_; }
    friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

private:
    std::int64_t num_, den_;
};

std::ostream& operator<<(std::ostream& out, const Rational& value);

using Ticks = std::int64_t;

// Parses a non-negative decimal ("12", "1.75") or fraction ("7/4"); nullopt when malformed or too large.
std::optional<Rational> parse_rational(std::string_view text);

// Shortest exact text: "4", "4.5", "0.125", else "7/3".
std::string format_rational(const Rational& value);

// A common denominator turns rationals into integer ticks: ticks = value * ticks_per_unit.
struct TimeScale {
    std::int64_t ticks_per_unit = 1;
    Ticks to_ticks(const Rational& value) const;
    Rational to_units(Ticks ticks) const { return Rational(ticks, ticks_per_unit); }
    std::string format(Ticks ticks) const { return format_rational(to_units(ticks)); }
    void include(const Rational& value);  // widen the scale so that value is a whole number of ticks
};

}  // namespace pp
