#pragma once
// Round numbers of time units per column for the ASCII pictures (render/ascii_gantt.hpp, the chunk lanes of
// render/chunk_timeline.hpp), so a column and every axis mark are round times.
#include "model/rational.hpp"

namespace pp {

// The largest of 1, 2, 2.5, 5 times a power of ten that is <= limit (limit > 0); the smallest >= limit when up.
Rational round_scale(const Rational& limit, bool up);

}  // namespace pp
