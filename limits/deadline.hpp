#pragma once
// limits/ — what keeps a run inside its limits: one deadline and one stop request per process, and the only
// way this project asks Z3 anything (limits/z3_check.hpp). It depends on nothing else of ours; every layer
// that can run long (verifier, solver, proofs) reads it.
//
// The run's deadline comes from --time-limit; the stop request from SIGINT/SIGTERM (the signal handler
// stores to stop_flag(), a lock-free atomic: async-signal-safe). A phase with a limit of its own (one Z3
// query, one instance of a sweep) takes the earlier of its deadline and the run's.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>

namespace pp::limits {

using Clock = std::chrono::steady_clock;

// A point in time or none ("no limit"). Seconds beyond 10^9 (32 years) are none: a limit that large is no
// limit, and the chrono conversion would overflow.
class Deadline {
public:
    Deadline() = default;
    explicit Deadline(std::optional<Clock::time_point> at) : at_(at) {}
    static Deadline after(double seconds);
    static Deadline at(Clock::time_point t) { return Deadline(t); }

    const std::optional<Clock::time_point>& time() const { return at_; }
    Deadline earlier(const Deadline& other) const;
    bool passed() const { return at_ && Clock::now() >= *at_; }
    double seconds_left() const;  // +infinity when none, <= 0 once passed

private:
    std::optional<Clock::time_point> at_;
};

// The run's deadline (none until set). Set once by the command line before the work starts.
void set_run_deadline(Deadline deadline);
Deadline run_deadline();
// The run's deadline and `local`, whichever comes first.
Deadline effective(const Deadline& local);

// The process's stop request: stop_flag() is what the signal handler sets.
std::atomic<bool>& stop_flag();
bool stop_requested();

// True once the stop was requested, the run's deadline passed, or `local` passed.
bool expired(const Deadline& local = {});
// Why expired() is true, for a reason or a log line: "stopped by a signal" or "time limit reached".
std::string expiry_reason();

}  // namespace pp::limits
