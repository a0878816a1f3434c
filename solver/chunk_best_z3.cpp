#include "solver/chunk_best_z3.hpp"

#include "limits/z3_check.hpp"
#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <chrono>

namespace pp {
namespace {

using Clock = std::chrono::steady_clock;

TimeScale scale_of(const SlotDag& dag) {
    TimeScale scale;
    for (const auto& node : dag.nodes) scale.include(node.cost);
    return scale;
}

std::string var(const SlotDag& dag, int v) { return "s_" + dag.nodes[static_cast<size_t>(v)].name(); }

std::vector<std::vector<bool>> reachability(const SlotDag& dag) {
    const size_t n = dag.nodes.size();
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t v = 0; v < n; ++v) {
        std::vector<int> stack(dag.succ[v].begin(), dag.succ[v].end());
        while (!stack.empty()) {
            const int w = stack.back();
            stack.pop_back();
            if (reach[v][static_cast<size_t>(w)]) continue;
            reach[v][static_cast<size_t>(w)] = true;
            for (int x : dag.succ[static_cast<size_t>(w)]) stack.push_back(x);
        }
    }
    return reach;
}

// Longest path and stream loads, in ticks: no order finishes earlier.
Ticks trivial_bound(const SlotDag& dag, const TimeScale& scale) {
    const size_t n = dag.nodes.size();
    std::vector<Ticks> tail(n, -1);
    std::function<Ticks(size_t)> tail_of = [&](size_t v) -> Ticks {
        if (tail[v] >= 0) return tail[v];
        Ticks longest = 0;
        for (int w : dag.succ[v]) longest = std::max(longest, tail_of(static_cast<size_t>(w)));
        return tail[v] = scale.to_ticks(dag.nodes[v].cost) + longest;
    };
    Ticks bound = 0;
    for (size_t v = 0; v < n; ++v) bound = std::max(bound, tail_of(v));
    for (int s = 0; s < kStreams; ++s) bound = std::max(bound, scale.to_ticks(dag.stream_total(static_cast<Stream>(s))));
    return bound;
}

struct Probe {
    z3::check_result answer = z3::unknown;
    StreamOrder order;  // on sat
};

Probe probe(const SlotDag& dag, const TimeScale& scale, Ticks bound, double seconds) {
    z3::context ctx;
    z3::solver solver(ctx);
    solver.from_string(chunk_order_smt2(dag, scale, bound).c_str());
    Probe out;
    out.answer = limits::check(solver, {limits::Deadline::after(seconds), nullptr});
    if (out.answer != z3::sat) return out;
    const z3::model model = solver.get_model();
    std::vector<std::pair<std::int64_t, int>> starts;
    for (int v = 0; v < dag.node_count(); ++v) {
        std::int64_t value = 0;
        model.eval(ctx.int_const(var(dag, v).c_str()), true).is_numeral_i64(value);
        starts.emplace_back(value, v);
    }
    std::sort(starts.begin(), starts.end());
    for (const auto& [start, v] : starts) out.order.lists[static_cast<size_t>(dag.nodes[static_cast<size_t>(v)].stream())].push_back(v);
    return out;
}

SlotKindTiming finish(const SlotDag& dag, StreamOrder order, std::string method, bool optimal, Rational lower_bound,
                      std::uint64_t nodes) {
    SlotKindTiming t;
    t.kind = dag.kind;
    t.dag = dag;
    t.timeline = time_slot(dag, order, Rational(0));
    t.order = std::move(order);
    t.method = std::move(method);
    t.optimal = optimal;
    t.lower_bound = lower_bound;
    t.search_nodes = nodes;
    const TimeScale scale = scale_of(dag);
    if (optimal && t.timeline.duration > Rational(0))
        t.certificate_smt2 = chunk_order_smt2(dag, scale, scale.to_ticks(t.timeline.duration) - 1);
    return t;
}

}  // namespace

std::string chunk_order_smt2(const SlotDag& dag, const TimeScale& scale, Ticks bound) {
    const auto reach = reachability(dag);
    std::string text = fmt::format(
        "; pipeproof chunk: can every component of the {} slot ({} layer{}) finish by {} ticks ({} time units)?\n"
        "; ticks per time unit: {}. unsat = no order of the two streams is that fast.\n(set-logic QF_LIA)\n",
        slot_kind_name(dag.kind), dag.layers, dag.layers == 1 ? "" : "s", bound.to_string(), format_rational(scale.to_units(bound)),
        scale.ticks_per_unit.to_string());
    const int n = dag.node_count();
    std::vector<Ticks> d;
    for (const auto& node : dag.nodes) d.push_back(scale.to_ticks(node.cost));
    for (int v = 0; v < n; ++v) {
        text += fmt::format("(declare-fun {} () Int)\n", var(dag, v));
        text += fmt::format("(assert (>= {} 0))\n(assert (<= (+ {} {}) {}))\n", var(dag, v), var(dag, v), d[static_cast<size_t>(v)].to_string(), bound.to_string());
    }
    for (int u = 0; u < n; ++u)
        for (int v : dag.succ[static_cast<size_t>(u)])
            text += fmt::format("(assert (>= {} (+ {} {})))  ; data edge\n", var(dag, v), var(dag, u), d[static_cast<size_t>(u)].to_string());
    for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v) {
            if (dag.nodes[static_cast<size_t>(u)].stream() != dag.nodes[static_cast<size_t>(v)].stream()) continue;
            if (reach[static_cast<size_t>(u)][static_cast<size_t>(v)] || reach[static_cast<size_t>(v)][static_cast<size_t>(u)]) continue;
            text += fmt::format("(assert (or (<= (+ {} {}) {}) (<= (+ {} {}) {})))  ; one stream\n", var(dag, u), d[static_cast<size_t>(u)].to_string(),
                                var(dag, v), var(dag, v), d[static_cast<size_t>(v)].to_string(), var(dag, u));
        }
    return text + "(check-sat)\n";
}

bool smt2_is_unsat(const std::string& smt2) {
    z3::context ctx;
    z3::solver solver(ctx);
    solver.from_string(smt2.c_str());
    return limits::check(solver) == z3::unsat;
}

SlotKindTiming best_order_certified(const SlotDag& dag, const Rational& slowdown, const ChunkBestOptions& options) {
    if (!(slowdown == Rational(0))) {
        BestSearchOptions search;
        search.node_budget = options.exhaustive_budget;
        SlotKindTiming t = best_by_exhaustive_search(dag, slowdown, search);  // throws ChunkBestUndecided
        t.certificate_smt2.clear();  // start times are not linear in the order under contention
        return t;
    }
    const TimeScale scale = scale_of(dag);
    StreamOrder incumbent = data_only(pattern_order(PatternKind::DeepSeek, dag));
    std::uint64_t nodes = 0;
    if (!options.force_z3) {
        BestSearchOptions search;
        search.node_budget = options.exhaustive_budget;
        BestOrder b = best_order_exhaustive(dag, slowdown, search);
        nodes = b.nodes;
        if (b.complete)
            return finish(dag, std::move(b.order), fmt::format("best: {} ({} nodes, complete)", b.method, b.nodes), true,
                          b.timeline.duration, nodes);
        incumbent = std::move(b.order);
    }
    Ticks hi = scale.to_ticks(time_slot(dag, incumbent, slowdown).duration);
    Ticks lo = trivial_bound(dag, scale);
    const auto t0 = Clock::now();
    int calls = 0;
    bool undecided = false;
    while (lo < hi) {
        const double left = options.time_limit_seconds - std::chrono::duration<double>(Clock::now() - t0).count();
        if (left <= 0) {
            undecided = true;
            break;
        }
        const Ticks mid = lo + (hi - lo) / 2;
        Probe p = probe(dag, scale, mid, left);
        ++calls;
        if (p.answer == z3::sat) {
            const Ticks value = scale.to_ticks(time_slot(dag, p.order, slowdown).duration);
            if (value < hi) incumbent = std::move(p.order), hi = value;
            else hi = mid;  // cannot happen (the slot timer is never later than Z3's starts); keep progress anyway
        } else if (p.answer == z3::unsat) {
            lo = mid + 1;
        } else {
            undecided = true;
            break;
        }
    }
    const std::string method = fmt::format("best: Z3 disjunctive bisection ({} call{}{}){}", calls, calls == 1 ? "" : "s",
                                           options.force_z3 ? "" : fmt::format(" after {} branch-and-bound nodes", nodes),
                                           undecided ? ", time limit reached: not proved optimal" : "");
    return finish(dag, std::move(incumbent), method, !undecided, scale.to_units(lo), nodes);
}

BestSolver chunk_best_solver(const ChunkBestOptions& options) {
    return [options](const SlotDag& dag, const Rational& slowdown) { return best_order_certified(dag, slowdown, options); };
}

}  // namespace pp
