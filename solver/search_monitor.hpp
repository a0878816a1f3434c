#pragma once
// Watching and stopping a running search (issue 13).
//
// Progress: the driver reports every new best schedule, every better bound and every phase change;
// a watcher thread repeats the current state every `progress_interval` seconds when nothing happened,
// so a long Z3 call still shows signs of life. Reports go to one callback, never two at once.
//
// Stopping: a stop flag (set by a signal handler: a lock-free atomic store is async-signal-safe) is
// polled by the heuristics between steps; a running Z3 check is interrupted by limits/z3_check.hpp's
// watchdog, which watches the same flag. The search then ends as if its time were up: the best verified
// schedule so far, the best proven bound, status OPTIMAL only when they meet. The watcher thread here
// only reports that the stop was seen.
#include "model/rational.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pp {

struct SearchProgress {
    double seconds = 0;      // since the search started
    std::string phase;       // "generators", "greedy", "local search", "z3 disjunctive <= 1610050", ...
    std::string event;       // "new best", "new bound", "phase", "running", "stopping", "done"
    TimeScale scale;         // of best and bound
    Ticks best = -1;         // objective of the best verified schedule (ticks); -1: none yet
    Ticks bound = 0;         // proven lower bound (ticks)
    std::string best_origin; // where the best schedule came from
};

// One line: "[12.3s] best 1616000 (local search)  bound 1604101  gap 0.742%  | z3 disjunctive <= 1610050: running".
std::string format_progress(const SearchProgress& p);

class SearchMonitor {
public:
    using Callback = std::function<void(const SearchProgress&)>;
    SearchMonitor(Callback callback, double interval_seconds, const std::atomic<bool>* stop,
                  std::chrono::steady_clock::time_point t0);
    ~SearchMonitor();
    SearchMonitor(const SearchMonitor&) = delete;
    SearchMonitor& operator=(const SearchMonitor&) = delete;

    bool stop_requested() const { return stop_ && stop_->load(); }
    const std::atomic<bool>* stop_flag() const { return stop_; }

    // The state every report shows; `event` is reported at once (unless empty).
    void update(const SearchProgress& state, const std::string& event);
    // Reports the stop request once (the watcher does so within 20 ms; a search that ends sooner calls this).
    void acknowledge_stop();

private:
    void watch();
    void emit(SearchProgress p, const std::string& event);  // with mutex_ held
    void acknowledge_stop_locked();

    Callback callback_;
    std::chrono::duration<double> interval_;
    const std::atomic<bool>* stop_;
    std::chrono::steady_clock::time_point t0_, last_report_;
    std::mutex mutex_;
    std::condition_variable wake_;
    SearchProgress state_;
    bool finished_ = false, stop_seen_ = false;
    std::thread watcher_;
};

}  // namespace pp
