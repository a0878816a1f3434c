#pragma once
// SIGINT / SIGTERM as a stop request for a long search (issue 13): the first signal sets a flag that the
// search polls (solver/search_monitor.hpp) and the command finishes normally with the best schedule so
// far; the handler resets itself (SA_RESETHAND), so a second Ctrl-C ends the process the usual way.
// The handler only stores to a lock-free atomic, which is async-signal-safe.
#include <atomic>
#include <csignal>

namespace pp::cli {

class StopOnSignal {
public:
    StopOnSignal();   // installs the handlers
    ~StopOnSignal();  // restores the previous ones
    StopOnSignal(const StopOnSignal&) = delete;
    StopOnSignal& operator=(const StopOnSignal&) = delete;

    const std::atomic<bool>* flag() const;
    bool requested() const { return flag()->load(); }
    int signal_number() const;  // the signal received, 0 if none

private:
    struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace pp::cli
