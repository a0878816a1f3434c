#include "solver/rank_budget.hpp"

#include "solver/cool_down_bound.hpp"

#include <algorithm>
#include <functional>

namespace pp {

std::vector<RankBudget> rank_budgets(const Instance& inst, const TaskBounds& b) {
    std::vector<RankBudget> out(static_cast<size_t>(inst.ranks));
    if (inst.problem.objective != Objective::Makespan || inst.pairs_allowed()) return out;
    for (int r = 0; r < inst.ranks; ++r) {
        const auto& tasks = inst.rank_tasks[r];
        if (tasks.empty()) continue;
        RankBudget& budget = out[static_cast<size_t>(r)];
        budget.applies = true;
        budget.lo = b.head[tasks[0]];
        Ticks h = -1;
        std::vector<Ticks> forwards;
        for (int t : tasks) {
            budget.lo = std::min(budget.lo, b.head[t]);
            budget.load += inst.tasks[t].duration;
            if (inst.tasks[t].op.kind == OpKind::F) forwards.push_back(inst.tasks[t].duration);
            else if (h < 0 || b.head[t] < h) h = b.head[t];
        }
        if (!inst.cap || h < 0) continue;
        // Warm-up: in [lo, h) only forwards, at most cap of them (lower_bound.cpp, warm_up_bound).
        std::sort(forwards.begin(), forwards.end(), std::greater<Ticks>());
        Ticks fill = 0;
        for (size_t k = 0; k < forwards.size() && k < static_cast<size_t>(*inst.cap); ++k) fill += forwards[k];
        budget.warm = std::max<Ticks>(0, h - budget.lo - fill);
        // Cool-down: the least idle after the last forward over its candidates (none: 0).
        const std::vector<CoolDownIdle> cool = cool_down_idle(inst, b, r);
        for (size_t k = 0; k < cool.size(); ++k) budget.cool = k == 0 ? cool[k].idle : std::min(budget.cool, cool[k].idle);
        budget.cool = std::max<Ticks>(0, budget.cool);
    }
    return out;
}

}  // namespace pp
