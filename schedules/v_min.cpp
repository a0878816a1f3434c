// V-Min: the V-shaped schedule with the least activation memory of "Pipeline Parallelism with Controllable
// Memory" (Qi et al., NeurIPS 2024), as sail-sg/zero-bubble-pipeline-parallelism@39f2c186 builds it for
// `--zero-bubble-v-schedule --zero-bubble-v-schedule-mem-setup min`:
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py, PipelineGraph(P, M, 'min', ...).create_schedule
// with stable_pattern_v_min (L22-31). Written from tests/data/v-families/ALGORITHMS.md; conformance:
// tests/test_v_families.cpp against the reference's own orders in tests/data/v-families/.
//
// Algorithm: the building block repeats every 6 slots; rank i runs micro-batch mb's F c0 at slot i + 6mb, F c1 at
// 2P-1-i, I c1 at 2P+g+i, I c0 at 4P+g-1-i (g = 2 when 3 divides P, else 0). The greedy of v_greedy.cpp then
// moves warm-up and cool-down ops earlier without raising the peak memory, and puts the W's in the free slots
// (W c1 before W c0). The order does not depend on the costs (the runtime passes F = B = W = 1000, comm 1, and
// uses them only to print a bubble rate).
//
// Preconditions: P >= 1, M >= 1, V unset or 2 -- what the scheduler accepts (the runtime also asserts P > 1, and
// the model needs layers divisible into 2P equal chunks: not a property of the order).
//
// Memory (observed in the reference's orders, counting +1 per F and -1 per W in chunk stashes): a peak about P on
// every rank (8 at P = 8, 4 at P = 4), against 2P chunk stashes for 1F1B: the README's 1/3 only up to a constant.
#include "schedules/families.hpp"
#include "schedules/v_greedy.hpp"

namespace pp {

Schedule generate_v_min(const GenerateParams& params) {
    check_v_family(params, "v-min");
    const int P = params.ranks, M = params.microbatches;
    const int gap = P % 3 == 0 ? 2 : 0;
    VPattern pattern;
    for (int i = 0; i < P; ++i) pattern.push_back({i, 2 * P - 1 - i, 2 * P + gap + i, 4 * P + gap - 1 - i});
    return v_family_schedule(P, M, zbv_greedy_order(pattern, M), "v-min(P=" + std::to_string(P) + ",M=" + std::to_string(M) + ")");
}

}  // namespace pp
