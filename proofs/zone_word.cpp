#include "proofs/zone_word.hpp"

#include "proofs/maxplus.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <stdexcept>

namespace pp {

namespace {

Slot raised(Slot slot, const std::vector<int>& delta, int k) {
    for (int i = 0; i < slot.count; ++i) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * k;
    slot.loc = {};
    return slot;
}

Slot raised_fixed(const ZoneSlot& z, const std::vector<int>& delta, int t) {
    Slot slot = z.slot;
    for (int i = 0; i < slot.count; ++i)
        if (z.end_anchored[i]) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * t;
    slot.loc = {};
    return slot;
}

}  // namespace

Schedule ZoneWord::instantiate(int t) const {
    Schedule s;
    s.placement = base;
    for (size_t p = 0; p < s.placement.pipelines.size(); ++p) s.placement.pipelines[p].microbatches += delta[p] * t;
    s.ranks.resize(base.ranks);
    for (int r = 0; r < base.ranks; ++r) {
        auto& out = s.ranks[r];
        for (int k = 0; k <= zones(); ++k) {
            for (const ZoneSlot& z : fixed[r][k]) out.push_back(raised_fixed(z, delta, t));
            if (k == zones()) break;
            for (int j = 0; j < t; ++j) {
                const int raise = direction[k] > 0 ? j : t - 1 - j;
                for (const Slot& slot : block[r][k]) out.push_back(raised(slot, delta, raise));
            }
        }
    }
    s.source = "zone word, t=" + std::to_string(t);
    return s;
}

std::vector<ZonePlace> ZoneWord::places(int t) const {
    std::vector<ZonePlace> out;
    for (int r = 0; r < ranks(); ++r)
        for (int k = 0; k <= zones(); ++k) {
            for (size_t i = 0; i < fixed[r][k].size(); ++i) out.push_back({-1, k, static_cast<int>(i), 0});
            if (k == zones()) break;
            for (int j = 0; j < t; ++j)
                for (size_t i = 0; i < block[r][k].size(); ++i) out.push_back({k, k, static_cast<int>(i), j});
        }
    return out;
}

std::uint32_t ZoneWord::block_slot_id(int t, int rank, int zone, int index, int j) const {
    std::uint32_t id = 0;
    for (int r = 0; r <= rank; ++r)
        for (int k = 0; k <= zones(); ++k) {
            if (r == rank && k == zone) return id + static_cast<std::uint32_t>(fixed[r][k].size() + block[r][k].size() * j + index);
            id += static_cast<std::uint32_t>(fixed[r][k].size());
            if (k < zones()) id += static_cast<std::uint32_t>(block[r][k].size() * t);
        }
    throw std::logic_error("block_slot_id: no such zone");
}

std::string zone_word_mismatch(const ZoneWord& word, int t, const Schedule& s) {
    return schedule_mismatch(word.instantiate(t), s);
}

namespace {

// A micro-batch index of a zone program as c + t_coeff*t + j_coeff*j (j: the block inside a zone).
struct Index {
    long long c = 0, t_coeff = 0, j_coeff = 0;
};

// Uses of one counter: so far (c + t_coeff*t), or in the whole run.
struct Uses {
    long long c = 0, t_coeff = 0;
};

// Symbolic execution of one rank of a zone program (Lemma 2z, proofs/method.md §1b).
class ZoneDerivation {
public:
    ZoneDerivation(const RankStepProgram& program, std::vector<int>& delta)
        : program_(program), delta_(delta), used_(2 * program.phases.size()),
          total_(2 * program.phases.size()), descending_(2 * program.phases.size(), -1) {}

    // "" when the rank's order is a zone word; its parts in fixed/blocks/directions.
    std::string run(std::vector<std::vector<ZoneSlot>>& fixed, std::vector<std::vector<Slot>>& blocks,
                    std::vector<int>& directions) {
        if (std::string why = count_uses(); !why.empty()) return why;
        fixed.assign(1, {});
        for (size_t i = 0; i < program_.loops.size(); ++i) {
            const StepLoop& loop = program_.loops[i];
            for (int k = 0; k < loop.base; ++k)
                if (std::string why = fixed_iteration(loop, fixed.back()); !why.empty()) return where(i) + why;
            if (loop.slope == 0 || !emits_ops(loop)) continue;
            std::vector<Slot> block;
            int direction = 0;
            if (std::string why = zone_iteration(loop, block, direction); !why.empty()) return where(i) + why;
            blocks.push_back(std::move(block));
            directions.push_back(direction);
            fixed.emplace_back();
        }
        return "";
    }

    // The t coefficients of the fixed ops, checked once every zone has set delta.
    const std::vector<std::pair<int, long long>>& fixed_raises() const { return fixed_raises_; }

private:
    std::string where(size_t loop) const { return "loop " + std::to_string(loop) + ": "; }
    static bool counts(const StepToken& token) {
        return token.kind == StepTokenKind::F || token.kind == StepTokenKind::B || token.kind == StepTokenKind::Pair;
    }
    static bool emits_ops(const StepLoop& loop) {
        return std::any_of(loop.body.begin(), loop.body.end(), counts);
    }
    size_t counter(int phase, bool backward) const { return 2 * static_cast<size_t>(phase) + (backward ? 1 : 0); }

    // The tokens' shape, and every descending counter's uses in the whole run.
    std::string count_uses() {
        for (size_t i = 0; i < program_.loops.size(); ++i) {
            const StepLoop& loop = program_.loops[i];
            if (loop.base < 0) return where(i) + "a negative base";
            if (loop.slope != 0 && loop.slope != 1) return where(i) + "slope " + std::to_string(loop.slope) + " (0 or 1)";
            for (const StepToken& token : loop.body) {
                const bool op = counts(token);
                if (!op && (token.kind == StepTokenKind::I || token.kind == StepTokenKind::W ||
                            token.kind == StepTokenKind::WeightOf))
                    return where(i) + "a W queue token (a zone program runs F, B and pairs)";
                if (!op) continue;
                for (const auto& [phase, backward] : sides(token)) {
                    if (phase < 0 || phase >= static_cast<int>(program_.phases.size()))
                        return where(i) + "phase " + std::to_string(phase) + " out of range";
                    const size_t c = counter(phase, backward);
                    const int down = token.descending && token.kind != StepTokenKind::Pair ? 1 : 0;
                    if (descending_[c] >= 0 && descending_[c] != down)
                        return where(i) + "phase " + std::to_string(phase) + "'s counter counts both up and down";
                    descending_[c] = down;
                    total_[c].c += loop.base;
                    total_[c].t_coeff += loop.slope;
                }
            }
        }
        return "";
    }

    // The next index of a counter (uses so far raised by `ahead` uses of this iteration).
    Index index_of(size_t c, long long ahead) const {
        const Uses& u = used_[c];
        if (descending_[c] == 1) return {total_[c].c - 1 - u.c - ahead, total_[c].t_coeff - u.t_coeff, 0};
        return {u.c + ahead, u.t_coeff, 0};
    }

    // The counters a token reads, in slot order: (phase, backward).
    static std::vector<std::pair<int, bool>> sides(const StepToken& token) {
        if (token.kind == StepTokenKind::Pair) return {{token.phase, false}, {token.backward_phase, true}};
        return {{token.phase, token.kind == StepTokenKind::B}};
    }

    Op op_of(int phase, bool backward, long long microbatch) const {
        const StepPhase& where = program_.phases[phase];
        return Op{backward ? OpKind::B : OpKind::F, where.pipeline, where.stage, static_cast<int>(microbatch)};
    }

    // One fixed iteration: every op's index is c + t_coeff*t, end-anchored when t_coeff > 0 (checked against delta
    // once the zones have set it).
    std::string fixed_iteration(const StepLoop& loop, std::vector<ZoneSlot>& out) {
        for (const StepToken& token : loop.body) {
            if (!counts(token)) continue;
            ZoneSlot slot{};
            std::vector<Op> ops;
            for (const auto& [phase, backward] : sides(token)) {
                const size_t c = counter(phase, backward);
                const Index at = index_of(c, 0);
                ++used_[c].c;
                slot.end_anchored[ops.size()] = at.t_coeff != 0;
                ops.push_back(op_of(phase, backward, at.c));
                fixed_raises_.push_back({ops.back().pipeline, at.t_coeff});
            }
            slot.slot = ops.size() == 2 ? Slot::pair(ops[0], ops[1]) : Slot::single(ops[0]);
            out.push_back(slot);
        }
        return "";
    }

    // One symbolic iteration j of a growing loop past its base: index = c + t_coeff*t + j_coeff*j with
    // (t_coeff, j_coeff) = (0, delta) ascending or (delta, -delta) descending; block j of the zone word raises by
    // j*delta or (t-1-j)*delta, so the block holds c, or c + delta.
    std::string zone_iteration(const StepLoop& loop, std::vector<Slot>& block, int& direction) {
        std::vector<long long> per_iteration(used_.size(), 0);
        for (const StepToken& token : loop.body)
            if (counts(token))
                for (const auto& [phase, backward] : sides(token)) ++per_iteration[counter(phase, backward)];
        std::vector<long long> ahead(used_.size(), 0);
        std::string failure;
        for (const StepToken& token : loop.body) {
            if (!counts(token)) continue;
            std::vector<Op> ops;
            for (const auto& [phase, backward] : sides(token)) {
                const size_t c = counter(phase, backward);
                Index at = index_of(c, ahead[c]++);
                const long long k = per_iteration[c];
                at.j_coeff = descending_[c] == 1 ? -k : k;
                const int p = program_.phases[phase].pipeline;
                const int d = at.j_coeff > 0 ? 1 : -1;
                if (direction != 0 && d != direction && failure.empty())
                    failure = "a zone counts one phase up and another down";
                direction = d;
                if (delta_[p] < 0) delta_[p] = static_cast<int>(k);
                if (k != delta_[p] && failure.empty())
                    failure = fmt::format("phase {} advances by {} per iteration, pipeline {}'s delta is {}", phase, k,
                                          p, delta_[p]);
                if (at.t_coeff != (d > 0 ? 0 : k) && failure.empty())
                    failure = fmt::format("phase {}'s {} in this zone moves by {}*t (a zone starts where the last left "
                                          "its counter: {} expected)",
                                          phase, backward ? "backward" : "forward", at.t_coeff, d > 0 ? 0 : k);
                ops.push_back(op_of(phase, backward, d > 0 ? at.c : at.c + k));
            }
            block.push_back(ops.size() == 2 ? Slot::pair(ops[0], ops[1]) : Slot::single(ops[0]));
        }
        for (size_t c = 0; c < used_.size(); ++c) used_[c].t_coeff += per_iteration[c];
        return failure;
    }

    const RankStepProgram& program_;
    std::vector<int>& delta_;
    std::vector<Uses> used_, total_;
    std::vector<int> descending_;  // per counter: -1 unused, 0 up, 1 down
    std::vector<std::pair<int, long long>> fixed_raises_;
};

}  // namespace

std::optional<ZoneWord> zone_word_of_program(const FamilyStepProgram& program, const Placement& base, std::string* why) {
    auto fail = [&](const std::string& reason) -> std::optional<ZoneWord> {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (static_cast<int>(program.ranks.size()) != base.ranks)
        return fail(fmt::format("the program has {} ranks, the placement {}", program.ranks.size(), base.ranks));
    ZoneWord w;
    w.base = base;
    w.delta.assign(base.pipelines.size(), -1);
    std::vector<std::pair<int, long long>> fixed_raises;
    for (int r = 0; r < base.ranks; ++r) {
        for (const StepPhase& phase : program.ranks[r].phases) {
            if (phase.pipeline < 0 || phase.pipeline >= static_cast<int>(base.pipelines.size()))
                return fail(fmt::format("rank {}: a phase of pipeline {}", r, phase.pipeline));
            if (phase.segments != 1) return fail(fmt::format("rank {}: a phase of sequence segments (not a zone word's)", r));
        }
        ZoneDerivation derivation(program.ranks[r], w.delta);
        std::vector<std::vector<ZoneSlot>> fixed;
        std::vector<std::vector<Slot>> blocks;
        std::vector<int> directions;
        if (std::string reason = derivation.run(fixed, blocks, directions); !reason.empty())
            return fail(fmt::format("rank {}: {}", r, reason));
        if (r == 0) w.direction = directions;
        if (directions != w.direction)
            return fail(fmt::format("rank {}'s zones run {} ways, rank 0's {}", r, directions.size(), w.direction.size()));
        w.fixed.push_back(std::move(fixed));
        w.block.push_back(std::move(blocks));
        fixed_raises.insert(fixed_raises.end(), derivation.fixed_raises().begin(), derivation.fixed_raises().end());
    }
    if (w.direction.empty()) return fail("no loop grows with t");
    for (size_t p = 0; p < w.delta.size(); ++p)
        if (w.delta[p] < 1) return fail(fmt::format("pipeline {} does not grow", p));
    for (const auto& [p, raise] : fixed_raises)
        if (raise != 0 && raise != w.delta[p])
            return fail(fmt::format("an op outside the zones moves by {}*t, pipeline {}'s delta is {}", raise, p,
                                    w.delta[p]));
    return w;
}

std::optional<FamilyZoneWord> family_zone_word(const std::string& name, int P, std::optional<int> V) {
    const ScheduleFamily* family = find_family(name);
    if (!family || !family->zone_program) return std::nullopt;
    GenerateParams params{P, 1, V};
    FamilyZoneWord f;
    const FamilyStepProgram program = family->zone_program(params);
    params.microbatches = program.m_origin;
    std::string why;
    auto word = zone_word_of_program(program, family->generate(params).placement, &why);
    if (!word) throw std::logic_error(family->name + "'s zone program has no zone word: " + why);
    f.word = std::move(*word);
    f.m0 = program.m_origin;
    f.step = program.m_step;
    f.lemma = fmt::format(
        "machine-checked on the program (proofs/zone_word.cpp, zone_word_of_program; proofs/method.md §1b): {}'s "
        "generator runs a zone program (loops with trip counts base + slope*t, slope 0 or 1, bodies of tokens without "
        "micro-batch numbers, each counter counted up from 0 or down to 0, M = {} + {}t); executed symbolically, every "
        "op's micro-batch is c + a*t + b*j (j the iteration of a growing loop past its base), with (a, b) = (0, delta) "
        "or (delta, -delta) in every growing loop and a in {{0, delta}} elsewhere -- this zone word's form, for every t",
        family->name, program.m_origin, program.m_step);
    return f;
}

}  // namespace pp
