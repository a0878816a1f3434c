#pragma once
// --time-limit and --memory-budget of `prove`, `refute` and `formula`, and their answer to SIGINT/SIGTERM. The
// budget is checked cooperatively by the prover (proofs/budget.hpp) and every Z3 check obeys it
// (limits/z3_check.hpp); the command then answers UNKNOWN with what it had. A signal spends the budget at once.
// Some single steps do not look at the clock (Z3 building a model): the watchdog thread is the backstop that
// keeps the limit a limit — 1 s + 10 % after the deadline, or 1.5 s after a signal, it prints an UNKNOWN answer
// itself and ends the process with exit 3.
#include <optional>
#include <string>

namespace pp::cli {

// Sets the prover's budget (limits checked as given: positive) and, with a time limit, arms the watchdog.
// The watchdog's answer is `status` ("unknown" for prove, "undecided" for refute) as a JSON object when `json`,
// else `text_verdict` ("verdict: UNKNOWN", "UNDECIDED") followed by the reason — each command's own form.
void start_budget(std::optional<double> seconds, std::optional<double> memory_mb, bool json, std::string status,
                  std::string text_verdict);

// The same backstop for `search`, whose phases keep their shares of the time and are cut at the hard deadline
// (solver/search.hpp, hard_stop_grace): the watchdog answers only if the search has not `after_deadline`
// seconds after its limit, or `after_signal` seconds after a stop request -- so a signal never leaves an
// empty answer, whatever step the search is in.
void start_search_watchdog(double time_limit, double after_deadline, double after_signal, bool json);

// One answer per process: the command calls this before it writes its answer, the watchdog before it writes
// its own. Only the first caller gets true; a command that gets false must not write (the watchdog's answer is
// on its way and ends the process).
bool claim_answer();

}  // namespace pp::cli
