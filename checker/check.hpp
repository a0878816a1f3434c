#pragma once
// checker/ — the independent checker of proof certificates (`pipeproof-check DIR`; docs/certificates.md).
//
// It shares with the prover only the model's vocabulary (model/) and the file readers (formats/); it uses the
// generators (schedules/), which are what a proof is about, and nothing of verifier/, solver/ or proofs/. Every
// number of the certificate is recomputed here by code of its own -- the dependency graph, the exact dataflow
// timing, the live-activation counts, the super-step derivations -- and every SMT-LIB2 obligation (the
// certificate's and the checker's own) is answered by two solvers, z3 and cvc5, run as processes with a time
// limit. The first step that fails is the answer; nothing after it is trusted.
//
//   check.cpp        the order of the steps, the report
//   word.cpp         the word's instances, compared with the generator's (Lemma 1's horizon)
//   zone_word.cpp    a zone word against the family's zone program and generator (positions, affine indices)
//   step_program.cpp Lemma 2 on the family's step program, run by the checker's own interpreter
//   batched.cpp      batched timing: the program word, its consistency and the batched graph
//   graph.cpp        each instance's dependency graph, acyclicity, exact timing
//   structure.cpp    stability T0, the potentials edge by edge, the numbers derived from them
//   statement.cpp    the window, the base cases and the bubble statement; the activation peaks
//   statement_symbolic.cpp  the same at symbolic costs, on max-plus polynomials
//   cone.cpp         the symbolic region's cone and its extreme rays
//   maxplus.cpp      max-plus polynomials, symbolic timing, equalities sent to the solvers
//   dominance.cpp    a form below the max of others on the cone, by exact convex weights
//   coverage.cpp     op coverage for every M, by induction on the block count
//   solvers.cpp      z3 and cvc5 as processes
//   search.cpp       search certificates: the schedule re-timed, and the checker's own model of every schedule
#include "model/certificate.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace pp::check {

struct CheckOptions {
    double solver_seconds = 60;        // per SMT query and solver
    std::vector<std::string> solvers = {"z3", "cvc5"};
    // Search certificates: restrict the checker's model to schedules that run each (kind, stage) in micro-batch
    // order, which loses no makespan for identical micro-batches (docs/certificates.md; --no-fifo drops it).
    bool fifo = true;
};

struct Step {
    std::string name;
    std::string detail;   // what was re-derived, or why it failed
    bool ok = true;
    double seconds = 0;
};

struct CheckReport {
    std::vector<Step> steps;
    bool checked() const;           // every step ok and nothing left out
    std::string first_failure() const;
};

// Thrown by a step that finds the certificate wrong (the step's name and the reason).
struct Rejected {
    std::string step;
    std::string reason;
};

CheckReport check_certificate(const Certificate& certificate, const std::filesystem::path& dir, const CheckOptions& options);
// Whether the certificate's family has a step program (schedules/step_program.hpp), whose structure the step
// `structure` checks whatever the certificate says (checker/step_program.cpp).
bool has_step_program(const Certificate& certificate);
// The statement a CHECKED certificate establishes, written from its checked numbers (not its own wording).
std::string verified_claim(const Certificate& certificate);

// A search certificate (`pipeproof search --certificate DIR`, DIR/search.json): a schedule file and the claim that no
// schedule of the same work has a makespan below `lower_bound` (OPTIMAL: the schedule's own `value`).
struct SearchClaim {
    int version = 0;
    std::string status;      // "optimal" or "feasible"
    std::string objective;   // "makespan" (the only one checked) or "span"
    std::string schedule_file;
    std::string placement_name;  // informational: the search's placement
    bool pairs_allowed = false;
    Rational value{0}, lower_bound{0};
};
bool is_search_certificate(const std::filesystem::path& dir);
SearchClaim read_search_claim(const std::filesystem::path& dir);  // InputError when unreadable
CheckReport check_search_certificate(const SearchClaim& claim, const std::filesystem::path& dir, const CheckOptions& options);
std::string verified_search_claim(const SearchClaim& claim, const CheckOptions& options);

}  // namespace pp::check
