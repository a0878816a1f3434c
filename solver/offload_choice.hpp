#pragma once
// Which stashes to offload: for a schedule's fixed compute order and an offload policy (verifier/offload.hpp),
// the least makespan under a device memory cap over every choice of which eligible stashes move; a stash not
// chosen stays resident.
//
// Encoding (Z3, integer ticks of the offload network): a Boolean per eligible move, a start time per node.
// - Dataflow exactly, not as a relaxation: each start is the latest of its active predecessor arcs (an arc tagged
//   with a move is active when the move is made), or 0. A move not made takes no time on its stream.
// - The device memory at every allocation event (an F's start, a made reload's start): the rank's events before
//   it in the timing's sweep (earlier, or at the same time and earlier in its tie order) add up to at most the
//   cap; the peak of a sweep is reached at an allocation. --host-memory bounds the host's events the same way.
// - Makespan <= T for a bisection between the plain makespan (a lower bound: a made move only adds constraints)
//   and the best choice found.
// Every choice a model gives is re-timed by time_with_offload, and the figures printed are that timing's; an
// unsat answer proves that no choice meets T under the cap.
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "verifier/offload.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

enum class ChoiceStatus { Optimal, Feasible, Infeasible, Unknown };
const char* choice_status_name(ChoiceStatus status);  // "OPTIMAL", ...

struct OffloadChoice {
    ChoiceStatus status = ChoiceStatus::Unknown;
    std::vector<Op> moved;                // the forwards whose stashes move in the best choice found
    std::optional<OffloadTiming> timing;  // time_with_offload of that choice
    Rational makespan{0};                 // its makespan (when there is a choice)
    Rational lower_bound{0};              // proved: no choice is faster under the cap
    int eligible = 0;                     // stashes the policy lets move
    int queries = 0;                      // Z3 checks run
    std::string reason;                   // why it stopped short of OPTIMAL, or how OPTIMAL was shown
};

// `seconds`: the time Z3 may take in all (the answer is then FEASIBLE with its gap, or UNKNOWN).
OffloadChoice choose_offloads(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                              const OffloadPolicy& policy, const Rational& device_cap, double seconds);

}  // namespace pp
