#pragma once
// Integer difference constraints x_v - x_u >= w, solved by queue-based Bellman-Ford from a virtual source at 0:
// the super-step potentials of zone words and of re-cut words (proofs/method.md §3, §4b).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace pp {

// The greatest solution with every x <= 0 over variables 0..n-1, or nullopt when the constraints are infeasible.
std::optional<std::vector<std::int64_t>> solve_differences(int n, const std::vector<std::array<int, 3>>& constraints);

}  // namespace pp
