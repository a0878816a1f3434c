#pragma once
// Exact timing of a schedule by longest path over dependency and rank-order edges ("dataflow": every
// slot starts as soon as its rank is free and its inputs have arrived; a dependency that crosses ranks
// adds the P2P latency). Times are integer ticks over a common denominator of all costs.
#include "model/costs.hpp"
#include "model/dag.hpp"
#include "model/schedule.hpp"
#include "verifier/memory.hpp"

#include <optional>
#include <span>
#include <vector>

namespace pp {

struct RankTiming {
    Ticks busy = 0;
    Ticks idle = 0;         // makespan - busy
    Ticks first_start = 0;  // span = last_end - first_start (the Zero Bubble paper's per-stage span)
    Ticks last_end = 0;
    Rational peak_activations{0};
};

struct Simulation {
    TimeScale scale;
    std::vector<Ticks> start, end;  // per global slot id (ScheduleGraph numbering)
    Ticks makespan = 0;
    std::vector<RankTiming> ranks;
    Ticks bubble = 0;               // the largest idle time of any rank
    Rational bubble_fraction{0};    // total idle / (ranks x makespan)
    std::vector<std::uint32_t> critical_path;  // global slot ids, first to last
    size_t ops = 0;                            // in the schedule
    std::vector<Ticks> path_start, path_end;   // of each critical_path slot (kept when start and end are not)
};

// What a timing keeps per slot. Makespan, per-rank figures and the critical path with its times are always
// there; `start` and `end` of every slot only with AllSlots (a summary of a schedule of millions of ops needs
// about a third of the memory without them).
enum class SlotTimes { AllSlots, SummaryOnly };

// Fills path_start and path_end from start and end.
void record_path_times(Simulation& sim);

struct SimulationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Needs a schedule without deadlock (run verify first); throws SimulationError otherwise.
Simulation simulate(const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                    const ActivationModel& activations = {});
// The same timing; a schedule that passes verify() is timed by the dataflow walk (dataflow_walk.hpp) without
// building its graph, any other through the graph. Slots are numbered as ScheduleGraph numbers them.
Simulation simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations = {});
// The walk's timing alone: nullopt when the schedule does not pass verify() (memory aside). Peak activations
// are left at 0 -- for callers that have them from verify() already (one pass fewer over the schedule).
std::optional<Simulation> time_if_clean(const Schedule& schedule, const Costs& costs, SlotTimes kept = SlotTimes::AllSlots);

// Slot duration in ticks under the given costs.
Ticks slot_duration(const Slot& slot, const Placement& placement, const Costs& costs, const TimeScale& scale);
TimeScale time_scale_for(const Costs& costs);

// The same durations from a table made once per (kind, block), for timing every slot of a schedule. A pair
// follows Costs::pair_duration: an F&I pair costs FI of its forward's block (else FB), an F&B pair FB, and
// without either the sum of its two ops -- the one rule for the simulator, the search and every printout.
//
// With sequence segments (Schedule::segments, SegmentCosts below) the table has one layer per segment: an op runs
// at the costs of its unit's segment, and a pair at its forward's.
class SlotDurations {
public:
    SlotDurations(const Placement& placement, const Costs& costs, const TimeScale& scale);
    // One Costs per segment: an op of unit u runs at per_segment[u mod k].
    SlotDurations(const Placement& placement, std::span<const Costs> per_segment, const TimeScale& scale);
    Ticks operator()(const Slot& slot) const;
    const Placement& placement() const { return placement_; }
    int blocks() const { return blocks_; }
    int segments() const { return segments_; }
    const Ticks& single(int block, OpKind kind, int segment = 0) const {
        return single_[(segment * blocks_ + block) * 4 + static_cast<int>(kind)];
    }
    // The given cost of a pair of the block whose backward is `backward` (I or B), when there is one.
    const std::optional<Ticks>& pair(int block, OpKind backward, int segment = 0) const {
        return pair_[segment * blocks_ * 2 + pair_index(block, backward)];
    }
    static int pair_index(int block, OpKind backward) { return block * 2 + (backward == OpKind::I ? 1 : 0); }
    // The durations of every slot, rank after rank (ScheduleGraph numbering).
    std::vector<Ticks> of_slots(const Schedule& schedule) const;
    // The same as machine integers; false (and out unspecified) when a duration is not inline.
    bool machine_durations(const Schedule& schedule, std::vector<std::int64_t>& out) const;

private:
    const Placement& placement_;
    int blocks_ = 1, segments_ = 1;
    std::vector<Ticks> single_;                // [(segment * blocks + block) * 4 + kind]
    std::vector<std::optional<Ticks>> pair_;   // [segment * blocks * 2 + pair_index(block, backward)]
};

// The costs each sequence segment of `schedule` runs at (Schedule::segment_cost_shares), as SlotDurations takes them:
// the costs as given (not copied) without segments, one layer at 1/k for equal shares, one per segment otherwise.
class SegmentCosts {
public:
    SegmentCosts(const Schedule& schedule, const Costs& costs);
    std::span<const Costs> layers() const {
        return scaled_.empty() ? std::span<const Costs>(given_, 1) : std::span<const Costs>(scaled_);
    }

private:
    const Costs* given_;
    std::vector<Costs> scaled_;
};
TimeScale time_scale_for(std::span<const Costs> layers);

// Times of a schedule stay in 64-bit machine arithmetic, unchecked, when no sum can pass 2^62: every
// start and end is a path length of the dependency graph, so at most the sum of all durations plus the
// latency once per edge. Otherwise they are computed as Integers (exact at any size). Both paths run the
// same code (a template), so their results agree by construction.
bool fits_machine_ticks(const Ticks& total_duration, const Ticks& comm, size_t edges);

}  // namespace pp
