#pragma once
// The time and memory budget of `prove`, `refute` and `formula` (--time-limit, --memory-budget): process-wide,
// set once by the command line, checked in a few places only — where the prover generates an instance or records
// an obligation, where refute starts an instance or a cost point, and after every Z3 call that came back
// undecided. The time limit is the run's deadline (limits/deadline.hpp), which every Z3 check obeys as well; a
// stop request (SIGINT/SIGTERM) spends the budget at once. When the budget is spent, check() throws Exhausted;
// the prover and refute catch it and answer UNKNOWN / UNDECIDED with what they had established so far.
//
// Exhausted is limits::Expired, which the polls in long loops below (simulation, symbolic timing) throw too;
// it is deliberately not a std::exception: the prover's `catch (const std::exception&)` guards (an instance
// that does not generate is skipped, not fatal) must not swallow it.
#include "limits/deadline.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace pp::budget {

using Exhausted = limits::Expired;  // what: "the time limit of 2 s ran out while ..."

// nullopt: no limit. The clock starts now. Not thread-safe: call before the work starts.
void set(std::optional<double> seconds, std::optional<std::size_t> memory_mb);
// Throws Exhausted when the time is up, a stop was requested, or the resident set is over the memory budget.
// `doing` completes "ran out while ...".
void check(const std::string& doing);
// True once the time is up or a stop was requested (no throw).
bool time_is_up();
// Resident set size of this process in bytes (0 when unknown).
std::size_t resident_bytes();

}  // namespace pp::budget
