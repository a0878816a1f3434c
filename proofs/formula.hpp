#pragma once
// `pipeproof formula`: each rank's idle time as a piecewise-linear function of the costs, valid for every
// admissible M from some M0 on, with the region of cost space where each piece holds. Built on the symbolic
// bubble-constant proof (proofs/prove.hpp): when every rank's idle time is proved periodic in M (slope 0),
// the idle time of rank r is a max of linear forms minus r's linear busy time; each form that is the strict
// maximum somewhere is a piece, its region is where it is the maximum (irredundant inequalities, by Z3).
#include "proofs/prove.hpp"
#include "proofs/symbolic.hpp"

#include <string>
#include <vector>

namespace pp {

struct FormulaPiece {
    LinForm value;
    std::vector<LinForm> conditions;  // the piece holds where every condition is >= 0 (within the region)
    CostPoint example{};              // a point strictly inside the piece
};

struct PiecewiseLinear {
    std::vector<FormulaPiece> pieces;
};

// Pieces of max(forms) on the region (forms strictly maximal somewhere), with irredundant conditions.
PiecewiseLinear pieces_of(const MaxPoly& poly, const CostRegion& region);
// The same function on the region with only the forms that are the strict maximum somewhere (Z3, linear real
// arithmetic); MaxPoly::prune only drops forms dominated by a single other form.
MaxPoly needed_forms(const MaxPoly& poly, const CostRegion& region);

struct RankFormula {
    int rank = 0;
    std::vector<PiecewiseLinear> by_residue;  // one per residue class of t mod cycle (cycle 1: one entry)
    int valid_from_m = 0;                     // the formula holds for every admissible M >= this
    std::vector<std::pair<int, MaxPoly>> exceptions;  // earlier M with another value (printed in the basis asked for)
};

struct FormulaResult {
    ProofResult proof;
    std::vector<RankFormula> ranks;
    PiecewiseLinear bubble;
    int bubble_from_m = 0;
    std::string missing;  // why no formula (when the proof did not go through)
    std::string prove_command;  // the periodicity proof the formulas rest on, to re-run
};

// `prove_flags`: what the cited prove command needs besides the family's flags to take the same region.
FormulaResult derive_formula(const FamilySpec& family, const CostRegion& region, const std::string& prove_flags = "");
std::string format_formula(const FormulaResult& result, bool deepseek_basis = true);
std::string format_formula(const FormulaResult& result, Basis basis);

// "FB + B - 3*W >= 0" style text of a condition, in DeepSeek's basis when asked.
std::string format_condition(const LinForm& form, bool deepseek_basis);
std::string format_condition(const LinForm& form, Basis basis);

}  // namespace pp
