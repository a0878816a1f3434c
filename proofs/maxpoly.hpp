#pragma once
// Max-plus (tropical) polynomials over the cost space: a maximum of linear forms, pruned of the forms that are
// dominated on the region, so two polynomials with the same forms are the same function there. Every start
// and end time of a dataflow schedule with symbolic costs is one (proofs/symbolic.hpp).
#include "proofs/cost_space.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace pp {

// max over a set of linear forms; empty = minus infinity. Forms dominated on the region are dropped.
struct MaxPoly {
    std::vector<LinForm> forms;
    std::vector<std::vector<std::int64_t>> values;  // ray values of each form, parallel to forms

    static MaxPoly of(const LinForm& form, const CostRegion& region);
    bool empty() const { return forms.empty(); }
    void shift(const LinForm& add, const CostRegion& region);  // + add (a linear form)
    void merge(const MaxPoly& other);                           // max, not yet pruned
    void prune();
    // max of two pruned polynomials, pruned: the same result as merge + prune, faster when both share forms.
    void merge_pruned(const MaxPoly& other);
    Rational eval(const CostPoint& point) const;
    // Identical after pruning (a sufficient test of equality as functions on the region).
    bool same_forms(const MaxPoly& other) const;
    std::string str(bool deepseek_basis = false) const;
    // The same after dropping what the region's equalities make irrelevant (normalize_form), deduplicated.
    std::string str(const CostRegion& region, bool deepseek_basis = true) const;
};

// comm dropped when the region says comm = 0; B written as I + W when it says B = I + W.
LinForm normalize_form(LinForm form, const CostRegion& region);

}  // namespace pp
