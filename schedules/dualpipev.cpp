// DualPipeV: DualPipe "cut in half" (Sea AI Lab), as DeepSeek's dualpipe/dualpipev.py
// (deepseek-ai/DualPipe @ 3da1bbe) and PyTorch's ScheduleDualPipeV run it; the two agree op for op
// (/work/shared/reference/pytorch-schedules.md section 2.2), and PyTorch's artifact
// dualpipev_4rank_10mb.csv is our conformance file.
//
// Placement: one pipeline of 2P stages on the V map: rank r holds stage r (the descending leg, local
// phase 0) and stage 2P-1-r (the ascending leg, phase 1); micro-batches 0..M-1 all enter at rank 0.
// The order is DualPipe's 8 steps with n = P, h = r, H = M; rank P-1 is the turn rank.
#include "schedules/dualpipe_steps.hpp"
#include "schedules/families.hpp"

#include <string>

namespace pp {
namespace {

// DeepSeek asserts `num_chunks > 0 and num_chunks >= num_ranks * 2`; PyTorch raises "DualPipeV requires
// at least as many microbatches as stages". No parity requirement on P or M.
void check_dualpipev_preconditions(const GenerateParams& params) {
    const int P = params.ranks, M = params.microbatches;
    const std::string given = " (P=" + std::to_string(P) + ", M=" + std::to_string(M) + ")";
    if (P < 1) throw GenerateError("dualpipev needs at least one rank" + given);
    if (!(M > 0 && M >= 2 * P))
        throw GenerateError(
            "dualpipev needs at least as many micro-batches as stages, M >= 2P: the reference asserts "
            "num_chunks > 0 and num_chunks >= num_ranks * 2" +
            given);
    if (params.stages_per_rank && *params.stages_per_rank != 2)
        throw GenerateError("dualpipev holds exactly 2 stages per rank, not V=" +
                            std::to_string(*params.stages_per_rank));
}

DualPipeRank dualpipev_rank(int ranks, int microbatches, int r) {
    const int P = ranks;
    DualPipeRank shape;
    shape.ranks_per_half = P;
    shape.distance = r;
    shape.microbatches = microbatches;
    // Descending leg: stage r gets activations from rank r-1 and sends them to rank r+1; the ascending
    // leg (stage 2P-1-r) the other way. The turn on rank P-1 is local, so it has no neighbour there.
    const int lower = r > 0 ? r - 1 : -1, upper = r + 1 < P ? r + 1 : -1;
    shape.phase = {PhaseLocation{0, r, lower, upper}, PhaseLocation{0, 2 * P - 1 - r, upper, lower}};
    return shape;
}

}  // namespace

// M = 2P + t.
FamilyStepProgram step_program_dualpipev(const GenerateParams& params) {
    check_dualpipev_preconditions(GenerateParams{params.ranks, 2 * params.ranks, std::nullopt});
    FamilyStepProgram program{2 * params.ranks, 1, {}};
    for (int r = 0; r < params.ranks; ++r)
        program.ranks.push_back(dualpipe_step_program(dualpipev_rank(params.ranks, 2 * params.ranks, r)));
    return program;
}

Schedule generate_dualpipev(const GenerateParams& params) {
    check_dualpipev_preconditions(params);
    const int P = params.ranks, M = params.microbatches;
    Schedule schedule;
    schedule.source = "dualpipev(P=" + std::to_string(params.ranks) + ",M=" + std::to_string(params.microbatches) + ")";
    schedule.placement = Placement::single(P, v_stage_map(P, 2 * P), M);
    schedule.comm_program.emplace();  // the reference's communication order (dualpipe.md section d)
    for (int r = 0; r < P; ++r) {
        DualPipeRankProgram program = dualpipe_rank_program(dualpipev_rank(P, M, r));
        schedule.ranks.push_back(std::move(program.slots));
        schedule.comm_program->push_back(std::move(program.comm));
    }
    return schedule;
}

}  // namespace pp
