#include "schedules/v_families.hpp"

namespace pp {

void check_v_family(const GenerateParams& params, const std::string& family) {
    const std::string given = " (P=" + std::to_string(params.ranks) + ", M=" + std::to_string(params.microbatches) + ")";
    if (params.ranks < 1) throw GenerateError(family + " needs at least one rank, P >= 1" + given);
    if (params.microbatches < 1) throw GenerateError(family + " needs at least one micro-batch, M >= 1" + given);
    if (params.stages_per_rank && *params.stages_per_rank != 2)
        throw GenerateError(family + " holds exactly 2 stages per rank (the V map), not V=" +
                            std::to_string(*params.stages_per_rank));
}

Schedule v_family_schedule(int ranks, int microbatches, const VOrder& order, std::string source) {
    Schedule schedule;
    schedule.source = std::move(source);
    schedule.placement = Placement::single(ranks, v_stage_map(ranks, 2 * ranks), microbatches);
    for (int r = 0; r < ranks; ++r) {
        std::vector<Slot> slots;
        slots.reserve(order[r].size());
        for (const VOp& op : order[r])
            slots.push_back(Slot::single(Op{op.kind, 0, op.chunk == 0 ? r : 2 * ranks - 1 - r, op.microbatch}));
        schedule.ranks.push_back(std::move(slots));
    }
    return schedule;
}

}  // namespace pp
