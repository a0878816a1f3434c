#include "limits/deadline.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace pp::limits {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler may only touch lock-free atomics");

// The run's deadline as clock ticks (kNone: no deadline), so that hot loops read it without a lock.
constexpr Clock::rep kNone = std::numeric_limits<Clock::rep>::max();
std::atomic<Clock::rep> g_run{kNone};
std::atomic<double> g_run_seconds{0};  // as given to set_run_time_limit (0: not named)
// This thread's phase deadline (ScopedDeadline).
thread_local Deadline t_scope;

}  // namespace

Deadline Deadline::after(double seconds) {
    if (!(seconds <= 1e9)) return Deadline();  // NaN or beyond 32 years: no limit
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(std::max(0.0, seconds))));
}

double Deadline::seconds_left() const {
    if (at_ == kNever) return std::numeric_limits<double>::infinity();
    return std::chrono::duration<double>(at_ - Clock::now()).count();
}

void set_run_deadline(Deadline deadline) {
    g_run.store(deadline.time() ? deadline.time()->time_since_epoch().count() : kNone);
}

void set_run_time_limit(double seconds) {
    g_run_seconds.store(seconds);
    set_run_deadline(Deadline::after(seconds));
}

Deadline run_deadline() {
    const Clock::rep ticks = g_run.load(std::memory_order_relaxed);
    if (ticks == kNone) return Deadline();
    return Deadline(Clock::time_point(Clock::duration(ticks)));
}

Deadline effective(const Deadline& local) { return run_deadline().earlier(t_scope).earlier(local); }

std::atomic<bool>& stop_flag() { return g_stop; }

bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }

bool expired(const Deadline& local) { return stop_requested() || effective(local).passed(); }

std::string expiry_reason() {
    if (stop_requested()) return "stopped by a signal";
    const double seconds = g_run_seconds.load();
    if (seconds > 0 && run_deadline().passed()) {
        char text[64];
        std::snprintf(text, sizeof text, "the time limit of %g s ran out", seconds);
        return text;
    }
    return "time limit reached";
}

ScopedDeadline::ScopedDeadline(const Deadline& deadline) : previous_(t_scope) { t_scope = t_scope.earlier(deadline); }

ScopedDeadline::~ScopedDeadline() { t_scope = previous_; }

void check_point(const char* doing) {
    if (expired()) throw Expired{expiry_reason() + " while " + doing};
}

}  // namespace pp::limits
