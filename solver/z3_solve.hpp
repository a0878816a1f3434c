#pragma once
// The part of a Z3 query both encodings share (private to solver/z3_*.cpp): build under the deadline,
// check under what is left of it (limits/z3_check.hpp), keep the SMT-LIB2 text if asked, and translate
// the answer.
#include "limits/z3_check.hpp"
#include "solver/z3_encoding.hpp"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace pp {

// Encoder: build() (may throw BuildTimeout), variables(), constraints(), solver().
// on_sat(model, out) fills out.start and out.partner; tune(params) adds encoding-specific parameters.
template <class Encoder, class OnSat, class Tune>
void build_and_check(Encoder& enc, const Z3Query& query, Clock::time_point t0, Z3Outcome& out, const OnSat& on_sat,
                     const Tune& tune) {
    try {
        enc.build();
    } catch (const BuildTimeout&) {
        out.answer = Z3Answer::Unknown;
        out.reason = query.stopped() ? "stopped" : "time limit reached while building the encoding";
        out.build_seconds = seconds_since(t0);
        return;
    }
    out.variables = enc.variables();
    out.constraints = enc.constraints();
    out.build_seconds = seconds_since(t0);
    // Tearing a context down takes about as long as building it (1 s for a cool-down window of 100 000
    // variables): that time comes off the check's own limit, or the search ends that much past its limit.
    const double until_deadline_ms = std::chrono::duration<double, std::milli>(query.deadline - Clock::now()).count();
    const double left_ms = until_deadline_ms - std::min(out.build_seconds * 1000, until_deadline_ms / 4);
    if (left_ms < 1) {
        out.answer = Z3Answer::Unknown;
        out.reason = "time limit reached";
        return;
    }
    z3::params params(enc.solver().ctx());
    params.set("random_seed", query.seed);
    tune(params);
    enc.solver().set(params);
    if (query.keep_smt2) out.smt2 = enc.solver().to_smt2();
    const auto t1 = Clock::now();
    const limits::CheckLimit limit{limits::Deadline::after(left_ms / 1000), query.stop};
    const z3::check_result r = limits::check(enc.solver(), limit);
    out.solve_seconds = seconds_since(t1);
    if (r == z3::sat) {
        on_sat(enc.solver().get_model(), out);
        out.answer = Z3Answer::Sat;
    } else if (r == z3::unsat) {
        out.answer = Z3Answer::Unsat;
    } else {
        out.answer = Z3Answer::Unknown;
        out.reason = query.stopped()       ? "stopped"
                     : limit.expired() ? "time limit reached"
                                       : enc.solver().reason_unknown();
    }
}

}  // namespace pp
