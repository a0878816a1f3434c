#include "proofs/difference_constraints.hpp"

#include <deque>
#include <numeric>
#include <utility>

namespace pp {

std::optional<std::vector<std::int64_t>> solve_differences(int n, const std::vector<std::array<int, 3>>& constraints) {
    // x_v >= x_u + w  <=>  x_u <= x_v - w: arc v -> u of weight -w on shortest paths.
    std::vector<std::vector<std::pair<int, int>>> arcs(static_cast<size_t>(n));
    for (const auto& [u, v, w] : constraints) arcs[static_cast<size_t>(v)].push_back({u, -w});
    std::vector<std::int64_t> dist(static_cast<size_t>(n), 0);
    std::vector<int> relaxed(static_cast<size_t>(n), 0);
    std::vector<bool> queued(static_cast<size_t>(n), true);
    std::deque<int> queue(static_cast<size_t>(n));
    std::iota(queue.begin(), queue.end(), 0);
    while (!queue.empty()) {
        const int a = queue.front();
        queue.pop_front();
        queued[static_cast<size_t>(a)] = false;
        for (const auto& [b, w] : arcs[static_cast<size_t>(a)])
            if (dist[static_cast<size_t>(a)] + w < dist[static_cast<size_t>(b)]) {
                dist[static_cast<size_t>(b)] = dist[static_cast<size_t>(a)] + w;
                if (++relaxed[static_cast<size_t>(b)] > n) return std::nullopt;
                if (!queued[static_cast<size_t>(b)]) queued[static_cast<size_t>(b)] = true, queue.push_back(b);
            }
    }
    return dist;
}

}  // namespace pp
