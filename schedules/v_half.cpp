// V-Half: the V-shaped schedule with half of 1F1B's activation memory of "Pipeline Parallelism with Controllable
// Memory" (Qi et al., NeurIPS 2024), as sail-sg/zero-bubble-pipeline-parallelism@39f2c186 builds it for
// `--zero-bubble-v-schedule --zero-bubble-v-schedule-mem-setup half`:
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py, PipelineGraph(P, M, 'half', ...).create_schedule
// with stable_pattern_v_half (L33-42). Written from tests/data/v-families/ALGORITHMS.md; conformance:
// tests/test_v_families.cpp against the reference's own orders in tests/data/v-families/.
//
// Algorithm: the building block repeats every 6 slots; rank i runs micro-batch mb's F c0 at slot 2i + 6mb, F c1 at
// 3P-2-i, I c1 at 3P+g+2i-1, I c0 at 6P+g-2-i (g = 3 when P is even, else 0). The greedy of v_greedy.cpp (shared
// with v-min) then moves warm-up and cool-down ops earlier without raising the peak memory and puts the W's in the
// free slots. The order does not depend on the costs.
//
// Preconditions: P >= 1, M >= 1, V unset or 2 -- what the scheduler accepts (the runtime also asserts P > 1).
//
// Memory (observed in the reference's orders, in chunk stashes): peaks 6 at P = 4 and 10 at P = 8, against 2P for
// 1F1B: the README's "half" only up to an additive constant.
#include "schedules/families.hpp"
#include "schedules/v_greedy.hpp"

namespace pp {

Schedule generate_v_half(const GenerateParams& params) {
    check_v_family(params, "v-half");
    const int P = params.ranks, M = params.microbatches;
    const int gap = P % 2 == 0 ? 3 : 0;
    VPattern pattern;
    for (int i = 0; i < P; ++i) pattern.push_back({2 * i, 3 * P - 2 - i, 3 * P + gap + 2 * i - 1, 6 * P + gap - 2 - i});
    return v_family_schedule(P, M, zbv_greedy_order(pattern, M), "v-half(P=" + std::to_string(P) + ",M=" + std::to_string(M) + ")");
}

}  // namespace pp
