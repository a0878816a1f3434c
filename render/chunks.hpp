#pragma once
// A rank's chunks: the (pipeline, stage) pairs it runs, numbered in sorted order, so pipeline 0's stages come
// first and, within a pipeline, the earlier stage first. Every picture tells chunks apart the same way: the
// ASCII chart by letter case, the SVG by shade, the trace by name.
#include "model/schedule.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pp {

using ChunkNumbers = std::map<std::pair<int, int>, int>;
ChunkNumbers chunk_numbers(const std::vector<Slot>& slots);

// What the chunk numbering means for this placement, for legends: several pipelines are told apart by
// pipeline ("lower case = pipeline 1, the reverse direction ..."), one pipeline by the rank's stage order.
bool chunks_are_pipelines(const Placement& placement);
// "the reverse direction (it enters at rank 3)" for DualPipe's pipeline 1; empty when it runs the same way.
std::string pipeline_direction_text(const Placement& placement, int pipeline);

}  // namespace pp
