#include "solver/warm_up_chain_bound.hpp"

#include "solver/span_memory_bound.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <vector>

namespace pp {
namespace {

// Where a stage's first I can start: no earlier than its least head, and unless the stage is its pipeline's last,
// no earlier than `step` after the first I of the rank holding the next stage.
struct InputSource {
    Ticks head = 0;
    int after_rank = -1;  // -1: the pipeline's last stage
    Ticks step = 0;
};

// One rank's side of the bound; times absolute, quantised.
struct RankWarmUp {
    int rank = 0;
    Ticks origin = 0;                  // h_r
    Ticks base = 0;                    // o_r + load_r + cool_r: the rank's value with no warm-up idle
    Ticks cool = 0;
    std::vector<InputSource> sources;  // one per stage of the rank
    std::vector<Ticks> fits_by;        // ascending: the times at which one more forward can have ended
    std::vector<Ticks> busy;           // busy[j]: most forward work in [h_r, b) for fits_by[j] <= b < fits_by[j+1]
};

std::string units(const Instance& inst, const Ticks& v) { return format_rational(inst.to_units(v)); }

Ticks value_at(const RankWarmUp& w, const Ticks& b) {
    const size_t j = std::upper_bound(w.fits_by.begin(), w.fits_by.end(), b) - w.fits_by.begin();
    return w.base + std::max<Ticks>(0, b - w.origin - (j == 0 ? Ticks(0) : w.busy[j - 1]));
}

// The least b >= from at which the rank's value stays within target, or nullopt when none does.
std::optional<Ticks> least_first_input(const RankWarmUp& w, const Ticks& from, const Ticks& target) {
    if (value_at(w, from) <= target) return from;
    // inside one interval the idle only grows: try where each later one starts
    for (auto it = std::upper_bound(w.fits_by.begin(), w.fits_by.end(), from); it != w.fits_by.end(); ++it)
        if (value_at(w, *it) <= target) return *it;
    return std::nullopt;
}

// The least first-I time the chain allows rank r, given every rank's current one.
Ticks chain_limit(const RankWarmUp& w, const std::vector<Ticks>& first_input) {
    std::optional<Ticks> least;
    for (const InputSource& source : w.sources) {
        const Ticks limit = source.after_rank < 0 ? source.head
                                                  : std::max(source.head, first_input[source.after_rank] + source.step);
        least = least ? std::min(*least, limit) : limit;
    }
    return *least;
}

struct ChainAttempt {
    std::vector<Ticks> first_input;  // by rank, the least admissible first-I times (as far as they were raised)
    int failed_rank = -1;
};

// The least fixed point of "b_r = least admissible time >= the chain's limit", from below. Every step is
// monotone, so if some schedule meets the target its first-I times stay above these all along, and a rank
// without an admissible time proves that none does. Not settled within the rounds allowed: taken as passing
// (the bound only gets weaker).
ChainAttempt try_chain(const std::vector<RankWarmUp>& ranks, const std::optional<Ticks>& target) {
    ChainAttempt out;
    out.first_input.assign(ranks.size(), 0);
    for (size_t r = 0; r < ranks.size(); ++r) {
        Ticks least = ranks[r].sources.front().head;
        for (const InputSource& source : ranks[r].sources) least = std::min(least, source.head);
        out.first_input[r] = least;
    }
    const size_t rounds = 4 * ranks.size() + 8;
    for (size_t round = 0; round < rounds; ++round) {
        bool changed = false;
        for (int r = static_cast<int>(ranks.size()) - 1; r >= 0; --r) {
            const Ticks from = std::max(out.first_input[r], chain_limit(ranks[r], out.first_input));
            std::optional<Ticks> b = from;
            if (target) b = least_first_input(ranks[r], from, *target);
            if (!b) {
                out.failed_rank = r;
                return out;
            }
            changed |= *b != out.first_input[r];
            out.first_input[r] = *b;
        }
        if (!changed) return out;
    }
    return out;
}

// The stage's first-I source, or nullopt when an edge the argument needs is missing.
std::optional<InputSource> input_source(const Instance& inst, const TaskBounds& b, int pipeline, int stage) {
    const Placement& pl = inst.problem.placement;
    const int M = pl.pipelines[pipeline].microbatches;
    const bool last = stage + 1 == pl.pipelines[pipeline].stages();
    InputSource source;
    source.after_rank = last ? -1 : pl.rank_of(pipeline, stage + 1);
    std::optional<Ticks> head, step;
    for (int m = 0; m < M; ++m) {
        const int t = inst.task_of({OpKind::I, pipeline, stage, m});
        if (t < 0) return std::nullopt;
        head = head ? std::min(*head, b.head[t]) : b.head[t];
        if (last) continue;
        const int next = inst.task_of({OpKind::I, pipeline, stage + 1, m});
        std::optional<Ticks> edge;
        for (int e : inst.out_edges[next])
            if (inst.edges[e].to == t) edge = std::max(edge.value_or(Ticks(0)), inst.tasks[next].duration + inst.edges[e].lag);
        if (!edge) return std::nullopt;
        step = step ? std::min(*step, *edge) : *edge;
    }
    if (!head) return std::nullopt;
    source.head = *head;
    source.step = step.value_or(Ticks(0));
    return source;
}

// The rank's warm-up data, or nullopt when the argument does not apply to it.
std::optional<RankWarmUp> rank_warm_up(const Instance& inst, const TaskBounds& b, int rank, std::int64_t K) {
    const Placement& pl = inst.problem.placement;
    RankWarmUp w;
    w.rank = rank;
    w.origin = inst.earliest_rank_start[rank];
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int stage : pl.stages_on_rank(p, rank)) {
            auto source = input_source(inst, b, p, stage);
            if (!source) return std::nullopt;
            w.sources.push_back(*source);
        }
    if (w.sources.empty()) return std::nullopt;
    Ticks load = 0;
    std::vector<std::pair<Ticks, Ticks>> forwards;  // (head + duration, duration)
    for (int t : inst.rank_tasks[rank]) {
        load += inst.tasks[t].duration;
        if (inst.tasks[t].op.kind == OpKind::F) forwards.emplace_back(b.head[t] + inst.tasks[t].duration, inst.tasks[t].duration);
    }
    std::sort(forwards.begin(), forwards.end());
    // busy after each time: the K longest forwards among those that fit by then (least of them on top)
    std::priority_queue<Ticks, std::vector<Ticks>, std::greater<Ticks>> longest;
    Ticks sum = 0;
    for (size_t i = 0; i < forwards.size(); ++i) {
        longest.push(forwards[i].second);
        sum += forwards[i].second;
        if (static_cast<std::int64_t>(longest.size()) > K) sum -= longest.top(), longest.pop();
        if (i + 1 < forwards.size() && forwards[i + 1].first == forwards[i].first) continue;
        w.fits_by.push_back(forwards[i].first);
        w.busy.push_back(sum);
    }
    w.base = (inst.problem.objective == Objective::Span ? Ticks(0) : w.origin) + load;
    if (const auto idle = rank_memory_idle(inst, b, rank); idle && static_cast<std::int64_t>(idle->forwards) > K)
        w.cool = idle->cool, w.base += idle->cool;
    return w;
}

std::string chain_text(const Instance& inst, const ChainAttempt& chain) {
    std::string out;
    for (size_t r = 0; r < chain.first_input.size(); ++r)
        out += (r ? ", " : "") + std::to_string(r) + ": " + units(inst, chain.first_input[r]);
    return out;
}

}  // namespace

void warm_up_chain_bound(const Instance& inst, const TaskBounds& b, LowerBound& best) {
    if (inst.pairs_allowed()) return;
    const auto memory = memory_counter(inst);
    std::int64_t K = 0;
    for (const auto& pipeline : inst.problem.placement.pipelines) K += pipeline.microbatches * pipeline.stages();
    if (memory) K = std::min<std::int64_t>(K, memory->cap / memory->alloc);
    std::vector<RankWarmUp> ranks;
    for (int r = 0; r < inst.ranks; ++r) {
        auto w = rank_warm_up(inst, b, r, K);
        if (!w) return;
        ranks.push_back(std::move(*w));
    }
    // hi: the chain at its least times passes for its own worst value.
    const ChainAttempt loosest = try_chain(ranks, std::nullopt);
    Ticks lo = 0, hi = 0;
    for (const RankWarmUp& w : ranks) {
        lo = std::max(lo, w.base);
        hi = std::max(hi, value_at(w, loosest.first_input[w.rank]));
    }
    if (hi <= best.value) return;
    while (lo < hi) {  // invariant: hi passes; every value below lo fails
        const Ticks mid = lo + (hi - lo) / 2;
        if (try_chain(ranks, mid).failed_rank < 0) hi = mid;
        else lo = mid + 1;
    }
    if (hi <= best.value) return;
    const ChainAttempt at = try_chain(ranks, hi), below = try_chain(ranks, hi - 1);
    int worst = 0;
    for (const RankWarmUp& w : ranks)
        if (value_at(w, at.first_input[w.rank]) == hi) worst = w.rank;
    const bool span = inst.problem.objective == Objective::Span;
    const RankWarmUp& w = ranks[worst];
    best = LowerBound{};
    best.value = hi;
    best.kind = "warm-up-chain";
    best.rank = w.rank;
    best.a = w.origin;
    best.load = hi - (span ? Ticks(0) : w.origin);
    best.count = static_cast<int>(inst.rank_tasks[w.rank].size());
    const std::string objective = span ? "span" : "makespan";
    std::string text =
        "every rank runs only forwards before its first I (at most " + std::to_string(K) +
        ", nothing is released before it), and a stage's first I starts at least its successor's I duration and lag " +
        "after the first I of the rank holding the next stage: a rank that delays its first I to fit one more forward "
        "delays the ranks that wait for it. Within " + objective + " " + units(inst, hi) +
        " the earliest admissible first-I times (rank: time) are " + chain_text(inst, at) + ", where rank " +
        std::to_string(w.rank) + " reaches " + units(inst, hi) + " (its work " +
        units(inst, w.base - w.cool - (span ? Ticks(0) : w.origin)) +
        (w.cool > 0 ? ", its cool-down idle " + units(inst, w.cool) : std::string()) + ", the rest idle before its first I)";
    if (below.failed_rank >= 0)
        text += "; within " + units(inst, hi - 1) + " (one tick less) the least times (" + chain_text(inst, below) +
                ") leave rank " + std::to_string(below.failed_rank) + " no admissible first-I time: " + objective +
                " >= " + units(inst, hi);
    best.derivation = text;
}

}  // namespace pp
