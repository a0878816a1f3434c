#pragma once
// The Zero Bubble paper's own automatic scheduling heuristic (Qi et al., "Zero Bubble Pipeline Parallelism",
// ICLR 2024, Section 3.1), ported as a warm start for the search (issue 32). Written from the reference
// implementation's behaviour, not its code: sail-sg/zero-bubble-pipeline-parallelism,
// Graph.manual_order and initial_solution in megatron/core/pipeline_parallel/auto_schedule.py (commit
// 77b9eed9, Dec 2023; identical to megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py at 39f2c186
// except that the latter no longer asserts the memory limit in put()). That is the 1F1B-placement
// heuristic that produced the paper's Table 5 (its ILP was switched off: "Disabling ILP for now").
//
// The heuristic builds each stage's order left to right while timing it as soon as possible (exact ticks):
//   put(s, X)  appends the next micro-batch of kind X to stage s; it ends at max(end of the stage's last op,
//              end of its predecessor on the neighbouring stage + comm) + cost, and the idle time this adds
//              after the stage's first F is the stage's "bubble".
//   micro-batch 0 (warm-up): F on every stage; then, from the last stage back, stage s takes as many more F's
//              as fit in memory and still end before I(0) can arrive from stage s+1 (variant "allow bubble
//              before the first I": the F must end by then; otherwise: F's are added while the stage is
//              still before that arrival, so the last one may overrun it); the counts are then made strictly
//              decreasing along the pipeline; those F's are put, stage by stage; then I(0) from the last
//              stage back.
//   micro-batch i > 0: every stage that still has F's takes the next one (variant "prioritise I": a stage
//              at least two F's ahead of the next stage skips its F when the next stage's F and I would
//              otherwise delay the I coming back -- when its own F plus the W's the memory limit would force
//              would end after them and the wait is no bigger than the largest stage bubble minus its own);
//              a stage takes an F only if the next stage does. Before each F (stages in pipeline order)
//              and each I (last stage first): W's while the memory limit would be exceeded; then W's while
//              one fits before the op's input arrives from the neighbouring stage; then one more W into the
//              remaining wait when the wait exceeds the largest stage bubble minus the stage's own (so it
//              would become the largest), or always (variant "fill small bubbles greedily"); stage 0 runs
//              all its pending W's before its last I's once its F's are done.
//   the end: each stage runs its remaining W's.
// Eight variants (the three switches), the best under the instance's objective kept. A variant that would
// need a W it does not have to make room (the reference's "Cannot fit memory") yields nothing.
//
// Memory is the instance's own counter (search_instance.hpp, MemoryCounter): F allocates `alloc` units at its
// start, I releases `by_input`, W `by_weight` -- the reference's f_mem, b_mem, w_mem with max_mem the cap, which
// for the paper's model are F = M_B, I = -(M_B - M_W), W = -M_W, max_mem = p M_B or 2p M_B. Without a cap the
// reference's "unlimited" (3 m activations) is used. Only the 1F1B placement (stage r on rank r, one pipeline)
// and no overlapped pairs. The search re-verifies and re-times the schedule before use.
#include "solver/cap_filled_warm_starts.hpp"
#include "solver/search_instance.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct ZbAutoVariant {
    bool allow_bubble_before_first_i = false;  // the reference's allow_bubble_before_first_b
    bool prioritise_i = false;                 // prioritize_b
    bool fill_small_bubbles = false;           // no_bubble_greedy
    std::string name() const;                  // "zb-auto(bubble before I0, prioritise I, fill small)"
    static std::vector<ZbAutoVariant> all();   // the eight, in the reference's order
};

struct ZbAutoOrders {
    std::vector<std::vector<int>> orders;  // per rank, task ids in execution order
    std::vector<Ticks> end;                // per task, the heuristic's own end times (quantised)
    Ticks span = 0;                        // the heuristic's cost: max over stages of last end - first F's start
};

// True when the heuristic applies: 1F1B placement, no pairs.
bool zb_auto_applies(const Instance& inst);

// One variant; nullopt when it does not apply or cannot fit the memory cap.
std::optional<ZbAutoOrders> zb_auto_orders(const Instance& inst, const ZbAutoVariant& variant);

// The best of the eight variants under the instance's objective (by the heuristic's own ASAP times), as a schedule;
// nullopt when no variant applies or fits. Past the deadline it returns the best so far (once it has one).
// Each variant is linear in the ops.
std::optional<NamedSchedule> zb_auto_schedule(const Instance& inst,
                                              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

}  // namespace pp
