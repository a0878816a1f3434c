#pragma once
// Exact two-stream timing of one slot (issue 11). The slot's components (model/chunk_dag.hpp) run on the
// rank's compute stream and network stream in the order a pattern gives (model/overlap_pattern.hpp):
//   a component starts when its stream has finished the component before it in the list AND every
//   input (data edge, or the pattern's extra edge) has finished;  start = max(stream free, inputs done).
// Time 0 is the slot's start: everything from outside the slot (the previous stage's output, the previous
// slot on the rank) is there by then, as the schedule-level timing (verifier/simulate.hpp) guarantees.
//
// Contention (ChunkCosts::slowdown = s): while a network component runs, the compute stream progresses at
// rate 1/(1+s); network components are not slowed. With s = 0 every component takes exactly its cost.
//
// What the timeline reports (all exact):
//   duration       when the last component ends
//   network_time   the time the network stream is busy (the sum of the network components' costs)
//   exposed_comm   the time in [0, duration) during which the network stream is busy and the compute
//                  stream is idle: all-to-all time not hidden under this rank's compute. In a pair this
//                  counts both chunks' all-to-alls against both chunks' compute, on one rank. With s = 0,
//                  exposed_comm = duration - (sum of compute costs), because a stream is idle only while
//                  it waits for the other one.
//   compute_time   the time the compute stream is busy (its costs stretched by the slowdown)
#include "model/chunk_dag.hpp"
#include "model/overlap_pattern.hpp"

#include <stdexcept>
#include <vector>

namespace pp {

struct ComponentTime {
    Rational start{0}, end{0};
};

struct SlotTimeline {
    std::vector<ComponentTime> times;  // per SlotDag node
    Rational duration{0};
    Rational network_time{0};
    Rational exposed_comm{0};
    Rational compute_time{0};
};

struct SlotOrderError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Throws SlotOrderError when the order does not list every node once on its stream or deadlocks
// (model/overlap_pattern.hpp check_order).
SlotTimeline time_slot(const SlotDag& dag, const StreamOrder& order, const Rational& slowdown = Rational(0));

}  // namespace pp
