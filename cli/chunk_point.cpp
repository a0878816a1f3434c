#include "cli/chunk_point.hpp"

#include "cli/common.hpp"
#include "proofs/claim.hpp"
#include "proofs/prove.hpp"

#include <fmt/format.h>

#include <vector>

namespace pp::cli {

std::string ray_constraints(const Costs& c) {
    const std::vector<std::pair<std::string, Rational>> point = {
        {"F", c.base.F}, {"I", c.base.I}, {"W", c.base.W}, {"B", c.base.full_backward()},
        {"FB", c.base.FB.value_or(c.base.F + c.base.full_backward())}, {"comm", c.comm}};
    const auto& [ref, r] = point[0];
    std::vector<std::string> parts;
    for (size_t k = 1; k < point.size(); ++k) {
        const auto& [name, x] = point[k];
        if (x == Rational(0) || r == Rational(0)) {
            parts.push_back(fmt::format("{} == 0", x == Rational(0) ? name : ref));
            continue;
        }
        // name / x == ref / r  <=>  name * (r.num * x.den) == ref * (x.num * r.den)
        parts.push_back(fmt::format("{}*{} == {}*{}", name, (r.numerator() * x.denominator()).to_string(), ref,
                                    (x.numerator() * r.denominator()).to_string()));
    }
    return fmt::format("{}", fmt::join(parts, " && "));
}

CostRegion derived_point_region(const Costs& c) {
    CostRegion region;
    for (const std::string& text : {std::string("F > 0"), ray_constraints(c)})
        for (auto& constraint : parse_constraints(text)) region.add(std::move(constraint));
    return region;
}

void require_one_pair_cost(const std::string& family, int p_lo, int p_hi, const Costs& c, const std::string& command) {
    const Rational fb = c.base.FB.value_or(c.base.F + c.base.full_backward());
    if (!c.base.FI || *c.base.FI == fb) return;
    for (int p = p_lo; p <= p_hi; ++p) {
        const auto spec = family_spec(family, p);
        if (!spec) continue;
        const Schedule schedule = spec->generate(spec->m0);
        for (const auto& slots : schedule.ranks)
            for (const Slot& slot : slots)
                if (slot.is_pair() && slot.ops[1].kind == OpKind::I)
                    throw UsageError(fmt::format(
                        "--chunk-costs: {} at P={} runs F&I pairs, whose derived cost FI={} differs from FB={}; {} times every "
                        "pair at FB. Time it exactly with simulate, compare or prove --chunk-costs, or use --chunk-costs symbolic",
                        family, p, format_rational(*c.base.FI), format_rational(fb), command));
    }
}

}  // namespace pp::cli
