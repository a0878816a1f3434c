#pragma once
// limits/ — what keeps a run inside its limits: one deadline and one stop request per process, and the only
// way this project asks Z3 anything (limits/z3_check.hpp). It depends on nothing else of ours; every layer
// that can run long (verifier, solver, proofs) reads it.
//
// The run's deadline comes from --time-limit; the stop request from SIGINT/SIGTERM (the signal handler
// stores to stop_flag(), a lock-free atomic: async-signal-safe). A phase with a limit of its own (one
// search, one instance of a sweep, one Z3 query) takes the earlier of its deadline and the run's; a
// ScopedDeadline makes that limit hold for everything the phase calls on its thread.
//
// Long loops call poll() (a counter; the clock is read every 1024th call) and unwind with Expired once a
// limit passed; the phase that set the limit catches it and answers with what it had established.
#include <algorithm>
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
    explicit Deadline(std::optional<Clock::time_point> at) : at_(at.value_or(kNever)) {}
    static Deadline after(double seconds);
    static Deadline at(Clock::time_point t) { return Deadline(t); }

    std::optional<Clock::time_point> time() const {
        return at_ == kNever ? std::nullopt : std::optional<Clock::time_point>(at_);
    }
    Deadline earlier(const Deadline& other) const { return Deadline(std::min(at_, other.at_)); }
    bool passed() const { return at_ != kNever && Clock::now() >= at_; }
    double seconds_left() const;  // +infinity when none, <= 0 once passed

private:
    static constexpr Clock::time_point kNever = Clock::time_point::max();
    Clock::time_point at_ = kNever;
};

// The run's deadline (none until set). Set once by the command line before the work starts.
void set_run_deadline(Deadline deadline);
// The same, `seconds` from now, and named in messages ("the time limit of 3 s ran out while ...").
void set_run_time_limit(double seconds);
Deadline run_deadline();
// The run's deadline and `local`, whichever comes first.
Deadline effective(const Deadline& local);

// The process's stop request: stop_flag() is what the signal handler sets.
std::atomic<bool>& stop_flag();
bool stop_requested();

// True once the stop was requested, the run's deadline passed, or `local` passed.
bool expired(const Deadline& local = {});
// Why expired() is true, for a reason or a log line: "stopped by a signal", "the time limit of 3 s ran out"
// (the run's, when set_run_time_limit named it) or "time limit reached".
std::string expiry_reason();

// Thrown by poll() and check_point(). Deliberately not a std::exception: guards that catch std::exception
// (an instance that does not generate is skipped, not fatal) must not swallow it.
struct Expired {
    std::string what;  // "time limit reached while timing a schedule"
};

// For the lifetime of the object, expired(), poll() and every Z3 check on this thread also obey `deadline`
// (nested scopes: the earliest wins; the previous limit comes back at the end of the scope).
class ScopedDeadline {
public:
    explicit ScopedDeadline(const Deadline& deadline);
    ~ScopedDeadline();
    ScopedDeadline(const ScopedDeadline&) = delete;
    ScopedDeadline& operator=(const ScopedDeadline&) = delete;

private:
    Deadline previous_;
};

// Throws Expired (naming `doing`) when a limit passed. Cheap: a clock read and two atomic loads.
void check_point(const char* doing);
// The same, for inner loops: only every 1024th call on a thread looks.
inline void poll(const char* doing) {
    thread_local unsigned calls = 0;
    if ((++calls & 1023u) == 0) check_point(doing);
}

}  // namespace pp::limits
