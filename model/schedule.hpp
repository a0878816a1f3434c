#pragma once
// model/ — the vocabulary: ops, placement, costs, schedules, exact rationals, the dependency DAG. Bottom layer:
// depends on nothing else of ours.
//
// A schedule: a placement and, per rank, the order in which that rank executes its slots.
// Optional extras carried from files: costs, a memory limit, the positions of empty cells (PyTorch's
// None bubbles, kept so a CSV round-trips) and, for compute_comms files, the full action sequence
// with SEND/RECV/UNSHARD/RESHARD/REDUCE_GRAD interleaved.
#include "model/costs.hpp"
#include "model/op.hpp"
#include "model/overlap_pattern.hpp"
#include "model/placement.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

enum class CommKind : std::uint8_t { SendF, RecvF, SendB, RecvB, Unshard, Reshard, ReduceGrad };
const char* comm_kind_name(CommKind kind);  // PyTorch's text: "SEND_F", ...

// One entry of a rank's action list in a compute_comms file.
struct RankAction {
    bool is_compute = true;
    int slot = -1;               // index into Schedule::ranks[r] when is_compute
    CommKind comm = CommKind::SendF;
    int stage = -1;              // PyTorch's global stage number for comm actions
    int microbatch = -1;         // -1 when the action has none
    SourceLoc loc{};
};

// DeepSeek-style blocking communication (verifier/batched.hpp): one point-to-point operation as a rank posts
// it. A message is named by the op that computes its tensor on the sending rank: the output activation of
// an F (activation = true), or the input gradient of a backward (activation = false; I and B carry the
// same gradient, so the backward's kind is not part of the name).
struct P2POp {
    bool is_send = true;
    bool activation = true;
    int pipeline = 0;
    int stage = 0;       // the producing op's stage
    int microbatch = 0;
    int peer = -1;       // the rank at the other end
    friend bool operator==(const P2POp&, const P2POp&) = default;
};

// One step of a rank's communication program: commit `batch` as one batch_isend_irecv and wait for all of
// it, then run slot `slot` of the rank (an index into Schedule::ranks[r]); slot -1 is a trailing commit
// with no compute after it. Steps list the rank's slots in order, each exactly once.
struct CommStep {
    std::vector<P2POp> batch;
    int slot = -1;
};
using CommProgram = std::vector<std::vector<CommStep>>;  // per rank

// Chunk costs carried by a file (issue 11): per-layer component costs and, optionally, the overlap pattern.
// The op costs are derived from them (verifier/chunk_derive.hpp) unless the command line gives costs.
struct ChunkSpec {
    ChunkCosts costs;
    std::optional<PatternSpec> pattern;
    SourceLoc loc{};  // the `chunks` line of a native file
};

// What a reader filled in because the file does not state it (a PyTorch CSV gives no counts): the commands say so,
// so that a file missing its last micro-batch or stage is never taken silently for a smaller schedule.
struct InferredShape {
    bool ranks = false;         // the number of rows
    bool stages = false;        // the largest stage number + 1
    bool microbatches = false;  // the largest micro-batch number + 1
    bool placement = false;     // each stage on the first rank (row) it appears on
    bool any() const { return ranks || stages || microbatches || placement; }
};

struct Schedule {
    Placement placement;
    std::vector<std::vector<Slot>> ranks;  // per rank, in execution order
    std::string source;                    // file name, for messages

    std::optional<Costs> costs;
    std::optional<ChunkSpec> chunks;       // never together with `costs` in a file
    std::optional<Rational> memory_limit;
    std::optional<ActivationModel> activation_sizes;  // default: one unit per stash, all released at W
    // gaps[r][k] = empty cells just before slot k of rank r; gaps[r].back() = trailing empty cells.
    // Empty when the schedule has no explicit bubbles.
    std::vector<std::vector<int>> gaps;
    // Present only for schedules read from a compute_comms file.
    std::optional<std::vector<std::vector<RankAction>>> actions;
    // The reference implementation's own communication order, when a generator knows it (DualPipe,
    // DualPipeV); batched timing uses the generic rule without it. Not written to files.
    std::optional<CommProgram> comm_program;
    InferredShape inferred;  // what the reader inferred (nothing, for generated schedules and explicit formats)
    // Sequence segments per micro-batch (Seq1F1B): with k > 1, op micro-batch number u is segment u mod k of
    // micro-batch u div k, each pipeline holds k x its micro-batches as such units, and a unit runs at 1/k of the
    // costs and stashes 1/k of the activation sizes (equal segments). Two extra rules per stage: the forwards of a
    // micro-batch run in segment order, its input-gradient backwards (I or B) in reverse segment order
    // (verifier: segment-order).
    int segments = 1;
    // Each segment's share of a micro-batch's op costs (k positive values summing to 1: attention makes later segments
    // of equal length costlier); empty: 1/k each. Activation sizes stay 1/k per segment (equal lengths).
    std::vector<Rational> segment_cost_shares;

    // The micro-batch and segment a unit number stands for.
    int microbatch_of(int unit) const { return unit / segments; }
    int segment_of(int unit) const { return unit % segments; }
    Rational segment_cost_share(int segment) const;

    int rank_count() const { return placement.ranks; }
    size_t op_count() const;
    size_t slot_count() const;
};

// The cost shares of the text "1/4,3/4" (k values) or "attention=A": the share of attention A in a micro-batch's
// costs grows with the segment as causal attention does, (1 - A)/k + A (2j + 1)/k^2 for segment j. Throws
// CostSyntaxError unless the shares are positive and sum to 1.
std::vector<Rational> parse_segment_cost_shares(std::string_view text, int segments);
std::string format_segment_cost_shares(const std::vector<Rational>& shares);

// What one op of `schedule` stashes: the given sizes, or 1/k of them for k sequence segments.
ActivationModel sizes_per_unit(const Schedule& schedule, const ActivationModel& sizes);

// Dense numbering of every op a placement admits: (pipeline, stage, micro-batch, kind).
class OpIndex {
public:
    explicit OpIndex(const Placement& placement);
    size_t size() const { return total_; }
    size_t id(const Op& op) const {
        return (base_[op.pipeline] + static_cast<size_t>(op.stage) * mbs_[op.pipeline] + op.microbatch) * kOpKinds +
               static_cast<size_t>(op.kind);
    }
    bool in_range(const Op& op) const { return in_range(op.pipeline, op.stage, op.microbatch); }
    bool in_range(int pipeline, int stage, int microbatch) const {
        return pipeline >= 0 && pipeline < static_cast<int>(base_.size()) && stage >= 0 && stage < stages_[pipeline] &&
               microbatch >= 0 && microbatch < mbs_[pipeline];
    }
    Op op(size_t id) const;

private:
    std::vector<size_t> base_;  // first (stage, micro-batch) cell of each pipeline
    std::vector<int> mbs_;
    std::vector<int> stages_;
    size_t total_ = 0;
};

}  // namespace pp
