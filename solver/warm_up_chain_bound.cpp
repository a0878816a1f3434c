#include "solver/warm_up_chain_bound.hpp"

#include "solver/span_memory_bound.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pp {
namespace {

// One stage's side of the bound; times absolute, quantised.
struct StageWarmUp {
    int stage = 0, rank = 0;
    Ticks origin = 0;              // h_r
    Ticks base = 0;                // o_r + load_r + cool_r: the rank's value with no warm-up idle
    Ticks cool = 0;
    Ticks input_head = 0;          // the least head of an I of the stage
    Ticks step_back = 0;           // d_{s-1}: from the start of this stage's first I to the previous stage's
    std::vector<Ticks> fits_by;    // ascending: the times at which one more forward can have ended
    std::vector<Ticks> busy;       // busy[j]: most forward work in [h_r, b) for fits_by[j] <= b < fits_by[j+1]
};

std::string units(const Instance& inst, const Ticks& v) { return format_rational(inst.to_units(v)); }

// The least b >= from at which the rank's value stays within target, or nullopt when none does.
std::optional<Ticks> least_first_input(const StageWarmUp& st, Ticks from, const Ticks& target) {
    auto value_at = [&](const Ticks& b, const Ticks& busy) {
        return st.base + std::max<Ticks>(0, b - st.origin - busy);
    };
    size_t j = std::upper_bound(st.fits_by.begin(), st.fits_by.end(), from) - st.fits_by.begin();
    Ticks busy = j == 0 ? Ticks(0) : st.busy[j - 1];
    if (value_at(from, busy) <= target) return from;
    for (; j < st.fits_by.size(); ++j)  // inside one interval the idle only grows: try where the next one starts
        if (value_at(st.fits_by[j], st.busy[j]) <= target) return st.fits_by[j];
    return std::nullopt;
}

struct ChainAttempt {
    std::vector<Ticks> first_input;  // by stage, the least admissible b_s (those reached)
    int failed_stage = -1;
};

ChainAttempt try_chain(const std::vector<StageWarmUp>& stages, const std::optional<Ticks>& target) {
    ChainAttempt out;
    out.first_input.assign(stages.size(), 0);
    Ticks from = 0;
    for (int s = static_cast<int>(stages.size()) - 1; s >= 0; --s) {
        const StageWarmUp& st = stages[s];
        from = std::max(from, st.input_head);
        if (target) {
            const auto b = least_first_input(st, from, *target);
            if (!b) {
                out.failed_stage = s;
                return out;
            }
            from = *b;
        }
        out.first_input[s] = from;
        from += st.step_back;
    }
    return out;
}

Ticks value_at(const StageWarmUp& st, const Ticks& b) {
    size_t j = std::upper_bound(st.fits_by.begin(), st.fits_by.end(), b) - st.fits_by.begin();
    return st.base + std::max<Ticks>(0, b - st.origin - (j == 0 ? Ticks(0) : st.busy[j - 1]));
}

// The stage's warm-up data, or nullopt when an edge the argument needs is missing.
std::optional<StageWarmUp> stage_warm_up(const Instance& inst, const TaskBounds& b, int stage, std::int64_t K) {
    const Placement& pl = inst.problem.placement;
    StageWarmUp st;
    st.stage = stage;
    st.rank = pl.rank_of(0, stage);
    st.origin = inst.earliest_rank_start[st.rank];
    const bool span = inst.problem.objective == Objective::Span;
    Ticks load = 0;
    std::vector<std::pair<Ticks, Ticks>> forwards;  // (head + duration, duration)
    bool has_input = false;
    st.step_back = -1;
    for (int t : inst.rank_tasks[st.rank]) {
        const Task& task = inst.tasks[t];
        load += task.duration;
        if (task.op.kind == OpKind::F) forwards.emplace_back(b.head[t] + task.duration, task.duration);
        if (task.op.kind != OpKind::I) continue;
        st.input_head = has_input ? std::min(st.input_head, b.head[t]) : b.head[t];
        has_input = true;
        if (stage == 0) continue;
        const int previous = inst.task_of({OpKind::I, 0, stage - 1, task.op.microbatch});
        std::optional<Ticks> step;
        for (int e : inst.out_edges[t])
            if (inst.edges[e].to == previous)
                step = std::max(step.value_or(Ticks(0)), task.duration + inst.edges[e].lag);
        if (!step) return std::nullopt;
        st.step_back = st.step_back < 0 ? *step : std::min(st.step_back, *step);
    }
    if (!has_input) return std::nullopt;
    std::sort(forwards.begin(), forwards.end());
    // busy after the j-th time: the K longest forwards among those that fit by then
    std::vector<Ticks> fitted;
    for (size_t i = 0; i < forwards.size(); ++i) {
        fitted.push_back(forwards[i].second);
        if (i + 1 < forwards.size() && forwards[i + 1].first == forwards[i].first) continue;
        std::sort(fitted.begin(), fitted.end(), std::greater<Ticks>());
        Ticks sum = 0;
        for (size_t k = 0; k < fitted.size() && static_cast<std::int64_t>(k) < K; ++k) sum += fitted[k];
        st.fits_by.push_back(forwards[i].first);
        st.busy.push_back(sum);
    }
    st.base = (span ? Ticks(0) : st.origin) + load;
    if (const auto idle = rank_memory_idle(inst, b, st.rank); idle && static_cast<std::int64_t>(idle->forwards) > K)
        st.cool = idle->cool, st.base += idle->cool;
    return st;
}

std::string chain_text(const Instance& inst, const std::vector<StageWarmUp>& stages, const ChainAttempt& chain, int from,
                       int to) {
    std::string out;
    for (int s = from; s >= to; --s) {
        if (!out.empty()) out += ", ";
        out += std::to_string(s) + ": " + units(inst, chain.first_input[s]);
    }
    (void)stages;
    return out;
}

}  // namespace

void warm_up_chain_bound(const Instance& inst, const TaskBounds& b, LowerBound& best) {
    const Placement& pl = inst.problem.placement;
    if (inst.pairs_allowed() || pl.pipeline_count() != 1 || pl.pipelines[0].stages() != inst.ranks) return;
    for (int r = 0; r < inst.ranks; ++r)
        if (pl.stages_on_rank(0, r).size() != 1) return;
    const int M = pl.pipelines[0].microbatches;
    const auto memory = memory_counter(inst);
    const std::int64_t K = memory ? std::min<std::int64_t>(M, memory->cap / memory->alloc) : M;
    std::vector<StageWarmUp> stages;
    for (int s = 0; s < inst.ranks; ++s) {
        auto st = stage_warm_up(inst, b, s, K);
        if (!st) return;
        stages.push_back(std::move(*st));
    }
    // hi: the chain at its least times is feasible for its own worst value.
    const ChainAttempt loosest = try_chain(stages, std::nullopt);
    Ticks lo = 0, hi = 0;
    for (const StageWarmUp& st : stages) {
        lo = std::max(lo, st.base);
        hi = std::max(hi, value_at(st, loosest.first_input[st.stage]));
    }
    if (hi <= best.value) return;
    while (lo < hi) {  // invariant: hi passes; every value below lo fails
        const Ticks mid = lo + (hi - lo) / 2;
        if (try_chain(stages, mid).failed_stage < 0) hi = mid;
        else lo = mid + 1;
    }
    if (hi <= best.value) return;
    const ChainAttempt at = try_chain(stages, hi), below = try_chain(stages, hi - 1);
    int worst = 0;
    for (const StageWarmUp& st : stages)
        if (value_at(st, at.first_input[st.stage]) == hi) worst = st.stage;
    const bool span = inst.problem.objective == Objective::Span;
    const StageWarmUp& w = stages[worst];
    const int P = inst.ranks;
    best = LowerBound{};
    best.value = hi;
    best.kind = "warm-up-chain";
    best.rank = w.rank;
    best.a = w.origin;
    best.load = hi - (span ? Ticks(0) : w.origin);
    best.count = static_cast<int>(inst.rank_tasks[w.rank].size());
    const std::string objective = span ? "span" : "makespan";
    std::string text =
        "every rank runs only forwards before its stage's first I (at most " + std::to_string(K) +
        ", nothing is released before it), and stage s's first I starts at least its I's duration and lag after stage " +
        "s+1's: a rank that delays its first I to fit one more forward delays every earlier stage's. Within " +
        objective + " " + units(inst, hi) + " the earliest admissible first-I times (stage: time, from stage " +
        std::to_string(P - 1) + " down) are " + chain_text(inst, stages, at, P - 1, 0) + ", where rank " +
        std::to_string(w.rank) + " reaches " + units(inst, hi) + " (its work " +
        units(inst, w.base - w.cool - (span ? Ticks(0) : w.origin)) +
        (w.cool > 0 ? ", its cool-down idle " + units(inst, w.cool) : std::string()) + ", the rest idle before its first I)";
    if (below.failed_stage >= 0) {
        const int s = below.failed_stage;
        text += "; within " + units(inst, hi - 1) + " (one tick less) the chain " +
                (s < P - 1 ? "(" + chain_text(inst, stages, below, P - 1, s + 1) + ") " : std::string()) +
                "leaves stage " + std::to_string(s) + " (rank " + std::to_string(stages[s].rank) +
                ") no admissible first-I time: " + objective + " >= " + units(inst, hi);
    }
    best.derivation = text;
}

}  // namespace pp
