#include "model/integer.hpp"

#include "model/integer_big.hpp"

#include <atomic>
#include <cmath>
#include <ostream>
#include <stdexcept>

namespace pp {
namespace {

// A big value: immutable once made, shared by every copy of the Integer that holds it.
struct BigCell {
    std::atomic<std::uint32_t> refs{1};
    BigInt value;
};

BigCell* cell_of(std::int64_t raw) noexcept {
    return reinterpret_cast<BigCell*>(static_cast<std::uintptr_t>(raw) & ~std::uintptr_t{1});
}

std::int64_t tag(BigCell* cell) noexcept {
    static_assert(alignof(BigCell) >= 2, "the low bit of a cell's address is the tag");
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(cell) | 1);
}

}  // namespace

BigInt IntegerAccess::to_big(const Integer& value) {
    if (value.is_inline()) return BigInt(value.raw_ >> 1);
    return cell_of(value.raw_)->value;
}

const BigInt* IntegerAccess::big_ptr(const Integer& value) {
    return value.is_inline() ? nullptr : &cell_of(value.raw_)->value;
}

Integer IntegerAccess::from_big(const BigInt& value) {
    if (value >= Integer::kInlineMin && value <= Integer::kInlineMax)
        return Integer::from_raw(Integer::encode(value.convert_to<std::int64_t>()));
    auto* cell = new BigCell;
    cell->value = value;
    return Integer::from_raw(tag(cell));
}

std::int64_t Integer::make_big_signed(std::int64_t value) {
    auto* cell = new BigCell;
    cell->value = value;
    return tag(cell);
}

std::int64_t Integer::make_big_unsigned(std::uint64_t value) {
    auto* cell = new BigCell;
    cell->value = value;
    return tag(cell);
}

void Integer::retain(std::int64_t raw) noexcept { cell_of(raw)->refs.fetch_add(1, std::memory_order_relaxed); }

void Integer::release(std::int64_t raw) noexcept {
    BigCell* cell = cell_of(raw);
    if (cell->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete cell;
}

Integer Integer::from_wide(__int128 value) {
    if (value >= kInlineMin && value <= kInlineMax) return from_raw(encode(static_cast<std::int64_t>(value)));
    const bool negative = value < 0;
    // |value| as an unsigned 128-bit number (well defined also for the most negative value).
    unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(value) : static_cast<unsigned __int128>(value);
    BigInt big = static_cast<std::uint64_t>(magnitude >> 64);
    big <<= 64;
    big += static_cast<std::uint64_t>(magnitude);
    if (negative) big = -big;
    return IntegerAccess::from_big(big);
}

std::optional<Integer> Integer::parse(std::string_view text) {
    std::string_view digits = text;
    if (!digits.empty() && digits[0] == '-') digits.remove_prefix(1);
    if (digits.empty()) return std::nullopt;
    for (char c : digits)
        if (c < '0' || c > '9') return std::nullopt;
    const bool negative = digits.size() < text.size();
    // Boost reads a leading 0 as octal ("025" = 21) and 0x as hex: hand it decimal digits without leading zeros.
    digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    return IntegerAccess::from_big(BigInt((negative ? "-" : "") + std::string(digits)));
}

bool Integer::big_fits_int64() const noexcept {
    const BigInt& v = cell_of(raw_)->value;
    return v >= std::numeric_limits<std::int64_t>::min() && v <= std::numeric_limits<std::int64_t>::max();
}

int Integer::big_sign() const noexcept { return cell_of(raw_)->value.sign(); }

std::int64_t Integer::big_to_int64() const {
    if (!big_fits_int64()) throw std::overflow_error("integer " + to_string() + " does not fit in 64 bits");
    return cell_of(raw_)->value.convert_to<std::int64_t>();
}

std::optional<std::int64_t> Integer::try_int64() const {
    if (!fits_int64()) return std::nullopt;
    return to_int64();
}

double Integer::to_double() const noexcept {
    if (is_inline()) return static_cast<double>(raw_ >> 1);
    return cell_of(raw_)->value.convert_to<double>();
}

std::string Integer::to_string() const {
    if (is_inline()) return std::to_string(raw_ >> 1);
    return cell_of(raw_)->value.str();
}

Integer Integer::add_slow(const Integer& a, const Integer& b) {
    return IntegerAccess::from_big(IntegerAccess::to_big(a) + IntegerAccess::to_big(b));
}
Integer Integer::sub_slow(const Integer& a, const Integer& b) {
    return IntegerAccess::from_big(IntegerAccess::to_big(a) - IntegerAccess::to_big(b));
}
Integer Integer::mul_slow(const Integer& a, const Integer& b) {
    return IntegerAccess::from_big(IntegerAccess::to_big(a) * IntegerAccess::to_big(b));
}
Integer Integer::div_slow(const Integer& a, const Integer& b) {
    if (b.raw_ == 0) throw std::domain_error("integer division by zero");
    return IntegerAccess::from_big(IntegerAccess::to_big(a) / IntegerAccess::to_big(b));  // truncates, as C++
}
Integer Integer::mod_slow(const Integer& a, const Integer& b) {
    if (b.raw_ == 0) throw std::domain_error("integer division by zero");
    return IntegerAccess::from_big(IntegerAccess::to_big(a) % IntegerAccess::to_big(b));  // sign of a, as C++
}

int Integer::compare_slow(const Integer& a, const Integer& b) noexcept {
    const BigInt* pa = IntegerAccess::big_ptr(a);
    const BigInt* pb = IntegerAccess::big_ptr(b);
    if (pa && pb) return pa->compare(*pb);
    // One inline, one big: the big one lies outside the inline range, so its sign decides.
    if (pa) return pa->sign();
    return -pb->sign();
}

std::ostream& operator<<(std::ostream& out, const Integer& value) { return out << value.to_string(); }

Integer abs(const Integer& value) { return value.sign() < 0 ? -value : value; }

Integer gcd(Integer a, Integer b) {
    if (a.is_inline() && b.is_inline()) {
        std::int64_t x = a.to_int64(), y = b.to_int64();
        x = x < 0 ? -x : x;  // |kInlineMin| = 2^62 fits in int64
        y = y < 0 ? -y : y;
        while (y != 0) {
            const std::int64_t t = x % y;
            x = y;
            y = t;
        }
        return x;
    }
    return IntegerAccess::from_big(boost::multiprecision::gcd(IntegerAccess::to_big(a), IntegerAccess::to_big(b)));
}

Integer lcm(const Integer& a, const Integer& b) {
    if (a.sign() == 0 || b.sign() == 0) return 0;
    return abs(a / gcd(a, b) * b);
}

Integer pow10(int exponent) {
    Integer result = 1;
    for (int i = 0; i < exponent; ++i) result *= 10;
    return result;
}

}  // namespace pp
