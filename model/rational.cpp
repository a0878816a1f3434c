#include "model/rational.hpp"

#include "model/integer_big.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ostream>
#include <stdexcept>

namespace pp {
namespace {

using Wide = __int128;

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

// Reduces num/den (den != 0) to lowest terms with a positive denominator. The fast path: every input
// part fits in 63 bits, so products of two fit in 125 and a sum of two products in 126.
void reduce_wide(Wide num, Wide den, Integer& out_num, Integer& out_den) {
    if (den == 0) throw std::domain_error("rational with a zero denominator");
    if (den < 0) num = -num, den = -den;
    const Wide g = wide_gcd(num, den);
    if (g > 1) num /= g, den /= g;
    out_num = Integer::from_wide(num);
    out_den = Integer::from_wide(den);
}

void reduce_big(BigInt num, BigInt den, Integer& out_num, Integer& out_den) {
    if (den.is_zero()) throw std::domain_error("rational with a zero denominator");
    if (den.sign() < 0) num = -num, den = -den;
    const BigInt g = boost::multiprecision::gcd(num, den);
    if (g > 1) num /= g, den /= g;
    out_num = from_big(num);
    out_den = from_big(den);
}

bool all_inline(const Integer& a, const Integer& b, const Integer& c, const Integer& d) {
    return a.is_inline() && b.is_inline() && c.is_inline() && d.is_inline();
}

Wide wide(const Integer& x) { return x.to_int64(); }  // only called on inline values

constexpr std::int64_t kMaxComponent = std::int64_t{1} << 40;  // what the parsers accept
constexpr size_t kMaxDecimalDigits = 64;

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

Rational::Rational(const Integer& numerator, const Integer& denominator) {
    if (numerator.is_inline() && denominator.is_inline())
        reduce_wide(wide(numerator), wide(denominator), num_, den_);
    else
        reduce_big(to_big(numerator), to_big(denominator), num_, den_);
}

Rational& Rational::operator+=(const Rational& o) {
    if (all_inline(num_, den_, o.num_, o.den_)) {
        if (den_ == o.den_) {  // common in tick sums: no multiplication needed
            reduce_wide(wide(num_) + wide(o.num_), wide(den_), num_, den_);
            return *this;
        }
        reduce_wide(wide(num_) * wide(o.den_) + wide(o.num_) * wide(den_), wide(den_) * wide(o.den_), num_, den_);
    } else {
        reduce_big(to_big(num_) * to_big(o.den_) + to_big(o.num_) * to_big(den_), to_big(den_) * to_big(o.den_), num_, den_);
    }
    return *this;
}

Rational& Rational::operator-=(const Rational& o) { return *this += -o; }

Rational Rational::operator-() const {
    Rational negated;
    negated.num_ = -num_;
    negated.den_ = den_;
    return negated;
}

Rational& Rational::operator*=(const Rational& o) {
    if (all_inline(num_, den_, o.num_, o.den_))
        reduce_wide(wide(num_) * wide(o.num_), wide(den_) * wide(o.den_), num_, den_);
    else
        reduce_big(to_big(num_) * to_big(o.num_), to_big(den_) * to_big(o.den_), num_, den_);
    return *this;
}

Rational& Rational::operator/=(const Rational& o) {
    if (all_inline(num_, den_, o.num_, o.den_))
        reduce_wide(wide(num_) * wide(o.den_), wide(den_) * wide(o.num_), num_, den_);
    else
        reduce_big(to_big(num_) * to_big(o.den_), to_big(den_) * to_big(o.num_), num_, den_);
    return *this;
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
    if (all_inline(a.num_, a.den_, b.num_, b.den_)) return wide(a.num_) * wide(b.den_) <=> wide(b.num_) * wide(a.den_);
    const int c = (to_big(a.num_) * to_big(b.den_)).compare(to_big(b.num_) * to_big(a.den_));
    return c <=> 0;
}

std::ostream& operator<<(std::ostream& out, const Rational& value) { return out << format_rational(value); }

double to_double(const Rational& value) {
    const Integer& num = value.numerator();
    const Integer& den = value.denominator();
    if (num.is_inline() && den.is_inline()) return num.to_double() / den.to_double();
    using BigRational = boost::multiprecision::cpp_rational;
    return BigRational(to_big(num), to_big(den)).convert_to<double>();
}

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
    if (frac.empty()) {
        auto w = parse_digits(whole);
        if (!w) return std::nullopt;
        return Rational(*w);
    }
    // A decimal is read exactly and accepted when the fraction it equals is (numerator and denominator at most
    // 2^40 once reduced), so every terminating value format_rational writes reads back: 1/1024 may be written
    // 0.0009765625. The length cap only bounds the work; 2^-40 needs 40 digits.
    if (whole.size() > kMaxDecimalDigits || frac.size() > kMaxDecimalDigits) return std::nullopt;
    const auto digits = Integer::parse(fmt::format("{}{}", whole, frac));
    if (!digits) return std::nullopt;
    Rational value(*digits, pow10(static_cast<int>(frac.size())));
    if (value.numerator() > Integer(kMaxComponent) || value.denominator() > Integer(kMaxComponent))
        return std::nullopt;
    return value;
}

std::string format_rational(const Rational& value) {
    const Integer& num = value.numerator();
    const Integer& den = value.denominator();
    if (den == 1) return num.to_string();
    // Terminating decimal when the denominator has only the prime factors 2 and 5.
    Integer rest = den;
    int twos = 0, fives = 0;
    while (rest % 2 == 0) rest /= 2, ++twos;
    while (rest % 5 == 0) rest /= 5, ++fives;
    if (rest != 1) return num.to_string() + "/" + den.to_string();
    const int digits = std::max(twos, fives);
    const Integer scale = pow10(digits);
    const bool negative = num.sign() < 0;
    const Integer scaled = abs(num) * (scale / den);  // exact: den divides 10^digits
    const std::string fraction = (scaled % scale).to_string();
    return fmt::format("{}{}.{}{}", negative ? "-" : "", (scaled / scale).to_string(),
                       std::string(static_cast<size_t>(digits) - fraction.size(), '0'), fraction);
}

Ticks TimeScale::to_ticks(const Rational& value) const {
    if (ticks_per_unit % value.denominator() != 0)
        throw std::logic_error("TimeScale does not include value " + format_rational(value));
    return value.numerator() * (ticks_per_unit / value.denominator());
}

void TimeScale::include(const Rational& value) { ticks_per_unit = lcm(ticks_per_unit, value.denominator()); }

}  // namespace pp
