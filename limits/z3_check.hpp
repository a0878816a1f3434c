#pragma once
// The only way this project runs a Z3 check: under the run's deadline and stop request (limits/deadline.hpp)
// and an optional limit of the call's own, enforced by one watchdog thread that calls Z3_interrupt.
//
// Why not Z3's `timeout` parameter: every use of it goes through Z3's scoped_timer thread pool, which in
// Z3 4.8.10-4.8.12 (Debian ships 4.8.12) can deadlock -- measured here: a search blocked for 20 minutes
// inside Z3_solver_check with every thread asleep on a futex, deaf to SIGTERM. Without `timeout` Z3 starts
// no timer thread. tests/check_no_z3_timeout.cmake fails the build's tests if any source sets it.
//
// The watchdog re-fires the interrupt every 20 ms until the check returns: Z3 resets a pending interrupt when
// a check starts, so a single interrupt sent just before check() would be lost.
#include "limits/deadline.hpp"

#include <z3++.h>

#include <atomic>

namespace pp::limits {

struct CheckLimit {
    Deadline deadline;                     // this call's own (the run's applies as well)
    const std::atomic<bool>* stop = nullptr;  // a caller's own stop flag (the process's applies as well)

    static CheckLimit within_ms(unsigned milliseconds) { return {Deadline::after(milliseconds / 1000.0), nullptr}; }
    bool expired() const;  // any of the limits that apply has passed
};

// solver.check() (with `assumptions` when given) under `limit`; unknown at once when it already expired.
// Sets ctrl_c=false: Z3 would otherwise install its own SIGINT handler during the check and swallow Ctrl-C.
z3::check_result check(z3::solver& solver, const CheckLimit& limit = {});
z3::check_result check(z3::solver& solver, const z3::expr_vector& assumptions, const CheckLimit& limit = {});

// How many interrupts the watchdog has sent (for tests).
unsigned long interrupts_sent();

}  // namespace pp::limits
