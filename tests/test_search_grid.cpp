// Issue 42: the cells of `pipeproof_bench search-grid` (bench/search_grid_cells.hpp). Shard K/N holds the cells whose
// full-grid index is K mod N, so the shards of any N cover every cell exactly once, with or without filters.
#include "bench/search_grid_cells.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

TEST_CASE("search grid: 4 placements x 4 P x 3 M x 3 caps x 3 costs, one id and one index per cell") {
    const auto cells = pp::grid::all_cells();
    CHECK(cells.size() == 4 * 4 * 3 * 3 * 3);
    std::set<std::string> ids;
    for (size_t k = 0; k < cells.size(); ++k) {
        CHECK(cells[k].index == k);
        ids.insert(cells[k].id());
    }
    CHECK(ids.size() == cells.size());
    const pp::grid::Cell c{0, "1f1b", 8, 16, "1.5p", "zb-1.5b"};
    CHECK(c.memory_limit() == "12");
    CHECK(c.id() == "1f1b/P8/M16/cap1.5p/zb-1.5b");
}

TEST_CASE("search grid: the shards of any N cover every cell exactly once") {
    for (int shards : {1, 2, 3, 5, 8, 431, 432, 500}) {
        for (bool filtered : {false, true}) {
            pp::grid::Filter f;
            f.shards = shards;
            if (filtered) {
                f.max_p = 8;
                f.placements = {"1f1b", "dualpipe"};
            }
            std::map<std::string, int> seen;
            for (int k = 0; k < shards; ++k) {
                f.shard = k;
                for (const auto& c : pp::grid::selected_cells(f)) {
                    CHECK(static_cast<int>(c.index % shards) == k);
                    ++seen[c.id()];
                }
            }
            size_t expected = 0;
            for (const auto& c : pp::grid::all_cells())
                if (!filtered || (c.P <= 8 && (c.placement == "1f1b" || c.placement == "dualpipe"))) {
                    ++expected;
                    CHECK(seen[c.id()] == 1);
                }
            CHECK(seen.size() == expected);
        }
    }
}
