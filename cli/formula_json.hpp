#pragma once
// JSON of symbolic formulas (prove, formula, refute --json): a linear form as its text in the chosen basis
// plus its coefficients; a region as a list of inequalities, each "form >= 0" with the same two spellings.
#include "proofs/readable.hpp"

#include <nlohmann/json.hpp>

namespace pp::cli {

nlohmann::json form_json(const LinForm& form, Basis basis);
nlohmann::json pieces_json(const PiecewiseLinear& pieces, Basis basis);
nlohmann::json published_json(const PublishedMatch& match, Basis basis);
nlohmann::json readable_json(const ReadableBubble& readable, Basis basis);

}  // namespace pp::cli
