#pragma once
// Activation offload (PipeOffload, Wan et al., ICML 2025; sail-sg/zero-bubble-pipeline-parallelism
// offloading.py): a stash moves to host memory over its rank's host link after its forward and comes back
// before its backward, while the compute order stays as written.
//
// The model, stated so that every number it prints can be re-derived by hand:
// - Each rank has a host link: one stream shared by both directions, or (duplex) one stream each way.
//   Moving one unit of activation memory (what an F allocates at the default sizes) takes the policy's time;
//   a transfer takes that times the amount it moves. One transfer at a time per stream.
// - Offload (device to host) of the stash of F(s, m) starts after F's slot ends; the device frees the moved
//   part when it ends. Reload (host to device) starts after the offload ended and after the slot
//   `lookahead` places before the backward (the I or B of (s, m)) on the rank has started; the device
//   allocates the moved part when it starts, and the backward waits for it to end.
// - A stash whose backward is at most `lookahead` slots after its forward stays on the device (the
//   reference drops such short-lived stashes too: moving them frees nothing for long), and so does every
//   stash of a chunk the policy does not select (PipeOffload's selective offload) and every empty stash.
//   Schedules with sequence segments are refused.
// - Each stream runs its transfers in a fixed order read off the rank's order: at slot q, first the reload
//   that slot q's start releases, then the offload of slot q's forward. With that order the timing is a
//   longest path, as without offload: exact, and the same schedule times the same way every run.
// - Device memory: an F allocates its stash at its start, I/W/B release as without offload (their ends),
//   and the transfers move the offloaded part as above. Host memory holds a part from its offload's start
//   to its reload's end. Peaks are maxima over time, in the activation sizes' units. At equal times a transfer's
//   release comes first and a reload's allocation last, and the compute slots' events keep the rank's order
//   (so a slot that takes no time still counts): with nothing offloaded the device peak is `verify`'s
//   order-based peak.
#include "model/costs.hpp"
#include "model/rational.hpp"
#include "model/schedule.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

namespace pp {

struct OffloadPolicy {
    Rational fraction{1};        // of each eligible stash moved to the host (0 .. 1)
    Rational offload_time{0};    // host-link time to move one unit of activation memory to the host, cost units
    Rational reload_time{0};     // and back
    int lookahead = 1;           // reload released by the start of the slot this many places before the backward
    bool duplex = false;         // one stream per direction, else one shared stream
    // Selective offload: only the stashes of these model chunks move; empty = every chunk. A rank's chunks are
    // its stages numbered 0, 1, ... in pipeline-then-stage order (on the loop map, chunk c of rank r is stage
    // c*P + r: chunk 0 holds the first layers, whose stashes live longest).
    std::vector<int> chunks;
    std::optional<Rational> host_memory;  // per rank, in activation units; a peak above it is reported
    // When set, only these forwards' stashes may move (a choice made by solver/offload_choice.hpp); the rules above
    // still apply to them.
    std::optional<std::vector<Op>> only;
};

struct OffloadError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Transfer {
    int rank = 0;
    Op forward;             // whose stash
    bool to_host = true;    // offload, else reload
    Rational amount;        // activation units moved
    Ticks start = 0, end = 0;
};

struct RankOffload {
    Rational device_peak{0};   // resident stashes, maximum over time
    Rational host_peak{0};
    int offloaded = 0;         // stashes with a part moved to the host
    int kept = 0;              // stashes left on the device: not selected, or backward within `lookahead` slots
    Ticks link_busy = 0;       // summed over its streams
};

struct OffloadTiming {
    TimeScale scale;
    std::vector<Ticks> start, end;  // per slot, ScheduleGraph numbering (rank after rank)
    Ticks makespan = 0;
    std::vector<RankOffload> ranks;
    std::vector<Transfer> transfers;  // per rank, in stream order (offloads and reloads interleaved when shared)
    Rational device_peak() const;     // the largest over ranks
    Rational host_peak() const;
};

inline constexpr size_t kMaxOffloadSlots = size_t{1} << 22;

// The constraint network time_with_offload walks, exposed for solver/offload_choice.hpp, which chooses which of
// the eligible stashes move: nodes 0..slots-1 are the compute slots (ScheduleGraph numbering), then per move
// its offload (slots + 2k) and reload (slots + 2k + 1). An arc or an event tagged with a move holds only when
// that move is made; a transfer not made takes no time and only passes its stream's time on.
struct OffloadNetwork {
    struct Move {
        Op forward;
        int rank = 0;
        std::uint32_t forward_slot = 0, backward_slot = 0, trigger_slot = 0;  // global slot ids
        Rational amount;  // activation units moved
    };
    struct Arc {
        std::uint32_t from = 0;
        bool from_start = false;  // the start of `from`, else its end
        Ticks delay = 0;
        int move = -1;            // >= 0: only when that move is made
    };
    // A change of the device's (or the host's) memory at the start or the end of a node.
    struct Event {
        std::uint32_t node = 0;
        bool at_start = false;
        Rational delta;
        int move = -1;            // >= 0: only when that move is made
        bool host = false;
        // The order of events at the same time: a transfer's release first, then the compute slots' events in the
        // rank's order (a slot's allocation before its release, so a slot that takes no time still holds its stash
        // for that instant), then a reload's allocation.
        std::uint64_t tie = 0;
    };
    TimeScale scale;
    std::uint32_t slots = 0;
    std::vector<Move> moves;
    std::vector<Ticks> duration;                    // per node; a transfer's when its move is made
    std::vector<std::vector<Arc>> preds;            // per node
    std::vector<std::vector<std::uint32_t>> streams;  // node ids in stream order (per rank, or two per rank)
    std::vector<std::vector<Event>> events;         // per rank
    std::vector<RankOffload> ranks;                 // offloaded and kept counts
    std::vector<int> slot_rank;                     // per slot
    std::uint32_t offload_node(size_t move) const { return slots + static_cast<std::uint32_t>(2 * move); }
    std::uint32_t reload_node(size_t move) const { return slots + static_cast<std::uint32_t>(2 * move + 1); }
    size_t nodes() const { return duration.size(); }
};

// The timing of a network with only the moves flagged in `made` (one flag per move) made: a move not made leaves its
// stash resident, takes no time and its tagged arcs and events do not count -- what the encoding of
// solver/offload_choice.hpp assumes. time_with_offload is this with every move made.
OffloadTiming time_network(const OffloadNetwork& net, const std::vector<bool>& made);

// Throws as time_with_offload does.
OffloadNetwork offload_network(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                               const OffloadPolicy& policy);

// Needs a schedule that passes verify (dependencies and order; memory limits aside). Throws OffloadError on
// bad policy values (fraction outside [0, 1], negative times, lookahead < 1, a chunk no rank has) and when
// the order cannot run; SizeLimitError past kMaxOffloadSlots slots.
OffloadTiming time_with_offload(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                                const OffloadPolicy& policy);

}  // namespace pp
