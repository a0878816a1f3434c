#include "render/chunks.hpp"

#include <fmt/format.h>

namespace pp {

ChunkNumbers chunk_numbers(const std::vector<Slot>& slots) {
    ChunkNumbers chunks;
    for (const Slot& slot : slots)
        for (const Op& op : slot) chunks.emplace(std::make_pair(op.pipeline, op.stage), 0);
    int next = 0;
    for (auto& [chunk, number] : chunks) number = next++;
    return chunks;
}

bool chunks_are_pipelines(const Placement& placement) { return placement.pipeline_count() > 1; }

std::string pipeline_direction_text(const Placement& placement, int pipeline) {
    if (pipeline <= 0 || pipeline >= placement.pipeline_count()) return "";
    const auto& first = placement.pipelines[0].stage_rank;
    const auto& here = placement.pipelines[pipeline].stage_rank;
    if (first.size() < 2 || here.size() < 2) return "";
    const bool first_up = first[1] > first[0], here_up = here[1] > here[0];
    if (first_up == here_up) return "";
    return fmt::format("the reverse direction: it enters at rank {}", here[0]);
}

}  // namespace pp
