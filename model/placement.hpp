#pragma once
// Which rank holds which stage. A schedule has one or more pipelines; every micro-batch belongs to one
// pipeline and walks that pipeline's stages 0..S-1. Each stage computes one model block (a slice of
// layers); two stages on different ranks that compute the same block are two copies of the same
// weights -- that is what DualPipe's "2x parameters" counts.
#include <stdexcept>
#include <string>
#include <vector>

namespace pp {

struct Pipeline {
    int microbatches = 0;
    std::vector<int> stage_rank;   // stage -> rank
    std::vector<int> stage_block;  // stage -> model block; identity unless given
    int stages() const { return static_cast<int>(stage_rank.size()); }
};

struct Placement {
    int ranks = 0;
    std::vector<Pipeline> pipelines;

    int pipeline_count() const { return static_cast<int>(pipelines.size()); }
    int total_microbatches() const;
    int blocks() const;                           // number of distinct model blocks
    int rank_of(int pipeline, int stage) const { return pipelines[pipeline].stage_rank[stage]; }
    int block_of(int pipeline, int stage) const { return pipelines[pipeline].stage_block[stage]; }
    std::vector<int> blocks_on_rank(int rank) const;  // sorted, distinct: parameter memory in blocks
    std::vector<int> copies_per_block() const;        // how many ranks hold each block
    std::vector<int> stages_on_rank(int pipeline, int rank) const;

    // Throws std::invalid_argument with a readable reason if ranks or maps are out of range.
    void validate() const;

    // One pipeline whose stage s runs on stage_rank[s] (PyTorch's single- and multi-stage schedules).
    static Placement single(int ranks, std::vector<int> stage_rank, int microbatches);
    // DualPipe / Chimera: half the micro-batches flow down ranks 0..P-1, half up P-1..0; both
    // directions compute blocks 0..P-1, so every block has two copies.
    static Placement bidirectional(int ranks, int microbatches_per_direction);
};

// Same ranks, pipelines, micro-batches per pipeline, stage -> rank and stage -> block maps.
bool same_placement(const Placement& a, const Placement& b);
// The same, ignoring the micro-batch counts.
bool same_placement_shape(const Placement& a, const Placement& b);

// The shape's name, micro-batch counts aside, as `pipeproof search --placement` spells it: "1f1b" (stage s on rank
// s), "v" (2P stages on the V map), "interleaved:V" (V*P stages, loop map, V >= 2), "dualpipe" (two pipelines, one
// down and one up the ranks, blocks 0..P-1 each); beyond those, "zigzag:V" (V*P stages on the V map, V > 2) and
// "custom". Every command's output names placements with it, so one word means one shape everywhere.
std::string placement_name(const Placement& placement);

// PyTorch's maps (torch.distributed.pipelining._utils.generate_stage_to_rank_mapping).
std::vector<int> loop_stage_map(int ranks, int stages);  // stage s on rank s mod P
std::vector<int> v_stage_map(int ranks, int stages);     // zig-zag 0..P-1, P-1..0, ...; needs S % P == 0

}  // namespace pp
