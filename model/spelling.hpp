#pragma once
// Suggestions for misspelt names (families, claim names): the nearest candidate by edit distance.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

// ASCII lower case: names (families, placements, presets) are read in any case.
std::string to_lower(std::string_view text);

// Levenshtein distance (insert, delete, substitute one character).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `wanted` if it is within max(2, |wanted| / 3) edits; a candidate that starts
// with `wanted` (at least 3 characters) counts as one edit ("interleaved" for "interleaved-1f1b").
std::optional<std::string> nearest_spelling(std::string_view wanted, const std::vector<std::string>& candidates);

}  // namespace pp
