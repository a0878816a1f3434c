#pragma once
// The plan as a person reads it: the inputs, a table of the top options, the recommendation with its
// reasons in words, what DualPipe's second parameter copy costs here, and which numbers are estimates.
#include "planner/planner.hpp"

#include <string>

namespace pp::plan {

std::string plan_text(const PlanResult& result);

// The recommendation and its reasons alone (part of plan_text).
std::string explanation(const PlanResult& result);

}  // namespace pp::plan
