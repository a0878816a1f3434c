#pragma once
// A clean schedule confirmed -- and timed -- in one pass over its ranks, without the dependency graph of
// model/dag.hpp. Per (pipeline, stage, micro-batch) cell one byte records which of F, I, W, B have run;
// each rank runs its next slot once the dependency predecessors of the slot's ops have run, checking the slot
// as it reaches it. That is Kahn's algorithm on the slot graph with a rank's next slot as its only candidate,
// so it reaches the end of every rank exactly when the graph has no cycle and no dependency points backwards
// within a rank (such a dependency stops its rank at the waiting slot for good); then every op has run once,
// and the cells say whether each holds a complete set.
//
// The walk only ever answers "clean". At the first irregularity -- an op out of range, on a rank that does
// not hold its stage, held twice, a malformed pair, a cell without exactly F + B or F + I + W, a rank that
// cannot advance -- it gives up, and the caller runs the full verifier (verify.hpp), which finds the
// violation and explains it. Each of those conditions is one of verify()'s checks, so the walk makes a clean
// verification faster and never different (tests/test_dataflow_walk.cpp checks both directions on every
// family and on randomly broken schedules). It needs a few bytes per cell instead of the graph's ~30 per op
// (docs/benchmarks.md, "Reading speed against awk").
#include "model/schedule.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace pp::dataflow {

inline constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

// What a slot waits for: the op computing a dependency of one of its ops.
struct Wait {
    std::size_t cell = 0;
    bool forward = false;     // the F of the cell, else its backward (the I or the B, whichever it holds)
    bool cross_rank = false;  // pays the P2P latency
};

// A clock that records nothing: the walk as a check only. A clock sees each slot run -- `id` in ScheduleGraph
// numbering, `previous` the slot before it on its rank or kNoSlot -- and then each of its ops but W's `ran`.
struct NoClock {
    void run(const Slot& /*slot*/, int /*rank*/, std::uint32_t /*id*/, std::uint32_t /*previous*/, const Wait* /*waits*/,
             int /*count*/) {}
    void ran(std::size_t /*cell*/, bool /*forward*/, std::uint32_t /*id*/) {}
};

using Waits = std::array<Wait, 2>;

class Walk {
public:
    explicit Walk(const Schedule& schedule) : s_(schedule), index_(schedule.placement) {}

    // True when the schedule passes every check of verify() except the memory limit; `clock` then has seen
    // every slot (numbered rank after rank, as ScheduleGraph numbers them) in an order where each slot comes
    // after its rank predecessor and the ops it waits for.
    template <class Clock>
    bool run(Clock& clock) {
        // One pass over the slots: each is checked (shape, range, placement, no op twice) when the walk
        // reaches it, and the cells for completeness once every rank has run to its end.
        if (!number_ranks()) return false;
        cell_.assign(cell_count(), 0);
        return advance_all(clock) && cells_complete();
    }
    std::size_t cell_count() const { return index_.size() / kOpKinds; }
    // After run(): slots of rank r are numbered [first_slots()[r], first_slots()[r + 1]).
    const std::vector<std::uint32_t>& first_slots() const { return first_slot_; }
    // After a run() that returned true: the schedule's ops (each ran once), counted on the way.
    std::size_t ops_run() const { return ops_; }
    // What `slot` of rank `rank` waits for (the waits run() gave the clock for it): their number, at most 2.
    int waits_of(const Slot& slot, int rank, Waits& waits) const {
        int count = 0;
        for (const Op& op : slot)
            if (waits_for(op, rank, waits[count])) ++count;
        return count;
    }

private:
    static constexpr std::uint8_t kBit(OpKind kind) { return std::uint8_t(1u << static_cast<unsigned>(kind)); }

    static constexpr std::size_t kPrefetchAhead = 4;  // slots: one 64-byte line ahead of a 28-byte slot

    const Schedule& s_;
    OpIndex index_;
    std::vector<std::uint8_t> cell_;  // per cell, bit `kind` of each of its ops that has run
    std::vector<std::uint32_t> first_slot_;  // of each rank, in ScheduleGraph numbering
    std::size_t ops_ = 0;

    std::size_t cell_of(const Op& op) const { return index_.id(op) / kOpKinds; }
    int last_stage(const Op& op) const { return s_.placement.pipelines[op.pipeline].stages() - 1; }

    // Slot numbers in ScheduleGraph's numbering, within its 31 bits (number_slots refuses more, with the reason).
    bool number_ranks() {
        first_slot_.reserve(s_.ranks.size() + 1);
        std::uint64_t next = 0;
        for (const auto& slots : s_.ranks) {
            first_slot_.push_back(static_cast<std::uint32_t>(next));
            next += slots.size();
            if (next >= std::numeric_limits<std::int32_t>::max()) return false;
        }
        first_slot_.push_back(static_cast<std::uint32_t>(next));
        return true;
    }

    // One or two ops, a pair one F and one backward, every op in range and on rank r.
    bool well_formed(const Slot& slot, int r) const {
        if (slot.count < 1 || slot.count > 2) return false;
        if (slot.is_pair() && (slot.ops[0].kind != OpKind::F || !is_backward(slot.ops[1].kind))) return false;
        for (const Op& op : slot)
            if (!index_.in_range(op) || s_.placement.rank_of(op.pipeline, op.stage) != r) return false;
        return true;
    }

    // Every cell holds F and either B alone or I and W.
    bool cells_complete() const {
        constexpr std::uint8_t kFB = kBit(OpKind::F) | kBit(OpKind::B);
        constexpr std::uint8_t kFIW = kBit(OpKind::F) | kBit(OpKind::I) | kBit(OpKind::W);
        for (std::uint8_t bits : cell_)
            if (bits != kFB && bits != kFIW) return false;
        return true;
    }

    // The op that op's dependency comes from (dependency_predecessor in model/dag.hpp, on a complete schedule:
    // the predecessor is always there). False for an F of stage 0.
    bool waits_for(const Op& op, int rank, Wait& wait) const {
        Op from = op;
        switch (op.kind) {
            case OpKind::F:
                if (op.stage == 0) return false;
                from.stage = op.stage - 1;
                break;
            case OpKind::I:
            case OpKind::B:
                if (op.stage == last_stage(op)) from.kind = OpKind::F;
                else from.stage = op.stage + 1;
                break;
            case OpKind::W:
                from.kind = OpKind::I;
                break;
        }
        wait = {cell_of(from), from.kind == OpKind::F, s_.placement.rank_of(from.pipeline, from.stage) != rank};
        return true;
    }

    bool has_run(const Wait& wait) const {
        const std::uint8_t bits = cell_[wait.cell];
        if (wait.forward) return bits & kBit(OpKind::F);
        return bits & (kBit(OpKind::I) | kBit(OpKind::B));
    }

    // The rank that holds the dependents of op on another stage, or -1.
    int dependents_rank(const Op& op) const {
        if (op.kind == OpKind::F && op.stage < last_stage(op)) return s_.placement.rank_of(op.pipeline, op.stage + 1);
        if (is_backward(op.kind) && op.stage > 0) return s_.placement.rank_of(op.pipeline, op.stage - 1);
        return -1;
    }

    template <class Clock>
    bool advance_all(Clock& clock) {
        const int ranks = static_cast<int>(s_.ranks.size());
        std::vector<std::uint32_t> position(ranks, 0);
        std::vector<char> blocked(ranks, 0);
        std::vector<int> runnable(ranks);
        for (int r = 0; r < ranks; ++r) runnable[r] = ranks - 1 - r;  // rank 0 first
        Waits waits{};
        while (!runnable.empty()) {
            const int r = runnable.back();
            runnable.pop_back();
            const auto& slots = s_.ranks[r];
            for (std::uint32_t& k = position[r]; k < slots.size(); ++k) {
                const Slot& slot = slots[k];
                // The line of slots after this one, for when this rank comes back to them: 64 ranks' slot
                // streams are more than the hardware prefetcher follows.
                __builtin_prefetch(slots.data() + std::min<std::size_t>(k + kPrefetchAhead, slots.size() - 1));
                if (!well_formed(slot, r)) return false;
                const int count = waits_of(slot, r, waits);
                bool ready = true;
                for (int w = 0; w < count; ++w) ready = ready && has_run(waits[w]);
                if (!ready) {
                    blocked[r] = 1;
                    break;
                }
                const std::uint32_t id = first_slot_[r] + k;
                clock.run(slot, r, id, k > 0 ? id - 1 : kNoSlot, waits.data(), count);
                ops_ += slot.count;
                for (const Op& op : slot) {
                    const std::size_t cell = cell_of(op);
                    if (cell_[cell] & kBit(op.kind)) return false;  // held twice
                    cell_[cell] |= kBit(op.kind);
                    if (op.kind != OpKind::W) clock.ran(cell, op.kind == OpKind::F, id);
                    const int waiting = dependents_rank(op);
                    if (waiting >= 0 && blocked[waiting]) {
                        blocked[waiting] = 0, runnable.push_back(waiting);
                        // Its next slot is far from this rank's in memory: start loading it now, while this
                        // rank runs on (the walk is bound by such misses, not by arithmetic).
                        __builtin_prefetch(s_.ranks[waiting].data() + position[waiting]);
                    }
                }
            }
        }
        for (int r = 0; r < ranks; ++r)
            if (position[r] < s_.ranks[r].size()) return false;  // a cycle, or a dependency backwards on a rank
        return true;
    }
};

// Every check of verify() but the memory limit passes.
inline bool structure_is_clean(const Schedule& schedule) {
    NoClock clock;
    return Walk(schedule).run(clock);
}

}  // namespace pp::dataflow
