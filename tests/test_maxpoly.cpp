// Max-plus polynomials (proofs/maxpoly.*): pruning keeps the function and, after the convex step, keeps only
// forms that are needed. "Needed" is checked independently of the pruning code: by Z3 (needed_forms, linear
// real arithmetic) and by evaluation at random points of the region against the unpruned max.
#include "proofs/formula.hpp"
#include "proofs/maxpoly.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace pp;

namespace {

LinForm form(std::int64_t f, std::int64_t i, std::int64_t w, std::int64_t fb) {
    return f * LinForm::var(CostVar::F) + i * LinForm::var(CostVar::I) + w * LinForm::var(CostVar::W) +
           fb * LinForm::var(CostVar::FB);
}

// A point of the default region: F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0.
CostPoint random_point(std::mt19937_64& rng) {
    auto pick = [&](int hi, int den) {
        return Rational(1 + static_cast<std::int64_t>(rng() % hi), 1 + static_cast<std::int64_t>(rng() % den));
    };
    const Rational F = pick(12, 4), I = pick(12, 4), W = pick(12, 4);
    const Rational FB = (F + I + W) * Rational(1 + static_cast<std::int64_t>(rng() % 8), 8);
    return {F, I, W, I + W, FB, Rational(0)};
}

CostRegion default_region() {
    CostRegion region = CostRegion::standard(false);
    region.finish();
    return region;
}

}  // namespace

TEST_CASE("maxpoly: a form below a convex combination of two others is dropped, a pairwise antichain is not enough",
          "[maxpoly]") {
    const CostRegion region = default_region();
    // F + I <= max(2F, 2I) everywhere (it is their average), yet neither 2F nor 2I is >= F + I on every ray.
    MaxPoly p = MaxPoly::of(form(2, 0, 0, 0), region);
    p.merge_pruned(MaxPoly::of(form(1, 1, 0, 0), region));
    p.merge_pruned(MaxPoly::of(form(0, 2, 0, 0), region));
    CHECK(p.forms.size() == 2);
    for (const LinForm& f : p.forms) CHECK(!(f == form(1, 1, 0, 0)));
    // F + I + W is above both somewhere (F = I = W), so it stays.
    p.merge_pruned(MaxPoly::of(form(1, 1, 1, 0), region));
    CHECK(p.forms.size() == 3);
}

TEST_CASE("maxpoly: merge_pruned of random polynomials is the max, and every kept form is needed (Z3)", "[maxpoly]") {
    const CostRegion region = default_region();
    std::mt19937_64 rng(77);
    auto coef = [&] { return static_cast<std::int64_t>(rng() % 13) - 4; };
    for (int round = 0; round < 12; ++round) {
        std::vector<LinForm> all;
        MaxPoly acc;
        for (int part = 0; part < 3; ++part) {
            MaxPoly q;
            for (int k = 0; k < 12; ++k) {
                const LinForm f = form(coef(), coef(), coef(), coef());
                all.push_back(f);
                q.merge_pruned(MaxPoly::of(f, region));
            }
            acc.merge_pruned(q);
        }
        INFO("round " << round << ": " << acc.forms.size() << " of " << all.size() << " forms kept");
        for (int k = 0; k < 200; ++k) {
            const CostPoint p = random_point(rng);
            Rational want = all[0].eval(p);
            for (const LinForm& f : all) want = std::max(want, f.eval(p));
            CHECK(acc.eval(p) == want);
        }
        CHECK(needed_forms(acc, region).forms.size() == acc.forms.size());
        // Adding one form to all commutes with pruning (the shift shortcuts of symbolic.cpp rely on it).
        const LinForm s = form(coef(), coef(), coef(), coef());
        MaxPoly shifted_then_merged;
        for (const LinForm& f : all) shifted_then_merged.merge_pruned(MaxPoly::of(f + s, region));
        MaxPoly merged_then_shifted = acc;
        merged_then_shifted.shift(s, region);
        CHECK(shifted_then_merged.forms == merged_then_shifted.forms);
    }
}
