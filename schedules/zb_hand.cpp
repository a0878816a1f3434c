#include "schedules/zb_hand.hpp"

#include "schedules/pytorch_ir.hpp"

namespace pp {

FamilyStepProgram zb_hand_step_program(int ranks, int m_origin, int warmup_factor) {
    const int P = ranks, c = warmup_factor;
    FamilyStepProgram program{m_origin, 1, {}};
    for (int r = 0; r < P; ++r) {
        const int warmup = c * (P - 1 - r), w_lag = c * r;
        program.ranks.push_back(StepProgramBuilder({StepPhase{0, r}})
                                    .repeat(warmup, {forward(0)})
                                    .repeat(w_lag, {forward(0), input_backward(0)})
                                    .repeat(m_origin - c * (P - 1), {forward(0), input_backward(0), weight()}, 1)
                                    .repeat(warmup, {input_backward(0), weight()})
                                    .repeat(w_lag, {weight()})
                                    .take());
    }
    return program;
}

Schedule zb_hand_schedule(int ranks, int microbatches, int m_origin, int warmup_factor, const std::string& label) {
    return schedule_from_step_program(zb_hand_step_program(ranks, m_origin, warmup_factor),
                                      Placement::single(ranks, loop_stage_map(ranks, ranks), microbatches),
                                      microbatches, label);
}

}  // namespace pp
