// The one interpreter of step programs. Its whole state is two counters per phase and the queue of W's, which
// is what Lemma 2 (proofs/method.md §1) reasons about and what pipeproof-check re-executes on its own.
#include "schedules/step_program.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace pp {

StepProgramBuilder& StepProgramBuilder::repeat(int base, std::vector<StepToken> body, int slope) {
    program_.loops.push_back(StepLoop{base, slope, std::move(body)});
    return *this;
}

StepToken forward(int phase, bool recv, bool send) {
    return StepToken{StepTokenKind::F, phase, 0, recv, send};
}
StepToken full_backward(int phase, bool recv, bool send) {
    return StepToken{StepTokenKind::B, phase, 0, recv, send};
}
StepToken input_backward(int phase) { return StepToken{StepTokenKind::I, phase}; }
StepToken weight() { return StepToken{StepTokenKind::W}; }
StepToken weight_of(int phase) { return StepToken{StepTokenKind::WeightOf, phase}; }
StepToken overlapped(int forward_phase, int backward_phase, bool recv_forward_input) {
    return StepToken{StepTokenKind::Pair, forward_phase,
                     backward_phase, recv_forward_input, true};
}
StepToken comm(StepTokenKind kind, int phase) { return StepToken{kind, phase}; }
StepToken idle() { return StepToken{StepTokenKind::Idle}; }
StepToken counted_down(StepToken token) {
    if (token.kind != StepTokenKind::F && token.kind != StepTokenKind::B)
        throw std::invalid_argument("step program: only an F or a B token counts down");
    token.descending = true;
    return token;
}

namespace {

class Interpreter {
public:
    Interpreter(const RankStepProgram& program, StepObserver* observer)
        : program_(program), observer_(observer), forwards_(program.phases.size()), backwards_(program.phases.size()) {}

    void run(const StepToken& token) {
        switch (token.kind) {
            case StepTokenKind::F: emit(token, Slot::single(next(OpKind::F, token))); break;
            case StepTokenKind::B: emit(token, Slot::single(next(OpKind::B, token))); break;
            case StepTokenKind::I: {
                const Op input_grad = next(OpKind::I, token);
                Op weight = input_grad;
                weight.kind = OpKind::W;
                queued_weights_.push_back(weight);
                emit(token, Slot::single(input_grad));
                break;
            }
            case StepTokenKind::W: {
                if (queued_weights_.empty()) throw std::invalid_argument("step program: a W with no I queued before it");
                const Op w = queued_weights_.front();
                queued_weights_.pop_front();
                emit(token, Slot::single(w));
                break;
            }
            case StepTokenKind::WeightOf: {
                const StepPhase& where = phase(token.phase);
                const auto it = std::find_if(queued_weights_.begin(), queued_weights_.end(), [&](const Op& w) {
                    return w.pipeline == where.pipeline && w.stage == where.stage;
                });
                if (it == queued_weights_.end())
                    throw std::invalid_argument("step program: a W of phase " + std::to_string(token.phase) +
                                                " with no I of that phase queued before it");
                const Op w = *it;
                queued_weights_.erase(it);
                emit(token, Slot::single(w));
                break;
            }
            case StepTokenKind::Pair: {
                const Op f = next(OpKind::F, token);
                StepToken backward = token;
                backward.phase = token.backward_phase;
                emit(token, Slot::pair(f, next(OpKind::B, backward)));
                break;
            }
            default:
                phase(token.phase);
                if (observer_) observer_->token(token, nullptr);
        }
    }

    std::vector<Slot> take() { return std::move(slots_); }

    // A descending counter of (phase, forward or backward) starts at its uses in the whole run minus one.
    void count_down_from(const std::vector<long long>& forward_uses, const std::vector<long long>& backward_uses) {
        for (size_t ph = 0; ph < forwards_.size(); ++ph) {
            if (forward_uses[ph] > 0) forwards_[ph] = static_cast<int>(forward_uses[ph] - 1);
            if (backward_uses[ph] > 0) backwards_[ph] = static_cast<int>(backward_uses[ph] - 1);
        }
    }

    struct State {
        std::vector<int> forwards, backwards;
        std::deque<Op> weights;
    };
    State state() const { return {forwards_, backwards_, queued_weights_}; }

private:
    const StepPhase& phase(int index) const {
        if (index < 0 || index >= static_cast<int>(program_.phases.size()))
            throw std::invalid_argument("step program: phase " + std::to_string(index) + " out of range");
        return program_.phases[index];
    }
    Op next(OpKind kind, const StepToken& token) {
        const StepPhase& where = phase(token.phase);
        int& counter = kind == OpKind::F ? forwards_[token.phase] : backwards_[token.phase];
        const int taken = token.descending ? counter-- : counter++;
        const int k = where.segments;
        return Op{kind, where.pipeline, where.stage, kind == OpKind::F || k <= 1 ? taken : taken / k * k + (k - 1 - taken % k)};
    }
    void emit(const StepToken& token, const Slot& slot) {
        slots_.push_back(slot);
        if (observer_) observer_->token(token, &slots_.back());
    }

    const RankStepProgram& program_;
    StepObserver* observer_;
    std::vector<int> forwards_, backwards_;
    std::deque<Op> queued_weights_;
    std::vector<Slot> slots_;
};

void run_loop(Interpreter& interpreter, const StepLoop& loop, long long trips) {
    if (trips < 0) throw std::invalid_argument("step program: a loop runs " + std::to_string(trips) + " times");
    for (long long k = 0; k < trips; ++k)
        for (const StepToken& token : loop.body) interpreter.run(token);
}

// The rank's growing loop's index, or why the loops do not have Lemma 2's shape.
std::string growing_loop(const RankStepProgram& program, size_t& growing) {
    growing = program.loops.size();
    for (size_t i = 0; i < program.loops.size(); ++i) {
        const StepLoop& loop = program.loops[i];
        if (loop.base < 0) return "loop " + std::to_string(i) + " has a negative base";
        if (loop.slope == 0) continue;
        if (loop.slope != 1 || growing != program.loops.size())
            return "loop " + std::to_string(i) + " has slope " + std::to_string(loop.slope) +
                   " (Lemma 2: one loop of slope 1, the others 0)";
        growing = i;
    }
    return growing == program.loops.size() ? "no loop grows with t" : "";
}

// One rank's side conditions; delta[p] is set by the first rank with a phase of pipeline p (-1: not yet).
std::string rank_lemma2_failure(const RankStepProgram& program, std::vector<int>& delta) {
    for (size_t i = 0; i < program.loops.size(); ++i)
        for (const StepToken& token : program.loops[i].body)
            if (token.descending)
                return "loop " + std::to_string(i) + " counts a phase down (a zone program's token: its start depends "
                       "on the run's length)";
    size_t g = 0;
    if (std::string why = growing_loop(program, g); !why.empty()) return why;
    Interpreter interpreter(program, nullptr);
    for (size_t i = 0; i <= g; ++i) run_loop(interpreter, program.loops[i], program.loops[i].base);
    const Interpreter::State before = interpreter.state();
    run_loop(interpreter, program.loops[g], 1);
    const Interpreter::State after = interpreter.state();
    for (size_t ph = 0; ph < program.phases.size(); ++ph) {
        const int p = program.phases[ph].pipeline;
        if (p < 0 || p >= static_cast<int>(delta.size())) return "phase " + std::to_string(ph) + " has pipeline " + std::to_string(p);
        const int forward = after.forwards[ph] - before.forwards[ph], backward = after.backwards[ph] - before.backwards[ph];
        if (delta[p] < 0) delta[p] = forward;
        if (forward != delta[p] || backward != delta[p])
            return "one iteration of the growing loop advances phase " + std::to_string(ph) + "'s counters by " +
                   std::to_string(forward) + " and " + std::to_string(backward) + ", pipeline " + std::to_string(p) +
                   "'s delta is " + std::to_string(delta[p]);
        const int k = program.phases[ph].segments;
        if (k < 1 || delta[p] % k != 0)
            return "phase " + std::to_string(ph) + " has " + std::to_string(k) + " segments per micro-batch, but one " +
                   "iteration raises its counters by " + std::to_string(delta[p]) + ", not a multiple of them";
    }
    if (after.weights.size() != before.weights.size()) return "one iteration of the growing loop changes the W queue's length";
    for (size_t k = 0; k < before.weights.size(); ++k) {
        Op raised = before.weights[k];
        raised.microbatch += delta[raised.pipeline];
        if (!(raised == after.weights[k])) return "one iteration of the growing loop does not raise queued W " + std::to_string(k);
    }
    return "";
}

}  // namespace

std::string step_program_lemma2_failure(const FamilyStepProgram& program, std::vector<int>* delta_out) {
    int pipelines = 0;
    for (const RankStepProgram& rank : program.ranks)
        for (const StepPhase& phase : rank.phases) pipelines = std::max(pipelines, phase.pipeline + 1);
    std::vector<int> delta(pipelines, -1);
    try {
        for (size_t r = 0; r < program.ranks.size(); ++r)
            if (std::string why = rank_lemma2_failure(program.ranks[r], delta); !why.empty())
                return "rank " + std::to_string(r) + ": " + why;
    } catch (const std::invalid_argument& e) {
        return e.what();  // a program that cannot run (a W with nothing queued, a phase out of range)
    }
    for (int p = 0; p < pipelines; ++p)
        if (delta[p] < 1) return "pipeline " + std::to_string(p) + " does not grow";
    if (delta_out) *delta_out = std::move(delta);
    return "";
}

namespace {

// How often each descending counter is used at t (so that it counts down to 0); a counter used both ways, or a
// count past int, cannot run.
void count_down_counters(const RankStepProgram& program, int t, Interpreter& interpreter) {
    const size_t phases = program.phases.size();
    std::vector<long long> down[2] = {std::vector<long long>(phases, 0), std::vector<long long>(phases, 0)};
    std::vector<char> up[2] = {std::vector<char>(phases, 0), std::vector<char>(phases, 0)};
    bool any = false;
    for (const StepLoop& loop : program.loops) {
        const long long trips = static_cast<long long>(loop.base) + static_cast<long long>(loop.slope) * t;
        for (const StepToken& token : loop.body) {
            if (token.descending && token.kind != StepTokenKind::F && token.kind != StepTokenKind::B)
                throw std::invalid_argument("step program: only an F or a B token counts down");
            const bool counts = token.kind == StepTokenKind::F || token.kind == StepTokenKind::B ||
                                token.kind == StepTokenKind::I || token.kind == StepTokenKind::Pair;
            if (!counts || token.phase < 0 || static_cast<size_t>(token.phase) >= phases) continue;
            const int side = token.kind == StepTokenKind::F || token.kind == StepTokenKind::Pair ? 0 : 1;
            if (token.kind == StepTokenKind::Pair && token.backward_phase >= 0 &&
                static_cast<size_t>(token.backward_phase) < phases)
                up[1][token.backward_phase] = 1;
            if (!token.descending) {
                up[side][token.phase] = 1;
                continue;
            }
            any = true;
            if (trips > 0) down[side][token.phase] += trips;
            if (down[side][token.phase] > (1LL << 30))
                throw std::invalid_argument("step program: a descending counter used more than 2^30 times");
        }
    }
    if (!any) return;
    for (int side = 0; side < 2; ++side)
        for (size_t ph = 0; ph < phases; ++ph)
            if (up[side][ph] && down[side][ph] > 0)
                throw std::invalid_argument("step program: phase " + std::to_string(ph) + "'s " +
                                            (side == 0 ? "forward" : "backward") +
                                            " counter is used both ascending and descending");
    interpreter.count_down_from(down[0], down[1]);
}

}  // namespace

std::vector<Slot> run_step_program(const RankStepProgram& program, int t, StepObserver* observer) {
    Interpreter interpreter(program, observer);
    count_down_counters(program, t, interpreter);
    for (const StepLoop& loop : program.loops)
        run_loop(interpreter, loop, static_cast<long long>(loop.base) + static_cast<long long>(loop.slope) * t);
    return interpreter.take();
}

namespace {

// Schedule::gaps of one rank: the Idle tokens before each slot, and after the last.
class GapCounter : public StepObserver {
public:
    void token(const StepToken& token, const Slot* slot) override {
        if (slot) {
            gaps_.push_back(0);
        } else if (token.kind == StepTokenKind::Idle) {
            ++gaps_.back();
            any_ = true;
        }
    }
    bool any() const { return any_; }
    std::vector<int> take() { return std::move(gaps_); }

private:
    std::vector<int> gaps_{0};
    bool any_ = false;
};

}  // namespace

Schedule schedule_from_step_program(const FamilyStepProgram& program, Placement placement, int microbatches,
                                    std::string source) {
    const int M = microbatches;
    if (program.m_step < 1 || M < program.m_origin || (M - program.m_origin) % program.m_step != 0)
        throw std::invalid_argument("step program: M = " + std::to_string(M) + " is not " +
                                    std::to_string(program.m_origin) + " + " + std::to_string(program.m_step) + "t");
    const int t = (M - program.m_origin) / program.m_step;
    Schedule schedule;
    schedule.placement = std::move(placement);
    schedule.source = std::move(source);
    std::vector<std::vector<int>> gaps;
    bool any_gap = false;
    for (const RankStepProgram& rank : program.ranks) {
        GapCounter counter;
        schedule.ranks.push_back(run_step_program(rank, t, &counter));
        any_gap = any_gap || counter.any();
        gaps.push_back(counter.take());
    }
    if (any_gap) schedule.gaps = std::move(gaps);
    return schedule;
}

std::string format_step_tokens(const std::vector<StepToken>& body) {
    std::string out;
    for (const StepToken& token : body) {
        if (!out.empty()) out += ' ';
        const std::string p = std::to_string(token.phase);
        switch (token.kind) {
            case StepTokenKind::F: out += "F" + p + (token.descending ? "-down" : ""); break;
            case StepTokenKind::B: out += "B" + p + (token.descending ? "-down" : ""); break;
            case StepTokenKind::I: out += "I" + p; break;
            case StepTokenKind::W: out += "W"; break;
            case StepTokenKind::WeightOf: out += "W" + p; break;
            case StepTokenKind::Pair: out += "(F" + p + ";B" + std::to_string(token.backward_phase) + ")"; break;
            case StepTokenKind::RecvForward: out += "recvF" + p; break;
            case StepTokenKind::SendForward: out += "sendF" + p; break;
            case StepTokenKind::RecvBackward: out += "recvB" + p; break;
            case StepTokenKind::SendBackward: out += "sendB" + p; break;
            case StepTokenKind::Idle: out += "_"; break;
        }
    }
    return out;
}

}  // namespace pp
