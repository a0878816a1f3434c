// The backstop of --time-limit and of a stop signal (cli/watchdog.hpp).
#include "cli/watchdog.hpp"

#include "cli/common.hpp"
#include "cli/stop_signal.hpp"
#include "formats/json_text.hpp"
#include "limits/deadline.hpp"
#include "proofs/budget.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

namespace pp::cli {
namespace {

std::atomic<bool> g_answer_claimed{false};

// Writes the watchdog's answer and ends the process, unless the command is writing its own (then returns).
void answer_and_exit(const std::string& missing, bool json, const std::string& status, const std::string& text_verdict) {
    if (!claim_answer()) return;
    const std::string out = json ? json_text(nlohmann::json{{"status", status}, {"missing", missing}}, 2) + "\n"
                                 : text_verdict + "\nmissing: " + missing + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    std::_Exit(kUndecided);
}

}  // namespace

bool claim_answer() { return !g_answer_claimed.exchange(true); }

namespace {

// Polls every 50 ms: `after_signal` seconds after a stop request, or `after_deadline` seconds after `seconds`
// from now, the watchdog answers UNKNOWN itself (unless the command already writes its answer).
void arm_watchdog(std::optional<double> seconds, double after_deadline, double after_signal, bool json, std::string status,
                  std::string text_verdict) {
    std::thread([=] {
        using Clock = std::chrono::steady_clock;
        const auto t0 = Clock::now();
        std::optional<Clock::time_point> stop_seen;
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            const auto now = Clock::now();
            if (limits::stop_requested() && !stop_seen) stop_seen = now;
            if (stop_seen && now - *stop_seen > std::chrono::duration<double>(after_signal)) {
                answer_and_exit(fmt::format("stopped by a signal inside a step that does not check for it (ended {} s "
                                            "after it); nothing is claimed",
                                            after_signal),
                                json, status, text_verdict);
                return;
            }
            if (seconds && now - t0 > std::chrono::duration<double>(*seconds + after_deadline)) {
                answer_and_exit(fmt::format("the time limit of {} s ran out inside a step that does not check the "
                                            "clock (stopped {:.1f} s after it); nothing is claimed",
                                            *seconds, after_deadline),
                                json, status, text_verdict);
                return;
            }
        }
    }).detach();
}

}  // namespace

void start_search_watchdog(double time_limit, double after_deadline, double after_signal, bool json) {
    arm_watchdog(time_limit > 1e9 ? std::nullopt : std::optional<double>(time_limit), after_deadline, after_signal, json,
                 "unknown", "status: UNKNOWN");
}

void start_budget(std::optional<double> seconds, std::optional<double> memory_mb, bool json, std::string status,
                  std::string text_verdict) {
    // Beyond 10^9 s (32 years) or 2^40 MB a limit is no limit (and a chrono or size_t conversion would overflow).
    if (seconds && *seconds > 1e9) seconds.reset();
    std::optional<std::size_t> mb;
    if (memory_mb && *memory_mb < 0x1p40) mb = static_cast<std::size_t>(*memory_mb);
    budget::set(seconds, mb);
    // SIGINT/SIGTERM spend the budget: the command answers UNKNOWN with what it had (a second signal ends it
    // the usual way). Installed for the rest of the process.
    static const StopOnSignal stop;
    // The prover checks the clock per instance, obligation and Z3 call; allow it that much to answer itself.
    const std::optional<double> grace = seconds ? std::optional<double>(1.0 + 0.1 * *seconds) : std::nullopt;
    static constexpr double kStopGrace = 1.5;  // after a signal
    arm_watchdog(seconds, grace.value_or(0), kStopGrace, json, std::move(status), std::move(text_verdict));
}

}  // namespace pp::cli
