#include "solver/cool_down_bound.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace pp {
namespace {

const Ticks kUnreached{-(std::int64_t{1} << 60)};
constexpr size_t kMaxCandidates = 64;
constexpr int kMaxOwnOps = 8;        // ops of f's micro-batch on the rank (2 per stage it holds)
constexpr size_t kMaxLabels = 32;    // Pareto labels kept per state before merging
// Fewer fillers than the cap allows would not be a relaxation, so a larger cap skips the bound.
constexpr int kMaxFillers = 40;

// The ops of one candidate's micro-batch on its rank: release after end(f), tail, direct preds.
struct OwnOp {
    Ticks duration = 0, release = 0, tail = 0;
    unsigned preds = 0;  // bit k: own op k must come first
};

struct Label {
    Ticks time = 0, deliver = 0;  // end of the last op placed; latest end + tail so far
};

// Keeps the Pareto front of (time, deliver); past kMaxLabels, merges the two labels with the closest
// times into their componentwise minimum (dominates both: a relaxation, still a lower bound).
void add_label(std::vector<Label>& labels, Label label) {
    for (const Label& l : labels)
        if (l.time <= label.time && l.deliver <= label.deliver) return;
    labels.erase(std::remove_if(labels.begin(), labels.end(),
                                [&](const Label& l) { return label.time <= l.time && label.deliver <= l.deliver; }),
                 labels.end());
    labels.push_back(label);
    if (labels.size() <= kMaxLabels) return;
    std::sort(labels.begin(), labels.end(), [](const Label& x, const Label& y) { return x.time < y.time; });
    size_t best = 0;
    for (size_t k = 1; k + 1 < labels.size(); ++k)
        if (labels[k + 1].time - labels[k].time < labels[best + 1].time - labels[best].time) best = k;
    labels[best] = {labels[best].time, std::min(labels[best].deliver, labels[best + 1].deliver)};
    labels.erase(labels.begin() + static_cast<long>(best) + 1);
}


// The forwards that may be the last F of `rank`: per pipeline, its last stage on the rank, for the last
// micro-batch under FIFO (every other F of that stage precedes it), else for every micro-batch.
std::vector<int> last_forward_candidates(const Instance& inst, int rank) {
    const Placement& pl = inst.problem.placement;
    std::vector<int> out;
    for (int p = 0; p < pl.pipeline_count(); ++p) {
        int last = -1;
        for (int s = 0; s < pl.pipelines[p].stages(); ++s)
            if (pl.rank_of(p, s) == rank) last = s;
        if (last < 0) continue;
        const int M = pl.pipelines[p].microbatches;
        for (int m = inst.fifo() ? M - 1 : 0; m < M; ++m) out.push_back(inst.task_of({OpKind::F, p, last, m}));
    }
    return out;
}

struct Fill {
    int fillers = 0;               // at most cap - own activations
    Ticks input = 0, weight = 0;   // the rank's (uniform) I and W durations
    Ticks input_tail = 0;          // least tail of an I of the rank
};

// The exact minimum of the relaxation in the header for one candidate.
CoolDownIdle least_idle_after(const Instance& inst, const TaskBounds& b, int f, const std::vector<OwnOp>& own,
                              const Fill& fill) {
    const int N = fill.fillers, n = static_cast<int>(own.size());
    const unsigned full = (1u << n) - 1;
    const size_t side = static_cast<size_t>(N + 1);
    auto index = [&](int a, int w, int c, unsigned mask) {
        return ((static_cast<size_t>(a) * side + static_cast<size_t>(w)) * side + static_cast<size_t>(c)) * (full + 1) + mask;
    };
    std::vector<std::vector<Label>> states(side * side * side * (full + 1));
    states[index(0, 0, 0, 0)].push_back({0, 0});
    Ticks own_work = 0;
    for (const OwnOp& o : own) own_work += o.duration;
    CoolDownIdle best;
    best.last_forward = f;
    best.idle = std::numeric_limits<std::int64_t>::max();
    auto place = [](const Label& l, Ticks duration, Ticks release, Ticks tail) {
        const Ticks end = std::max(l.time, release) + duration;
        return Label{end, std::max(l.deliver, end + tail)};
    };
    for (int a = 0; a <= N; ++a)            // filler I's placed
        for (int w = 0; w <= a; ++w)        // their W's placed
            for (int c = 0; a + c <= N; ++c)  // weight-only fillers placed
                for (unsigned mask = 0; mask <= full; ++mask) {
                    const std::vector<Label>& labels = states[index(a, w, c, mask)];
                    if (labels.empty()) continue;
                    if (w == a && mask == full) {
                        const Ticks work = Ticks(a) * fill.input + Ticks(w + c) * fill.weight + own_work;
                        for (const Label& l : labels) {
                            const Ticks idle = std::max({l.time, l.deliver, b.tail[f]}) - work;
                            if (idle < best.idle) best.idle = idle, best.fillers_with_input = a, best.fillers_weight_only = c;
                        }
                    }
                    for (const Label& l : labels) {
                        if (a + c < N) add_label(states[index(a + 1, w, c, mask)], place(l, fill.input, 0, fill.input_tail));
                        if (w < a) add_label(states[index(a, w + 1, c, mask)], place(l, fill.weight, 0, 0));
                        if (a + c < N) add_label(states[index(a, w, c + 1, mask)], place(l, fill.weight, 0, 0));
                        for (int k = 0; k < n; ++k)
                            if (!(mask >> k & 1) && (own[k].preds & ~mask) == 0)
                                add_label(states[index(a, w, c, mask | 1u << k)], place(l, own[k].duration, own[k].release, own[k].tail));
                    }
                }
    return best;
}

// Fill parameters of a rank, or fillers = -1 when its I's or W's do not all cost the same.
Fill rank_fill(const Instance& inst, const TaskBounds& b, int rank) {
    Fill fill;
    fill.input = fill.weight = -1;
    fill.input_tail = std::numeric_limits<std::int64_t>::max();
    for (int t : inst.rank_tasks[rank]) {
        const Task& task = inst.tasks[t];
        if (task.op.kind == OpKind::F) continue;
        Ticks& d = task.op.kind == OpKind::I ? fill.input : fill.weight;
        if (d >= 0 && d != task.duration) return Fill{-1, 0, 0, 0};
        d = task.duration;
        if (task.op.kind == OpKind::I) fill.input_tail = std::min(fill.input_tail, b.tail[t]);
    }
    if (fill.input < 0 || fill.weight < 0) return Fill{-1, 0, 0, 0};
    fill.fillers = *inst.cap;
    return fill;
}

}  // namespace

Ticks Releases::at(int task) const {
    const auto it = std::lower_bound(tasks.begin(), tasks.end(), task);
    return it != tasks.end() && *it == task ? value[static_cast<size_t>(it - tasks.begin())] : kUnreached;
}

Releases releases_after(const Instance& inst, int from) {
    const Op& op = inst.tasks[from].op;
    const int stages = inst.problem.placement.pipelines[op.pipeline].stages();
    Releases out;
    for (int s = 0; s < stages; ++s)
        for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W}) out.tasks.push_back(inst.task_of({kind, op.pipeline, s, op.microbatch}));
    std::sort(out.tasks.begin(), out.tasks.end());
    out.value.assign(out.tasks.size(), kUnreached);
    auto local = [&](int task) { return static_cast<size_t>(std::lower_bound(out.tasks.begin(), out.tasks.end(), task) - out.tasks.begin()); };
    // Dependency edges of one micro-batch, relaxed in topological order.
    std::vector<int> chain = out.tasks;
    std::sort(chain.begin(), chain.end(), [&](int x, int y) { return inst.topo_position[x] < inst.topo_position[y]; });
    out.value[local(from)] = -min_duration(inst, from);  // so that end(from) = 0
    for (int t : chain) {
        const Ticks here = out.value[local(t)];
        if (here == kUnreached) continue;
        for (int e : inst.out_edges[t]) {
            const PrecedenceEdge& edge = inst.edges[e];
            if (edge.why != Why::Dependency) continue;
            Ticks& to = out.value[local(edge.to)];
            to = std::max(to, here + min_duration(inst, t) + edge.lag);
        }
    }
    return out;
}

std::vector<CoolDownIdle> cool_down_idle(const Instance& inst, const TaskBounds& b, int rank) {
    std::vector<CoolDownIdle> out;
    if (!inst.cap || inst.pairs_allowed() || inst.rank_tasks[rank].empty()) return out;
    const Fill base = rank_fill(inst, b, rank);
    if (base.fillers < 0) return out;
    const std::vector<int> candidates = last_forward_candidates(inst, rank);
    if (candidates.empty() || candidates.size() > kMaxCandidates) return out;
    for (int f : candidates) {
        const Releases release = releases_after(inst, f);
        std::vector<int> mine;
        for (int t : inst.rank_tasks[rank])
            if (release.at(t) != kUnreached && t != f) mine.push_back(t);
        if (static_cast<int>(mine.size()) > kMaxOwnOps) return {};
        std::vector<OwnOp> own;
        int activations = 0;
        for (int t : mine) {
            if (inst.tasks[t].op.kind == OpKind::F) return {};  // not a last forward: never expected
            if (inst.tasks[t].op.kind == OpKind::W) ++activations;
            OwnOp o{inst.tasks[t].duration, release.at(t), b.tail[t], 0};
            for (int e : inst.in_edges[t]) {
                const auto at = std::find(mine.begin(), mine.end(), inst.edges[e].from);
                if (inst.edges[e].why == Why::Dependency && at != mine.end()) o.preds |= 1u << (at - mine.begin());
            }
            own.push_back(o);
        }
        Fill fill = base;
        fill.fillers = base.fillers - activations;
        if (fill.fillers < 0) return {};  // below the memory floor: reported elsewhere
        if (fill.fillers > kMaxFillers) return {};
        out.push_back(least_idle_after(inst, b, f, own, fill));
    }
    return out;
}

}  // namespace pp
