#pragma once
// The one status vocabulary of every --json document (issue 31): a top-level "status", lower case, one of
//   valid, invalid            verify, simulate, show: the verdict of `verify` (findings under "violations")
//   optimal, feasible,
//   infeasible                search and sweep's search rows; plan when no option fits in GPU memory
//   proved, refuted, holds    prove, formula, refute ("holds": no counterexample among the instances checked)
//   unknown                   an answer left open: a time or memory limit, a signal, a solver's unknown
//   equivalent, different     equiv
//   ok                        documents that are not a verdict: list, compare, plan, chunk, sweep's compare rows
//   error                     the error document (cli/errors.hpp), findings under "errors"
// Text output keeps its own words (OPTIMAL, UNDECIDED, ...); JSON says the same thing in these.
#include "solver/search.hpp"

#include <string>

namespace pp::cli {

inline constexpr const char* kStatusValid = "valid";
inline constexpr const char* kStatusInvalid = "invalid";
inline constexpr const char* kStatusProved = "proved";
inline constexpr const char* kStatusRefuted = "refuted";
inline constexpr const char* kStatusHolds = "holds";
inline constexpr const char* kStatusUnknown = "unknown";
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusEquivalent = "equivalent";
inline constexpr const char* kStatusDifferent = "different";
inline constexpr const char* kStatusError = "error";

inline const char* json_status(SearchStatus status) {
    switch (status) {
        case SearchStatus::Optimal: return "optimal";
        case SearchStatus::Feasible: return "feasible";
        case SearchStatus::Infeasible: return "infeasible";
        case SearchStatus::Unknown: return kStatusUnknown;
    }
    return kStatusUnknown;
}

}  // namespace pp::cli
