#include "proofs/word_rotation.hpp"

#include "model/dag.hpp"
#include "proofs/difference_constraints.hpp"

#include <algorithm>

namespace pp {

namespace {

// Per-slot potentials x (slot super-step = x + its block index, T for suffix slots) with x_u + off_u <= x_v + off_v
// on every edge of G_T; nullopt when there are none. One variable per prefix and suffix slot, and per (rank, index)
// of the block (block_var), shared by that slot of every block.
std::optional<std::vector<std::int64_t>> block_slot_potentials(const PeriodicWord& word, int T,
                                                               const TimingGraphOf& graph_of,
                                                               std::vector<std::vector<int>>& block_var) {
    const Schedule s = word.instantiate(T);
    const ScheduleGraph g = timing_graph(graph_of, s, T);
    const auto places = slot_places(word, T);
    const int P = word.ranks();
    int nvars = 0;
    std::vector<int> prefix_var(P), suffix_var(P);
    block_var.assign(P, {});
    for (int r = 0; r < P; ++r) {
        prefix_var[r] = nvars, nvars += static_cast<int>(word.prefix[r].size());
        for (size_t i = 0; i < word.block[r].size(); ++i) block_var[r].push_back(nvars++);
        suffix_var[r] = nvars, nvars += static_cast<int>(word.suffix[r].size());
    }
    auto var_of = [&](std::uint32_t slot) {
        const SlotPlace& pl = places[slot];
        const int r = static_cast<int>(g.slot_rank[slot]);
        if (pl.region == Region::Prefix) return prefix_var[r] + pl.index;
        if (pl.region == Region::Suffix) return suffix_var[r] + pl.index;
        return block_var[r][pl.index];
    };
    auto offset_of = [&](std::uint32_t slot) {
        const SlotPlace& pl = places[slot];
        return pl.region == Region::Block ? pl.block : pl.region == Region::Suffix ? T : 0;
    };
    std::vector<std::array<int, 3>> constraints;  // x_v - x_u >= off_u - off_v on every edge u -> v
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            constraints.push_back({var_of(u), var_of(v), offset_of(u) - offset_of(v)});
        }
    return solve_differences(nvars, constraints);
}

}  // namespace

PeriodicWord recut_word(const PeriodicWord& word, const std::vector<size_t>& cuts) {
    PeriodicWord out = word;
    for (size_t p = 0; p < out.base.pipelines.size(); ++p) out.base.pipelines[p].microbatches += word.delta[p];
    for (int r = 0; r < word.ranks(); ++r) {
        const auto& block = word.block[r];
        const auto cut = static_cast<long>(cuts.at(static_cast<size_t>(r)));
        out.prefix[r].insert(out.prefix[r].end(), block.begin(), block.begin() + cut);
        out.block[r].assign(block.begin() + cut, block.end());
        for (long i = 0; i < cut; ++i) out.block[r].push_back(shift_slot(block[static_cast<size_t>(i)], word.delta, 1));
        out.suffix[r].assign(block.begin() + cut, block.end());
        for (const Slot& slot : word.suffix[r]) out.suffix[r].push_back(shift_slot(slot, word.delta, 1));
    }
    return out;
}

std::optional<PeriodicWord> rotate_blocks_for_super_steps(const PeriodicWord& word, int T, const TimingGraphOf& graph_of) {
    std::vector<std::vector<int>> block_var;
    const auto x = block_slot_potentials(word, T, graph_of, block_var);
    if (!x) return std::nullopt;
    std::vector<size_t> cuts(static_cast<size_t>(word.ranks()), 0);
    for (int r = 0; r < word.ranks(); ++r) {
        // The rank order makes the potentials non-decreasing along the block and at most one more than its first
        // slot's at its end (the next block's first slot follows): the cut goes where they step up.
        const auto& vars = block_var[static_cast<size_t>(r)];
        size_t cut = 0;
        if (vars.empty()) continue;
        while (cut < vars.size() && (*x)[vars[cut]] == (*x)[vars.front()]) ++cut;
        cuts[static_cast<size_t>(r)] = cut == vars.size() ? 0 : cut;
    }
    if (std::all_of(cuts.begin(), cuts.end(), [](size_t c) { return c == 0; })) return std::nullopt;
    return recut_word(word, cuts);
}

}  // namespace pp
