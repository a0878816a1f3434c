// The budget of prove and refute (proofs/budget.hpp): a deadline on the steady clock and a bound on the
// resident set, read from /proc/self/statm (a few microseconds; checked per instance, not in inner loops).
#include "proofs/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace pp::budget {
namespace {

using Clock = std::chrono::steady_clock;
std::optional<Clock::time_point> deadline;
double limit_seconds = 0;
std::optional<std::size_t> memory_limit_mb;

}  // namespace

void set(std::optional<double> seconds, std::optional<std::size_t> memory_mb) {
    deadline.reset();
    if (seconds) {
        limit_seconds = *seconds;
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*seconds));
    }
    memory_limit_mb = memory_mb;
}

std::size_t resident_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    const int n = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    if (n != 2) return 0;
    return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

bool time_is_up() { return deadline && Clock::now() >= *deadline; }

void check(const std::string& doing) {
    if (time_is_up()) throw Exhausted{fmt::format("the time limit of {} s ran out while {}", limit_seconds, doing)};
    if (memory_limit_mb) {
        const std::size_t rss = resident_bytes();
        if (rss > *memory_limit_mb * (std::size_t{1} << 20))
            throw Exhausted{fmt::format("the memory budget of {} MB ran out ({} MB resident) while {}", *memory_limit_mb,
                                       rss >> 20, doing)};
    }
}

unsigned z3_timeout_ms(unsigned wanted) {
    if (!deadline) return wanted;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    return static_cast<unsigned>(std::clamp<long long>(left, 1, wanted));
}

}  // namespace pp::budget
