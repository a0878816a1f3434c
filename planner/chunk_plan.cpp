#include "planner/chunk_plan.hpp"

#include "planner/planner.hpp"

#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pp::plan {
namespace {

constexpr double kBf16 = 2, kFp8 = 1;


// Microseconds exact to 0.1 us; a positive cost stays positive.
Rational micros(double seconds) {
    if (seconds <= 0) return Rational(0);
    return Rational(std::max<long long>(1, std::llround(seconds * 1e7)), 10);
}

struct PerLayer {  // seconds per layer, one micro-batch
    double attn_f = 0, attn_i = 0, attn_w = 0, mlp = 0, shared = 0, dispatch_f = 0, combine_f = 0, combine_b = 0, dispatch_b = 0;
};

PerLayer per_layer(const PlanRequest& r) {
    const ModelSpec& m = r.model;
    const TrainingSpec& t = r.training;
    const double tokens = static_cast<double>(t.microbatch_size) * t.sequence_length;
    const double rate = r.cluster.gpu_tflops * 1e12 * r.cluster.mfu * t.tp;
    const int moe = m.moe_layer_count();
    const double dense = m.total_params * (1 - m.expert_share);
    const double routed = moe > 0 ? std::max(0.0, (m.active() - dense) / moe) : 0.0;  // per token per MoE layer
    const double shared = moe > 0 ? routed / std::max(1, m.top_k) : 0.0;
    const double moe_fraction = m.layers > 0 ? static_cast<double>(moe) / m.layers : 0.0;
    const double attention = std::max(0.0, dense / m.layers - shared * moe_fraction);
    const double scores = 2.0 * t.sequence_length * m.hidden;
    PerLayer p;
    p.attn_f = tokens * (2 * attention + scores) / rate;
    p.attn_i = tokens * (2 * attention + 2 * scores) / rate;
    p.attn_w = tokens * 2 * attention / rate;
    p.mlp = moe_fraction * tokens * 2 * routed / rate;
    p.shared = moe_fraction * tokens * 2 * shared / rate;
    if (t.ep > 1 && moe > 0) {
        const bool inter = t.ep > r.cluster.gpus_per_node;
        const double bandwidth = (inter ? r.cluster.inter_node_gbps : r.cluster.intra_node_gbps) * 1e9;
        const double elements = tokens * m.top_k * m.hidden * (t.ep - 1) / t.ep;
        p.dispatch_f = moe_fraction * elements * kFp8 / bandwidth;
        p.combine_f = moe_fraction * elements * kBf16 / bandwidth;
        p.combine_b = moe_fraction * elements * kFp8 / bandwidth;
        p.dispatch_b = moe_fraction * elements * kBf16 / bandwidth;
    } else {
        // No expert parallelism: the routed experts are local compute, no all-to-all.
    }
    return p;
}

// One micro-batch's activation (tokens x hidden, BF16) per hop, over the inter-node link when a stage fills a node.
Rational p2p_micros(const PlanRequest& request, int pp) {
    const TrainingSpec& t = request.training;
    const int gpus_per_stage = request.cluster.gpus / pp;
    const bool inter = gpus_per_stage >= request.cluster.gpus_per_node;
    const double bytes = static_cast<double>(t.microbatch_size) * t.sequence_length * request.model.hidden * kBf16;
    return micros(bytes / ((inter ? request.cluster.inter_node_gbps : request.cluster.intra_node_gbps) * 1e9));
}

std::optional<int> stages_per_rank(const std::string& family) {
    if (family == "interleaved-1f1b" || family == "zb1p" || family == "looped-bfs" || family == "combined-1f1b") return 2;
    return std::nullopt;
}

}  // namespace

namespace {

// Measured components (ms, per layer of the given `layers`) for a block of block_layers layers, modelled as L
// layers each scaled by f: layer l takes the measured layer l mod layers, in microseconds.
pp::ChunkCosts measured_block(const pp::ChunkCosts& measured, int L, double f) {
    pp::ChunkCosts c;
    c.resize(L);
    for (int l = 0; l < L; ++l)
        for (int k = 0; k < kComponents; ++k) {
            const auto component = static_cast<Component>(k);
            c.set(component, l, micros(to_double(measured.cost(component, l % measured.layers)) / 1000.0 * f));
        }
    c.slowdown = measured.slowdown;
    if (measured.pp) c.pp = *measured.pp * Rational(1000);
    return c;
}

}  // namespace

pp::ChunkCosts component_costs(const PlanRequest& request, int pp, int blocks_total) {
    const PerLayer p = per_layer(request);
    const double block_layers = static_cast<double>(request.model.layers) / blocks_total;
    const int L = std::max(1, static_cast<int>(std::lround(block_layers)));
    const double f = block_layers / L;
    if (request.training.components) {
        pp::ChunkCosts c = measured_block(*request.training.components, L, f);
        if (!request.training.components->pp && pp > 1) c.pp = p2p_micros(request, pp);
        return c;
    }
    pp::ChunkCosts c;
    c.resize(L);
    using C = Component;
    c.set_all(C::AttnF, micros(p.attn_f * f));
    c.set_all(C::AttnI, micros(p.attn_i * f));
    c.set_all(C::AttnW, micros(p.attn_w * f));
    c.set_all(C::MlpF, micros(p.mlp * f));
    c.set_all(C::MlpI, micros(p.mlp * f));
    c.set_all(C::MlpW, micros(p.mlp * f));
    c.set_all(C::SharedF, micros(p.shared * f));
    c.set_all(C::SharedI, micros(p.shared * f));
    c.set_all(C::SharedW, micros(p.shared * f));
    c.set_all(C::DispatchF, micros(p.dispatch_f * f));
    c.set_all(C::CombineF, micros(p.combine_f * f));
    c.set_all(C::CombineB, micros(p.combine_b * f));
    c.set_all(C::DispatchB, micros(p.dispatch_b * f));
    if (pp > 1) c.pp = p2p_micros(request, pp);
    return c;
}

std::vector<std::string> chunk_assumptions(const PlanRequest& r) {
    const ModelSpec& m = r.model;
    const double dense = m.total_params * (1 - m.expert_share);
    const int moe = m.moe_layer_count();
    const double routed = moe > 0 ? std::max(0.0, (m.active() - dense) / moe) : 0.0;
    return {
        fmt::format("non-expert parameters {:.3g} (total x (1 - expert share {:.2f})), spread evenly over {} layers", dense, m.expert_share,
                    m.layers),
        fmt::format("routed experts active per token per MoE layer {:.3g} ((active - non-expert) / {} MoE layers); one shared expert "
                    "of {:.3g} (one routed expert: / top-{})",
                    routed, moe, routed / std::max(1, m.top_k), m.top_k),
        fmt::format("FLOPs per token per layer: attn_f 2 x attention params + 2 s h, attn_i + 4 s h, attn_w 2 x attention params; "
                    "mlp_f = mlp_i = mlp_w = 2 x routed; at {:g} TFLOP/s x MFU {:.2f} x TP {}",
                    r.cluster.gpu_tflops, r.cluster.mfu, r.training.tp),
        fmt::format("all-to-all per MoE layer: tokens x top-{} x hidden {} x bytes x (EP-1)/EP, EP {} over {} ({:g} GB/s per GPU); "
                    "dispatch_f and combine_b FP8 (1 byte), combine_f and dispatch_b BF16 (2 bytes), DeepSeek-V3 §3.3; "
                    "no node-limited-routing discount, no latency or congestion, no EP/PP bandwidth sharing",
                    m.top_k, m.hidden, r.training.ep, r.training.ep > r.cluster.gpus_per_node ? "the inter-node link" : "NVLink",
                    r.training.ep > r.cluster.gpus_per_node ? r.cluster.inter_node_gbps : r.cluster.intra_node_gbps),
        "dense layers spread evenly: each layer's routed-expert and all-to-all costs scaled by MoE layers / layers; a block of "
        "layers/blocks layers is modelled as L = that rounded, each component scaled to keep the block total",
        "pp: one activation (tokens x hidden x 2 bytes) per hop over the inter-node link when a stage fills a node",
        "pattern deepseek (DeepSeek-V3 Figure 4) inside every F&B pair; a lone F, I or B runs its components in chain order "
        "(only its own shared expert or weight gradient can hide its all-to-all)",
    };
}

std::vector<FamilyExposure> ep_exposure(const PlanRequest& request, int pp, int microbatches, const std::vector<std::string>& families) {
    std::vector<FamilyExposure> out;
    for (const std::string& family : families) {
        FamilyExposure e;
        e.family = family;
        e.pp = pp;
        e.microbatches = microbatches;
        try {
            const ScheduleFamily* generator = find_family(family);
            if (!generator) throw std::invalid_argument("not a schedule family");
            // The family's preconditions may refuse M: the nearest M it accepts, as the ranking takes it.
            std::optional<Schedule> generated;
            try {
                generated = generator->generate({pp, microbatches, stages_per_rank(family)});
            } catch (const std::exception& refusal) {
                auto nearest = nearest_valid_microbatches(*generator, pp, microbatches, stages_per_rank(family));
                if (!nearest) throw std::invalid_argument(refusal.what());
                e.microbatches = nearest->first;
                generated = std::move(nearest->second);
            }
            const Schedule& schedule = *generated;
            e.blocks = schedule.placement.blocks();
            if (e.blocks > request.model.layers) throw std::invalid_argument(fmt::format("needs {} blocks, the model has {} layers", e.blocks, request.model.layers));
            const pp::ChunkCosts chunk = component_costs(request, pp, e.blocks);
            e.chunk_text = format_chunk_costs(chunk);
            const ChunkTable table = derive_chunk_table(chunk, PatternSpec{});
            const Simulation sim = simulate(schedule, table.costs());
            e.makespan = sim.scale.to_units(sim.makespan);
            e.bubble_fraction = sim.bubble_fraction;
            const ChunkExposure x = exposure_per_rank(schedule, table);
            for (size_t r = 0; r < x.exposed.size(); ++r) {
                e.exposed_max = std::max(e.exposed_max, x.exposed[r]);
                e.network_max = std::max(e.network_max, x.network[r]);
            }
            e.exposed_total = x.total_exposed();
            e.network_total = x.total_network();
        } catch (const std::exception& ex) {
            e.error = ex.what();
        }
        out.push_back(e);
    }
    return out;
}

std::string ep_exposure_text(const PlanRequest& request, int pp, int microbatches) {
    if (request.model.expert_share <= 0 || request.training.ep <= 1 || request.model.moe_layer_count() == 0) return "";
    std::string text = fmt::format("\nEP all-to-all at PP={}, EP={}, M={} (issue 11 chunk model; times in ms, exact simulation of the "
                                   "generated schedules with derived costs):\n",
                                   pp, request.training.ep, microbatches);
    const PerLayer p = per_layer(request);
    text += fmt::format("  per layer: attn_f {:.2f}  mlp_f {:.2f}  shared_f {:.2f}  dispatch_f {:.2f}  combine_f {:.2f} | combine_b {:.2f}  "
                        "mlp_i {:.2f}  mlp_w {:.2f}  dispatch_b {:.2f}  attn_i {:.2f}  attn_w {:.2f}\n",
                        p.attn_f * 1e3, p.mlp * 1e3, p.shared * 1e3, p.dispatch_f * 1e3, p.combine_f * 1e3, p.combine_b * 1e3,
                        p.mlp * 1e3, p.mlp * 1e3, p.dispatch_b * 1e3, p.attn_i * 1e3, p.attn_w * 1e3);
    const double compute_f = p.attn_f + p.mlp + p.shared, comm_f = p.dispatch_f + p.combine_f;
    text += fmt::format("  forward compute : all-to-all = {:.2f} : {:.2f} ms per layer (DeepSeek-V3 states about 1:1)\n", compute_f * 1e3,
                        comm_f * 1e3);
    const auto rows = ep_exposure(request, pp, microbatches, {"1f1b", "zb1p", "dualpipe", "dualpipev", "combined-1f1b"});
    text += fmt::format("  {:<14} {:>5} {:>7} {:>12} {:>8} {:>22} {:>8}\n", "family", "M", "blocks", "step (ms)", "bubble", "exposed A2A/rank (ms)",
                        "hidden");
    for (const auto& e : rows) {
        if (!e.error.empty()) {
            text += fmt::format("  {:<14} not evaluated: {}\n", e.family, e.error);
            continue;
        }
        text += fmt::format("  {:<14} {:>5} {:>7} {:>12.1f} {:>7.1f}% {:>22.1f} {:>7.1f}%\n", e.family, e.microbatches, e.blocks, to_double(e.makespan) / 1e3,
                            100 * to_double(e.bubble_fraction), to_double(e.exposed_max) / 1e3,
                            e.network_total > Rational(0) ? 100 * (1 - to_double(e.exposed_total / e.network_total)) : 100.0);
    }
    // The F&B pair at this PP (DualPipe's blocks): is all EP communication hidden under the other chunk's compute?
    for (const auto& e : rows)
        if (e.family == "dualpipe" && e.error.empty()) {
            const ChunkTable table = derive_chunk_table(component_costs(request, pp, e.blocks), PatternSpec{});
            const auto& pair = table.of(SlotKind::PairFB).timeline;
            text += fmt::format("  DualPipe's F&B pair ({} layers): {:.2f} ms, all-to-all {:.2f} ms of which {:.2f} ms exposed: EP "
                                "communication is {} inside pairs at PP={}, EP={}.\n",
                                table.chunk.layers, to_double(pair.duration) / 1e3, to_double(pair.network_time) / 1e3,
                                to_double(pair.exposed_comm) / 1e3, pair.exposed_comm == Rational(0) ? "fully hidden" : "NOT fully hidden",
                                pp, request.training.ep);
        }
    text += "  (M: the plan's, or the nearest the family accepts; exposed A2A: the worst rank's all-to-all time "
            "not hidden under its own compute inside its slots; hidden: share of all ranks' all-to-all time)\n";
    text += "  Assumptions:\n";
    for (const auto& a : chunk_assumptions(request)) text += "    - " + a + "\n";
    return text;
}

}  // namespace pp::plan
