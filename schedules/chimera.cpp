// Chimera with two pipelines (S. Li and T. Hoefler, "Chimera: Efficiently Training Large-Scale Neural
// Networks with Bidirectional Pipelines", SC'21, arXiv:2107.06925).
//
// What is implemented, and from where:
// - The basic scheduling unit (paper section 3, its Figure with D = 4): D = P stages, N = D
//   micro-batches split equally between a "down" and an "up" pipeline, each pipeline scheduled with
//   1F1B over its N/2 micro-batches, and the two merged per worker -- D even guarantees the merge has
//   no conflict. Backwards are unsplit. The per-worker interleaving is the one the authors' SC'21
//   runtime executes: github.com/Shigangli/Chimera @ 7be5274, chimera/chimera_bert/bert/
//   main_with_runtime.py (the `args.chimera` training loop); it keeps each pipeline's own 1F1B order.
// - N = K*D by "direct concatenation" of K basic units, as the same repository's
//   main_with_runtime_direct.py runs it: the tail backwards of unit k alternate with the head
//   forwards of unit k+1. (The paper's other N > D variants, forward doubling and backward halving,
//   change micro-batch sizes or add recomputation and are not modelled.)
//
// Placement: Placement::bidirectional(P, M/2). Pipeline 0 ("down") has stage s on rank s; pipeline 1
// ("up") has stage s on rank P-1-s; micro-batches are numbered within their pipeline and processed
// first-in first-out, forward and backward alike (PipeDream's runtime queues).
//
// Per rank, with h = min(r, P-1-r), a = P/2 - h and b = h (the runtime's schedule_number_a/_b), X the
// pipeline whose stage h lies on this rank (down on ranks r < P/2, up otherwise) and Y the other one:
//   unit 0 head:    a x F(X)
//   unit k>0 head:  a x [B(X), F(X)]          (B(X) finishing unit k-1)
//   every unit:     b x [F(Y), F(X)],  a x [F(Y), B(Y)],  b x [B(X), B(Y)]
//   after unit K-1: a x B(X)
// Each unit therefore runs P/2 forwards and P/2 backwards of each pipeline.
//
// Preconditions, from the authors' code (pipeline.py `_call_chimera_pipeline` at HEAD 6b78ac7 asserts
// 'The number of stages should be an even value.' and 'num_micro_batches*2 should be a multiple of
// num_stages.', num_micro_batches counting one direction; the SC'21 loop needs the same, K = M/P whole
// units): P even, M > 0 and M a multiple of P.
#include "schedules/families.hpp"
#include "schedules/step_program.hpp"

#include <array>
#include <string>

namespace pp {
namespace {

constexpr int kNear = 0;  // X: the pipeline whose stage h sits on this rank
constexpr int kFar = 1;   // Y: the other pipeline

void check_chimera_preconditions(const GenerateParams& params) {
    const int P = params.ranks, M = params.microbatches;
    const std::string given = " (P=" + std::to_string(P) + ", M=" + std::to_string(M) + ")";
    if (P < 2 || P % 2 != 0)
        throw GenerateError("chimera needs an even number of ranks: 'The number of stages should be an even value.'" +
                            given);
    if (M < 1 || M % P != 0)
        throw GenerateError(
            "chimera needs M a positive multiple of P (K basic units of P micro-batches): "
            "'num_micro_batches*2 should be a multiple of num_stages.'" +
            given);
    if (params.stages_per_rank && *params.stages_per_rank != 2)
        throw GenerateError("chimera holds exactly 2 stages per rank (one per direction), not V=" +
                            std::to_string(*params.stages_per_rank));
}

// Rank r's step program with K = 1 + t units: unit 0's head and body, t units (each a head finishing the previous
// unit's backwards, then the body), the last unit's tail. Phase kNear is X, kFar is Y.
RankStepProgram chimera_rank_program(int ranks, int r) {
    const int h = r < ranks / 2 ? r : ranks - 1 - r;
    const int a = ranks / 2 - h, b = h;
    const StepPhase down{0, r}, up{1, ranks - 1 - r};
    StepProgramBuilder program(r < ranks / 2 ? std::vector<StepPhase>{down, up} : std::vector<StepPhase>{up, down});
    // The body of one basic unit after its head: b x [F(Y), F(X)], a x [F(Y), B(Y)], b x [B(X), B(Y)].
    auto body = [&](std::vector<StepToken>& out) {
        for (int i = 0; i < b; ++i) out.insert(out.end(), {forward(kFar), forward(kNear)});
        for (int i = 0; i < a; ++i) out.insert(out.end(), {forward(kFar), full_backward(kFar)});
        for (int i = 0; i < b; ++i) out.insert(out.end(), {full_backward(kNear), full_backward(kFar)});
    };
    std::vector<StepToken> first(static_cast<size_t>(a), forward(kNear)), later;
    body(first);
    for (int i = 0; i < a; ++i) later.insert(later.end(), {full_backward(kNear), forward(kNear)});  // direct concatenation
    body(later);
    return program.once(first).repeat(0, later, /*slope=*/1).repeat(a, {full_backward(kNear)}).take();
}

}  // namespace

// M = P + P·t: K = 1 + t basic units.
FamilyStepProgram step_program_chimera(const GenerateParams& params) {
    check_chimera_preconditions(GenerateParams{params.ranks, params.ranks, std::nullopt});
    FamilyStepProgram program{params.ranks, params.ranks, {}};
    for (int r = 0; r < params.ranks; ++r) program.ranks.push_back(chimera_rank_program(params.ranks, r));
    return program;
}

Schedule generate_chimera(const GenerateParams& params) {
    check_chimera_preconditions(params);
    const int P = params.ranks, M = params.microbatches;
    return schedule_from_step_program(step_program_chimera(params), Placement::bidirectional(P, M / 2), M,
                                      "chimera(P=" + std::to_string(P) + ",M=" + std::to_string(M) + ")");
}

}  // namespace pp
