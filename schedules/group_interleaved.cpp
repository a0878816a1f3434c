// Group-interleaved 1F1B, the compute order of PipeOffload (Wan et al., "PipeOffload", ICML 2025), as
// sail-sg/zero-bubble-pipeline-parallelism@39f2c186 builds it: scheduler/group_interleaved_1f1b.py,
// create_schedule(..., interleave_group_size=G, offload_chunk_num=K) with GroupBuildingBlockScheduler. The
// offload pass (offloading.py) only inserts transfers and barriers: the compute order is the same with and
// without it (tests/reference/PIPEOFFLOAD.md, checked on 1245 instances). Loop map: chunk c of rank r is stage
// cP + r.
//
// The order, per rank r, on a grid of slots (F, I and W one slot each, so one I and one W fit between two
// forwards of a chunk):
//   mgs = ceil(P/2) (the reference's min group size at F = I = W; it grows when F or I exceeds 3 slots' share,
//         which this generator does not model: the order is the reference's at equal costs),
//   k = ceil(mgs/G), q = gcd(V, k), L = 3GV, per = V/q,
//   slotF(c, i)  = 3kG c + 3i + r + 3G floor(c/per),
//   slotB(c', i) = slotF(V-1, 0) + 3(P-1-r) + 1 + 3kG c' + 3i + 3G floor(c'/per);
//   micro-batch m = nG + i (group n) runs F on chunk c at slotF(c, i) + nL, and I on chunk V-1-c at
//   slotB(c, i) + nL, its W one slot later. The rank's order is its ops by slot.
// A group's G forwards sweep the chunks 0..V-1, its backwards sweep them back: 1F1B over chunks in the steady
// state, with a peak that grows with G instead of with P.
// As a step program (schedules/step_program.hpp): group n's ops are group 0's moved by nL slots, each slot holds at
// most one op, and a W follows its I in the next slot. So with D = the periods group 0 spans, the slots [0, DL)
// are a fixed prefix, every period [nL, (n+1)L) from n = D to N - 1 holds one op of each of group 0's ops (of an
// earlier group), and the slots from NL on are a fixed suffix: prefix . period^(N-D) . suffix for M = NG, N >= D.
// Per phase (chunk) the forwards and the input-gradient backwards run in micro-batch order, so counters name them.
// Preconditions: P, M, V >= 1 and 1 <= G <= P (the reference treats G > P as P, with a print; here that is refused
// rather than changed silently). G defaults to ceil(P/2), the least of the range the reference's README recommends
// ("ceil(d/2) to d"); its option's own default, 0, crashes the reference.
#include "schedules/families.hpp"
#include "model/size_budget.hpp"
#include "schedules/pytorch_ir.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace pp {

namespace {

struct GroupShape {
    int P, V, M, G;
};

// The slot formulas above, for rank r.
struct GroupSlots {
    long P, V, G, r, k, L, per;
    GroupSlots(const GroupShape& s, int rank)
        : P(s.P), V(s.V), G(s.G), r(rank), k(((s.P + 1) / 2 + s.G - 1) / s.G), L(3L * s.G * s.V),
          per(s.V / std::gcd(static_cast<long>(s.V), k)) {}
    long forward(long c, long i) const { return 3 * k * G * c + 3 * i + r + 3 * G * (c / per); }
    long backward(long c, long i) const { return forward(V - 1, 0) + 3 * (P - 1 - r) + 1 + 3 * k * G * c + 3 * i + 3 * G * (c / per); }
};

std::vector<Op> group_interleaved_rank(const GroupShape& s, int r) {
    const GroupSlots slots(s, r);
    const long G = s.G, V = s.V, L = slots.L;
    std::vector<std::pair<long, Op>> timed;
    timed.reserve(static_cast<size_t>(3 * V * s.M));
    for (long m = 0; m < s.M; ++m) {
        const long n = m / G, i = m % G;
        for (long c = 0; c < V; ++c) {
            const int forward_stage = static_cast<int>(c * s.P + r), backward_stage = static_cast<int>((V - 1 - c) * s.P + r);
            timed.emplace_back(slots.forward(c, i) + n * L, op_at(OpKind::F, forward_stage, static_cast<int>(m)));
            timed.emplace_back(slots.backward(c, i) + n * L, op_at(OpKind::I, backward_stage, static_cast<int>(m)));
            timed.emplace_back(slots.backward(c, i) + 1 + n * L, op_at(OpKind::W, backward_stage, static_cast<int>(m)));
        }
    }
    std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t j = 1; j < timed.size(); ++j)
        if (timed[j].first == timed[j - 1].first) throw std::logic_error("group-interleaved: two ops share a slot");
    std::vector<Op> order;
    order.reserve(timed.size());
    for (const auto& [slot, op] : timed) order.push_back(op);
    return order;
}

// Group 0's ops on rank r as tokens at their slots; phase c is chunk c (stage cP + r).
std::vector<std::pair<long, StepToken>> group_tokens(const GroupShape& s, int r) {
    const GroupSlots slots(s, r);
    std::vector<std::pair<long, StepToken>> out;
    for (long i = 0; i < s.G; ++i)
        for (int c = 0; c < s.V; ++c) {
            out.emplace_back(slots.forward(c, i), forward(c));
            out.emplace_back(slots.backward(c, i), input_backward(s.V - 1 - c));
            out.emplace_back(slots.backward(c, i) + 1, weight());
        }
    return out;
}

// In slot order, the tokens of the copies of group 0's ops moved by n periods (slot + nL) for the n that `moves`
// yields per op: (slot, callback) -> calls callback(n) for each.
template <class Moves>
std::vector<StepToken> in_slot_order(const std::vector<std::pair<long, StepToken>>& group, long L, Moves moves) {
    std::vector<std::pair<long, StepToken>> placed;
    for (const auto& entry : group)  // not a structured binding: clang 14 cannot capture one in the lambda
        moves(entry.first, [&](long n) { placed.emplace_back(entry.first + n * L, entry.second); });
    std::sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<StepToken> out;
    for (const auto& placed_token : placed) out.push_back(placed_token.second);
    return out;
}

// D: the periods [0, DL) that group 0's ops span on the slowest rank. Its last op is the W one slot after
// backward(V - 1, G - 1): the slot formulas grow with c and i, and every forward comes before that backward.
long group_periods(const GroupShape& s) {
    long last = 0;
    for (int r = 0; r < s.P; ++r) last = std::max(last, GroupSlots(s, r).backward(s.V - 1, s.G - 1) + 1);
    return last / (3L * s.G * s.V) + 1;
}

}  // namespace

FamilyStepProgram step_program_group_interleaved(const GenerateParams& params) {
    const int P = params.ranks, V = stages_per_rank_or_default(params, "Group-interleaved 1F1B");
    const int G = params.group_size.value_or((P + 1) / 2);
    const long periods = group_periods({P, V, G, G});
    // About 2D + 1 periods of 3GV tokens per rank, refused like an instance of that size (the generator builds it
    // only past its origin; the prover and the checker ask for it at any P).
    const std::uint64_t group_ops = saturating_mul(saturating_mul(3, static_cast<std::uint64_t>(G)), static_cast<std::uint64_t>(V));
    require_size(saturating_mul(saturating_mul(group_ops, static_cast<std::uint64_t>(2 * periods + 1)), static_cast<std::uint64_t>(P)),
                 "group-interleaved's step program at P = " + std::to_string(P) + ", G = " + std::to_string(G));
    if (periods * G > std::numeric_limits<int>::max()) throw GenerateError("group-interleaved: the program's origin passes int");
    FamilyStepProgram program{static_cast<int>(periods) * G, G, {}};
    for (int r = 0; r < P; ++r) {
        const auto group = group_tokens({P, V, G, G}, r);
        const long L = 3L * G * V, span = periods * L;
        std::vector<StepPhase> phases;
        for (int c = 0; c < V; ++c) phases.push_back({0, c * P + r});
        // Prefix: slots [0, DL), every copy n >= 0 there. Period: [DL, DL + L), one copy of each op. Suffix: the
        // slots from NL on, group N - j (j >= 1) at slot - jL relative to NL.
        const auto prefix = in_slot_order(group, L, [&](long slot, auto add) {
            for (long n = 0; slot + n * L < span; ++n) add(n);
        });
        const auto period = in_slot_order(group, L, [&](long slot, auto add) { add((span - slot + L - 1) / L); });
        const auto suffix = in_slot_order(group, L, [&](long slot, auto add) {
            for (long j = 1; slot - j * L >= 0; ++j) add(-j);
        });
        program.ranks.push_back(StepProgramBuilder(phases).once(prefix).repeat(0, period, /*slope=*/1).once(suffix).take());
    }
    return program;
}

Schedule generate_group_interleaved(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Group-interleaved 1F1B");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Group-interleaved 1F1B");
    const int G = params.group_size.value_or((P + 1) / 2);  // the least the reference recommends ("ceil(d/2) to d")
    if (G < 1 || G > P)
        throw GenerateError("group-interleaved takes 1 <= G <= P (the reference treats G > P as P), got G = " + std::to_string(G));
    std::string label = schedule_label("group-interleaved", P, M, V);  // "group-interleaved(P=4,V=2,M=8)"
    label.insert(label.size() - 1, ",G=" + std::to_string(G));
    const Placement placement = Placement::single(P, loop_stage_map(P, P * V), M);
    // On whole groups from the program's origin on, the program (the same order: tests/test_group_interleaved.cpp).
    // Its origin is found first: the program is about as large as an instance at it, built only for M past it.
    if (M % G == 0 && M >= group_periods({P, V, M, G}) * G) {
        GenerateParams with_g = params;
        with_g.group_size = G;
        return schedule_from_step_program(step_program_group_interleaved(with_g), placement, M, std::move(label));
    }
    std::vector<RankCells> rows(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r)
        for (const Op& op : group_interleaved_rank({P, V, M, G}, r)) rows[static_cast<size_t>(r)].push_back(op);
    return schedule_from_cells(placement, rows, label, false);
}

}  // namespace pp
