#pragma once
// The greedy shared by v-min and v-half: sail-sg/zero-bubble-pipeline-parallelism@39f2c186,
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py, PipelineGraph.schedule_from_pattern
// (L217-233) with reorder (L147-215), put_w (L44-72), mem_of_stage (L74-97) and eager_execution_time (L100-145);
// written from the account in tests/data/v-families/ALGORITHMS.md ("V-Min and V-Half"), not from their code.
//
// A repeating pattern (one offset per rank for F c0, F c1, I c1, I c0, micro-batch mb at offset + 6 mb) is
// improved twice by moving warm-up and cool-down ops to earlier free integer slots without raising the peak
// memory (first with the weight gradients placed, then without), and the W's are put in the free slots last.
// The order does not depend on the costs: the reference uses them only to time and print the result.
#include "schedules/v_families.hpp"

#include <array>
#include <vector>

namespace pp {

// Per rank: the slots of micro-batch 0 of F c0, F c1, I c1, I c0 (the reference's stable pattern).
using VPattern = std::vector<std::array<int, 4>>;

// Per-rank orders of M micro-batches built from the pattern (P = pattern.size()).
VOrder zbv_greedy_order(const VPattern& pattern, int microbatches);

}  // namespace pp
