#pragma once
// What the two Z3 encodings share: one query "is there a schedule with objective <= bound?", answered
// in a fresh z3::context (the windows depend on the bound), with a wall-clock deadline that also covers
// building the formula (Z3's own timeout only covers check()).
#include "solver/lower_bound.hpp"
#include "solver/rank_budget.hpp"
#include "solver/search_instance.hpp"
#include "limits/deadline.hpp"

#include <z3++.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace pp {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A task's name in a formula ("F.3.7", "I.0.2@1"), so that a dumped SMT-LIB query reads like the schedule.
inline std::string z3_task_name(const Task& t) {
    std::string name = std::string(1, kind_letter(t.op.kind)) + "." + std::to_string(t.op.stage) + "." +
                       std::to_string(t.op.microbatch);
    if (t.op.pipeline > 0) name += "@" + std::to_string(t.op.pipeline);
    return name;
}

enum class Z3Answer { Sat, Unsat, Unknown, Skipped };
const char* z3_answer_name(Z3Answer answer);

struct Z3Query {
    Ticks bound = 0;              // quantised
    bool strengthen = true;       // same-rank load windows (see lower_bound.hpp)
    bool keep_smt2 = false;       // keep the formula as SMT-LIB2 text (for --emit-proof)
    size_t max_variables = 400000;  // skip (Skipped) above this, to keep memory in check
    unsigned seed = 0;
    Clock::time_point deadline{};
    const std::atomic<bool>* stop = nullptr;  // a stop request ends the check and the build (so does the process's)
    // Disjunctive encoding only: idle-budget cuts per rank of the encoded instance (rank_budget.hpp),
    // implied constraints for "makespan <= bound"; null or an entry with applies == false: none.
    const std::vector<RankBudget>* budgets = nullptr;
    // Disjunctive encoding only: tied[t] = u (u < t) makes start(t) the same variable as start(u), a
    // restriction (mirror_symmetry.hpp): sat answers are schedules, unsat is about the restricted class.
    const std::vector<int>* tied = nullptr;
    bool stopped() const { return (stop && stop->load()) || limits::stop_requested(); }
};

struct Z3Outcome {
    Z3Answer answer = Z3Answer::Unknown;
    std::vector<Ticks> start;     // Sat: start of every task (quantised)
    std::vector<int> partner;     // Sat: paired task or -1
    std::string smt2;             // keep_smt2: the whole query
    std::string reason;           // why Unknown or Skipped; for Unsat by an empty window, which one
    size_t variables = 0, constraints = 0;
    double build_seconds = 0, solve_seconds = 0;
    std::string engine;           // "time-indexed" or "disjunctive"
};

// Time-indexed order encoding: y(i,t) <=> start(i) <= t; SAT with cardinality (QF_FD).
size_t time_indexed_variables(const Instance& inst, const Windows& windows);
Z3Outcome solve_time_indexed(const Instance& inst, const TaskBounds& bounds, const Z3Query& query);

// Disjunctive difference logic: an integer start per task, a Boolean per unordered same-rank pair.
// Scales with the number of tasks, not with the size of the durations. No pairs.
size_t disjunctive_variables(const Instance& inst, const Windows& windows);
Z3Outcome solve_disjunctive(const Instance& inst, const TaskBounds& bounds, const Z3Query& query);
// The same on given windows (query.bound is only reported): for relaxations (rank_relaxation.hpp).
Z3Outcome solve_disjunctive_in(const Instance& inst, const Windows& windows, const Z3Query& query);

// Exact integer numerals both ways (times may exceed 64 bits).
z3::expr int_numeral(z3::context& ctx, const Ticks& value);
Ticks integer_of(const z3::expr& numeral);  // throws std::runtime_error when it is not an integer numeral

// Thrown while a formula is built past the deadline.
struct BuildTimeout {};

}  // namespace pp
