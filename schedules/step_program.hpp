#pragma once
// Step programs: a rank's order as data, so that "the generator is a periodic word for every M" is checked on
// the program instead of read off the code (proofs/method.md §1, Lemma 2).
//
// A program is a sequence of loops. A loop's trip count is affine in t -- base + slope·t, where the family's
// admissible M are m_origin + m_step·t -- and its body is a fixed list of tokens, the same in every
// iteration and for every M. A token never names a micro-batch: F takes the next forward counter of its
// phase, B and I the next backward counter, an I also queues its W, and W runs the oldest queued W (DeepSeek's
// WeightGradStore; the Zero Bubble hand schedules' W's, which follow their I's in order, are the same queue).
// The comm tokens (and the recv/send flags) only describe DeepSeek's communication calls, and Idle tokens PyTorch's
// empty cells; they run no op.
//
// A *zone program* (GPipe, Looped BFS: ScheduleFamily::zone_program) has several loops of slope 1 per rank, one per
// run of ops that grows with M, and may count a phase's F's or B's *down*: a token marked `descending` takes the
// counter's uses still to come, n-1, n-2, ..., 0 for a run that uses it n times (Looped BFS's backwards run
// M-1..0). n is the program's own count, so no token names M. Its zone word is derived from the program by
// symbolic execution (proofs/zone_word.hpp, zone_word_of_program); Lemma 2 does not apply to it.
//
// The families whose generators run a program (1F1B, ZB-H1, ZB-H2, DualPipe, DualPipeV, Chimera, combined 1F1B;
// interleaved 1F1B and ZB1P on M = kP, ZB-V from M = 2P-1, Megatron's tunable order on M = kG from 3G, group-interleaved
// 1F1B on M = kG from the groups one group spans) expose it
// through ScheduleFamily::step_program, and on the program's M their generator's order is run_step_program of that
// program. (DualPipe and DualPipeV build the program per rank from
// a shape whose micro-batch count the program does not read; interleaved 1F1B and ZB1P run PyTorch's walk on the
// other M, and ZB1P's bubble pass then adds idle cells only.)
#include "model/op.hpp"
#include "model/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace pp {

// Where one local phase of a rank runs: the ops of its tokens are (pipeline, stage, counter).
struct StepPhase {
    int pipeline = 0;
    int stage = 0;
    // Seq1F1B: with k > 1 the phase's ops are sequence-segment units (Schedule::segments), and its backward counter c
    // names unit floor(c/k)*k + (k-1 - c mod k): each micro-batch's segments backwards in reverse order. The map
    // commutes with a raise by a multiple of k, which Lemma 2's conditions then require of the phase's delta.
    int segments = 1;
};

enum class StepTokenKind : std::uint8_t {
    F,             // forward of `phase`
    B,             // full backward of `phase`
    I,             // input-gradient backward of `phase`; its W joins the queue
    W,             // the oldest queued W
    WeightOf,      // the oldest queued W of `phase` (per-stage W queues, as ZB-V's)
    Pair,          // overlapped (F of `phase` ; B of `backward_phase`)
    RecvForward,   // communication only (DeepSeek's _recv_forward etc. of `phase`)
    SendForward,
    RecvBackward,
    SendBackward,
    Idle,          // an empty cell of PyTorch's lock-step rows (a drawing aid, Schedule::gaps): no op, no state
};

struct StepToken {
    StepTokenKind kind = StepTokenKind::F;
    int phase = 0;
    int backward_phase = 0;  // Pair only
    bool recv = true;                 // the compute wrapper queues its receive (DeepSeek's recv flag)
    bool send = true;                 // ... and its send
    bool descending = false;          // F and B only: the counter counts down (a zone program's descending run)
    friend bool operator==(const StepToken&, const StepToken&) = default;
};

// base + slope·t iterations.
struct StepLoop {
    int base = 0;
    int slope = 0;
    std::vector<StepToken> body;
    friend bool operator==(const StepLoop&, const StepLoop&) = default;
};

struct RankStepProgram {
    std::vector<StepPhase> phases;
    std::vector<StepLoop> loops;
};

// One program per rank, for the M = m_origin + m_step·t.
struct FamilyStepProgram {
    int m_origin = 1;
    int m_step = 1;
    std::vector<RankStepProgram> ranks;
};

// Appends loops; `repeat` with a slope of 0 is a fixed loop, `once` a straight line.
class StepProgramBuilder {
public:
    explicit StepProgramBuilder(std::vector<StepPhase> phases) { program_.phases = std::move(phases); }
    StepProgramBuilder& repeat(int base, std::vector<StepToken> body, int slope = 0);
    StepProgramBuilder& once(std::vector<StepToken> body) { return repeat(1, std::move(body)); }
    RankStepProgram take() { return std::move(program_); }

private:
    RankStepProgram program_;
};

StepToken forward(int phase, bool recv = true, bool send = true);
StepToken full_backward(int phase, bool recv = true, bool send = true);
StepToken input_backward(int phase);
StepToken weight();
StepToken weight_of(int phase);
StepToken overlapped(int forward_phase, int backward_phase, bool recv_forward_input = true);
StepToken comm(StepTokenKind kind, int phase);
StepToken idle();
// The same F or B token counting its phase's counter down (std::invalid_argument for another kind).
StepToken counted_down(StepToken token);

// Told every token as it runs, with the slot it ran (nullptr for a comm token): DeepSeek's communication
// order is built this way (schedules/dualpipe_steps.cpp).
class StepObserver {
public:
    virtual ~StepObserver() = default;
    virtual void token(const StepToken& token, const Slot* slot) = 0;
};

// The program's order at t. Throws std::invalid_argument for a program that cannot run: a negative trip
// count, a phase out of range, a W with an empty queue, one counter used both ascending and descending.
std::vector<Slot> run_step_program(const RankStepProgram& program, int t, StepObserver* observer = nullptr);

// (The W's of every phase share one queue: W takes its front, WeightOf the first entry of its phase.)
// Lemma 2's side conditions (proofs/method.md §1) on a family's program, for the prover: on every rank exactly one
// loop of slope 1, the others of slope 0, no negative base; one iteration of the growing loop, from the state its
// fixed iterations leave, raises both counters of every phase of pipeline p by one delta_p, the same on every rank,
// and leaves the queued W's the same with each raised by delta of its pipeline; no token counts down. "" when they
// hold, else why not.
// (pipeproof-check re-executes this with its own interpreter, checker/step_program.cpp.)
// `delta`, when given, gets delta_p per pipeline.
std::string step_program_lemma2_failure(const FamilyStepProgram& program, std::vector<int>* delta = nullptr);

// Every rank's program run at M (m_origin + m_step·t, else std::invalid_argument), on `placement`; its Idle tokens
// become Schedule::gaps.
Schedule schedule_from_step_program(const FamilyStepProgram& program, Placement placement, int microbatches,
                                    std::string source);

// "F0 B1 (F0;B1)" for a body, for messages.
std::string format_step_tokens(const std::vector<StepToken>& body);

}  // namespace pp
