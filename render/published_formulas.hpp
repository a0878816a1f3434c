#pragma once
// The bubble formulas the schedule families publish, as their generator comments (schedules/*.cpp) and
// DualPipe's README table state them, evaluated exactly for given
// P, M, V and costs so that a report can put "formula" next to "measured".
//
// Each formula says what it measures: most describe the largest idle time of a rank (makespan - busy);
// the Zero Bubble ones describe span - M(F+I+W) (the ZB paper's definition: largest per-rank span minus
// one rank's unoverlapped compute). A formula evaluates only inside the conditions its source states
// (uniform costs, no P2P latency unless the formula has c, divisibility); otherwise `value` is empty and
// `why_not` says which condition fails.
#include "model/costs.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace pp {

// Where DualPipe's README formula (PP/2-1)(F&B+B-3W) equals the bubble, as proved in
// proofs/catalogue/dualpipe-readme-formula.md (a test compares the two texts).
inline constexpr const char* kDualPipeReadmeRegion = "I = F, W ≤ F, FB ≥ B";

enum class BubbleMeasure { LargestIdle, ZbSpanMinusWork };

struct PublishedFormula {
    std::string text;        // e.g. "(P-1)(F+B)"
    std::string source;      // where it is stated
    std::string condition;   // when the source says it holds
    BubbleMeasure measure = BubbleMeasure::LargestIdle;
    std::optional<Rational> value;
    std::string why_not;     // set when value is empty
};

// nullopt when the family states no formula (e.g. chimera) or is unknown.
std::optional<PublishedFormula> published_bubble_formula(std::string_view family, int ranks, int microbatches,
                                                         std::optional<int> stages_per_rank, const Costs& costs);

const char* measure_name(BubbleMeasure measure);  // "largest idle" | "span - M(F+I+W)"

}  // namespace pp
