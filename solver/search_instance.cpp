#include "solver/search_instance.hpp"

#include "limits/deadline.hpp"
#include "model/size_budget.hpp"
#include "verifier/simulate.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace pp {
namespace {

constexpr int kTaskKinds = 3;  // F, I, W
int kind_slot(OpKind kind) { return kind == OpKind::F ? 0 : kind == OpKind::I ? 1 : 2; }
constexpr OpKind kSlotKind[kTaskKinds] = {OpKind::F, OpKind::I, OpKind::W};

// Stages of pipeline p held by `rank` that come before `stage`: each of them still holds micro-batch m
// when F(stage, m) starts.
int earlier_stages_on_rank(const Placement& placement, int pipeline, int stage) {
    const int rank = placement.rank_of(pipeline, stage);
    int count = 0;
    for (int s = 0; s < stage; ++s)
        if (placement.rank_of(pipeline, s) == rank) ++count;
    return count;
}

void add_edge(Instance& inst, int from, int to, Ticks lag, Why why) {
    const int id = static_cast<int>(inst.edges.size());
    inst.edges.push_back({from, to, lag, why});
    inst.out_edges[from].push_back(id);
    inst.in_edges[to].push_back(id);
}

void add_dependency_edges(Instance& inst) {
    const Placement& pl = inst.problem.placement;
    for (int p = 0; p < pl.pipeline_count(); ++p) {
        const int stages = pl.pipelines[p].stages();
        for (int m = 0; m < pl.pipelines[p].microbatches; ++m) {
            limits::check_point("building the search instance");  // per micro-batch: a pipeline's stages apart
            auto id = [&](OpKind kind, int s) { return inst.task_of({kind, p, s, m}); };
            auto lag = [&](int s1, int s2) { return pl.rank_of(p, s1) == pl.rank_of(p, s2) ? Ticks{0} : inst.comm; };
            for (int s = 1; s < stages; ++s) add_edge(inst, id(OpKind::F, s - 1), id(OpKind::F, s), lag(s - 1, s), Why::Dependency);
            add_edge(inst, id(OpKind::F, stages - 1), id(OpKind::I, stages - 1), 0, Why::Dependency);
            for (int s = stages - 2; s >= 0; --s) add_edge(inst, id(OpKind::I, s + 1), id(OpKind::I, s), lag(s + 1, s), Why::Dependency);
            for (int s = 0; s < stages; ++s) add_edge(inst, id(OpKind::I, s), id(OpKind::W, s), 0, Why::Dependency);
        }
    }
}

// With F&B pairs the W class keeps no order of its own (see the header).
void add_fifo_edges(Instance& inst) {
    const Placement& pl = inst.problem.placement;
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int s = 0; s < pl.pipelines[p].stages(); ++s)
            for (OpKind kind : kSlotKind)
                for (int m = 1; !(kind == OpKind::W && inst.fused_pairs()) && m < pl.pipelines[p].microbatches; ++m)
                    add_edge(inst, inst.task_of({kind, p, s, m - 1}), inst.task_of({kind, p, s, m}), 0, Why::Fifo);
}

// Under FIFO, a cap L on a rank holding stage s and u earlier stages of the same pipeline means
// F(s,m) starts after W(s, m-(L-u)) ends (see the header).
void add_memory_edges(Instance& inst, int limit) {
    const Placement& pl = inst.problem.placement;
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int s = 0; s < pl.pipelines[p].stages(); ++s) {
            const int window = limit - earlier_stages_on_rank(pl, p, s);
            if (window < 1) continue;  // below the memory floor: the search reports infeasible first
            for (int m = window; m < pl.pipelines[p].microbatches; ++m)
                add_edge(inst, inst.task_of({OpKind::W, p, s, m - window}), inst.task_of({OpKind::F, p, s, m}), 0,
                         Why::Memory);
        }
}

// With FIFO the live stashes of a one-stage rank are a range of micro-batches; at the start of F(s, m)
// (m counted from 0) with a of its I's and b of its W's ended (b <= a <= m) the rank holds
// (m + 1) alloc - (alloc - kept) a - kept b units. Two edges follow, each necessary, neither sufficient
// (the cap itself is counted by the encodings):
//   b <= a gives (m + 1 - a) alloc <= cap, so I(s, m - floor(cap / alloc)) ends before F(s, m);
//   a <= m gives alloc + kept (m - b) <= cap, so W(s, m - 1 - floor((cap - alloc) / kept)) ends before it.
// Ranks holding several stages get no edge (their other stages' stashes also count).
void add_weighted_memory_edges(Instance& inst, const WeightedMemory& memory) {
    const Placement& pl = inst.problem.placement;
    if (memory.cap < memory.alloc) return;  // below the floor: the search reports infeasible first
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int s = 0; s < pl.pipelines[p].stages(); ++s) {
            int classes = 0;
            for (int q = 0; q < pl.pipeline_count(); ++q) classes += static_cast<int>(pl.stages_on_rank(q, pl.rank_of(p, s)).size());
            if (classes != 1) continue;
            const int M = pl.pipelines[p].microbatches;
            const std::int64_t by_input = memory.cap / memory.alloc;
            for (std::int64_t m = by_input; m < M; ++m)
                add_edge(inst, inst.task_of({OpKind::I, p, s, static_cast<int>(m - by_input)}),
                         inst.task_of({OpKind::F, p, s, static_cast<int>(m)}), 0, Why::Memory);
            if (memory.kept == 0) continue;
            const std::int64_t by_weight = 1 + (memory.cap - memory.alloc) / memory.kept;
            for (std::int64_t m = by_weight; m < M; ++m)
                add_edge(inst, inst.task_of({OpKind::W, p, s, static_cast<int>(m - by_weight)}),
                         inst.task_of({OpKind::F, p, s, static_cast<int>(m)}), 0, Why::Memory);
        }
}

// Whole stashes (I releases nothing) keep the integer cap every component understands: floor(limit / F).
// Otherwise the cap is counted in the units of WeightedMemory.
void set_memory_cap(Instance& inst, const Rational& limit, const ActivationModel& sizes) {
    if (limit < Rational(0)) throw std::invalid_argument("the memory limit must not be negative");
    if (sizes.forward_alloc <= Rational(0) || sizes.input_grad_free < Rational(0) || sizes.input_grad_free > sizes.forward_alloc)
        throw std::invalid_argument("the search needs activation sizes with 0 < F and 0 <= I <= F");
    auto floor_int = [](const Rational& v, std::int64_t most) {  // v >= 0; above `most` nothing can reach it
        const Integer whole = v.numerator() / v.denominator();
        return whole > Integer(most) ? most : whole.to_int64();
    };
    if (sizes.input_grad_free == Rational(0)) {
        inst.cap = static_cast<int>(floor_int(limit / sizes.forward_alloc, 1 << 30));
        return;
    }
    TimeScale units;
    units.include(sizes.forward_alloc);
    units.include(sizes.input_grad_free);
    const Integer alloc = units.to_ticks(sizes.forward_alloc), released = units.to_ticks(sizes.input_grad_free);
    if (alloc > Integer(1 << 20))
        throw std::invalid_argument("activation sizes " + format_activation_sizes(sizes) +
                                    ": the search counts memory in 1/" + units.ticks_per_unit.to_string() +
                                    " units, finer than it supports (denominators up to 2^20)");
    WeightedMemory w;
    w.alloc = alloc.to_int64();
    w.kept = w.alloc - released.to_int64();
    w.cap = floor_int(limit * Rational(units.ticks_per_unit), std::int64_t(1) << 60);
    inst.weighted = w;
}

void compute_topological_order(Instance& inst) {
    const size_t n = inst.size();
    std::vector<int> indegree(n, 0);
    for (const auto& e : inst.edges) ++indegree[e.to];
    inst.topo_order.clear();
    for (size_t t = 0; t < n; ++t)
        if (indegree[t] == 0) inst.topo_order.push_back(static_cast<int>(t));
    for (size_t head = 0; head < inst.topo_order.size(); ++head, limits::poll("ordering the search instance"))
        for (int e : inst.out_edges[inst.topo_order[head]])
            if (--indegree[inst.edges[e].to] == 0) inst.topo_order.push_back(inst.edges[e].to);
    if (inst.topo_order.size() != n) throw std::logic_error("search instance: precedence edges form a cycle");
    inst.topo_position.assign(n, 0);
    for (size_t k = 0; k < n; ++k) inst.topo_position[inst.topo_order[k]] = static_cast<int>(k);
}

// h_r: the earliest time any op of rank r can start, from dependencies alone (the same for every
// micro-batch, so FIFO does not change it).
void compute_earliest_rank_starts(Instance& inst) {
    std::vector<Ticks> head(inst.size(), 0);
    for (int t : inst.topo_order)
        for (int e : inst.out_edges[t]) {
            const auto& edge = inst.edges[e];
            if (edge.why != Why::Dependency) continue;
            head[edge.to] = std::max(head[edge.to], head[t] + inst.tasks[t].duration + edge.lag);
        }
    inst.earliest_rank_start.assign(inst.ranks, 0);
    std::vector<bool> seen(inst.ranks, false);
    for (size_t t = 0; t < inst.size(); ++t) {
        const int r = inst.tasks[t].rank;
        if (!seen[r] || head[t] < inst.earliest_rank_start[r]) inst.earliest_rank_start[r] = head[t], seen[r] = true;
    }
}

}  // namespace

int Instance::task_of(const Op& op) const {
    if (op.kind == OpKind::B || op.pipeline < 0 || op.pipeline >= problem.placement.pipeline_count()) return -1;
    const auto& pipe = problem.placement.pipelines[op.pipeline];
    if (op.stage < 0 || op.stage >= pipe.stages() || op.microbatch < 0 || op.microbatch >= pipe.microbatches) return -1;
    return static_cast<int>(pipeline_base_[op.pipeline] +
                            (static_cast<size_t>(op.stage) * pipe.microbatches + op.microbatch) * kTaskKinds +
                            kind_slot(op.kind));
}

bool Instance::is_pairable(int task) const {
    return pair.has_value() && (tasks[task].op.kind == OpKind::F || tasks[task].op.kind == OpKind::I);
}

bool Instance::is_absorbable(int task) const { return fused_pairs() && tasks[task].op.kind == OpKind::W; }

int Instance::weight_of(int input_task) const {
    const Op& op = tasks[input_task].op;
    return task_of({OpKind::W, op.pipeline, op.stage, op.microbatch});
}

int Instance::input_of(int weight_task) const {
    const Op& op = tasks[weight_task].op;
    return task_of({OpKind::I, op.pipeline, op.stage, op.microbatch});
}

const char* pair_kind_name(PairKind kind) { return kind == PairKind::ForwardBackward ? "F&B" : "F&I"; }

MemoryFloor memory_floor(const Placement& placement) {
    MemoryFloor floor;
    for (int p = 0; p < placement.pipeline_count(); ++p)
        for (int r = 0; r < placement.ranks; ++r) {
            const int held = static_cast<int>(placement.stages_on_rank(p, r).size());
            if (held > floor.units) floor = {held, r, p, ""};
        }
    floor.explanation = "rank " + std::to_string(floor.rank) + " holds " + std::to_string(floor.units) +
                        " stages of pipeline " + std::to_string(floor.pipeline) +
                        "; when the last of them starts F of a micro-batch, every earlier one still holds that "
                        "micro-batch's activation (its W runs after the backward has come back), so every "
                        "schedule has a peak of at least " + std::to_string(floor.units) + " on that rank";
    return floor;
}

std::optional<MemoryCounter> memory_counter(const Instance& inst) {
    if (inst.weighted) return MemoryCounter{inst.weighted->alloc, inst.weighted->released_by_input(), inst.weighted->kept, inst.weighted->cap};
    if (inst.cap) return MemoryCounter{1, 0, 1, *inst.cap};
    return std::nullopt;
}

Instance build_instance(const SearchProblem& problem) {
    problem.placement.validate();
    Instance inst;
    inst.problem = problem;
    if (problem.memory_limit) set_memory_cap(inst, *problem.memory_limit, problem.activations);
    if (inst.weighted && problem.overlap)
        throw std::invalid_argument("the search does not yet count overlapped pairs under activation sizes in which I "
                                    "releases part of a stash (" + format_activation_sizes(problem.activations) + ")");
    // The pair cost goes where Costs::pair_duration looks for it (FI for F&I pairs, FB for F&B pairs), so the
    // costs a found schedule is written with time it as the search did. Without --overlap a pair costs the
    // sum of its ops (never better than running them apart).
    const bool forward_input = problem.pair_kind == PairKind::ForwardInput;
    auto set_pair_cost = [&](OpCosts& c) {
        c.FB.reset();
        c.FI.reset();
        if (problem.overlap) (forward_input ? c.FI : c.FB) = *problem.overlap;
    };
    set_pair_cost(inst.problem.costs.base);
    for (auto& [block, c] : inst.problem.costs.per_block) set_pair_cost(c);
    const Placement& pl = inst.problem.placement;
    const Costs& costs = inst.problem.costs;
    inst.scale = time_scale_for(costs);
    inst.ranks = pl.ranks;

    // Tasks in the dense order (pipeline, stage, micro-batch, kind).
    size_t total = 0;
    for (const auto& pipe : pl.pipelines) {
        inst.pipeline_base_.push_back(total);
        total += static_cast<size_t>(pipe.stages()) * pipe.microbatches * kTaskKinds;
    }
    inst.tasks.resize(total);
    inst.rank_tasks.assign(pl.ranks, {});
    int class_base = 0;
    for (int p = 0; p < pl.pipeline_count(); ++p) {
        const auto& pipe = pl.pipelines[p];
        for (int s = 0; s < pipe.stages(); ++s)
            for (int m = 0; m < pipe.microbatches; ++m)
                for (OpKind kind : kSlotKind) {
                    limits::poll("building the search instance");
                    const Op op{kind, p, s, m};
                    const int id = inst.task_of(op);
                    Task& t = inst.tasks[id];
                    t.op = op;
                    t.rank = pl.rank_of(p, s);
                    t.duration = inst.scale.to_ticks(costs.duration(kind, pl.block_of(p, s)));
                    if (t.duration <= 0)
                        throw std::invalid_argument("search needs positive durations; " + format_op(op) + " costs 0");
                    t.cls = (class_base + s) * kTaskKinds + kind_slot(kind);
                }
        class_base += pipe.stages();
    }

    // Quantise by the gcd of everything that adds up to a start time.
    Ticks g = 0;
    for (const Task& t : inst.tasks) g = gcd(g, t.duration);
    const Ticks comm_ticks = inst.scale.to_ticks(costs.comm);
    g = gcd(g, comm_ticks);
    Ticks pair_ticks = 0;
    if (problem.overlap) {
        pair_ticks = inst.scale.to_ticks(*problem.overlap);
        if (pair_ticks <= 0) throw std::invalid_argument("--overlap FB must be positive");
        g = gcd(g, pair_ticks);
    }
    inst.quantum = std::max<Ticks>(g, 1);
    for (Task& t : inst.tasks) t.duration /= inst.quantum, inst.horizon += t.duration;
    inst.comm = comm_ticks / inst.quantum;
    if (problem.overlap) inst.pair = pair_ticks / inst.quantum;

    for (size_t id = 0; id < inst.tasks.size(); ++id) inst.rank_tasks[inst.tasks[id].rank].push_back(static_cast<int>(id));

    // Activations (one per pipeline, stage, micro-batch).
    for (int p = 0; p < pl.pipeline_count(); ++p)
        for (int s = 0; s < pl.pipelines[p].stages(); ++s)
            for (int m = 0; m < pl.pipelines[p].microbatches; ++m) {
                const int f = inst.task_of({OpKind::F, p, s, m}), w = inst.task_of({OpKind::W, p, s, m});
                const int i = inst.task_of({OpKind::I, p, s, m});
                inst.tasks[f].activation = inst.tasks[w].activation = static_cast<int>(inst.activations.size());
                inst.activations.push_back({f, w, pl.rank_of(p, s), i});
            }

    inst.out_edges.assign(total, {});
    inst.in_edges.assign(total, {});
    add_dependency_edges(inst);
    if (problem.symmetry_breaking) {
        add_fifo_edges(inst);
        if (inst.cap && !inst.fused_pairs()) add_memory_edges(inst, *inst.cap);
        if (inst.weighted && !inst.fused_pairs()) add_weighted_memory_edges(inst, *inst.weighted);
    }
    for (const PrecedenceEdge& edge : inst.edges) inst.horizon += edge.lag;

    // A rank whose activations all belong to one stage is exactly described by its memory edges.
    inst.rank_needs_cardinality.assign(pl.ranks, false);
    if (inst.weighted) inst.rank_needs_cardinality.assign(pl.ranks, true);  // the edges are only implied
    if (inst.cap)
        for (int r = 0; r < pl.ranks; ++r) {
            int classes = 0;
            for (int p = 0; p < pl.pipeline_count(); ++p) classes += static_cast<int>(pl.stages_on_rank(p, r).size());
            inst.rank_needs_cardinality[r] = classes > 1 || !problem.symmetry_breaking || inst.fused_pairs();
        }

    compute_topological_order(inst);
    compute_earliest_rank_starts(inst);
    return inst;
}

Schedule schedule_from_starts(const Instance& inst, const std::vector<Ticks>& start, const std::vector<int>& partner) {
    Schedule schedule;
    schedule.placement = inst.problem.placement;
    schedule.costs = inst.problem.costs;
    schedule.memory_limit = inst.problem.memory_limit;
    if (!(inst.problem.activations == ActivationModel{})) schedule.activation_sizes = inst.problem.activations;
    schedule.ranks.resize(inst.ranks);
    for (int r = 0; r < inst.ranks; ++r) {
        std::vector<int> order = inst.rank_tasks[r];
        std::sort(order.begin(), order.end(), [&](int a, int b) {
            if (start[a] != start[b]) return start[a] < start[b];
            return inst.topo_position[a] < inst.topo_position[b];
        });
        for (int t : order) {
            const int other = partner.empty() ? -1 : partner[t];
            const Op& op = inst.tasks[t].op;
            if (inst.is_absorbable(t) && !partner.empty() && partner[inst.input_of(t)] >= 0) continue;  // in its F&B
            if (other < 0) {
                schedule.ranks[r].push_back(Slot::single(op));
            } else if (op.kind == OpKind::F) {
                Op backward = inst.tasks[other].op;
                if (inst.fused_pairs()) backward.kind = OpKind::B;
                schedule.ranks[r].push_back(Slot::pair(op, backward));
            }  // the backward of a pair was emitted with its forward
        }
    }
    return schedule;
}

std::string describe_op(const Op& op) { return format_op(op); }

}  // namespace pp

namespace pp {

std::uint64_t search_tasks(const Placement& placement) {
    std::uint64_t tasks = 0;
    for (const Pipeline& p : placement.pipelines)
        tasks = saturating_add(tasks, saturating_mul(saturating_mul(static_cast<std::uint64_t>(std::max(p.stages(), 0)),
                                                                    static_cast<std::uint64_t>(std::max(p.microbatches, 0))),
                                                     3));
    return tasks;
}

void require_search_size(const Placement& placement) {
    const std::uint64_t tasks = search_tasks(placement);
    const std::uint64_t limit = max_ops() / kSearchShareOfMaxOps;
    if (tasks <= limit) return;
    throw SizeLimitError(placement_size_text(placement) + " make " + format_count(tasks) +
                         " search tasks (F, I and W of each), " + format_bytes(saturating_mul(tasks, kSearchBytesPerTask)) +
                         " of memory for the search: over its limit of " + format_count(limit) +
                         " tasks (a 25th of --max-ops, which raises it)");
}

}  // namespace pp
