#include "verifier/compare.hpp"

#include <algorithm>
#include <stdexcept>

namespace pp {
namespace {

OpCosts scaled(const OpCosts& c, const Rational& share) {
    OpCosts out;
    out.F = c.F * share;
    out.I = c.I * share;
    out.W = c.W * share;
    if (c.B) out.B = *c.B * share;
    if (c.FB) out.FB = *c.FB * share;
    if (c.FI) out.FI = *c.FI * share;
    return out;
}

}  // namespace

Rational stage_share(const Placement& placement) {
    const int blocks = placement.blocks();
    return blocks > 0 ? Rational(placement.ranks, blocks) : Rational(1);
}

Costs scaled_costs(const Costs& costs, const Rational& share) {
    Costs out = costs;
    out.base = scaled(costs.base, share);
    for (auto& [block, c] : out.per_block) c = scaled(c, share);
    return out;
}

CompareRow compare_schedule(const Schedule& schedule, const Costs& given_costs, const CompareOptions& options) {
    if (options.tokens_per_microbatch.has_value() != options.seconds_per_unit.has_value())
        throw std::invalid_argument("GPU-hours need both the tokens per micro-batch and the seconds per time unit");
    if (options.tokens_per_microbatch && *options.tokens_per_microbatch <= 0)
        throw std::invalid_argument("tokens per micro-batch must be positive");
    if (options.seconds_per_unit && *options.seconds_per_unit <= Rational(0))
        throw std::invalid_argument("the time unit must be a positive number of seconds");

    const Rational share = options.model_share_costs ? stage_share(schedule.placement) : Rational(1);
    const Costs costs = options.model_share_costs ? scaled_costs(given_costs, share) : given_costs;
    const ScheduleGraph graph = build_schedule_graph(schedule);
    const Simulation sim = simulate_model(options.comm_model, schedule, graph, costs, options.activations, options.batched);
    const auto units = [&](Ticks ticks) { return sim.scale.to_units(ticks); };

    CompareRow row;
    row.name = schedule.source;
    row.ranks = schedule.rank_count();
    row.microbatches = schedule.placement.total_microbatches() / schedule.segments;  // micro-batches, not segment units
    row.comm_model = options.comm_model;
    row.attached_comm_program = options.comm_model == CommModel::Batched && uses_attached_program(schedule, options.batched);
    row.stage_share = share;
    row.stage_costs = costs;

    row.makespan = units(sim.makespan);
    row.worst_idle = units(sim.bubble);
    row.bubble_fraction = sim.bubble_fraction;
    row.utilisation = sim.makespan > 0 ? Rational(1) - sim.bubble_fraction : Rational(0);
    Ticks span = 0;
    for (const RankTiming& t : sim.ranks) {
        row.busy_per_rank.push_back(units(t.busy));
        row.idle_per_rank.push_back(units(t.idle));
        row.span_per_rank.push_back(units(t.last_end - t.first_start));
        row.peak_activations.push_back(t.peak_activations * share);
        span = std::max(span, t.last_end - t.first_start);
        row.zb_work = std::max(row.zb_work, units(t.busy));
    }
    row.zb_span = units(span);
    if (row.zb_span > Rational(0)) row.zb_bubble_rate = (row.zb_span - row.zb_work) / row.zb_span;

    row.blocks = schedule.placement.blocks();
    for (int r = 0; r < row.ranks; ++r) {
        const int held = static_cast<int>(schedule.placement.blocks_on_rank(r).size());
        row.blocks_per_rank.push_back(held);
        row.model_fraction_per_rank.push_back(row.blocks > 0 ? Rational(held, row.blocks) : Rational(0));
    }
    row.copies_per_block = schedule.placement.copies_per_block();

    if (options.tokens_per_microbatch && row.makespan > Rational(0)) {
        const Rational tokens = Rational(row.microbatches) * Rational(*options.tokens_per_microbatch);
        const Rational seconds = row.makespan * *options.seconds_per_unit;
        row.tokens_per_second = tokens / seconds;
        row.gpu_hours_per_million_tokens = Rational(row.ranks) * seconds / Rational(3600) * Rational(1000000) / tokens;
    }
    return row;
}

}  // namespace pp
