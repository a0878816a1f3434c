#pragma once
// The cells of `pipeproof_bench search-grid` (issue 42): placements x P x M x memory cap x costs, in one fixed order,
// so that a cell's index -- and with it its shard -- never depends on the filters given. Header-only: the
// bench and tests/test_search_grid.cpp (every cell in exactly one shard) share it.
//
//   placements  1f1b, v, interleaved:2, dualpipe
//   P           4, 8, 16, 32
//   M           2P, 4P, 8P
//   cap         1p, 1.5p, 2p with p = P, in rank units (`search --units rank --memory-limit k*P`)
//   costs       zb-1.5b, zb-6.2b (the Zero Bubble paper's Table 9 presets), and zb-1.5b-edges: zb-1.5b with the
//               first and last model block's F, I and W at 1.3x (like an embedding and an LM head; comm unchanged)
#include <fmt/format.h>

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace pp::grid {

struct Cell {
    std::size_t index = 0;  // position in the full grid: shard K/N holds the cells with index % N == K
    std::string placement;  // as `search --placement` spells it
    int P = 0, M = 0;
    std::string cap;        // "1p", "1.5p", "2p"
    std::string costs;      // "zb-1.5b", "zb-6.2b", "zb-1.5b-edges"

    // The cap in rank units: k * P activations of a 1/P share of the model per rank (`--memory-limit`).
    std::string memory_limit() const {
        if (cap == "1p") return fmt::format("{}", P);
        if (cap == "1.5p") return fmt::format("{}", 3 * P / 2) + (P % 2 ? ".5" : "");
        return fmt::format("{}", 2 * P);
    }
    // One key per cell: what --out lines are matched on when a run resumes.
    std::string id() const { return fmt::format("{}/P{}/M{}/cap{}/{}", placement, P, M, cap, costs); }
};

inline const std::vector<std::string>& grid_placements() {
    static const std::vector<std::string> v = {"1f1b", "v", "interleaved:2", "dualpipe"};
    return v;
}
inline const std::vector<int>& grid_ranks() {
    static const std::vector<int> v = {4, 8, 16, 32};
    return v;
}
inline const std::vector<int>& grid_microbatch_factors() {
    static const std::vector<int> v = {2, 4, 8};
    return v;
}
inline const std::vector<std::string>& grid_caps() {
    static const std::vector<std::string> v = {"1p", "1.5p", "2p"};
    return v;
}
inline const std::vector<std::string>& grid_costs() {
    static const std::vector<std::string> v = {"zb-1.5b", "zb-6.2b", "zb-1.5b-edges"};
    return v;
}

// Every cell, in the order placement, P, M, cap, costs (the index counts in that order).
inline std::vector<Cell> all_cells() {
    std::vector<Cell> cells;
    for (const auto& placement : grid_placements())
        for (int P : grid_ranks())
            for (int factor : grid_microbatch_factors())
                for (const auto& cap : grid_caps())
                    for (const auto& costs : grid_costs()) cells.push_back({cells.size(), placement, P, factor * P, cap, costs});
    return cells;
}

struct Filter {
    int shard = 0, shards = 1;            // --shard K/N
    std::vector<std::string> placements;  // --placements a,b (empty: all)
    std::vector<std::string> costs;       // --costs a,b (empty: all)
    std::vector<std::string> caps;        // --caps 1p,2p (empty: all)
    int max_p = 1 << 30;                  // --max-p
    int max_m = 1 << 30;                  // --max-m
};

inline bool listed(const std::vector<std::string>& list, const std::string& value) {
    if (list.empty()) return true;
    for (const auto& item : list)
        if (item == value) return true;
    return false;
}

// The cells of one shard that pass the filters; the shard is taken on the full grid's index first.
inline std::vector<Cell> selected_cells(const Filter& f) {
    std::vector<Cell> out;
    for (const Cell& c : all_cells()) {
        if (static_cast<int>(c.index % static_cast<std::size_t>(f.shards)) != f.shard) continue;
        if (!listed(f.placements, c.placement) || !listed(f.costs, c.costs) || !listed(f.caps, c.cap)) continue;
        if (c.P > f.max_p || c.M > f.max_m) continue;
        out.push_back(c);
    }
    return out;
}

inline std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

}  // namespace pp::grid
