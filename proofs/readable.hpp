#pragma once
// Readable symbolic results: next to the raw max of linear forms, the simplest form on each region of cost
// space (the pieces: the forms that are the largest somewhere, with irredundant conditions), and the published
// bubble formula of the family, with where it equals the proved bubble -- decided, not assumed: by Z3 on the
// region, on the region cut by the formula's stated condition (e.g. DualPipe's README formula on I = F, W <= F,
// FB >= B, proofs/catalogue/dualpipe-readme-formula.md). A formula that is not equal there is reported with a
// cost point where the two differ.
#include "proofs/formula.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

// Which letters a symbolic result is written in: Basis (proofs/cost_space.hpp) -- DeepSeek's, PyTorch's or the
// Zero Bubble paper's.

struct PublishedBubble {
    std::string name;       // "DeepSeek's (PP/2-1)(F&B+B-3W)"
    std::string source;     // where it is published
    LinForm value;          // the formula at this P (and V)
    std::string condition;  // where the source or the catalogue says it holds ("" = everywhere), claim syntax
};
// The family's published bubble formula (largest idle), if it states one.
std::optional<PublishedBubble> published_bubble(const std::string& family, int P, std::optional<int> V, bool symbolic_comm);

struct PublishedMatch {
    PublishedBubble formula;
    bool equal_everywhere = false;           // on the whole region
    bool condition_applies = false;          // the condition cuts a non-empty cone out of the region
    bool equal_on_condition = false;         // on region and condition
    std::optional<CostPoint> differs_at;     // where it is not equal (on the condition when it applies)
    Rational bubble_there{0}, formula_there{0};
    bool undecided = false;                  // Z3 unknown
};

struct ReadableBubble {
    PiecewiseLinear pieces;                   // the simplest form on each region
    std::optional<PublishedMatch> published;  // when the family has a published formula
};

// The pieces of `bubble` on `region` and its comparison with the family's published formula.
ReadableBubble readable_bubble(const std::string& family, int P, std::optional<int> V, const MaxPoly& bubble,
                               const CostRegion& region);
// The comparison alone (nullopt when the family publishes no formula).
std::optional<PublishedMatch> match_published(const std::string& family, int P, std::optional<int> V,
                                              const MaxPoly& bubble, const CostRegion& region);
// "bubble by region:" lines and the "published formula:" line, each line prefixed by `indent`.
std::string format_readable(const ReadableBubble& readable, Basis basis, const std::string& indent = "  ");
// One line: "published formula: ... = ... on ..." (empty when none).
std::string format_published(const PublishedMatch& match, Basis basis);

}  // namespace pp
