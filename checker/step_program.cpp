// Lemma 2 (proofs/method.md §1) checked on the program, not read off the generator.
//
// A family whose generator is a step program (schedules/step_program.hpp) exposes the program. Its loops have trip
// counts base + slope·t and fixed bodies by construction; what remains is the lemma's side conditions, checked here
// by executing the program with the checker's own interpreter (two counters per phase and the queue of W's -- the
// whole state the tokens read; a W token takes the queue's front, a W token of a phase its first entry of that
// phase):
//   - each rank has exactly one loop of slope 1 (the others slope 0) and no negative base;
//   - one iteration of that loop, from the state its fixed iterations leave, raises every counter of a phase of
//     pipeline p by delta_p and leaves the queue of W's the same with every entry raised by delta of its pipeline.
// Every token's op is a function of that state that commutes with the raise, so iteration j emits the block raised
// by j·delta, and the loops after emit the suffix raised by t·delta: the program's output at t is the periodic word
// prefix · block^t · suffix(t). That word's instances are compared with the certificate's up to Lemma 1's horizon;
// the generator runs the program (schedules/step_program.cpp), so the certificate's word is the generator's order
// for every M.
#include "checker/internal.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <deque>

namespace pp::check {
namespace {

constexpr const char* kStep = "structure";
// The checker re-bases a word by this many blocks at most (the families' origins differ by one or two).
constexpr int kMaxOriginBlocks = 64;

struct State {
    std::vector<int> forwards, backwards;  // per phase: the next micro-batch
    std::deque<Op> weights;                // queued W's, oldest first
};

class Executor {
public:
    Executor(const RankStepProgram& program, int rank, int pipelines) : program_(program), rank_(rank) {
        for (const StepPhase& phase : program.phases)
            if (phase.pipeline < 0 || phase.pipeline >= pipelines || phase.stage < 0 || phase.segments < 1)
                reject(kStep, fmt::format("rank {}: a phase at pipeline {}, stage {}, {} segment(s)", rank, phase.pipeline,
                                          phase.stage, phase.segments));
        state_.forwards.assign(program.phases.size(), 0);
        state_.backwards.assign(program.phases.size(), 0);
    }

    void run(const StepLoop& loop, long long trips, std::vector<Slot>& out) {
        for (long long k = 0; k < trips; ++k)
            for (const StepToken& token : loop.body) run(token, out);
    }
    const State& state() const { return state_; }

private:
    void run(const StepToken& token, std::vector<Slot>& out) {
        if (token.descending)
            reject(kStep, fmt::format("rank {}: a token counts its phase down (a zone program's, not Lemma 2's)", rank_));
        switch (token.kind) {
            case StepTokenKind::F: out.push_back(Slot::single(next(OpKind::F, token.phase))); break;
            case StepTokenKind::B: out.push_back(Slot::single(next(OpKind::B, token.phase))); break;
            case StepTokenKind::I: {
                Op op = next(OpKind::I, token.phase);
                out.push_back(Slot::single(op));
                op.kind = OpKind::W;
                state_.weights.push_back(op);
                break;
            }
            case StepTokenKind::W:
                if (state_.weights.empty()) reject(kStep, fmt::format("rank {}: a W token with no W queued", rank_));
                out.push_back(Slot::single(state_.weights.front()));
                state_.weights.pop_front();
                break;
            case StepTokenKind::WeightOf: {
                const Op like = next_op_of(token.phase);
                auto it = state_.weights.begin();
                while (it != state_.weights.end() && !(it->pipeline == like.pipeline && it->stage == like.stage)) ++it;
                if (it == state_.weights.end())
                    reject(kStep, fmt::format("rank {}: a W token of phase {} with no W of it queued", rank_, token.phase));
                out.push_back(Slot::single(*it));
                state_.weights.erase(it);
                break;
            }
            case StepTokenKind::Pair: {
                const Op f = next(OpKind::F, token.phase);
                out.push_back(Slot::pair(f, next(OpKind::B, token.backward_phase)));
                break;
            }
            default: break;  // communication and idle cells: no op, no state
        }
    }
    // Where `phase` runs, as an op (kind and micro-batch unset), without taking a counter.
    Op next_op_of(int phase) const {
        if (phase < 0 || phase >= static_cast<int>(program_.phases.size()))
            reject(kStep, fmt::format("rank {}: a token of phase {}, which the program does not have", rank_, phase));
        return Op{OpKind::W, program_.phases[phase].pipeline, program_.phases[phase].stage, 0};
    }
    Op next(OpKind kind, int phase) {
        if (phase < 0 || phase >= static_cast<int>(program_.phases.size()))
            reject(kStep, fmt::format("rank {}: a token of phase {}, which the program does not have", rank_, phase));
        int& counter = kind == OpKind::F ? state_.forwards[phase] : state_.backwards[phase];
        const int c = counter++, k = program_.phases[phase].segments;
        if (k < 1) reject(kStep, fmt::format("rank {}: phase {} has {} segments", rank_, phase, k));
        // A segmented phase runs each micro-batch's backward segments last to first (schedules/step_program.hpp).
        const int unit = kind == OpKind::F || k == 1 ? c : c / k * k + (k - 1 - c % k);
        return Op{kind, program_.phases[phase].pipeline, program_.phases[phase].stage, unit};
    }

    const RankStepProgram& program_;
    int rank_;
    State state_;
};

// The one loop whose trip count grows with t; rejects any other shape.
size_t growing_loop(const RankStepProgram& program, int rank) {
    size_t growing = program.loops.size();
    for (size_t i = 0; i < program.loops.size(); ++i) {
        const StepLoop& loop = program.loops[i];
        if (loop.base < 0) reject(kStep, fmt::format("rank {}: loop {} runs {} times at t = 0", rank, i, loop.base));
        if (loop.slope == 0) continue;
        if (loop.slope != 1 || growing != program.loops.size())
            reject(kStep, fmt::format("rank {}: loop {} has slope {}; Lemma 2 needs exactly one loop of slope 1", rank, i,
                                      loop.slope));
        growing = i;
    }
    if (growing == program.loops.size()) reject(kStep, fmt::format("rank {}: no loop grows with t", rank));
    return growing;
}

// After one iteration of the growing loop the state is the state before, raised by delta.
void require_raised(const State& before, const State& after, const RankStepProgram& program,
                    const std::vector<int>& delta, int rank) {
    for (size_t ph = 0; ph < program.phases.size(); ++ph) {
        const int d = delta[program.phases[ph].pipeline];
        // The segment map commutes with a raise by d only when k divides d.
        if (d % program.phases[ph].segments != 0)
            reject(kStep, fmt::format("rank {}: phase {} has {} segments, but the word's delta {} is no multiple of them", rank,
                                      ph, program.phases[ph].segments, d));
        if (after.forwards[ph] - before.forwards[ph] != d || after.backwards[ph] - before.backwards[ph] != d)
            reject(kStep, fmt::format("rank {}: one iteration of the growing loop advances phase {}'s counters by {} "
                                      "(forward) and {} (backward), the word's delta is {}",
                                      rank, ph, after.forwards[ph] - before.forwards[ph],
                                      after.backwards[ph] - before.backwards[ph], d));
    }
    if (after.weights.size() != before.weights.size())
        reject(kStep, fmt::format("rank {}: one iteration of the growing loop leaves {} queued W's, {} before", rank,
                                  after.weights.size(), before.weights.size()));
    for (size_t k = 0; k < before.weights.size(); ++k) {
        const Slot raised = shifted(Slot::single(before.weights[k]), delta, 1);
        if (!(raised.ops[0] == after.weights[k]))
            reject(kStep, fmt::format("rank {}: queued W {} is {} after one iteration, not {}", rank, k,
                                      format_op(after.weights[k]), format_op(raised.ops[0])));
    }
}

// The word the program is (Lemma 2), its t = 0 at the program's origin.
void add_rank_word(const RankStepProgram& program, int rank, int pipelines, const std::vector<int>& delta,
                   CertificateWord& out) {
    const size_t g = growing_loop(program, rank);
    Executor run(program, rank, pipelines);
    std::vector<Slot> prefix, block, suffix;
    for (size_t i = 0; i < g; ++i) run.run(program.loops[i], program.loops[i].base, prefix);
    run.run(program.loops[g], program.loops[g].base, prefix);
    const State before = run.state();
    Executor after_prefix = run;
    run.run(program.loops[g], 1, block);
    require_raised(before, run.state(), program, delta, rank);
    for (size_t i = g + 1; i < program.loops.size(); ++i)
        after_prefix.run(program.loops[i], program.loops[i].base, suffix);
    out.prefix.push_back(std::move(prefix));
    out.block.push_back(std::move(block));
    out.suffix.push_back(std::move(suffix));
}

// The same periodic word read from `blocks` blocks on: those blocks join the prefix, the block and the suffix are
// raised by them.
CertificateWord rebased(const CertificateWord& w, int blocks) {
    CertificateWord out = w;
    out.m_origin = w.m_origin + w.step * blocks;
    for (size_t r = 0; r < w.block.size(); ++r) {
        for (int j = 0; j < blocks; ++j)
            for (const Slot& slot : w.block[r]) out.prefix[r].push_back(shifted(slot, w.delta, j));
        for (Slot& slot : out.block[r]) slot = shifted(slot, w.delta, blocks);  // block j is the old block j + blocks
        for (Slot& slot : out.suffix[r]) slot = shifted(slot, w.delta, blocks);
    }
    return out;
}

}  // namespace

bool has_step_program(const Certificate& c) {
    const ScheduleFamily* family = find_family(c.family);
    return family && family->step_program;
}

std::string check_step_program(const Certificate& c, const Placement& base) {
    const ScheduleFamily* family = find_family(c.family);
    if (!family || !family->step_program) reject(kStep, c.family + " has no step program");
    FamilyStepProgram program;
    try {
        // Read at the first admissible M: Megatron's order has one program per residue of M modulo G.
        GenerateParams params{c.ranks, c.family_m0, c.stages_per_rank};
        params.group_size = c.group_size;
        params.segments = c.segments;
        program = family->step_program(params);
    } catch (const std::exception& e) {
        reject(kStep, fmt::format("the family's step program at P = {}: {}", c.ranks, e.what()));
    }
    const CertificateWord& w = *c.word;
    if (const auto& sc = c.structure_check;
        sc && (sc->method != "step-program" || program.m_origin != sc->from_m || program.m_step != sc->period_m))
        reject(kStep, fmt::format("the family's generator runs a step program at M = {} + {}t; the certificate names "
                                  "'{}' at {} + {}t",
                                  program.m_origin, program.m_step, sc->method, sc->from_m, sc->period_m));
    if (program.m_step != w.step || (program.m_origin - w.m_origin) % w.step != 0)
        reject(kStep, fmt::format("the program's M = {} + {}t and the word's M = {} + {}t are not one progression",
                                  program.m_origin, program.m_step, w.m_origin, w.step));
    if (static_cast<int>(program.ranks.size()) != c.ranks)
        reject(kStep, fmt::format("the program has {} ranks, the certificate {}", program.ranks.size(), c.ranks));
    // Compare from the later of the two origins; the certificate's word before the program's origin is compared
    // with the generator instance by instance.
    const int later = std::max(program.m_origin, w.m_origin);
    if ((later - std::min(program.m_origin, w.m_origin)) / w.step > kMaxOriginBlocks)
        reject(kStep, fmt::format("the program's origin M = {} and the word's M = {} are more than {} blocks apart",
                                  program.m_origin, w.m_origin, kMaxOriginBlocks));
    const int program_blocks = (later - program.m_origin) / w.step, word_blocks = (later - w.m_origin) / w.step;
    for (int t = 0; t < word_blocks; ++t) {
        const int m = w.m_origin + w.step * t;
        const std::string diff = first_difference(generate(c, m), instantiate(w, base, t));
        if (!diff.empty()) reject(kStep, fmt::format("at M = {} the generator and the word differ: {}", m, diff));
    }
    CertificateWord from_program;
    from_program.m_origin = program.m_origin;
    from_program.step = w.step;
    from_program.delta = w.delta;
    for (int r = 0; r < c.ranks; ++r) add_rank_word(program.ranks[r], r, base.pipeline_count(), w.delta, from_program);
    const CertificateWord derived = rebased(from_program, program_blocks), word = rebased(w, word_blocks);
    const Placement at_later = instantiate(w, base, word_blocks).placement;
    const int horizon = std::max(agreement_horizon(word), agreement_horizon(derived));
    for (int t = 0; t <= horizon; ++t) {
        const std::string diff = first_difference(instantiate(derived, at_later, t), instantiate(word, at_later, t));
        if (!diff.empty())
            reject(kStep, fmt::format("at M = {} the step program's word and the certificate's differ: {}",
                                      later + w.step * t, diff));
    }
    return fmt::format("the generator runs the family's step program (M = {} + {}t); on every rank exactly one loop "
                       "grows, and one iteration of it raises every counter and every queued W by the word's deltas "
                       "(executed by the checker), so the program's order is a periodic word for every t (Lemma 2); "
                       "that word equals the certificate's for M = {}..{} (Lemma 1){}",
                       program.m_origin, program.m_step, later, later + w.step * horizon,
                       word_blocks > 0 ? fmt::format(", and the generator equals the certificate's word at M = {}..{}",
                                                     w.m_origin, later - w.step)
                                       : std::string());
}

}  // namespace pp::check
