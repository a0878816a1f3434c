#include "model/placement.hpp"

#include "model/op.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace pp {

int Placement::total_microbatches() const {
    int total = 0;
    for (const auto& p : pipelines) total += p.microbatches;
    return total;
}

int Placement::blocks() const {
    int count = 0;
    for (const auto& p : pipelines)
        for (int b : p.stage_block) count = std::max(count, b + 1);
    return count;
}

std::vector<int> Placement::blocks_on_rank(int rank) const {
    std::set<int> held;
    for (const auto& p : pipelines)
        for (int s = 0; s < p.stages(); ++s)
            if (p.stage_rank[s] == rank) held.insert(p.stage_block[s]);
    return {held.begin(), held.end()};
}

std::vector<int> Placement::copies_per_block() const {
    std::vector<std::set<int>> holders(blocks());
    for (const auto& p : pipelines)
        for (int s = 0; s < p.stages(); ++s) holders[p.stage_block[s]].insert(p.stage_rank[s]);
    std::vector<int> copies;
    for (const auto& h : holders) copies.push_back(static_cast<int>(h.size()));
    return copies;
}

std::vector<int> Placement::stages_on_rank(int pipeline, int rank) const {
    std::vector<int> stages;
    const auto& p = pipelines[pipeline];
    for (int s = 0; s < p.stages(); ++s)
        if (p.stage_rank[s] == rank) stages.push_back(s);
    return stages;
}

void Placement::validate() const {
    if (ranks < 1) throw std::invalid_argument("a schedule needs at least one rank");
    if (pipelines.empty()) throw std::invalid_argument("a schedule needs at least one pipeline");
    if (pipelines.size() > static_cast<size_t>(kMaxPipelines))
        throw std::invalid_argument(std::to_string(pipelines.size()) + " pipelines: at most " +
                                    std::to_string(kMaxPipelines) + " are supported");
    for (size_t k = 0; k < pipelines.size(); ++k) {
        const auto& p = pipelines[k];
        if (p.stage_rank.empty()) throw std::invalid_argument("pipeline " + std::to_string(k) + " has no stages");
        if (p.stage_rank.size() > static_cast<size_t>(kMaxStagesPerPipeline))
            throw std::invalid_argument("pipeline " + std::to_string(k) + " has " + std::to_string(p.stage_rank.size()) +
                                        " stages: at most " + std::to_string(kMaxStagesPerPipeline) + " are supported");
        if (p.microbatches < 1)
            throw std::invalid_argument("pipeline " + std::to_string(k) + " needs at least one micro-batch");
        if (p.stage_block.size() != p.stage_rank.size())
            throw std::invalid_argument("pipeline " + std::to_string(k) + ": stage->block map has the wrong length");
        for (int s = 0; s < p.stages(); ++s) {
            if (p.stage_rank[s] < 0 || p.stage_rank[s] >= ranks)
                throw std::invalid_argument("pipeline " + std::to_string(k) + ", stage " + std::to_string(s) +
                                            ": rank " + std::to_string(p.stage_rank[s]) + " is not in 0.." +
                                            std::to_string(ranks - 1));
            if (p.stage_block[s] < 0)
                throw std::invalid_argument("pipeline " + std::to_string(k) + ": negative block index");
        }
    }
}

Placement Placement::single(int ranks, std::vector<int> stage_rank, int microbatches) {
    Pipeline p;
    p.microbatches = microbatches;
    p.stage_block.resize(stage_rank.size());
    std::iota(p.stage_block.begin(), p.stage_block.end(), 0);
    p.stage_rank = std::move(stage_rank);
    return Placement{ranks, {p}};
}

Placement Placement::bidirectional(int ranks, int microbatches_per_direction) {
    Pipeline down, up;
    down.microbatches = up.microbatches = microbatches_per_direction;
    for (int s = 0; s < ranks; ++s) {
        down.stage_rank.push_back(s);
        up.stage_rank.push_back(ranks - 1 - s);
        down.stage_block.push_back(s);
        up.stage_block.push_back(s);
    }
    return Placement{ranks, {down, up}};
}

std::vector<int> loop_stage_map(int ranks, int stages) {
    std::vector<int> map(stages);
    for (int s = 0; s < stages; ++s) map[s] = s % ranks;
    return map;
}

std::vector<int> v_stage_map(int ranks, int stages) {
    if (ranks < 1 || stages % ranks != 0)
        throw std::invalid_argument("the V map needs the number of stages (" + std::to_string(stages) +
                                    ") to be a multiple of the number of ranks (" + std::to_string(ranks) + ")");
    std::vector<int> map(stages);
    for (int s = 0; s < stages; ++s) map[s] = (s / ranks) % 2 == 0 ? s % ranks : ranks - 1 - s % ranks;
    return map;
}

bool same_placement_shape(const Placement& a, const Placement& b) {
    if (a.ranks != b.ranks || a.pipelines.size() != b.pipelines.size()) return false;
    for (size_t p = 0; p < a.pipelines.size(); ++p)
        if (a.pipelines[p].stage_rank != b.pipelines[p].stage_rank || a.pipelines[p].stage_block != b.pipelines[p].stage_block)
            return false;
    return true;
}

bool same_placement(const Placement& a, const Placement& b) {
    if (!same_placement_shape(a, b)) return false;
    for (size_t p = 0; p < a.pipelines.size(); ++p)
        if (a.pipelines[p].microbatches != b.pipelines[p].microbatches) return false;
    return true;
}

std::string placement_name(const Placement& placement) {
    const int P = placement.ranks;
    if (P < 1 || placement.pipelines.empty()) return "custom";
    const int M = placement.pipelines[0].microbatches;
    if (placement.pipeline_count() == 2)
        return same_placement_shape(placement, Placement::bidirectional(P, M)) ? "dualpipe" : "custom";
    if (placement.pipeline_count() != 1) return "custom";
    const int stages = placement.pipelines[0].stages();
    if (stages % P != 0) return "custom";
    const int V = stages / P;
    auto is = [&](std::vector<int> map) { return same_placement_shape(placement, Placement::single(P, std::move(map), M)); };
    if (V == 1) return is(loop_stage_map(P, stages)) ? "1f1b" : "custom";
    if (is(loop_stage_map(P, stages))) return "interleaved:" + std::to_string(V);
    if (is(v_stage_map(P, stages))) return V == 2 ? "v" : "zigzag:" + std::to_string(V);
    return "custom";
}

}  // namespace pp
