#include "limits/deadline.hpp"

#include <cmath>
#include <limits>

namespace pp::limits {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler may only touch lock-free atomics");

// The run's deadline as clock ticks (kNone: no deadline), so that hot loops read it without a lock.
constexpr Clock::rep kNone = std::numeric_limits<Clock::rep>::max();
std::atomic<Clock::rep> g_run{kNone};

}  // namespace

Deadline Deadline::after(double seconds) {
    if (!(seconds <= 1e9)) return Deadline();  // NaN or beyond 32 years: no limit
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(std::max(0.0, seconds))));
}

Deadline Deadline::earlier(const Deadline& other) const {
    if (!at_) return other;
    if (!other.at_) return *this;
    return Deadline(std::min(*at_, *other.at_));
}

double Deadline::seconds_left() const {
    if (!at_) return std::numeric_limits<double>::infinity();
    return std::chrono::duration<double>(*at_ - Clock::now()).count();
}

void set_run_deadline(Deadline deadline) {
    g_run.store(deadline.time() ? deadline.time()->time_since_epoch().count() : kNone);
}

Deadline run_deadline() {
    const Clock::rep ticks = g_run.load(std::memory_order_relaxed);
    if (ticks == kNone) return Deadline();
    return Deadline(Clock::time_point(Clock::duration(ticks)));
}

Deadline effective(const Deadline& local) { return run_deadline().earlier(local); }

std::atomic<bool>& stop_flag() { return g_stop; }

bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }

bool expired(const Deadline& local) { return stop_requested() || effective(local).passed(); }

std::string expiry_reason() { return stop_requested() ? "stopped by a signal" : "time limit reached"; }

}  // namespace pp::limits
