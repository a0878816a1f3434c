// DeepSeek DualPipe: the per-rank order of DualPipe.step() (deepseek-ai/DualPipe @ 3da1bbe,
// dualpipe/dualpipe.py), described in /work/shared/reference/dualpipe.md.
//
// Placement: Placement::bidirectional(P, M/2). Pipeline 0 (the reference's forward direction) enters
// at rank 0, stage s on rank s; pipeline 1 (the reverse direction) enters at rank P-1, stage s on rank
// P-1-s. Micro-batches are numbered within their pipeline, 0..M/2-1, like the reference's chunks.
//
// Each rank holds stage h of one pipeline and stage P-1-h of the other, h = min(r, P-1-r). The
// reference's local phase 0 is the forward direction on ranks r < P/2 and the reverse direction on
// ranks r >= P/2 (phase ^= is_in_second_half), so ranks r and P-1-r run the same program with the
// pipelines exchanged; in both cases phase 0 is the pipeline whose stage h sits on this rank.
#include "schedules/dualpipe_steps.hpp"
#include "schedules/families.hpp"

#include <string>

namespace pp {
namespace {

// The reference asserts `num_ranks % 2 == 0` and
// `num_chunks > 0 and num_chunks % 2 == 0 and num_chunks >= num_ranks * 2`.
void check_dualpipe_preconditions(const GenerateParams& params) {
    const int P = params.ranks, M = params.microbatches;
    const std::string given = " (P=" + std::to_string(P) + ", M=" + std::to_string(M) + ")";
    if (P < 1) throw GenerateError("dualpipe needs at least one rank" + given);
    if (P % 2 != 0)
        throw GenerateError("dualpipe needs an even number of ranks: the reference asserts num_ranks % 2 == 0" +
                            given);
    if (!(M > 0 && M % 2 == 0 && M >= 2 * P))
        throw GenerateError(
            "dualpipe needs M even and M >= 2P: the reference asserts num_chunks > 0 and num_chunks % 2 == 0 "
            "and num_chunks >= num_ranks * 2" +
            given);
    if (params.stages_per_rank && *params.stages_per_rank != 2)
        throw GenerateError("dualpipe holds exactly 2 stages per rank (one per direction), not V=" +
                            std::to_string(*params.stages_per_rank));
}

DualPipeRank dualpipe_rank(int ranks, int microbatches, int rank) {
    const bool second_half = rank >= ranks / 2;
    const int h = second_half ? ranks - 1 - rank : rank;
    // Activations of pipeline 0 flow to rank r+1, those of pipeline 1 to rank r-1; no neighbour past the ends.
    const int lower = rank > 0 ? rank - 1 : -1, upper = rank + 1 < ranks ? rank + 1 : -1;
    const PhaseLocation down{0, rank, lower, upper};            // pipeline 0: stage s on rank s
    const PhaseLocation up{1, ranks - 1 - rank, upper, lower};  // pipeline 1: stage s on rank P-1-s
    DualPipeRank shape;
    shape.ranks_per_half = ranks / 2;
    shape.distance = h;
    shape.microbatches = microbatches / 2;
    shape.phase = second_half ? std::array<PhaseLocation, 2>{up, down} : std::array<PhaseLocation, 2>{down, up};
    return shape;
}

}  // namespace

// M = 2P + 2t: H = P + t micro-batches per pipeline.
FamilyStepProgram step_program_dualpipe(const GenerateParams& params) {
    check_dualpipe_preconditions(GenerateParams{params.ranks, 2 * params.ranks, std::nullopt});
    FamilyStepProgram program{2 * params.ranks, 2, {}};
    for (int r = 0; r < params.ranks; ++r)
        program.ranks.push_back(dualpipe_step_program(dualpipe_rank(params.ranks, 2 * params.ranks, r)));
    return program;
}

Schedule generate_dualpipe(const GenerateParams& params) {
    check_dualpipe_preconditions(params);
    Schedule schedule;
    schedule.source = "dualpipe(P=" + std::to_string(params.ranks) + ",M=" + std::to_string(params.microbatches) + ")";
    schedule.placement = Placement::bidirectional(params.ranks, params.microbatches / 2);
    // Each rank also carries the reference's communication order (dualpipe.md section d).
    schedule.comm_program.emplace();
    for (int r = 0; r < params.ranks; ++r) {
        DualPipeRankProgram program = dualpipe_rank_program(dualpipe_rank(params.ranks, params.microbatches, r));
        schedule.ranks.push_back(std::move(program.slots));
        schedule.comm_program->push_back(std::move(program.comm));
    }
    return schedule;
}

}  // namespace pp
