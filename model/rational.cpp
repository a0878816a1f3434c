#include "model/rational.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <numeric>
#include <ostream>
#include <stdexcept>

namespace pp {
namespace {

using Wide = __int128;

std::int64_t narrow(Wide value) {
    if (value > std::numeric_limits<std::int64_t>::max() || value < std::numeric_limits<std::int64_t>::min())
        throw std::overflow_error("rational arithmetic overflows 64 bits");
    return static_cast<std::int64_t>(value);
}

Wide wide_gcd(Wide a, Wide b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) {
        Wide t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// Reduces num/den (den != 0) to lowest terms with a positive denominator.
std::pair<std::int64_t, std::int64_t> reduce(Wide num, Wide den) {
    if (den == 0) throw std::domain_error("rational with a zero denominator");
    if (den < 0) num = -num, den = -den;
    const Wide g = wide_gcd(num, den);
    if (g > 1) num /= g, den /= g;
    return {narrow(num), narrow(den)};
}

constexpr std::int64_t kMaxComponent = std::int64_t{1} << 40;  // keeps tick arithmetic far from overflow

std::optional<std::int64_t> parse_digits(std::string_view digits) {
    if (digits.empty()) return std::nullopt;
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc{} || end != digits.data() + digits.size() || value > kMaxComponent) return std::nullopt;
    return value;
}

bool all_digits(std::string_view text) {
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

Rational::Rational(std::int64_t numerator, std::int64_t denominator) {
    std::tie(num_, den_) = reduce(numerator, denominator);
}

Rational& Rational::operator+=(const Rational& o) {
    std::tie(num_, den_) = reduce(Wide(num_) * o.den_ + Wide(o.num_) * den_, Wide(den_) * o.den_);
    return *this;
}

Rational& Rational::operator-=(const Rational& o) { return *this += -o; }

Rational& Rational::operator*=(const Rational& o) {
    std::tie(num_, den_) = reduce(Wide(num_) * o.num_, Wide(den_) * o.den_);
    return *this;
}

Rational& Rational::operator/=(const Rational& o) {
    std::tie(num_, den_) = reduce(Wide(num_) * o.den_, Wide(den_) * o.num_);
    return *this;
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
    return Wide(a.num_) * b.den_ <=> Wide(b.num_) * a.den_;
}

std::ostream& operator<<(std::ostream& out, const Rational& value) { return out << format_rational(value); }

std::optional<Rational> parse_rational(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (auto slash = text.find('/'); slash != std::string_view::npos) {
        auto num = text.substr(0, slash), den = text.substr(slash + 1);
        if (!all_digits(num) || !all_digits(den)) return std::nullopt;
        auto n = parse_digits(num), d = parse_digits(den);
        if (!n || !d || *d == 0) return std::nullopt;
        return Rational(*n, *d);
    }
    auto dot = text.find('.');
    auto whole = text.substr(0, dot);
    auto frac = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
    if (!all_digits(whole) || !all_digits(frac)) return std::nullopt;
    if (whole.empty() && frac.empty()) return std::nullopt;
    if (dot != std::string_view::npos && frac.empty()) return std::nullopt;
    if (frac.size() > 9) return std::nullopt;
    auto w = whole.empty() ? std::optional<std::int64_t>{0} : parse_digits(whole);
    if (!w) return std::nullopt;
    std::int64_t den = 1;
    for (size_t i = 0; i < frac.size(); ++i) den *= 10;
    auto f = frac.empty() ? std::optional<std::int64_t>{0} : parse_digits(frac);
    if (!f) return std::nullopt;
    if (*w > kMaxComponent / den) return std::nullopt;
    return Rational(*w * den + *f, den);
}

std::string format_rational(const Rational& value) {
    auto num = value.numerator(), den = value.denominator();
    if (den == 1) return std::to_string(num);
    // Terminating decimal when the denominator has only the prime factors 2 and 5.
    std::int64_t rest = den;
    int twos = 0, fives = 0;
    while (rest % 2 == 0) rest /= 2, ++twos;
    while (rest % 5 == 0) rest /= 5, ++fives;
    if (rest != 1) return std::to_string(num) + "/" + std::to_string(den);
    int digits = std::max(twos, fives);
    std::int64_t scale = 1;
    for (int i = 0; i < digits; ++i) scale *= 10;
    const bool negative = num < 0;
    const std::int64_t scaled = (negative ? -num : num) * (scale / den);
    return fmt::format("{}{}.{:0{}}", negative ? "-" : "", scaled / scale, scaled % scale, digits);
}

Ticks TimeScale::to_ticks(const Rational& value) const {
    if (ticks_per_unit % value.denominator() != 0)
        throw std::logic_error("TimeScale does not include value " + format_rational(value));
    return value.numerator() * (ticks_per_unit / value.denominator());
}

void TimeScale::include(const Rational& value) {
    ticks_per_unit = std::lcm(ticks_per_unit, value.denominator());
}

}  // namespace pp
