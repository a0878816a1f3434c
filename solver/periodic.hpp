#pragma once
// Periodic (steady-state) search (issue 13, "any M"): the best repeating block of a placement under a
// memory cap, and a proof that no schedule of any length does better per micro-batch.
//
// A block of period T gives every class c = (pipeline, stage, kind) an offset phi(c): op (c, m) starts
// at m*T + phi(c), so each period runs one micro-batch of every class (of every pipeline). It is valid
// when, for every micro-batch m,
//   dependencies  phi(to) >= phi(from) + d(from) + lag            (same micro-batch, as in the instance)
//   one at a time  two classes a, b of one rank: (phi(b) - phi(a)) mod T in [d(a), T - d(b)], and d <= T
//   memory        at every time t the live activations of the rank: a stash (p, s) lives from the start
//                 of F to the end of W, so with D = phi(W) + d(W) - phi(F) = q T + rho (0 <= rho < T) it
//                 counts q, plus 1 on an arc of length rho starting at phi(F) mod T; the most at once is
//                 sum q + the most arcs through one arc's start. That must be <= the cap.
// For a fixed T all of this is linear (one integer per pair for the "mod"), and Z3 decides it.
//
// Throughput bound (valid for every schedule of every length M, not only periodic ones): a rank r
// runs M * load(r) of work, and, by the cap, integral of its live activations over time <= cap * C
// while each micro-batch keeps stash (p, s) alive for at least len(p, s), the least time from the start
// of its F to the end of its W over the dependency edges (so M * sum len <= cap * C). Hence
//   C / M >= T* = max over r of max(load(r), sum over stashes on r of len / cap).
// A block whose period equals T* is throughput-optimal; one above it states its gap.
#include "model/rational.hpp"
#include "solver/search_instance.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace pp {

struct PeriodicClass {
    Op op;        // micro-batch 0 of the class
    int rank = 0;
    Ticks duration = 0;  // quantised
    int task = -1;       // its micro-batch-0 task in the instance
};

struct PeriodicBlock {
    bool found = false;
    Ticks period = 0;                 // quantised units per period (one micro-batch of every pipeline)
    std::vector<PeriodicClass> classes;
    std::vector<Ticks> offset;        // phi per class (quantised; the earliest is 0)
    Rational bound;                   // T*: no schedule does better per period (quantised units)
    std::string bound_argument;       // which rank and which term
    std::vector<int> live_peak;       // per rank, the most live activations in the steady state
    int periods_tried = 0;
    int anchored_rank = -1;           // this rank's first class starts at its head (micro-batch 0)
    std::string reason;               // when not found
};

// The classes and dependency edges of the placement (from the instance's micro-batch 0) and T*.
struct PeriodicModel {
    std::vector<PeriodicClass> classes;
    struct Edge { int from, to; Ticks lag; };
    std::vector<Edge> edges;           // same micro-batch
    std::vector<std::pair<int, int>> stashes;  // (F class, W class) per (pipeline, stage)
    Rational bound;
    std::string bound_argument;
};
PeriodicModel periodic_model(const Instance& inst);

// Smallest integer period >= ceil(T*) that admits a block, trying T*, T*+1, ... up to `max_periods`
// candidates or the deadline. Not for placements with pairs. With `heads` (per task, e.g. the search's
// longest-path heads) every class starts no earlier than its micro-batch-0 head, and with anchor_rank
// >= 0 the block first asks that rank's earliest class to start exactly at its head (so that rank, the
// one the lower bound is about, never idles from its first op on), and drops that wish if it fails.
PeriodicBlock find_periodic_block(const Instance& inst, std::chrono::steady_clock::time_point deadline,
                                  int max_periods = 64, const std::vector<Ticks>* heads = nullptr,
                                  int anchor_rank = -1, const std::atomic<bool>* stop = nullptr);

// A block read off a schedule's steady state: when micro-batches m0 - 1, m0 and m0 + 1 of every class
// (m0 = M / 2) start the same T apart, phi(c) = start(c, m0) - m0 T, all shifted by one constant to the
// earliest that keeps every class at or after its micro-batch-0 head (with `heads`) or at 0. Cheap
// (no solver): ZBV's steady state, for one, is such a block at T* = 2(F+I+W) on the V map, where Z3
// does not decide the period query in time at P=16. Nothing is assumed of the schedule: found = true
// only says the spacing is common; the block is valid only if check_periodic_block says so.
PeriodicBlock block_from_starts(const Instance& inst, const std::vector<Ticks>& start, const std::vector<Ticks>* heads);

// The schedule that runs the block from micro-batch 0 on: op (c, m) starts at m*T + phi(c). Valid for
// every M (each rule above holds for all m, and the live counts before the steady state are smaller).
std::vector<Ticks> periodic_starts(const Instance& inst, const PeriodicBlock& block);

// Independent check of a block: simulate K periods of it (op (c, m) at m*T + phi(c)) and test every
// rule above directly on the ops (overlaps, dependencies, live counts). Empty when valid.
std::string check_periodic_block(const Instance& inst, const PeriodicBlock& block, int periods);

// "F0:+0 I0:+18522 ..." per rank: the block as a periodic word (each rank's classes in start order
// within one period, with the micro-batch they run relative to the period).
std::string periodic_word(const PeriodicBlock& block, int ranks);

}  // namespace pp
