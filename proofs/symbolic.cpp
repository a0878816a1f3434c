#include "proofs/symbolic.hpp"

#include "proofs/budget.hpp"

#include "verifier/simulate.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace pp {


LinForm slot_form(const Slot& slot) {
    if (slot.is_pair()) return LinForm::var(CostVar::FB);
    switch (slot.ops[0].kind) {
        case OpKind::F: return LinForm::var(CostVar::F);
        case OpKind::I: return LinForm::var(CostVar::I);
        case OpKind::W: return LinForm::var(CostVar::W);
        case OpKind::B: return LinForm::var(CostVar::B);
    }
    return LinForm{};
}

Costs costs_at(const CostPoint& point) {
    Costs costs;
    costs.base.F = point[0];
    costs.base.I = point[1];
    costs.base.W = point[2];
    costs.base.B = point[3];
    costs.base.FB = point[4];
    costs.comm = point[5];
    return costs;
}

CostPoint point_of(const Costs& costs) {
    CostPoint p{};
    p[0] = costs.base.F;
    p[1] = costs.base.I;
    p[2] = costs.base.W;
    p[3] = costs.base.full_backward();
    p[4] = costs.base.FB ? *costs.base.FB : costs.base.F + costs.base.full_backward();
    p[5] = costs.comm;
    return p;
}

TimedDag timed_dag(const ScheduleGraph& graph) {
    TimedDag dag;
    const std::uint32_t n = graph.slot_count();
    dag.preds.resize(n);
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            dag.preds[v].push_back({u, graph.graph[e].cross_rank});
            ++indegree[v];
        }
    for (std::uint32_t s = 0; s < n; ++s)
        if (indegree[s] == 0) dag.topo.push_back(s);
    for (size_t head = 0; head < dag.topo.size(); ++head) {
        const std::uint32_t u = dag.topo[head];
        for (auto e : out_edges_of(graph.graph, u)) {
            const std::uint32_t v = target_of(graph.graph, e);
            if (--indegree[v] == 0) dag.topo.push_back(v);
        }
    }
    return dag;
}

SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region) {
    return symbolic_simulate(schedule, graph, region, SymbolicOptions{});
}

MaxPoly SymbolicTiming::end_of(std::uint32_t v, const CostRegion& region) const {
    MaxPoly p = end[root[v]];
    p.shift(offset[v], region);
    return p;
}

bool SymbolicTiming::end_shifted(std::uint32_t a, std::uint32_t b, const LinForm& shift) const {
    const LinForm want = offset[a] + shift - offset[b];  // end[root b] == end[root a] + want
    if (root[a] == root[b]) return want.zero();
    const MaxPoly& x = end[root[a]];
    const MaxPoly& y = end[root[b]];
    if (x.forms.size() != y.forms.size()) return false;
    for (size_t k = 0; k < x.forms.size(); ++k)
        if (!(y.forms[k] == x.forms[k] + want)) return false;
    return true;
}

SymbolicTiming symbolic_simulate(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                 const SymbolicOptions& options) {
    const TimedDag dag = timed_dag(graph);
    if (!dag.acyclic()) throw SimulationError("the schedule deadlocks: it cannot be timed");
    const std::uint32_t n = graph.slot_count();
    SymbolicTiming t;
    if (options.keep_start) t.start.resize(n);
    t.end.resize(n);
    t.root.resize(n);
    t.offset.assign(n, LinForm{});
    for (std::uint32_t v = 0; v < n; ++v) t.root[v] = v;
    const LinForm comm = LinForm::var(CostVar::comm);
    // With comm = 0 on the whole region a cross-rank arrival is the end time itself: no copy to shift.
    const bool comm_free = !region.may_be_positive(CostVar::comm);
    const MaxPoly zero = MaxPoly::of(LinForm{}, region);
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> source(n, kNone);   // shifted: the slot whose end time + step this one's is
    std::vector<std::uint32_t> checked(n, kNone);  // a slot q with end(q) + step == end(this one) (checked)
    auto equals_shifted = [&](std::uint32_t u, std::uint32_t q) {
        if (source[u] == q || checked[u] == q) return true;
        if (!t.end_shifted(q, u, options.step)) return false;
        checked[u] = q;
        return true;
    };
    std::uint32_t done = 0;
    for (std::uint32_t v : dag.topo) {
        if ((done++ & 15) == 0) budget::check("timing an instance with symbolic costs");  // --time-limit
        const LinForm duration = slot_form(graph.slot(schedule, v));
        const std::uint32_t r = graph.slot_rank[v], pos = graph.position(v);
        if (r < options.period.size() && options.period[r] > 0 && pos >= options.period[r] && !dag.preds[v].empty()) {
            const std::uint32_t w = v - options.period[r];  // slot (r, pos - period[r])
            const auto& p = dag.preds[v];
            const auto& q = dag.preds[w];
            bool same = graph.slot_rank[w] == r && graph.position(w) == pos - options.period[r] &&
                        p.size() == q.size() && duration == slot_form(graph.slot(schedule, w));
            for (size_t k = 0; same && k < p.size(); ++k)
                same = p[k].second == q[k].second && equals_shifted(p[k].first, q[k].first);
            if (same) {
                source[v] = w;
                if (options.keep_start) {
                    t.start[v] = t.start[w];
                    t.start[v].shift(options.step, region);
                }
                if (options.share) {
                    t.root[v] = t.root[w];
                    t.offset[v] = t.offset[w] + options.step;
                } else {
                    t.end[v] = t.end[w];
                    t.end[v].shift(options.step, region);
                }
                continue;
            }
        }
        MaxPoly start;
        for (auto [u, cross] : dag.preds[v]) {
            const LinForm add = cross && !comm_free ? t.offset[u] + comm : t.offset[u];
            if (add.zero()) {
                start.merge_pruned(t.end[t.root[u]]);
                continue;
            }
            MaxPoly arrival = t.end[t.root[u]];
            arrival.shift(add, region);
            start.merge_pruned(arrival);
        }
        if (start.empty()) start = zero;
        if (options.keep_start) t.start[v] = start;
        start.shift(duration, region);
        t.end[v] = std::move(start);
    }
    t.busy.resize(schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& s : schedule.ranks[r]) t.busy[r] += slot_form(s);
    // Slots of a rank run one after another, so the makespan is the latest end of a rank's last slot.
    for (size_t r = 0; r + 1 < graph.rank_begin.size(); ++r)
        if (graph.rank_begin[r + 1] > graph.rank_begin[r]) {
            const std::uint32_t last = graph.rank_begin[r + 1] - 1;
            if (t.offset[last].zero()) t.makespan.merge_pruned(t.end[t.root[last]]);
            else t.makespan.merge_pruned(t.end_of(last, region));
        }
    return t;
}

SymbolicPrevious symbolic_previous(const SymbolicReference& reference) {
    const ScheduleGraph& g = *reference.graph;
    SymbolicPrevious prev;
    prev.valid = true;
    prev.rank_begin = g.rank_begin;
    prev.dag = reference.dag;
    const std::uint32_t n = g.slot_count();
    prev.duration.resize(n);
    prev.base.resize(n);
    prev.offset.assign(n, LinForm{});
    for (std::uint32_t v = 0; v < n; ++v) {
        prev.duration[v] = slot_form(g.slot(*reference.schedule, v));
        prev.base[v] = &reference.timing->end[reference.timing->root[v]];
        prev.offset[v] = reference.timing->offset[v];
    }
    prev.makespan = reference.timing->makespan;
    return prev;
}

SymbolicTiming symbolic_simulate_reusing(const Schedule& schedule, const ScheduleGraph& graph, const CostRegion& region,
                                         const SymbolicReference& reference, SymbolicPrevious* previous,
                                         const LinForm* step, ReuseCounts* counts) {
    TimedDag dag = timed_dag(graph);
    if (!dag.acyclic()) throw SimulationError("the schedule deadlocks: it cannot be timed");
    const std::uint32_t n = graph.slot_count();
    const ScheduleGraph& rg = *reference.graph;
    const SymbolicTiming& rt = *reference.timing;
    if (rt.end.size() != rg.slot_count() || reference.dag.preds.size() != rg.slot_count())
        throw std::logic_error("symbolic_simulate_reusing: the reference is not a full timing of its graph");
    SymbolicPrevious local;
    SymbolicPrevious& prev = previous ? *previous : local;
    const bool shifting = prev.valid && step;
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> image(n, kNone);    // taken: the reference slot with the identical end time
    std::vector<std::uint32_t> source(n, kNone);   // shifted: the previous instance's slot it is `step` after
    std::vector<std::uint32_t> checked(n, kNone);  // a previous slot q whose end time + step equals v's (checked)
    std::vector<LinForm> duration(n);
    std::vector<MaxPoly> own;
    own.reserve(n);  // never reallocated: base points into it
    std::vector<const MaxPoly*> base(n, nullptr);
    std::vector<LinForm> offset(n);
    const LinForm comm = LinForm::var(CostVar::comm);
    const bool comm_free = !region.may_be_positive(CostVar::comm);  // as in symbolic_simulate
    const MaxPoly zero = MaxPoly::of(LinForm{}, region);
    ReuseCounts count;
    // end(u) == end_prev(q) + step, form by form (the ray values follow from the forms).
    auto equals_shifted = [&](std::uint32_t u, std::uint32_t q) {
        if (source[u] == q || checked[u] == q) return true;
        const MaxPoly& a = *base[u];
        const MaxPoly& b = *prev.base[q];
        if (a.forms.size() != b.forms.size()) return false;
        const LinForm d = prev.offset[q] + *step - offset[u];  // a + offset[u] == b + prev.offset[q] + step
        for (size_t k = 0; k < a.forms.size(); ++k)
            if (!(a.forms[k] == b.forms[k] + d)) return false;
        checked[u] = q;
        return true;
    };
    std::uint32_t done = 0;
    for (std::uint32_t v : dag.topo) {
        if ((done++ & 15) == 0) budget::check("timing an instance with symbolic costs");  // --time-limit
        const std::uint32_t r = graph.slot_rank[v], pos = graph.position(v);
        duration[v] = slot_form(graph.slot(schedule, v));
        const auto& p = dag.preds[v];
        if (r + 1 < rg.rank_begin.size() && pos < rg.rank_begin[r + 1] - rg.rank_begin[r]) {
            const std::uint32_t w = rg.rank_begin[r] + pos;
            const auto& q = reference.dag.preds[w];
            bool same = p.size() == q.size() && duration[v] == slot_form(rg.slot(*reference.schedule, w));
            for (size_t k = 0; same && k < p.size(); ++k)
                same = image[p[k].first] == q[k].first && p[k].second == q[k].second;
            if (same) {
                image[v] = w;
                base[v] = &rt.end[rt.root[w]];
                offset[v] = rt.offset[w];
                ++count.taken;
                continue;
            }
        }
        if (shifting && !p.empty() && r + 1 < prev.rank_begin.size()) {
            const std::int64_t len = graph.rank_begin[r + 1] - graph.rank_begin[r];
            const std::int64_t prev_len = prev.rank_begin[r + 1] - prev.rank_begin[r];
            const std::int64_t prev_pos = static_cast<std::int64_t>(pos) - (len - prev_len);
            if (prev_pos >= 0 && prev_pos < prev_len) {
                const std::uint32_t w = prev.rank_begin[r] + static_cast<std::uint32_t>(prev_pos);
                const auto& q = prev.dag.preds[w];
                bool same = p.size() == q.size() && duration[v] == prev.duration[w];
                for (size_t k = 0; same && k < p.size(); ++k)
                    same = p[k].second == q[k].second && equals_shifted(p[k].first, q[k].first);
                if (same) {
                    source[v] = w;
                    base[v] = prev.base[w];
                    offset[v] = prev.offset[w] + *step;
                    ++count.shifted;
                    continue;
                }
            }
        }
        // As in symbolic_simulate (operands materialised: base + offset).
        MaxPoly start;
        for (auto [u, cross] : p) {
            const LinForm add = cross && !comm_free ? offset[u] + comm : offset[u];
            if (add.zero()) {
                start.merge_pruned(*base[u]);
                continue;
            }
            MaxPoly arrival = *base[u];
            arrival.shift(add, region);
            start.merge_pruned(arrival);
        }
        if (start.empty()) start = zero;
        start.shift(duration[v], region);
        own.push_back(std::move(start));
        base[v] = &own.back();
        ++count.computed;
    }
    if (counts) *counts = count;
    SymbolicTiming t;
    t.busy.resize(schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& s : schedule.ranks[r]) t.busy[r] += slot_form(s);
    bool all_last_shifted = shifting && prev.rank_begin.size() == graph.rank_begin.size();
    for (size_t r = 0; all_last_shifted && r + 1 < graph.rank_begin.size(); ++r) {
        const bool here = graph.rank_begin[r + 1] > graph.rank_begin[r], there = prev.rank_begin[r + 1] > prev.rank_begin[r];
        all_last_shifted = here == there && (!here || source[graph.rank_begin[r + 1] - 1] == prev.rank_begin[r + 1] - 1);
    }
    if (all_last_shifted) {
        t.makespan = prev.makespan;
        t.makespan.shift(*step, region);
    } else {
        for (size_t r = 0; r + 1 < graph.rank_begin.size(); ++r) {
            if (graph.rank_begin[r + 1] == graph.rank_begin[r]) continue;
            const std::uint32_t last = graph.rank_begin[r + 1] - 1;
            if (offset[last].zero()) {
                t.makespan.merge_pruned(*base[last]);
                continue;
            }
            MaxPoly e = *base[last];
            e.shift(offset[last], region);
            t.makespan.merge_pruned(e);
        }
    }
    if (previous) {
        prev.valid = true;
        prev.rank_begin = graph.rank_begin;
        prev.dag = std::move(dag);
        prev.duration = std::move(duration);
        prev.base = std::move(base);
        prev.offset = std::move(offset);
        prev.makespan = t.makespan;
        if (!own.empty()) prev.store.push_back(std::move(own));  // the buffer moves, base stays valid
    }
    return t;
}

}  // namespace pp
