#pragma once
// Exact time. Durations are rationals written as "3", "1.75" or "7/4"; the simulator converts them to
// integer ticks over a common denominator so that every makespan is exact (no floating-point drift).
#include <boost/rational.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pp {

using Rational = boost::rational<std::int64_t>;
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
