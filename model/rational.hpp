#pragma once
// Exact time. Durations are rationals written as "3", "1.75" or "7/4"; the simulator converts them to
// integer ticks over a common denominator so that every makespan is exact (no floating-point drift).
// Numerators, denominators and ticks are Integers (model/integer.hpp): 64-bit machine arithmetic while the
// values fit, arbitrary precision when they would not, so no result ever wraps or is rounded.
#include "model/integer.hpp"

#include <compare>
#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace pp {

// An exact fraction, always reduced with a positive denominator. (boost::rational of Boost 1.74 recurses
// forever on `rational == int` under C++20's rewritten comparisons, so we keep our own.) When every part
// fits in 63 bits, operations use 128-bit intermediates; otherwise they go through cpp_int. Never
// overflows; a zero denominator throws std::domain_error.
class Rational {
public:
    Rational() = default;
    template <std::integral T>
    Rational(T whole) : num_(whole) {}  // NOLINT: integers are rationals
    Rational(Integer whole) : num_(std::move(whole)) {}  // NOLINT
    Rational(const Integer& numerator, const Integer& denominator);

    const Integer& numerator() const { return num_; }
    const Integer& denominator() const { return den_; }

    Rational& operator+=(const Rational& other);
    Rational& operator-=(const Rational& other);
    Rational& operator*=(const Rational& other);
    Rational& operator/=(const Rational& other);
    friend Rational operator+(Rational a, const Rational& b) { return a += b; }
    friend Rational operator-(Rational a, const Rational& b) { return a -= b; }
    friend Rational operator*(Rational a, const Rational& b) { return a *= b; }
    friend Rational operator/(Rational a, const Rational& b) { return a /= b; }
    Rational operator-() const;

    friend bool operator==(const Rational& a, const Rational& b) { return a.num_ == b.num_ && a.den_ == b.den_; }
    friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

private:
    Integer num_{0}, den_{1};
};

std::ostream& operator<<(std::ostream& out, const Rational& value);

// Nearest double (for drawing and percentages only; never for a printed exact value).
double to_double(const Rational& value);

using Ticks = Integer;

// Parses a non-negative decimal ("12", "1.75") or fraction ("7/4"); nullopt when malformed or too large
// (a fraction's numerator and denominator at most 2^40; a decimal when the fraction it equals, reduced, is
// within that, e.g. "0.0009765625" = 1/1024, so every terminating value format_rational writes reads back).
std::optional<Rational> parse_rational(std::string_view text);

// Shortest exact text: "4", "4.5", "0.125", else "7/3".
std::string format_rational(const Rational& value);

// A common denominator turns rationals into integer ticks: ticks = value * ticks_per_unit.
struct TimeScale {
    Integer ticks_per_unit = 1;
    Ticks to_ticks(const Rational& value) const;
    Rational to_units(const Ticks& ticks) const { return Rational(ticks, ticks_per_unit); }
    std::string format(const Ticks& ticks) const { return format_rational(to_units(ticks)); }
    void include(const Rational& value);  // widen the scale so that value is a whole number of ticks
};

}  // namespace pp
