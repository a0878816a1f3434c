#include "planner/plan_text.hpp"

#include "planner/chunk_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pp::plan {
namespace {

std::string pct(const Rational& r) { return fmt::format("{:.1f}%", 100.0 * to_double(r)); }
std::string billions(double params) { return fmt::format("{:.3g}B", params / 1e9); }

// F, I, W (and the EP all-to-all) of one layer in ms: what every option's per-block costs are made of.
std::string per_layer_costs_text(const PlanRequest& r) {
    const ChunkCosts layer = per_layer_costs(r);
    std::string text = fmt::format("F={:.4g} ms, I={:.4g} ms, W={:.4g} ms", 1e3 * layer.F, 1e3 * layer.I, 1e3 * layer.W);
    if (layer.all_to_all > 0)
        text += fmt::format("; EP all-to-all {:.4g} ms per F and per I (averaged over the layers)", 1e3 * layer.all_to_all);
    return text + " (a block of k layers costs k times this; P2P per hop by PP)";
}

std::string inputs(const PlanRequest& r) {
    const auto& m = r.model;
    const auto& t = r.training;
    std::string text = fmt::format("model: {} -- {} layers, hidden {}, {} parameters", m.name.empty() ? "custom" : m.name, m.layers,
                                   m.hidden, billions(m.total_params));
    if (m.expert_share > 0)
        text += fmt::format(" ({} active per token; {:.0f}% in routed experts over {} MoE layers, top-{}, EP {})",
                            billions(m.active()), 100 * m.expert_share, m.moe_layer_count(), m.top_k, t.ep);
    text += fmt::format("\ncluster: {} GPUs, {} per node, {:g} GB/s in a node, {:g} GB/s between nodes, {:g} GB each\n", r.cluster.gpus,
                        r.cluster.gpus_per_node, r.cluster.intra_node_gbps, r.cluster.inter_node_gbps, r.cluster.gpu_memory_gb);
    text += fmt::format("training: {} sequences x {} tokens per step, micro-batch {} sequence(s), TP {}\n", t.global_batch,
                        t.sequence_length, t.microbatch_size, t.tp);
    if (t.components)
        text += fmt::format("chunk costs: measured components {} (ms per layer), scaled by layers per block\n",
                            format_chunk_costs(*t.components));
    else if (t.chunk)
        text += fmt::format("op costs: measured F={:g} I={:g} W={:g} ms per {} layer(s), scaled by layers per block\n", t.chunk->F,
                            t.chunk->I, t.chunk->W, t.chunk->layers);
    else
        text += fmt::format("op costs: estimated from FLOPs at {:.0f}% of {:g} TFLOP/s per GPU\n", 100 * r.cluster.mfu,
                            r.cluster.gpu_tflops);
    text += "op costs per layer, one micro-batch: " + per_layer_costs_text(r) + "\n";
    text += "step time: " + step_time_model(r) + "\n";
    return text;
}

std::string table(const PlanResult& result) {
    constexpr const char* kRow = "{:>3}  {:<40} {:>4} {:>6} {:>7} {:>9} {:>9} {:>10} {:>10} {:>7} {:>8} {:>4}\n";
    std::string text = fmt::format(kRow, "#", "option", "DP", "copies", "bubble", "step (s)", "DP AR (s)", "GPU-h/Mtok", "weights GB",
                                   "act GB", "total GB", "fits");
    const size_t shown = std::min(result.options.size(), static_cast<size_t>(result.request.top));
    for (size_t k = 0; k < shown; ++k) {
        const PlanOption& o = result.options[k];
        text += fmt::format(kRow, k + 1, o.label(), o.dp, fmt::format("{}x", o.copies), pct(o.bubble_fraction),
                            fmt::format("{:.3f}", o.step_seconds), fmt::format("{:.3f}", o.gradient_reduce.exposed()),
                            fmt::format("{:.4g}", o.gpu_hours_per_million_tokens),
                            fmt::format("{:.1f}", o.weights_gb), fmt::format("{:.1f}", o.activations_gb),
                            fmt::format("{:.1f}", o.total_gb), o.fits ? "yes" : "no");
    }
    if (result.options.size() > shown)
        text += fmt::format("     ... {} more options (--top N shows more)\n", result.options.size() - shown);
    return text;
}

const PlanOption* find_option(const PlanResult& result, const std::string& family, int pp) {
    for (const auto& o : result.options)
        if (o.family == family && o.pp == pp) return &o;
    return nullptr;
}

// Why the smaller PP degrees lose: the best option of each, when it does not fit or is slower.
std::string smaller_pp(const PlanResult& result, const PlanOption& best) {
    std::map<int, const PlanOption*> best_per_pp;
    for (const auto& o : result.options)
        if (!best_per_pp.count(o.pp)) best_per_pp[o.pp] = &o;  // options are sorted best first
    std::string text;
    for (const auto& [pp, o] : best_per_pp) {
        if (pp >= best.pp) break;
        if (!o->fits)
            text += fmt::format("  PP={} does not fit: its best option ({}) needs about {:.0f} GB per GPU.\n", pp, o->family, o->total_gb);
        else
            text += fmt::format("  PP={} fits but costs {:.4g} GPU-hours per million tokens ({}).\n", pp,
                                o->gpu_hours_per_million_tokens, o->family);
    }
    return text;
}

std::string copies_paragraph(const PlanResult& result, const PlanOption& best) {
    const auto& r = result.request;
    const PlanOption* dual = find_option(result, "dualpipe", best.pp);
    if (!dual)
        for (const auto& o : result.options)
            if (o.family == "dualpipe") { dual = &o; break; }
    if (!dual) return "";
    const double extra = dual->weights_gb - dual->single_copy_weights_gb;
    std::string text = fmt::format(
        "Parameter copies: DualPipe holds 2 of the {} stages on every GPU. At PP={} its weights take {:.1f} GB per GPU against "
        "{:.1f} GB with one copy: +{:.1f} GB (+{:.0f}%).\n",
        dual->pp, dual->pp, dual->weights_gb, dual->single_copy_weights_gb, extra, 100 * extra / dual->single_copy_weights_gb);
    if (r.model.expert_share > 0) {
        text += fmt::format(
            "  Why it is cheap here: {:.0f}% of the parameters are routed experts, sharded over EP={} GPUs ({} per GPU); "
            "the second copy duplicates only the dense part ({} per GPU per copy){}.\n",
            100 * r.model.expert_share, r.training.ep, billions(dual->params.experts),
            billions(dual->params.dense / 2),
            r.training.duplicate_experts ? " -- here counted with duplicated expert shards too (duplicate-experts)"
                                         : " -- assumption: the pipeline copy does not duplicate expert shards "
                                           "(set duplicate-experts = true to count them twice)");
    } else {
        text += "  For a dense model the copy doubles the weights: every parameter is in the pipeline-copied stages.\n";
    }
    if (const PlanOption* v = find_option(result, "dualpipev", dual->pp))
        text += fmt::format("  DualPipeV at the same PP keeps one copy ({:.1f} GB of weights) with bubble {} against DualPipe's {}.\n",
                            v->weights_gb, pct(v->bubble_fraction), pct(dual->bubble_fraction));
    return text;
}

std::string step_parts(const PlanOption& o) {
    if (o.gradient_reduce.seconds == 0) return fmt::format("Step {:.3f} s (DP {}: no gradient all-reduce).", o.step_seconds, o.dp);
    return fmt::format("Step {:.3f} s = pipeline {:.3f} s + exposed DP gradient all-reduce {:.3f} s (of {:.3f} s; the rest hides "
                       "under the last backward).",
                       o.step_seconds, o.makespan_seconds, o.gradient_reduce.exposed(), o.gradient_reduce.seconds);
}

std::string fits_word(double gb, double limit) { return gb <= limit ? "fits" : "does not fit"; }

// No recommendation: what the least-memory option needs and what would make something fit.
std::string nothing_fits(const PlanResult& result) {
    const NothingFits& why = *result.nothing_fits;
    const PlanOption& o = result.options[why.least];
    const double limit = result.request.cluster.gpu_memory_gb;
    std::string text = fmt::format(
        "NOTHING FITS in {:g} GB per GPU, so there is no recommendation. The option that needs the least memory, {}, needs "
        "about {:.1f} GB (weights {:.1f}, gradients {:.1f}, optimizer state {:.1f}, activations {:.1f}).\n"
        "What would fit (for that option, estimated the same way):\n",
        limit, o.label(), o.total_gb, o.weights_gb, o.grads_gb, o.optimizer_gb, o.activations_gb);
    text += fmt::format("  full activation recomputation (block inputs kept, one block recomputed at a time; ~1 extra forward per micro-batch): {:.1f} GB -- {}\n",
                        why.with_recompute_gb, fits_word(why.with_recompute_gb, limit));
    text += fmt::format("  ZeRO-2 (gradients sharded over DP={} as well): {:.1f} GB -- {}\n", o.dp, why.with_zero2_gb,
                        fits_word(why.with_zero2_gb, limit));
    text += fmt::format("  ZeRO-3 (weights sharded too; extra all-gathers not timed here): {:.1f} GB -- {}\n", why.with_zero3_gb,
                        fits_word(why.with_zero3_gb, limit));
    if (why.gpus_that_fit)
        text += fmt::format("  more GPUs: with {} GPUs (re-planned, same settings) {} fits\n", *why.gpus_that_fit, why.option_that_fits);
    else
        text += fmt::format("  more GPUs: no cluster up to 16x ({} GPUs) fits with these settings\n", 16 * result.request.cluster.gpus);
    text += "  or raise TP / EP (--tp, --ep), or lower the micro-batch size.\n";
    return text;
}

}  // namespace

std::string explanation(const PlanResult& result) {
    if (result.options.empty()) return "No option could be evaluated; see the reasons below.\n";
    if (result.nothing_fits) return nothing_fits(result);
    const PlanOption& best = result.options.front();
    const auto& r = result.request;
    std::string text = fmt::format(
        "Recommendation: {} -- pipeline degree {}, schedule {}, {} micro-batches per step and pipeline (DP {}, TP {}).\n"
        "  {:.4g} GPU-hours per million tokens, bubble {} of GPU time, about {:.1f} of {:g} GB per GPU.\n"
        "  {}\n",
        best.label(), best.pp, best.pp == 1 ? "none (gradient accumulation)" : best.family, best.microbatches, best.dp, r.training.tp,
        best.gpu_hours_per_million_tokens, pct(best.bubble_fraction), best.total_gb, r.cluster.gpu_memory_gb, step_parts(best));
    const PlanOption* runner = nullptr;
    for (const auto& o : result.options)
        if (&o != &best && o.family != best.family && o.fits == best.fits) { runner = &o; break; }
    text += "Why:\n";
    if (runner)
        text += fmt::format("  It needs {:.1f}% fewer GPU-hours than the best other family, {} ({:.4g} GPU-h/Mtok, bubble {}).\n",
                            100 * (1 - best.gpu_hours_per_million_tokens / runner->gpu_hours_per_million_tokens), runner->label(),
                            runner->gpu_hours_per_million_tokens, pct(runner->bubble_fraction));
    if (const PlanOption* base = find_option(result, "1f1b", best.pp); base && base != &best)
        text += fmt::format("  Against 1F1B at the same PP: bubble {} vs {}, step {:.3f} s vs {:.3f} s.\n", pct(best.bubble_fraction),
                            pct(base->bubble_fraction), best.step_seconds, base->step_seconds);
    if ((best.family == "dualpipe" || best.family == "dualpipev") && best.chunk.all_to_all > 0)
        text += fmt::format("  Its F&B pairs hide the EP all-to-all ({:.2f} ms per chunk and direction, {:.0f}% of a forward's compute), "
                            "which schedules without pairs pay inside every F and I.\n",
                            best.chunk.all_to_all * 1e3, 100 * best.chunk.all_to_all / best.chunk.F);
    else if (best.chunk.all_to_all > 0)
        text += fmt::format("  The EP all-to-all ({:.2f} ms per chunk) is small enough that hiding it in F&B pairs does not pay for "
                            "their bubble or copies here.\n",
                            best.chunk.all_to_all * 1e3);
    if (best.pp == 1)
        text += "  PP=1 is plain data parallelism with gradient accumulation: no bubble, and here even the DP gradient all-reduce\n"
                "  of all the weights (counted in the step) costs less than a pipeline's bubble.\n";
    text += smaller_pp(result, best);
    text += copies_paragraph(result, best);
    return text;
}

std::string plan_text(const PlanResult& result) {
    std::string text = inputs(result.request) + "\n" + table(result) + "\n" + explanation(result);
    if (result.any_fits() && result.options.front().pp > 1)  // the recommended PP; none when nothing fits
        text += ep_exposure_text(result.request, result.options.front().pp, result.options.front().microbatches);
    text +=
        "\nExact vs estimated:\n"
        "  exact, for the chunk costs above: bubble fraction, step time and peak activation stashes -- pipeproof's simulator on the\n"
        "    generated schedule (P2P latency on every hop, EP all-to-all inside F and I, ideal F&B overlap for DualPipe pairs);\n"
        "  estimates: the chunk costs themselves (FLOPs at an assumed MFU, or your measurements scaled by layers), all-to-all and\n"
        "    P2P times (bandwidth only), weights and optimizer memory (even split of parameters over blocks; BF16 weights and\n"
        "    gradients, ZeRO-1 optimizer state), activation memory (34 x hidden bytes per token per layer, no recomputation), and\n"
        "    the DP gradient all-reduce (ring, bandwidth only, overlapped with the rank's last backward of one block), and\n"
        "    GPU-hours (the optimizer step is not counted).\n";
    if (!result.skipped.empty()) {
        text += "\nNot considered:\n";
        for (size_t k = 0; k < result.skipped.size() && k < 12; ++k) text += "  " + result.skipped[k] + "\n";
        if (result.skipped.size() > 12) text += fmt::format("  ... and {} more\n", result.skipped.size() - 12);
    }
    return text;
}

}  // namespace pp::plan
