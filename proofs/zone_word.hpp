#pragma once
// Zone words: orders that grow in several places per rank. GPipe runs all forwards, then all backwards; Looped
// BFS runs the forwards of each local stage, then the backwards of each in reverse: one more micro-batch adds
// one slot to each such run. A zone word writes rank r's order for t blocks as
//     fixed_r[0] . zone_0(0..t-1) . fixed_r[1] . zone_1(0..t-1) . ... . zone_{K-1}(0..t-1) . fixed_r[K]
// where block j of an ascending zone raises every micro-batch index of pipeline p by j * delta[p], block j of a
// descending zone by (t - 1 - j) * delta[p] (micro-batches counted down, as Looped BFS's backwards), and an op of
// a fixed part by t * delta[p] when it is end-anchored (else not at all). The instance with t blocks is the
// family at M = m0 + step * t. The periodic words of proofs/maxplus.hpp are the zone words with K = 1.
//
// The families that need them (GPipe, Looped BFS) run a zone program (schedules/step_program.hpp); their words are
// derived from it by symbolic execution (proofs/method.md §1b), and the prover still compares them with the
// generator op for op.
#include "model/schedule.hpp"
#include "schedules/step_program.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct ZoneSlot {
    Slot slot;
    std::array<bool, 2> end_anchored{};  // per op of the slot: raised by t * delta
};

struct ZonePlace {
    int zone = -1;  // -1: a fixed part
    int part = 0;   // fixed part k (zone < 0), or the zone
    int index = 0;  // position inside the fixed part or the block
    int j = 0;      // block, for zone slots
};

struct ZoneWord {
    Placement base;                 // the placement at t = 0
    std::vector<int> delta;         // micro-batches added per block, per pipeline
    std::vector<int> direction;     // per zone: +1 ascending, -1 descending
    std::vector<std::vector<std::vector<ZoneSlot>>> fixed;  // [rank][part 0..K]
    std::vector<std::vector<std::vector<Slot>>> block;      // [rank][zone 0..K-1], micro-batches as at raise 0

    int ranks() const { return base.ranks; }
    int zones() const { return static_cast<int>(direction.size()); }
    Schedule instantiate(int t) const;
    // The place of every slot of instantiate(t), by global slot id (ScheduleGraph numbering).
    std::vector<ZonePlace> places(int t) const;
    // Global slot id of block slot (rank, zone, index, j) of instantiate(t).
    std::uint32_t block_slot_id(int t, int rank, int zone, int index, int j) const;
    // Busy-time slots of one block of `zone` on `rank`.
    const std::vector<Slot>& zone_block(int rank, int zone) const { return block[rank][zone]; }
};

// Empty when instantiate(t) equals s op for op (placement, order, pairs); else the first difference.
std::string zone_word_mismatch(const ZoneWord& word, int t, const Schedule& s);

// The zone word a zone program is for every t (Lemma 2z, proofs/method.md §1b), on `base` (the placement at t = 0);
// nullopt with the reason when the program's symbolic execution does not have a zone word's form.
std::optional<ZoneWord> zone_word_of_program(const FamilyStepProgram& program, const Placement& base,
                                             std::string* why = nullptr);

// The zone word of a family whose generator runs a zone program, at P (and V), with the lemma that makes it the
// generator's order for every M; nullopt for the other families (they use proofs/maxplus.hpp's fitted words).
struct FamilyZoneWord {
    ZoneWord word;
    int m0 = 1, step = 1;
    std::string lemma;
};
std::optional<FamilyZoneWord> family_zone_word(const std::string& family, int ranks, std::optional<int> stages_per_rank);

}  // namespace pp
