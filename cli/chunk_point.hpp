#pragma once
// Exact chunk costs in the prover's cost space (issue 11): `formula` and `refute` take the op costs derived
// from --chunk-costs as one point (a ray: times are homogeneous in the costs). The prover's space has the
// variables F, I, W, B, FB, comm, so two derived quantities need care:
//   B   a lone full backward hides part of its all-to-all under its own weight gradient, so the derived B
//       is often less than I + W. The default region's B = I + W would then exclude the point (refute: "no grid
//       point lies in the cost region"; formula: an empty region), so the region is the ray alone.
//   FI  an overlapped F&I pair has its own derived cost; the prover times every pair at FB. A family that
//       runs F&I pairs (DualPipe's cool-down) with FI != FB cannot be stated there: that is a usage error
//       naming both values and the commands that do time it exactly (simulate, prove, compare).
#include "model/costs.hpp"
#include "proofs/cost_space.hpp"

#include <string>

namespace pp::cli {

// The linear equalities "I*a == F*b && ..." that put every cost on the ray through `c` (F the reference).
std::string ray_constraints(const Costs& c);
// F > 0 and the ray through `c`.
CostRegion derived_point_region(const Costs& c);
// Throws UsageError when `family` at some P in [p_lo, p_hi] runs F&I pairs and c's FI differs from its FB.
void require_one_pair_cost(const std::string& family, int p_lo, int p_hi, const Costs& c, const std::string& command);

}  // namespace pp::cli
