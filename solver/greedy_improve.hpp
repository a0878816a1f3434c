#pragma once
// Local search on per-rank orders: the incumbent's orders are improved by moving one op a few places
// earlier or later on its rank, accepting a move when (objective, sum of the end times of all F's and
// I's) gets smaller (W's do not count: deferring one must not look worse; greedy_improve.cpp says why).
// Each candidate is re-timed as soon as possible over the instance's precedence edges (so it keeps FIFO
// order and, on one-stage ranks, the memory cap) and checked for memory on the other ranks; a move that
// deadlocks is rejected. Schedules with overlapped pairs are left alone.
#include "solver/greedy.hpp"
#include "solver/search_instance.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <vector>

namespace pp {

// Per rank, the task ids in execution order; nullopt when the schedule has ops the instance does not
// model as single tasks (pairs). A fused B becomes I immediately followed by W.
std::optional<std::vector<std::vector<int>>> orders_of(const Instance& inst, const Schedule& schedule);

// ASAP timing of fixed per-rank orders; ok = false on deadlock or a memory violation.
GreedySchedule time_orders(const Instance& inst, const std::vector<std::vector<int>>& orders);

// Both stop at the deadline or once *stop is true, returning the best orders so far.
GreedySchedule improve_by_moves(const Instance& inst, std::vector<std::vector<int>> orders,
                                std::chrono::steady_clock::time_point deadline, int max_shift = 6,
                                const std::atomic<bool>* stop = nullptr);

// Iterated local search: improve_by_moves with shifts of 6, 16 and 48 places, then, until the
// deadline or 300 kicks in a row without progress, kick the best orders (a few random moves of up to
// 16 places that keep them valid) and improve again, keeping the result when it is better.
// Deterministic for a given seed.
GreedySchedule iterated_local_search(const Instance& inst, std::vector<std::vector<int>> orders,
                                     std::chrono::steady_clock::time_point deadline, unsigned seed,
                                     const std::atomic<bool>* stop = nullptr);

// The same iterated local search on a suffix only (issue 13, large M): the ops that start at or after
// `from` when `orders` is timed are re-ordered within their ranks, the earlier ops keep their times, and
// each move is timed over the suffix alone. Returns the whole schedule (prefix and best suffix), at
// least as good as `orders`.
GreedySchedule improve_suffix(const Instance& inst, const std::vector<std::vector<int>>& orders, Ticks from,
                              std::chrono::steady_clock::time_point deadline, unsigned seed,
                              const std::atomic<bool>* stop = nullptr);

}  // namespace pp
