// Seq1F1B (Ao et al., arXiv 2406.03488): 1F1B over sequence segments. Each micro-batch's sequence is cut into k
// segments; a rank runs 1F1B over the M*k segment units, forwards in segment order and backwards in reverse.
// Order from sail-sg/zero-bubble-pipeline-parallelism@39f2c186 scheduler/seq1f1b.py create_schedule, identical to
// the authors' thunlp/Seq1F1B@68934661 (schedules.py warm-up with sp_utils.py's sp_queue) on every instance of
// tests/reference/seq1f1b_orders.txt (semantics and dependencies: tests/reference/SEQ1F1B.md). Rank r, 0-based:
//
//   w = min(P - r - 2 + k, M*k)                warm-up forwards, counted in segments (1F1B's P - r - 1, plus k - 1)
//   F_0 .. F_{w-1};  for i in 0 .. M*k-w-1: F_{w+i}, B_i;  then B_{M*k-w} .. B_{M*k-1}
//
// where forward number i is F(micro-batch i div k, segment i mod k) and backward number i is
// B(i div k, k-1 - i mod k). k = 1 is 1F1B with Megatron's warm-up min(P - r - 1, M). Letters: the reference's BW
// is our B (no I/W split). Ops name segment units: unit m*k + j is segment j of micro-batch m (Schedule::segments).
// In-flight units per rank peak at min(P - r + k - 1, M*k), each 1/k of a micro-batch's stash.
// Preconditions: none on M (M < P runs all forwards, then all backwards); the references need flash attention
// and a sequence length divisible by k, which the order does not see.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"
#include "schedules/step_program.hpp"

#include <algorithm>
#include <limits>

namespace pp {
namespace {

Op seq_forward(int stage, int number) { return Op{OpKind::F, 0, stage, number}; }

Op seq_backward(int stage, int number, int k) { return Op{OpKind::B, 0, stage, number / k * k + (k - 1 - number % k)}; }

std::vector<Slot> seq1f1b_rank(int P, int r, int units, int k) {
    const int w = std::min(P - r - 2 + k, units);
    std::vector<Slot> slots;
    slots.reserve(2 * static_cast<size_t>(units));
    for (int i = 0; i < w; ++i) slots.push_back(Slot::single(seq_forward(r, i)));
    for (int i = 0; i < units - w; ++i) {
        slots.push_back(Slot::single(seq_forward(r, w + i)));
        slots.push_back(Slot::single(seq_backward(r, i, k)));
    }
    for (int i = units - w; i < units; ++i) slots.push_back(Slot::single(seq_backward(r, i, k)));
    return slots;
}

int segments_of(const GenerateParams& params) {
    const int k = params.segments.value_or(kDefaultSegments);
    if (k < 1) throw GenerateError("Seq1F1B needs at least one segment per micro-batch, got k = " + std::to_string(k));
    return k;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

// The same order as a step program, for M >= c_0 = ceil((P - 2 + k)/k) (where every rank's warm-up w_r = P - r - 2 + k
// fits in the M*k units): with c_r = ceil(w_r/k) and d_r = k c_r - w_r, the M*k - w_r steady rounds are d_r fixed
// ones and M - c_r blocks of k, so rank r at M = c_0 + t runs
//   F x w_r;  (F, B) x d_r;  ((F, B) x k) x (c_0 - c_r + t);  B x w_r
// on a phase of k segments (its backward counter names the units in reverse segment order).
FamilyStepProgram step_program_seq1f1b(const GenerateParams& params) {
    const int P = params.ranks, k = segments_of(params);
    const int c0 = ceil_div(P - 2 + k, k);
    FamilyStepProgram program{std::max(c0, 1), 1, {}};
    for (int r = 0; r < P; ++r) {
        const int w = std::max(P - r - 2 + k, 0), c = ceil_div(w, k), d = k * c - w;
        std::vector<StepToken> round;
        for (int j = 0; j < k; ++j) round.push_back(forward(0)), round.push_back(full_backward(0));
        program.ranks.push_back(StepProgramBuilder({StepPhase{0, r, k}})
                                    .repeat(w, {forward(0)})
                                    .repeat(d, {forward(0), full_backward(0)})
                                    .repeat(program.m_origin - c, round, /*slope=*/1)
                                    .repeat(w, {full_backward(0)})
                                    .take());
    }
    return program;
}

Schedule generate_seq1f1b(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Seq1F1B");
    require_one_stage_per_rank(params, "Seq1F1B");
    const int P = params.ranks, M = params.microbatches, k = segments_of(params);
    const long long units = static_cast<long long>(M) * k;
    if (units > std::numeric_limits<std::int32_t>::max())
        throw GenerateError("Seq1F1B with M = " + std::to_string(M) + " and k = " + std::to_string(k) +
                            ": M*k segment units pass the largest micro-batch number");
    Schedule schedule;
    schedule.placement = Placement::single(P, loop_stage_map(P, P), static_cast<int>(units));
    schedule.segments = k;
    // From the step program's origin on, the program (the same order: tests/test_seq1f1b.cpp); below it the loops
    // above, where the warm-up is cut at M*k.
    const FamilyStepProgram program = step_program_seq1f1b(params);
    if (M >= program.m_origin)
        for (const RankStepProgram& rank : program.ranks) schedule.ranks.push_back(run_step_program(rank, M - program.m_origin));
    else
        for (int r = 0; r < P; ++r) schedule.ranks.push_back(seq1f1b_rank(P, r, static_cast<int>(units), k));
    std::string label = schedule_label("seq1f1b", P, M);  // "seq1f1b(P=4,M=8)"
    label.insert(label.size() - 1, ",k=" + std::to_string(k));
    schedule.source = label;
    return schedule;
}

}  // namespace pp
