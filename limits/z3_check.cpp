#include "limits/z3_check.hpp"

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace pp::limits {
namespace {

constexpr auto kRefire = std::chrono::milliseconds(20);

// One watchdog for the process: the checks running now, each with its deadline and stop flags. It sleeps
// while no check runs, wakes at the earliest deadline or every kRefire to look at the stop flags, and
// interrupts (again and again) every check whose limit passed. Interrupting under the mutex makes
// unregistering wait for an interrupt in flight, so a context is never interrupted after its check left.
class Watchdog {
public:
    struct Entry {
        z3::context* ctx;
        Deadline deadline;  // the call's and the run's, whichever is earlier
        const std::atomic<bool>* stop;
    };
    using Handle = std::list<Entry>::iterator;

    static Watchdog& instance() {
        static Watchdog* const dog = new Watchdog();  // never destroyed: its thread runs until the process ends
        return *dog;
    }

    Handle enter(Entry entry) {
        std::lock_guard lock(mutex_);
        auto handle = entries_.insert(entries_.end(), entry);
        wake_.notify_one();
        return handle;
    }

    void leave(Handle handle) {
        std::lock_guard lock(mutex_);
        entries_.erase(handle);
    }

    unsigned long sent() const { return sent_.load(); }

private:
    Watchdog() { std::thread([this] { run(); }).detach(); }

    static bool due(const Entry& e) {
        return stop_requested() || (e.stop && e.stop->load()) || e.deadline.passed();
    }

    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (entries_.empty()) {
                wake_.wait(lock);
                continue;
            }
            auto next = Clock::now() + kRefire;
            for (Entry& e : entries_) {
                if (due(e)) {
                    e.ctx->interrupt();
                    sent_.fetch_add(1);
                } else if (e.deadline.time() && *e.deadline.time() < next) {
                    next = *e.deadline.time();
                }
            }
            wake_.wait_until(lock, next);
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::list<Entry> entries_;
    std::atomic<unsigned long> sent_{0};
};

// Registered with the watchdog for the duration of one check.
class Watched {
public:
    Watched(z3::context& ctx, const CheckLimit& limit)
        : handle_(Watchdog::instance().enter({&ctx, effective(limit.deadline), limit.stop})) {}
    ~Watched() { Watchdog::instance().leave(handle_); }
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;

private:
    Watchdog::Handle handle_;
};

void prepare(z3::solver& solver) {
    z3::params params(solver.ctx());
    params.set("ctrl_c", false);
    solver.set(params);
}

}  // namespace

bool CheckLimit::expired() const { return limits::expired(deadline) || (stop && stop->load()); }

z3::check_result check(z3::solver& solver, const CheckLimit& limit) {
    if (limit.expired()) return z3::unknown;
    prepare(solver);
    Watched watched(solver.ctx(), limit);
    return solver.check();
}

z3::check_result check(z3::solver& solver, const z3::expr_vector& assumptions, const CheckLimit& limit) {
    if (limit.expired()) return z3::unknown;
    prepare(solver);
    Watched watched(solver.ctx(), limit);
    z3::expr_vector copy = assumptions;
    return solver.check(copy);
}

unsigned long interrupts_sent() { return Watchdog::instance().sent(); }

}  // namespace pp::limits
