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
// Preconditions: P, M, V >= 1 and 1 <= G <= P (the reference treats G > P as P, with a print; here that is refused
// rather than changed silently). G defaults to ceil(P/2), the least of the range the reference's README recommends
// ("ceil(d/2) to d"); its option's own default, 0, crashes the reference.
#include "schedules/families.hpp"
#include "schedules/pytorch_ir.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace pp {

namespace {

struct GroupShape {
    int P, V, M, G;
};

std::vector<Op> group_interleaved_rank(const GroupShape& s, int r) {
    const long mgs = (s.P + 1) / 2, G = s.G, V = s.V;
    const long k = (mgs + G - 1) / G, q = std::gcd(V, k), L = 3 * G * V, per = V / q;
    auto slot_f = [&](long c, long i) { return 3 * k * G * c + 3 * i + r + 3 * G * (c / per); };
    auto slot_b = [&](long c, long i) {
        return slot_f(V - 1, 0) + 3 * (s.P - 1 - r) + 1 + 3 * k * G * c + 3 * i + 3 * G * (c / per);
    };
    std::vector<std::pair<long, Op>> timed;
    timed.reserve(static_cast<size_t>(3 * V * s.M));
    for (long m = 0; m < s.M; ++m) {
        const long n = m / G, i = m % G;
        for (long c = 0; c < V; ++c) {
            const int forward_stage = static_cast<int>(c * s.P + r), backward_stage = static_cast<int>((V - 1 - c) * s.P + r);
            timed.emplace_back(slot_f(c, i) + n * L, op_at(OpKind::F, forward_stage, static_cast<int>(m)));
            timed.emplace_back(slot_b(c, i) + n * L, op_at(OpKind::I, backward_stage, static_cast<int>(m)));
            timed.emplace_back(slot_b(c, i) + 1 + n * L, op_at(OpKind::W, backward_stage, static_cast<int>(m)));
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

}  // namespace

Schedule generate_group_interleaved(const GenerateParams& params) {
    require_ranks_and_microbatches(params, "Group-interleaved 1F1B");
    const int P = params.ranks, M = params.microbatches;
    const int V = stages_per_rank_or_default(params, "Group-interleaved 1F1B");
    const int G = params.group_size.value_or((P + 1) / 2);  // the least the reference recommends ("ceil(d/2) to d")
    if (G < 1 || G > P)
        throw GenerateError("group-interleaved takes 1 <= G <= P (the reference treats G > P as P), got G = " + std::to_string(G));
    std::vector<RankCells> rows(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r)
        for (const Op& op : group_interleaved_rank({P, V, M, G}, r)) rows[static_cast<size_t>(r)].push_back(op);
    std::string label = schedule_label("group-interleaved", P, M, V);  // "group-interleaved(P=4,V=2,M=8)"
    label.insert(label.size() - 1, ",G=" + std::to_string(G));
    return schedule_from_cells(Placement::single(P, loop_stage_map(P, P * V), M), rows, label, false);
}

}  // namespace pp
