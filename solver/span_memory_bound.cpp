#include "solver/span_memory_bound.hpp"

#include "solver/cool_down_bound.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace pp {
namespace {

std::string units(const Instance& inst, const Ticks& v) { return format_rational(inst.to_units(v)); }

std::string op_name(const Instance& inst, int task) { return describe_op(inst.tasks[task].op); }

// The most backward work the stashes held besides the last F's can bring: x with their I to run, y with only
// their W, x alloc + y kept <= budget.
Ticks most_fill(const MemoryCounter& memory, Ticks input, Ticks weight, std::int64_t budget, std::int64_t& x_best,
                std::int64_t& y_best) {
    Ticks best = -1;
    const std::int64_t kept = memory.by_weight;
    for (std::int64_t x = 0; x * memory.alloc <= budget; ++x) {
        const std::int64_t left = budget - x * memory.alloc;
        const std::int64_t y = kept > 0 ? left / kept : 0;  // kept = 0 is refused by the caller
        const Ticks fill = Ticks(x) * (input + weight) + Ticks(y) * weight;
        if (fill > best) best = fill, x_best = x, y_best = y;
    }
    return best;
}

}  // namespace

std::optional<RankMemoryIdle> rank_memory_idle(const Instance& inst, const TaskBounds& b, int rank) {
    const auto memory = memory_counter(inst);
    const Placement& pl = inst.problem.placement;
    if (!memory || memory->by_weight <= 0 || inst.pairs_allowed() || pl.pipeline_count() != 1) return std::nullopt;
    if (pl.stages_on_rank(0, rank).size() != 1) return std::nullopt;
    const auto& tasks = inst.rank_tasks[rank];
    if (tasks.empty()) return std::nullopt;
    const int M = pl.pipelines[0].microbatches;

    RankMemoryIdle out;
    out.a = inst.earliest_rank_start[rank];
    out.h_input = -1;
    Ticks forwards_total = 0, input = 0, weight = 0;
    std::vector<Ticks> forwards;
    for (int t : tasks) {
        const Task& task = inst.tasks[t];
        out.load += task.duration;
        switch (task.op.kind) {
            case OpKind::F: forwards.push_back(task.duration), forwards_total += task.duration; break;
            case OpKind::I:
                input = std::max(input, task.duration);
                if (out.h_input < 0 || b.head[t] < out.h_input) out.h_input = b.head[t], out.first_input = t;
                break;
            default: weight = std::max(weight, task.duration); break;
        }
    }
    if (out.first_input < 0) return std::nullopt;
    out.forwards = forwards.size();
    // Warm-up: at most K forwards start before h_I.
    std::sort(forwards.begin(), forwards.end(), std::greater<Ticks>());
    out.K = memory->cap / memory->alloc;
    for (size_t k = 0; k < forwards.size() && static_cast<std::int64_t>(k) < out.K; ++k) out.fill += forwards[k];
    out.warm = std::max<Ticks>(0, out.h_input - out.a - out.fill);
    // Cool-down: the last F is F(s, m) for some m; the round trip rho is the same for every m.
    const Op last{OpKind::F, 0, pl.stages_on_rank(0, rank).front(), M - 1};
    out.last_forward = inst.task_of(last);
    const int own_input = inst.task_of({OpKind::I, 0, last.stage, M - 1});
    out.rho = releases_after(inst, out.last_forward).at(own_input);
    out.most = most_fill(*memory, input, weight, memory->cap - memory->alloc, out.x, out.y);
    out.cool = std::max<Ticks>(0, out.rho - out.most);
    // The (K+1)-th forward cannot start before h_I, so with more than K forwards the last one ends after it.
    out.disjoint = static_cast<std::int64_t>(forwards.size()) > out.K || out.a + forwards_total >= out.h_input;
    return out;
}

void span_memory_bound(const Instance& inst, const TaskBounds& b, int rank, LowerBound& best, std::vector<Ticks>& per_rank) {
    const auto idles = rank_memory_idle(inst, b, rank);
    if (!idles) return;
    const auto memory = memory_counter(inst);
    const RankMemoryIdle& m = *idles;
    const auto& tasks = inst.rank_tasks[rank];
    const Ticks idle = m.disjoint ? m.warm + m.cool : std::max(m.warm, m.cool);
    const Ticks value = m.load + idle;  // end_r - a
    if (idle <= 0) return;
    per_rank[rank] = std::max(per_rank[rank], value);
    if (value <= best.value) return;
    best = LowerBound{};
    best.value = value;
    best.kind = "rank-load+memory";
    best.rank = rank;
    best.a = m.a;
    best.load = m.load + idle;
    best.count = static_cast<int>(tasks.size());
    const std::string cap_text =
        memory->alloc == 1 && memory->by_input == 0
            ? std::to_string(memory->cap) + " activations"
            : std::to_string(memory->cap) + " units (F takes " + std::to_string(memory->alloc) + ", I releases " +
                  std::to_string(memory->by_input) + ", W " + std::to_string(memory->by_weight) + ")";
    best.derivation =
        "rank " + std::to_string(rank) + " (cap " + cap_text + "): its first op cannot start before " + units(inst, m.a) +
        " and no I before " + units(inst, m.h_input) + " (" + op_name(inst, m.first_input) + "), so nothing is released before " +
        "then and at most " + std::to_string(std::min<std::int64_t>(m.K, static_cast<std::int64_t>(m.forwards))) +
        " forwards start, " + units(inst, m.fill) + " at most: it idles at least " + units(inst, m.warm) +
        "; after its last forward " + op_name(inst, m.last_forward) + " ends, that micro-batch's I comes back no earlier than " +
        units(inst, m.rho) + " later, and until then it can run only the I and W of the stashes it held at that F's start " +
        "besides its own, at most " + units(inst, m.most) + " (" + std::to_string(m.x) + " with I and W, " + std::to_string(m.y) +
        " with W only), so it idles at least " + units(inst, m.cool) + " more" +
        (m.disjoint ? " (the two intervals are disjoint: its last forward ends after " + units(inst, m.h_input) + ")"
                  : " (the larger of the two counts)") +
        "; with its " + std::to_string(tasks.size()) + " ops' " + units(inst, m.load) + " of work: span >= " + units(inst, value);
}

}  // namespace pp
