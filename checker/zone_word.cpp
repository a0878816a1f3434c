// A zone word (GPipe, Looped BFS: proofs/method.md §1b) against the family's zone program, without the prover's
// symbolic execution.
//
// The generator runs a zone program (ScheduleFamily::zone_program): per rank, loops of base + slope·t iterations,
// slope 0 or 1, whose bodies are F, B and pair tokens (and communication cells) reading counters that count up, or
// down to 0. So the k-th slot the program emits at t has a *position* that depends on the loops alone -- a fixed
// position (an iteration of a slope-0 loop, or one of the first `base` iterations of a growing one), or iteration
// base + j of the z-th growing loop that emits ops -- and every op's micro-batch at a fixed position is affine in
// t, at a zone position affine in (t, j) (Lemma 2z's argument: a counter's uses before it are sums of trip counts).
// A zone word's are affine the same way by its definition. Two affine functions of t agreeing at t = 0, 1 are one;
// of (t, j) on 0 <= j < t agreeing at (1, 0), (2, 0), (2, 1) are one. So the check: the program's positions are
// the zone word's (fixed part k <-> the fixed positions between growing loops k - 1 and k, zone z <-> growing loop
// z), and the generator's instances equal the word's slot for slot at t = 0..kSampleBlocks. Then the generator is
// the zone word for every t.
#include "checker/internal.hpp"
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"

#include <fmt/format.h>

#include <limits>

namespace pp::check {
namespace {

constexpr const char* kStep = "zone word";
constexpr int kSampleBlocks = 4;         // t = 0..4 covers (1, 0), (2, 0), (2, 1) and t = 0, 1, with margin
constexpr long long kMaxZoneSlots = 20'000'000;
constexpr int kMaxDelta = 1 << 20;  // with t <= kSampleBlocks, micro-batch counts stay far inside an int

// Where a slot of an instance sits: slot `index` of fixed part `part`, or of block j of zone `zone`.
struct Position {
    int part = -1, zone = -1, index = 0, j = 0;
    friend bool operator==(const Position&, const Position&) = default;
};

std::string position_text(const Position& p) {
    return p.zone < 0 ? fmt::format("fixed part {}, slot {}", p.part, p.index)
                      : fmt::format("zone {}, block {}, slot {}", p.zone, p.j, p.index);
}

void require_shape(const Certificate& c, const CertificateZoneWord& w, const Placement& base) {
    const auto P = static_cast<size_t>(c.ranks);
    if (w.fixed.size() != P || w.block.size() != P || w.end_anchored.size() != P)
        reject(kStep, fmt::format("the zone word has {} ranks, the claim {}", w.block.size(), P));
    const size_t K = w.direction.size();
    if (K == 0) reject(kStep, "a zone word without zones");
    for (size_t r = 0; r < P; ++r) {
        if (w.block[r].size() != K || w.fixed[r].size() != K + 1 || w.end_anchored[r].size() != K + 1)
            reject(kStep, fmt::format("rank {}: {} zones and {} fixed parts, the word has {} zones", r, w.block[r].size(),
                                      w.fixed[r].size(), K));
        for (size_t part = 0; part <= K; ++part)
            if (w.end_anchored[r][part].size() != w.fixed[r][part].size())
                reject(kStep, fmt::format("rank {}, fixed part {}: end-anchored marks for another number of slots", r, part));
    }
    if (static_cast<int>(w.delta.size()) != base.pipeline_count())
        reject(kStep, fmt::format("{} deltas for {} pipelines", w.delta.size(), base.pipeline_count()));
    for (int d : w.delta)
        if (d < 1 || d > kMaxDelta) reject(kStep, fmt::format("a delta of {} (a pipeline grows by 1..{} per block)", d, kMaxDelta));
    if (w.step != c.family_step) reject(kStep, "the zone word's step is not the family's");
    if (w.m_origin < c.family_m0 || (w.m_origin - c.family_m0) % c.family_step != 0)
        reject(kStep, fmt::format("the zone word's origin M = {} is not an admissible M", w.m_origin));
}

// Every op of the slot (or those marked) with its micro-batch raised by k·delta of its pipeline.
Slot raised(Slot slot, const std::vector<int>& delta, long long k, const std::array<bool, 2>& marked = {true, true}) {
    for (int i = 0; i < slot.count; ++i) {
        if (!marked[i]) continue;
        Op& op = slot.ops[i];
        if (op.pipeline < 0 || op.pipeline >= static_cast<int>(delta.size()))
            reject(kStep, fmt::format("an op of pipeline {}, which has no delta", op.pipeline));
        const long long m = static_cast<long long>(op.microbatch) + static_cast<long long>(delta[op.pipeline]) * k;
        if (m < 0 || m > std::numeric_limits<std::int32_t>::max()) reject(kStep, "a micro-batch index overflows");
        op.microbatch = static_cast<std::int32_t>(m);
    }
    return slot;
}

// The zone word's instance with t blocks, and every slot's position.
Schedule instantiate_zones(const CertificateZoneWord& w, const Placement& base, int t,
                           std::vector<std::vector<Position>>& positions) {
    long long slots = 0;
    for (size_t r = 0; r < w.block.size(); ++r) {
        for (const auto& part : w.fixed[r]) slots += static_cast<long long>(part.size());
        for (const auto& block : w.block[r]) slots += static_cast<long long>(block.size()) * t;
    }
    if (slots > kMaxZoneSlots) reject(kStep, fmt::format("the instance with t = {} would hold {} slots: refused", t, slots));
    Schedule s;
    s.placement = base;
    for (int p = 0; p < base.pipeline_count(); ++p) s.placement.pipelines[p].microbatches += w.delta[p] * t;
    s.ranks.resize(w.block.size());
    positions.assign(w.block.size(), {});
    for (size_t r = 0; r < w.block.size(); ++r) {
        const int K = static_cast<int>(w.direction.size());
        for (int part = 0; part <= K; ++part) {
            for (size_t i = 0; i < w.fixed[r][part].size(); ++i) {
                s.ranks[r].push_back(raised(w.fixed[r][part][i], w.delta, t, w.end_anchored[r][part][i]));
                positions[r].push_back({part, -1, static_cast<int>(i), 0});
            }
            if (part == K) break;
            for (int j = 0; j < t; ++j)
                for (size_t i = 0; i < w.block[r][part].size(); ++i) {
                    const long long raise = w.direction[part] > 0 ? j : t - 1 - j;
                    s.ranks[r].push_back(raised(w.block[r][part][i], w.delta, raise));
                    positions[r].push_back({-1, part, static_cast<int>(i), j});
                }
        }
    }
    return s;
}

bool emits_op(const StepToken& token) {
    return token.kind == StepTokenKind::F || token.kind == StepTokenKind::B || token.kind == StepTokenKind::Pair;
}

// The shape Lemma 2z's argument needs: slopes 0 or 1, no negative base, and tokens that read counters only (no
// W queue, whose order is not a counter's).
void require_zone_program(const RankStepProgram& program, int rank) {
    for (const StepPhase& phase : program.phases)
        if (phase.segments != 1) reject(kStep, fmt::format("rank {}: a phase of sequence segments in a zone program", rank));
    for (size_t i = 0; i < program.loops.size(); ++i) {
        const StepLoop& loop = program.loops[i];
        if (loop.base < 0 || (loop.slope != 0 && loop.slope != 1))
            reject(kStep, fmt::format("rank {}, loop {}: {} + {}t iterations (a zone program's loops run base + 0t or "
                                      "base + 1t, base >= 0)",
                                      rank, i, loop.base, loop.slope));
        for (const StepToken& token : loop.body)
            if (token.kind == StepTokenKind::I || token.kind == StepTokenKind::W || token.kind == StepTokenKind::WeightOf)
                reject(kStep, fmt::format("rank {}, loop {}: a W queue token (a zone program runs F, B and pairs)", rank, i));
    }
}

// The position of every slot the program emits on `rank` at t: fixed part k holds the fixed positions between the
// k-th and (k+1)-th growing loops that emit ops, zone z the later iterations of the z-th.
std::vector<Position> program_positions(const RankStepProgram& program, int t) {
    std::vector<Position> out;
    int part = 0, zone = 0, index_in_part = 0;
    for (const StepLoop& loop : program.loops) {
        const bool grows = loop.slope == 1 && std::any_of(loop.body.begin(), loop.body.end(), emits_op);
        const long long trips = loop.base + static_cast<long long>(loop.slope) * t;
        for (long long k = 0; k < trips; ++k) {
            int index_in_block = 0;
            for (const StepToken& token : loop.body) {
                if (!emits_op(token)) continue;
                if (grows && k >= loop.base)
                    out.push_back({-1, zone, index_in_block++, static_cast<int>(k - loop.base)});
                else
                    out.push_back({part, -1, index_in_part++, 0});
            }
        }
        if (grows) {
            ++zone;
            ++part;
            index_in_part = 0;
        }
    }
    return out;
}

}  // namespace

std::string check_zone_word(const Certificate& c) {
    const CertificateZoneWord& w = *c.zone_word;
    const ScheduleFamily* family = find_family(c.family);
    if (!family || !family->zone_program) reject(kStep, c.family + " has no zone program");
    // The generator's instance first: it refuses a size past the checker's limit before the program (as large) is built.
    const Placement base = generate(c, w.m_origin).placement;
    FamilyStepProgram program;
    try {
        GenerateParams params{c.ranks, w.m_origin, c.stages_per_rank};
        program = family->zone_program(params);
    } catch (const std::exception& e) {
        reject(kStep, fmt::format("the family's zone program at P = {}: {}", c.ranks, e.what()));
    }
    if (program.m_origin != w.m_origin || program.m_step != w.step)
        reject(kStep, fmt::format("the family's generator runs its zone program at M = {} + {}t; the zone word is for "
                                  "M = {} + {}t",
                                  program.m_origin, program.m_step, w.m_origin, w.step));
    if (static_cast<int>(program.ranks.size()) != c.ranks)
        reject(kStep, fmt::format("the program has {} ranks, the certificate {}", program.ranks.size(), c.ranks));
    for (int r = 0; r < c.ranks; ++r) require_zone_program(program.ranks[r], r);
    require_shape(c, w, base);
    for (int t = 0; t <= kSampleBlocks; ++t) {
        const int m = w.m_origin + w.step * t;
        std::vector<std::vector<Position>> positions;
        const Schedule word = instantiate_zones(w, base, t, positions);
        for (int r = 0; r < c.ranks; ++r) {
            const std::vector<Position> expected = program_positions(program.ranks[r], t);
            if (expected.size() != positions[r].size())
                reject(kStep, fmt::format("at t = {} rank {}'s program emits {} slots, the zone word holds {}", t, r,
                                          expected.size(), positions[r].size()));
            for (size_t k = 0; k < expected.size(); ++k)
                if (!(expected[k] == positions[r][k]))
                    reject(kStep, fmt::format("at t = {} rank {}'s slot {} is the program's {} but the zone word's {}", t,
                                              r, k, position_text(expected[k]), position_text(positions[r][k])));
        }
        const std::string diff = first_difference(generate(c, m), word);
        if (!diff.empty()) reject(kStep, fmt::format("at M = {} the generator and the zone word differ: {}", m, diff));
    }
    return fmt::format("the generator runs the family's zone program (M = {} + {}t: loops of slope 0 or 1, bodies of F, "
                       "B and pair tokens); at each fixed position of its output an op's micro-batch is affine in t, at "
                       "block j of a zone affine in (t, j), and so are the zone word's ({} zones); the two hold the same "
                       "positions and agree slot for slot at t = 0..{} (M = {}..{}), which fixes them for every t "
                       "(proofs/method.md §1b)",
                       program.m_origin, program.m_step, w.direction.size(), kSampleBlocks, w.m_origin,
                       w.m_origin + w.step * kSampleBlocks);
}

}  // namespace pp::check
