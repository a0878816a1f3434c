#include "cli/stop_signal.hpp"

#include "limits/deadline.hpp"

namespace pp::cli {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler may only touch lock-free atomics");

// The process's stop request (limits/deadline.hpp): every phase and every Z3 check reads it.
extern "C" void on_stop_signal(int signal_number) {
    g_signal.store(signal_number);
    limits::stop_flag().store(true);
}

}  // namespace

StopOnSignal::StopOnSignal() {
    limits::stop_flag().store(false);
    g_signal.store(0);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
}

StopOnSignal::~StopOnSignal() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<bool>* StopOnSignal::flag() const { return &limits::stop_flag(); }

int StopOnSignal::signal_number() const { return g_signal.load(); }

}  // namespace pp::cli
