#include "solver/search_monitor.hpp"

#include <cstdio>

namespace pp {

std::string format_progress(const SearchProgress& p) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%.1fs] ", p.seconds);
    std::string line = stamp;
    if (p.best >= 0) {
        line += "best " + p.scale.format(p.best);
        if (!p.best_origin.empty()) line += " (" + p.best_origin + ")";
    } else {
        line += "best -";
    }
    line += "  bound " + p.scale.format(p.bound);
    if (p.best >= 0 && p.bound > 0) {
        char gap[32];
        std::snprintf(gap, sizeof gap, "  gap %.4f%%",
                      100.0 * static_cast<double>(p.best - p.bound) / static_cast<double>(p.bound));
        line += gap;
    }
    line += "  | " + p.phase;
    if (!p.event.empty()) line += ": " + p.event;
    return line;
}

SearchMonitor::SearchMonitor(Callback callback, double interval_seconds, const std::atomic<bool>* stop,
                             std::chrono::steady_clock::time_point t0)
    : callback_(std::move(callback)), interval_(interval_seconds), stop_(stop), t0_(t0), last_report_(t0) {
    if (callback_ || stop_) watcher_ = std::thread([this] { watch(); });
}

SearchMonitor::~SearchMonitor() {
    {
        std::lock_guard lock(mutex_);
        finished_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
}

void SearchMonitor::update(const SearchProgress& state, const std::string& event) {
    std::lock_guard lock(mutex_);
    state_ = state;
    if (!event.empty()) emit(state_, event);
}

void SearchMonitor::emit(SearchProgress p, const std::string& event) {
    last_report_ = std::chrono::steady_clock::now();
    if (!callback_) return;
    p.seconds = std::chrono::duration<double>(last_report_ - t0_).count();
    p.event = event;
    callback_(p);
}

void SearchMonitor::acknowledge_stop() {
    std::lock_guard lock(mutex_);
    acknowledge_stop_locked();
}

void SearchMonitor::acknowledge_stop_locked() {
    if (stop_seen_) return;
    stop_seen_ = true;
    emit(state_, "stop requested: finishing with the best schedule so far");
}

void SearchMonitor::watch() {
    std::unique_lock lock(mutex_);
    while (!finished_) {
        wake_.wait_for(lock, std::chrono::milliseconds(20));
        if (finished_) break;
        if (stop_requested()) {
            acknowledge_stop_locked();
            continue;
        }
        if (callback_ && interval_.count() > 0 && std::chrono::steady_clock::now() - last_report_ >= interval_)
            emit(state_, "running");
    }
}

}  // namespace pp
