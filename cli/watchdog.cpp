// The backstop of --time-limit (cli/watchdog.hpp).
#include "cli/watchdog.hpp"

#include "cli/common.hpp"
#include "formats/json_text.hpp"
#include "proofs/budget.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace pp::cli {

void start_budget(std::optional<double> seconds, std::optional<double> memory_mb, bool json, std::string status,
                  std::string text_verdict) {
    // Beyond 10^9 s (32 years) or 2^40 MB a limit is no limit (and a chrono or size_t conversion would overflow).
    if (seconds && *seconds > 1e9) seconds.reset();
    std::optional<std::size_t> mb;
    if (memory_mb && *memory_mb < 0x1p40) mb = static_cast<std::size_t>(*memory_mb);
    budget::set(seconds, mb);
    if (!seconds) return;
    // The prover checks the clock per instance, obligation and Z3 call; allow it that much to answer itself.
    const double grace = 1.0 + 0.1 * *seconds;
    std::thread([limit = *seconds, grace, json, status = std::move(status), text_verdict = std::move(text_verdict)] {
        std::this_thread::sleep_for(std::chrono::duration<double>(limit + grace));
        const std::string missing = fmt::format(
            "the time limit of {} s ran out inside a step that does not check the clock (stopped {:.1f} s after "
            "it); nothing is claimed",
            limit, grace);
        const std::string out = json ? json_text(nlohmann::json{{"status", status}, {"missing", missing}}, 2) + "\n"
                                     : text_verdict + "\nmissing: " + missing + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        std::_Exit(kUndecided);
    }).detach();
}

}  // namespace pp::cli
