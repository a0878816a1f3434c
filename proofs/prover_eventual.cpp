// Eventually-constant bubbles: once every rank's idle time is proved periodic in the block count t (slope 0 on
// every rank, from t_periodic on, period `cycle`), the bubble is eventually constant iff its values on one period
// agree; the least M0 is found by walking the base cases down from t_periodic (proofs/method.md §4a). A
// counterexample is only ever a pair of instances at M >= the user's --from-M (or an alternation that recurs for
// every M, which refutes every M0).
#include "proofs/prover.hpp"

#include <fmt/format.h>

namespace pp {

int Prover::t_from() const {
    if (!options.from_m || *options.from_m <= family.m0) return 0;
    return (*options.from_m - family.m0 + family.step - 1) / family.step;
}

bool Prover::settle_eventual(int t_periodic, int cycle, const BubbleCompare& compare, const BubbleText& text,
                             const BubbleDiffer& differ, std::string& method) {
    const int first = t_from();
    // 1. One period: the values there recur for every later t.
    for (int k = 1; k < cycle; ++k) {
        const BubbleComparison cmp = compare(t_periodic + k, t_periodic);
        if (cmp.kind == BubbleComparison::Unknown) {
            unknown(fmt::format("could not compare bubble({}) with bubble({})", M(t_periodic + k), M(t_periodic)));
            return false;
        }
        if (cmp.kind == BubbleComparison::Differ) {
            // The same two residues recur beyond any M0: take the first pair at or after --from-M.
            int a = t_periodic;
            while (a < first) a += cycle;
            differ(a, a + k, cmp.witness,
                   fmt::format("the bubble alternates with period {} blocks for every M >= {}, so it is constant from "
                               "no M0 on",
                               cycle, M(t_periodic)));
            return false;
        }
    }
    // 2. The least t0 with bubble(t) = bubble(t_periodic) for every t >= t0.
    int t0 = t_periodic;
    std::optional<CostPoint> witness;
    while (t0 > 0) {
        const BubbleComparison cmp = compare(t0 - 1, t_periodic);
        if (cmp.kind == BubbleComparison::Unknown) {
            unknown(fmt::format("could not compare bubble({}) with bubble({})", M(t0 - 1), M(t_periodic)));
            return false;
        }
        if (cmp.kind == BubbleComparison::Differ) {
            witness = cmp.witness;
            break;
        }
        --t0;
    }
    if (options.from_m && first < t0) {
        differ(t0 - 1, t0, witness,
               fmt::format("the bubble is constant only from M = {} on; --from-M {} is below it", M(t0), *options.from_m));
        return false;
    }
    res.constant_from_m = M(t0);
    res.early_bubbles.clear();
    for (int t = 0; t < t0; ++t) res.early_bubbles.emplace_back(M(t), text(t));
    method = t0 == 0 ? fmt::format("equal for every base case M = {}..{}", M(0), M(t_periodic + cycle - 1))
                     : fmt::format("equal for M = {}..{}; bubble({}) differs, so M0 = {} is the least", M(t0),
                                   M(t_periodic + cycle - 1), M(t0 - 1), M(t0));
    return true;
}

std::string Prover::early_text() const {
    if (res.early_bubbles.empty()) return "";
    std::string s = "; below M0: ";
    for (size_t k = 0; k < res.early_bubbles.size(); ++k)
        s += fmt::format("{}bubble({}) = {}", k ? ", " : "", res.early_bubbles[k].first, res.early_bubbles[k].second);
    return s;
}

}  // namespace pp
