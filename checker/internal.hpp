#pragma once
// What the checker's steps share (checker/check.hpp lists the files). Everything here is the checker's own.
#include "checker/check.hpp"
#include "model/schedule.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pp::check {

[[noreturn]] void reject(const std::string& step, const std::string& reason);

// ---- word.cpp

enum class Part : std::uint8_t { Prefix, Block, Suffix };
struct Place {
    Part part = Part::Prefix;
    int rank = 0;
    int index = 0;  // inside prefix, block or suffix
    int block = 0;  // j, for block slots
};

// The generator's instance at M (the registry family of the certificate, at its P, V and costs).
Schedule generate(const Certificate& c, int microbatches);
// The word's instance with t blocks, on the placement of its instance at t = 0 (`base`).
Schedule instantiate(const CertificateWord& w, const Placement& base, int t);
// Every slot's place, in the numbering of Graph (rank by rank, in order).
std::vector<Place> places(const CertificateWord& w, int t);
// "" when a and b hold the same slots on every rank, in the same order, else the first difference.
std::string first_difference(const Schedule& a, const Schedule& b);
// Lemma 1 (proofs/method.md §1): words agreeing up to this t agree for every t.
int agreement_horizon(const CertificateWord& w);

// ---- graph.cpp

struct Pred {
    std::uint32_t from;
    bool cross_rank;  // pays comm
    bool data;        // a data dependency (else the rank's order)
};
struct Graph {
    std::vector<std::uint32_t> rank;       // per slot
    std::vector<std::vector<Pred>> preds;  // per slot
    std::vector<std::uint32_t> topo;       // a topological order; shorter than the slots when there is a cycle
    bool acyclic() const { return topo.size() == rank.size(); }
};
// The dependency graph of one instance: slots in rank order; F(s-1,m) -> F(s,m), F(last,m) -> I/B(last,m),
// I/B(s+1,m) -> I/B(s,m), I(s,m) -> W(s,m) within each pipeline, and each rank's order. Rejects an op on a rank
// that does not hold its stage, or a pair that is not one F and one backward.
Graph build_graph(const Schedule& s, const std::string& step);

struct Timing {
    std::vector<Rational> end;   // per slot
    Rational makespan{0};
    std::vector<Rational> busy;  // per rank
    Rational bubble{0};          // the largest idle (makespan - busy) of a rank
};
// Exact dataflow timing: a slot starts when its rank's previous slot has ended and its inputs have arrived
// (comm later across ranks); at 0 without predecessors.
Timing simulate(const Schedule& s, const Graph& g, const Costs& costs, const std::string& step);
Rational slot_duration(const Slot& slot, const Placement& placement, const Costs& costs);

// ---- structure.cpp

struct Derived {
    int T0 = 1;
    int head_end = 0, k_inv = 0, tau = 0, lag = 1, T_struct = 0;
};
int stable_from(const CertificateWord& w);  // rejects a pipeline with block ops that does not grow
int super_step(const CertificatePotentials& p, const Place& place, int t);
// Every edge of G_t goes to the same or a later super-step, and past the head at most `lag` later.
void check_potentials(const CertificateWord& w, const CertificatePotentials& p, const Schedule& instance, int t,
                      const Derived* derived);
// head_end, k_inv, tau, lag, T_struct from the potentials on G_T.
Derived derive(const CertificateWord& w, const CertificatePotentials& p, const Schedule& instance_T, int T0);

// ---- statement.cpp

// The exact window and the bubble statement; returns a description of what was re-derived.
std::string check_window(const Certificate& c, const Placement& base, const Derived& d, int& t_periodic);
std::string check_bubble(const Certificate& c, int t_periodic);
std::string check_memory(const Certificate& c);

// ---- coverage.cpp

// Every op of the word's instance exactly once (a W for every I), for every t >= 0: by induction on t.
std::string check_coverage(const CertificateWord& w, const Placement& base);

// ---- solvers.cpp

struct SolverAnswer {
    std::string solver;
    std::vector<std::string> answers;  // one per (check-sat)
    std::string error;                 // not run, killed, or output it could not read
    double seconds = 0;
};
SolverAnswer run_solver(const std::string& solver, const std::filesystem::path& file, double seconds, int queries);
// Both solvers answer unsat to every query of `file`; rejects otherwise, naming the solver and its answer.
std::string require_unsat(const std::string& step, const std::filesystem::path& file, int queries, const CheckOptions& options);

}  // namespace pp::check
