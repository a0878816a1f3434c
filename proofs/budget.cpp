// The budget of prove and refute (proofs/budget.hpp): a deadline on the steady clock and a bound on the
// resident set, read from /proc/self/statm (a few microseconds; checked per instance, not in inner loops).
#include "proofs/budget.hpp"

#include "limits/deadline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace pp::budget {
namespace {

std::optional<std::size_t> memory_limit_mb;

}  // namespace

void set(std::optional<double> seconds, std::optional<std::size_t> memory_mb) {
    if (seconds) limits::set_run_time_limit(*seconds);
    else limits::set_run_deadline(limits::Deadline());
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

bool time_is_up() { return limits::expired(); }

void check(const std::string& doing) {
    if (time_is_up()) throw Exhausted{limits::expiry_reason() + " while " + doing};
    if (memory_limit_mb) {
        const std::size_t rss = resident_bytes();
        if (rss > *memory_limit_mb * (std::size_t{1} << 20))
            throw Exhausted{fmt::format("the memory budget of {} MB ran out ({} MB resident) while {}", *memory_limit_mb,
                                       rss >> 20, doing)};
    }
}

}  // namespace pp::budget
