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
// Storage is flat: the ray values of form k are values[k * rays .. (k+1) * rays) (one allocation for all forms).
struct MaxPoly {
    std::vector<LinForm> forms;
    std::vector<std::int64_t> values;  // ray values, row k parallel to forms[k]
    std::uint32_t rays = 0;

    static MaxPoly of(const LinForm& form, const CostRegion& region);
    bool empty() const { return forms.empty(); }
    const std::int64_t* row(size_t k) const { return values.data() + k * rays; }
    // Appends a form with its ray values (rays() of them).
    void push(const LinForm& form, const std::int64_t* row_values);
    void erase(size_t k);
    void shift(const LinForm& add, const CostRegion& region);  // + add (a linear form)
    void merge(const MaxPoly& other);                           // max, not yet pruned
    void prune();  // drops forms dominated on the region (by one form, or by a convex combination: exact)
    // Drops every form that is nowhere the strict maximum on the region (certified convex dominance;
    // proofs/maxpoly_convex.cpp). merge_pruned and prune end with it, so their results are minimal.
    void drop_convex_dominated();
    // max of two pruned polynomials, pruned: the same result as merge + prune, faster when both share forms.
    void merge_pruned(const MaxPoly& other);
    Rational eval(const CostPoint& point) const;
    // Identical after pruning (a sufficient test of equality as functions on the region).
    bool same_forms(const MaxPoly& other) const;
    std::string str(bool deepseek_basis = false) const;
    // The same after dropping what the region's equalities make irrelevant (normalize_form), deduplicated.
    std::string str(const CostRegion& region, bool deepseek_basis = true) const;
    std::string str(Basis basis) const;
    std::string str(const CostRegion& region, Basis basis) const;
};

// comm dropped when the region says comm = 0; B written as I + W when it says B = I + W.
LinForm normalize_form(LinForm form, const CostRegion& region);

}  // namespace pp
