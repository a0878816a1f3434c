#pragma once
// Exact integers for times, ticks and the parts of rationals: arithmetic that never wraps.
//
// A value in [-2^62, 2^62) is stored inline, shifted left by one bit (low bit 0): adding two of them is one
// machine add plus an overflow test (__builtin_add_overflow), which is the whole fast path of the
// simulator. A result that would leave that range is stored instead as a reference-counted,
// arbitrary-precision integer (boost::multiprecision::cpp_int; the low bit of the word is 1 and the rest
// points at it). The representation is canonical -- a value that fits inline is never stored big -- so
// equality of two inline values is equality of the words. Big values are immutable and shared between
// copies. sizeof(Integer) == 8, as the int64 it replaces.
//
// Division and remainder truncate toward zero, as for built-in integers; dividing by zero throws
// std::domain_error. There is deliberately no implicit conversion to a built-in type: to_int64() throws
// std::overflow_error when the value does not fit, to_double() rounds.
#include <cassert>
#include <compare>
#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

class Integer {
public:
    static constexpr std::int64_t kInlineMax = (std::int64_t{1} << 62) - 1;
    static constexpr std::int64_t kInlineMin = -(std::int64_t{1} << 62);

    constexpr Integer() noexcept = default;
    template <std::integral T>
    Integer(T value) {  // NOLINT: built-in integers convert implicitly, as int64 did
        if constexpr (std::is_signed_v<T>) {
            if (static_cast<std::int64_t>(value) >= kInlineMin && static_cast<std::int64_t>(value) <= kInlineMax)
                raw_ = encode(static_cast<std::int64_t>(value));
            else
                raw_ = make_big_signed(static_cast<std::int64_t>(value));
        } else {
            if (static_cast<std::uint64_t>(value) <= static_cast<std::uint64_t>(kInlineMax))
                raw_ = encode(static_cast<std::int64_t>(value));
            else
                raw_ = make_big_unsigned(static_cast<std::uint64_t>(value));
        }
    }
    static Integer from_wide(__int128 value);  // exact, for 128-bit intermediate results
    // Machine integers already known to lie in [kInlineMin, kInlineMax] (checked only in debug builds), as
    // Integers; a plain shift per element, for results of loops proven free of overflow.
    static std::vector<Integer> from_inline_values(const std::vector<std::int64_t>& values) {
        std::vector<Integer> out(values.size());
        for (size_t i = 0; i < values.size(); ++i) {
            assert(values[i] >= kInlineMin && values[i] <= kInlineMax);
            out[i].raw_ = encode(values[i]);
        }
        return out;
    }
    // Decimal digits with an optional leading '-'; nullopt when malformed.
    static std::optional<Integer> parse(std::string_view text);

    Integer(const Integer& other) noexcept : raw_(other.raw_) {
        if (other.is_big()) retain(raw_);
    }
    Integer(Integer&& other) noexcept : raw_(other.raw_) { other.raw_ = 0; }
    Integer& operator=(const Integer& other) noexcept {
        if (other.is_big()) retain(other.raw_);
        if (is_big()) release(raw_);
        raw_ = other.raw_;
        return *this;
    }
    Integer& operator=(Integer&& other) noexcept {
        std::swap(raw_, other.raw_);  // other's destructor releases what we held
        return *this;
    }
    ~Integer() {
        if (is_big()) release(raw_);
    }

    bool is_inline() const noexcept { return (raw_ & 1) == 0; }
    bool fits_int64() const noexcept { return is_inline() || big_fits_int64(); }
    std::int64_t to_int64() const {  // throws std::overflow_error when the value does not fit
        return is_inline() ? raw_ >> 1 : big_to_int64();
    }
    std::optional<std::int64_t> try_int64() const;
    double to_double() const noexcept;
    explicit operator double() const noexcept { return to_double(); }
    std::string to_string() const;
    int sign() const noexcept { return is_inline() ? (raw_ > 0) - (raw_ < 0) : big_sign(); }

    friend Integer operator+(const Integer& a, const Integer& b) {
        std::int64_t r;
        if (((a.raw_ | b.raw_) & 1) == 0 && !__builtin_add_overflow(a.raw_, b.raw_, &r)) return from_raw(r);
        return add_slow(a, b);
    }
    friend Integer operator-(const Integer& a, const Integer& b) {
        std::int64_t r;
        if (((a.raw_ | b.raw_) & 1) == 0 && !__builtin_sub_overflow(a.raw_, b.raw_, &r)) return from_raw(r);
        return sub_slow(a, b);
    }
    friend Integer operator*(const Integer& a, const Integer& b) {
        std::int64_t r;  // (2x) * y = 2xy: the product of an encoded and a decoded value is encoded
        if (((a.raw_ | b.raw_) & 1) == 0 && !__builtin_mul_overflow(a.raw_, b.raw_ >> 1, &r)) return from_raw(r);
        return mul_slow(a, b);
    }
    friend Integer operator/(const Integer& a, const Integer& b) {
        // kInlineMin / -1 is the one inline quotient that does not fit inline.
        if (((a.raw_ | b.raw_) & 1) == 0 && b.raw_ != 0 && !(a.raw_ == encode(kInlineMin) && b.raw_ == encode(-1)))
            return Integer::from_raw(encode((a.raw_ >> 1) / (b.raw_ >> 1)));
        return div_slow(a, b);
    }
    friend Integer operator%(const Integer& a, const Integer& b) {
        if (((a.raw_ | b.raw_) & 1) == 0 && b.raw_ != 0) return Integer::from_raw(encode((a.raw_ >> 1) % (b.raw_ >> 1)));
        return mod_slow(a, b);
    }
    Integer operator-() const { return Integer() - *this; }
    Integer& operator+=(const Integer& o) {
        std::int64_t r;
        if (((raw_ | o.raw_) & 1) == 0 && !__builtin_add_overflow(raw_, o.raw_, &r)) {
            raw_ = r;
            return *this;
        }
        return *this = add_slow(*this, o);
    }
    Integer& operator-=(const Integer& o) {
        std::int64_t r;
        if (((raw_ | o.raw_) & 1) == 0 && !__builtin_sub_overflow(raw_, o.raw_, &r)) {
            raw_ = r;
            return *this;
        }
        return *this = sub_slow(*this, o);
    }
    Integer& operator*=(const Integer& o) { return *this = *this * o; }
    Integer& operator/=(const Integer& o) { return *this = *this / o; }
    Integer& operator%=(const Integer& o) { return *this = *this % o; }
    Integer& operator++() { return *this += Integer(1); }
    Integer& operator--() { return *this -= Integer(1); }
    Integer operator++(int) {
        Integer before = *this;
        ++*this;
        return before;
    }
    Integer operator--(int) {
        Integer before = *this;
        --*this;
        return before;
    }

    friend bool operator==(const Integer& a, const Integer& b) noexcept {
        if (a.raw_ == b.raw_) return true;
        return a.is_big() && b.is_big() && compare_slow(a, b) == 0;  // canonical: inline != big
    }
    friend std::strong_ordering operator<=>(const Integer& a, const Integer& b) noexcept {
        if (((a.raw_ | b.raw_) & 1) == 0) return a.raw_ <=> b.raw_;
        return compare_slow(a, b) <=> 0;
    }

private:
    friend struct IntegerAccess;  // model/integer_big.hpp: the cpp_int view, for rational.cpp
    static constexpr std::int64_t encode(std::int64_t value) noexcept {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(value) << 1);
    }
    static Integer from_raw(std::int64_t raw) noexcept {
        Integer x;
        x.raw_ = raw;
        return x;
    }
    bool is_big() const noexcept { return (raw_ & 1) != 0; }
    static std::int64_t make_big_signed(std::int64_t value);
    static std::int64_t make_big_unsigned(std::uint64_t value);
    static void retain(std::int64_t raw) noexcept;
    static void release(std::int64_t raw) noexcept;
    bool big_fits_int64() const noexcept;
    std::int64_t big_to_int64() const;
    int big_sign() const noexcept;
    static Integer add_slow(const Integer& a, const Integer& b);
    static Integer sub_slow(const Integer& a, const Integer& b);
    static Integer mul_slow(const Integer& a, const Integer& b);
    static Integer div_slow(const Integer& a, const Integer& b);
    static Integer mod_slow(const Integer& a, const Integer& b);
    static int compare_slow(const Integer& a, const Integer& b) noexcept;

    std::int64_t raw_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Integer& value);
inline std::string to_string(const Integer& value) { return value.to_string(); }
Integer abs(const Integer& value);
Integer gcd(Integer a, Integer b);  // non-negative; gcd(0, 0) = 0
Integer lcm(const Integer& a, const Integer& b);  // non-negative
Integer pow10(int exponent);

}  // namespace pp

// An Integer has no largest or smallest value: numeric_limits<Integer>::max() does not compile (instead of
// silently returning 0, as it does for a type without a specialisation).
template <>
struct std::numeric_limits<pp::Integer> {
    static constexpr bool is_specialized = true;
    static constexpr bool is_integer = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_exact = true;
    static constexpr bool is_bounded = false;
    static pp::Integer min() = delete;
    static pp::Integer max() = delete;
    static pp::Integer lowest() = delete;
};
