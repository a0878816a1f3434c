#include "model/size_budget.hpp"

#include "model/placement.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>

namespace pp {
namespace {

std::atomic<std::uint64_t>& limit() {
    static std::atomic<std::uint64_t> value{kDefaultMaxOps};
    return value;
}

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::uint64_t max_ops() { return limit().load(std::memory_order_relaxed); }

void set_max_ops(std::uint64_t ops) { limit().store(ops == 0 ? kDefaultMaxOps : ops, std::memory_order_relaxed); }

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

std::uint64_t placement_ops(const Placement& placement) {
    std::uint64_t ops = static_cast<std::uint64_t>(std::max(placement.ranks, 0));
    for (const Pipeline& p : placement.pipelines) {
        const auto cells = saturating_mul(static_cast<std::uint64_t>(std::max(p.stages(), 0)),
                                          static_cast<std::uint64_t>(std::max(p.microbatches, 0)));
        ops = saturating_add(ops, saturating_mul(cells, 2));
    }
    return ops;
}

std::string format_count(std::uint64_t count) {
    if (count == kSaturated) return "more than 1.8 x 10^19";
    if (count < 10'000'000) return std::to_string(count);
    int exponent = 0;
    std::uint64_t scaled = count;
    while (scaled >= 10 && scaled % 10 == 0) scaled /= 10, ++exponent;
    if (scaled == 1) return "10^" + std::to_string(exponent);
    // Two significant digits, rounded down: an estimate, never larger than the truth.
    exponent = 0;
    scaled = count;
    while (scaled >= 100) scaled /= 10, ++exponent;
    ++exponent;  // scaled holds two digits: d.d x 10^(exponent)
    const std::string digits = std::to_string(scaled);
    std::string mantissa = digits.substr(0, 1);
    if (digits[1] != '0') mantissa += "." + digits.substr(1, 1);
    return mantissa + " x 10^" + std::to_string(exponent);
}

std::string format_bytes(std::uint64_t bytes) {
    static const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1000 && unit < 6) value /= 1000, ++unit;
    char text[64];
    std::snprintf(text, sizeof text, "about %.*f %s", value < 10 && unit > 0 ? 1 : 0, value, units[unit]);
    return text;
}

std::string size_problem(std::uint64_t ops, const std::string& what) {
    const std::uint64_t limit_ops = max_ops();
    if (ops <= limit_ops) return {};
    return what + " need at least " + format_count(ops) + " ops, " + format_bytes(saturating_mul(ops, kBytesPerOp)) +
           " of memory: over the limit of " + format_count(limit_ops) + " ops (--max-ops raises it)";
}

void require_size(std::uint64_t ops, const std::string& what) {
    if (std::string problem = size_problem(ops, what); !problem.empty()) throw SizeLimitError(problem);
}

std::string placement_size_text(const Placement& placement) {
    if (placement.pipelines.size() == 1)
        return std::to_string(placement.pipelines[0].stages()) + " stages x " +
               std::to_string(placement.pipelines[0].microbatches) + " micro-batches";
    std::uint64_t cells = 0;
    for (const Pipeline& p : placement.pipelines)
        cells = saturating_add(cells, saturating_mul(static_cast<std::uint64_t>(std::max(p.stages(), 0)),
                                                     static_cast<std::uint64_t>(std::max(p.microbatches, 0))));
    return std::to_string(placement.pipelines.size()) + " pipelines with " + format_count(cells) +
           " (stage, micro-batch) pairs in all";
}

void require_placement_size(const Placement& placement) {
    require_size(placement_ops(placement), placement_size_text(placement));
}

}  // namespace pp
