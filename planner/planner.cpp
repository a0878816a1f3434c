#include "planner/planner.hpp"

#include "planner/chunk_plan.hpp"
#include "verifier/chunk_derive.hpp"

#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace pp::plan {
namespace {

constexpr double kGB = 1e9;


// A schedule with overlapped F&B pairs (DualPipe, DualPipeV, combined 1F1B): its pairs hide the EP all-to-all.
bool has_pairs(const Schedule& schedule) {
    for (const auto& rank : schedule.ranks)
        for (const Slot& slot : rank)
            if (slot.is_pair()) return true;
    return false;
}

// The families that take V are planned at V = 2, their common default.
std::optional<int> stages_per_rank_of(const std::string& family) {
    const ScheduleFamily* generator = find_family(family);
    if (generator && generator->parameters.find('V') != std::string::npos) return 2;
    return std::nullopt;
}

std::vector<int> pp_candidates(const PlanRequest& r) {
    if (!r.pp_degrees.empty()) return r.pp_degrees;
    std::vector<int> out;
    for (int p = 1; p <= r.model.layers && p <= r.cluster.gpus; p *= 2)
        if (r.cluster.gpus % (p * r.training.tp) == 0) out.push_back(p);
    return out;
}

// Why a PP degree cannot be used at all, or nothing.
std::optional<std::string> layout_problem(const PlanRequest& r, int pp) {
    const int per_pipeline_position = r.cluster.gpus / pp;
    if (r.cluster.gpus % (pp * r.training.tp) != 0)
        return fmt::format("PP={}: {} GPUs are not a multiple of PP x TP = {}", pp, r.cluster.gpus, pp * r.training.tp);
    const int dp = per_pipeline_position / r.training.tp;
    if (r.model.expert_share > 0 && r.training.ep > per_pipeline_position)
        return fmt::format("PP={}: EP={} needs at least {} GPUs per pipeline position, there are {}", pp, r.training.ep,
                           r.training.ep, per_pipeline_position);
    if (r.training.global_batch % (dp * r.training.microbatch_size) != 0)
        return fmt::format("PP={}: global batch {} is not a multiple of DP x micro-batch size = {} x {}", pp,
                           r.training.global_batch, dp, r.training.microbatch_size);
    return std::nullopt;
}

struct Candidate {
    std::string family;
    int pp, dp, microbatches;
};

void size_memory(PlanOption& o, const PlanRequest& r, const Placement& placement) {
    o.params = parameters_per_gpu(r.model, r.training, placement);
    o.weights_gb = o.params.total() * r.training.bytes_per_param / kGB;
    o.state_gb = training_state_bytes(o.params, r.training, o.dp) / kGB;
    o.grads_gb = o.params.total() * r.training.grad_bytes_per_param / kGB;
    o.optimizer_gb = o.params.total() * r.training.optimizer_bytes_per_param / std::max(o.dp, 1) / kGB;
    o.activations_gb = to_double(o.peak_stashes) * stash_bytes(r.model, r.training, o.blocks) / kGB;
    o.total_gb = o.state_gb + o.activations_gb;
    o.fits = o.total_gb <= r.cluster.gpu_memory_gb;
    const ParameterMemory single = parameters_per_gpu(r.model, r.training, 1, o.pp, 1);
    o.single_copy_weights_gb = single.total() * r.training.bytes_per_param / kGB;
}

PlanOption evaluate(const PlanRequest& r, const Candidate& c, const Schedule& schedule) {
    PlanOption o;
    o.family = c.family;
    o.pp = c.pp;
    o.dp = c.dp;
    o.microbatches = c.microbatches;
    o.stages_per_rank = stages_per_rank_of(c.family);
    const Placement& placement = schedule.placement;
    o.blocks = placement.blocks();
    for (int rank = 0; rank < placement.ranks; ++rank)
        o.blocks_held = std::max(o.blocks_held, static_cast<int>(placement.blocks_on_rank(rank).size()));
    const auto copies = placement.copies_per_block();
    o.copies = copies.empty() ? 1 : *std::max_element(copies.begin(), copies.end());

    o.chunk = chunk_costs(r, c.pp, o.blocks);
    o.segments = schedule.segments;
    Costs costs = uses_chunk_model(r)
                      ? derive_chunk_table(component_costs(r, c.pp, o.blocks), PatternSpec{}).costs()  // us, as below
                      : simulator_costs(o.chunk, has_pairs(schedule));
    // Sequence segments: the simulator runs each unit at 1/k of the op costs and stash; a hop carries 1/k of the
    // tokens, and the hop's time is its bytes over the link.
    costs.comm = costs.comm / Rational(o.segments);
    const Simulation sim = simulate(schedule, costs);
    const double seconds_per_tick = 1e-6 / static_cast<double>(sim.scale.ticks_per_unit);  // costs are in us
    o.makespan_seconds = static_cast<double>(sim.makespan) * seconds_per_tick;
    o.worst_idle_seconds = static_cast<double>(sim.bubble) * seconds_per_tick;
    o.bubble_fraction = sim.bubble_fraction;
    for (const auto& rt : sim.ranks) o.peak_stashes = std::max(o.peak_stashes, rt.peak_activations);
    size_memory(o, r, placement);
    o.gradient_reduce = gradient_reduce(r, o.params, o.dp, o.chunk, o.segments);
    o.step_seconds = o.makespan_seconds + o.gradient_reduce.exposed();

    const double tokens = static_cast<double>(r.training.global_batch) * r.training.sequence_length;
    o.tokens_per_second = tokens / o.step_seconds;
    o.gpu_hours_per_million_tokens = r.cluster.gpus * o.step_seconds / 3600.0 / (tokens / 1e6);
    return o;
}

}  // namespace

// The M nearest to m (below first at equal distance) that the family accepts at this PP, within 4P + 64.
std::optional<std::pair<int, Schedule>> nearest_valid_microbatches(const ScheduleFamily& generator, int pp, int m,
                                                                   std::optional<int> v) {
    for (int d = 1; d <= 4 * pp + 64; ++d)
        for (const int candidate : {m - d, m + d}) {
            if (candidate < 1) continue;
            try {
                return std::make_pair(candidate, generator.generate({pp, candidate, v}));
            } catch (const std::exception&) {
            }
        }
    return std::nullopt;
}

bool uses_chunk_model(const PlanRequest& r) {
    if (r.training.components) return true;
    return !r.training.chunk && r.model.expert_share > 0 && r.training.ep > 1 && r.model.moe_layer_count() > 0;
}

std::string step_time_model(const PlanRequest& r) {
    if (r.training.components)
        return "chunk model at the measured chunk-costs (per-component costs on a compute and a network stream, DeepSeek's "
               "overlap pattern)";
    if (uses_chunk_model(r))
        return "chunk model (per-component costs on a compute and a network stream, DeepSeek's overlap pattern: a pair "
               "hides one chunk's all-to-all under the other's compute, a lone op exposes its own)";
    return "op model (F, I, W per block; an MoE block's all-to-all is added to its F and I, fully exposed)";
}

namespace {

bool better(const PlanOption& a, const PlanOption& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.gpu_hours_per_million_tokens != b.gpu_hours_per_million_tokens)
        return a.gpu_hours_per_million_tokens < b.gpu_hours_per_million_tokens;
    return a.total_gb < b.total_gb;
}

PlanResult plan_options(const PlanRequest& request);

// The remedies for the option that needs the least memory, and the smallest 2^k x larger cluster that fits.
NothingFits what_would_fit(const PlanResult& result) {
    NothingFits why;
    const auto& r = result.request;
    const auto least = std::min_element(result.options.begin(), result.options.end(),
                                        [](const PlanOption& a, const PlanOption& b) { return a.total_gb < b.total_gb; });
    why.least = static_cast<size_t>(least - result.options.begin());
    const PlanOption& o = *least;
    const double one_stash_gb = o.peak_stashes > Rational(0) ? o.activations_gb / to_double(o.peak_stashes) : 0;
    // Full recomputation keeps each in-flight stash's block input (tokens x hidden, BF16, split by TP)
    // and one whole stash while a block is recomputed.
    const double tokens = static_cast<double>(r.training.microbatch_size) * r.training.sequence_length;
    const double input_gb = tokens * r.model.hidden * 2.0 / r.training.tp / kGB;
    why.with_recompute_gb =
        o.total_gb - o.activations_gb + std::min(o.activations_gb, one_stash_gb + to_double(o.peak_stashes) * input_gb);
    why.with_zero2_gb = o.total_gb - o.grads_gb * (1.0 - 1.0 / std::max(o.dp, 1));
    why.with_zero3_gb = why.with_zero2_gb - o.weights_gb * (1.0 - 1.0 / std::max(o.dp, 1));
    for (int factor = 2; factor <= 16 && r.cluster.gpus <= std::numeric_limits<int>::max() / factor; factor *= 2) {
        PlanRequest bigger = r;
        bigger.cluster.gpus = r.cluster.gpus * factor;
        const PlanResult plan = plan_options(bigger);
        if (!plan.any_fits()) continue;
        why.gpus_that_fit = bigger.cluster.gpus;
        const PlanOption& best = plan.options.front();
        why.option_that_fits = fmt::format("{} at {:.1f} GB per GPU", best.label(), best.total_gb);
        break;
    }
    return why;
}

}  // namespace

std::string PlanOption::label() const {
    if (pp == 1) return fmt::format("no pipeline (PP=1) M={}", microbatches);
    // group-interleaved runs at its generator's default group size, ceil(PP/2): named, as V is.
    const std::string group = family == "group-interleaved" ? fmt::format(" G={}", (pp + 1) / 2) : "";
    const std::string split = family_takes_segments(family) ? fmt::format(" k={}", segments) : "";
    return fmt::format("{} PP={}{}{}{} M={}{}", family, pp, stages_per_rank ? fmt::format(" V={}", *stages_per_rank) : "",
                       group, split, microbatches,
                       requested_microbatches ? fmt::format(" (not {})", *requested_microbatches) : "");
}

bool PlanResult::any_fits() const {
    return std::any_of(options.begin(), options.end(), [](const PlanOption& o) { return o.fits; });
}

PlanResult make_plan(const PlanRequest& request) {
    validate(request);
    PlanResult result = plan_options(request);
    if (!result.options.empty() && !result.any_fits()) result.nothing_fits = what_would_fit(result);
    return result;
}

namespace {

// Model blocks the family cuts the model into at this PP (2P on the V map, V*P interleaved, ...), from the
// placement of its smallest schedule.
int blocks_of(const ScheduleFamily& generator, int pp, std::optional<int> v) {
    for (int m = 1; m <= 4 * pp + 4; ++m) {
        try {
            return generator.generate({pp, m, v}).placement.blocks();
        } catch (const std::exception&) {
        }
    }
    return pp * v.value_or(1);
}

// A family that orders for the costs (v-zb) is ordered for what its stages run at here (the simulator's costs,
// in microseconds, op model); the others ignore them.
GenerateParams params_for(const PlanRequest& request, const ScheduleFamily& generator, int pp, int m, std::optional<int> v,
                          int blocks) {
    GenerateParams params{pp, m, v};
    if (family_takes_segments(generator.name)) params.segments = request.segments.value_or(kDefaultSegments);  // named in the option's label
    if (generator.orders_for_costs) params.costs = simulator_costs(chunk_costs(request, pp, blocks), false);
    return params;
}

PlanResult plan_options(const PlanRequest& request) {
    PlanResult result;
    result.request = request;
    for (const int pp : pp_candidates(request)) {
        if (auto problem = layout_problem(request, pp)) {
            result.skipped.push_back(*problem);
            continue;
        }
        const int dp = request.cluster.gpus / pp / request.training.tp;
        const int m = request.training.global_batch / (dp * request.training.microbatch_size);
        // One rank needs no pipeline schedule: evaluate it once, as plain gradient accumulation (1F1B on 1 rank).
        const std::vector<std::string> families = pp == 1 ? std::vector<std::string>{"1f1b"} : candidate_families(request);
        for (const std::string& family : families) {
            const ScheduleFamily* generator = find_family(family);
            if (!generator) {
                result.skipped.push_back(fmt::format("{}: not a schedule family (see `pipeproof list`)", family));
                continue;
            }
            const auto v = stages_per_rank_of(family);
            const int blocks_needed = blocks_of(*generator, pp, v);
            if (blocks_needed > request.model.layers) {
                result.skipped.push_back(fmt::format("{} PP={}: needs {} blocks, the model has {} layers", family, pp,
                                                     blocks_needed, request.model.layers));
                continue;
            }
            try {
                const Schedule schedule = generator->generate(params_for(request, *generator, pp, m, v, blocks_needed));
                result.options.push_back(evaluate(request, {family, pp, dp, m}, schedule));
            } catch (const std::exception& e) {
                // The family's precondition at this M (DualPipe: M even and >= 2P, ...): the nearest M it accepts.
                if (const auto nearest = nearest_valid_microbatches(*generator, pp, m, v)) {
                    PlanOption option = evaluate(request, {family, pp, dp, nearest->first}, nearest->second);
                    option.requested_microbatches = m;
                    result.options.push_back(std::move(option));
                } else {
                    result.skipped.push_back(fmt::format("{} PP={} M={}: {}", family, pp, m, e.what()));
                }
            }
        }
    }
    std::stable_sort(result.options.begin(), result.options.end(), better);
    return result;
}

}  // namespace

ParameterMemory family_parameters(const PlanRequest& request, const std::string& family, int pp, int microbatches) {
    const ScheduleFamily* generator = find_family(family);
    if (!generator) throw PlanSpecError("not a schedule family: " + family);
    const Schedule schedule = generator->generate({pp, microbatches, stages_per_rank_of(family)});
    return parameters_per_gpu(request.model, request.training, schedule.placement);
}

}  // namespace pp::plan
