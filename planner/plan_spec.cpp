#include "planner/plan_spec.hpp"

#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>

namespace pp::plan {
namespace {

std::string trim(std::string_view text) {
    size_t a = 0, b = text.size();
    while (a < b && std::isspace(static_cast<unsigned char>(text[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(text[b - 1]))) --b;
    return std::string(text.substr(a, b - a));
}

[[noreturn]] void bad(std::string_view key, std::string_view value, std::string_view expected) {
    throw PlanSpecError(fmt::format("{}: '{}' is not {}", key, value, expected));
}

// "671B", "70e9", "1.5T", "37.5M", "0.97".
double number(std::string_view key, std::string_view value) {
    std::string text = trim(value);
    double scale = 1;
    if (!text.empty()) {
        switch (std::toupper(static_cast<unsigned char>(text.back()))) {
            case 'K': scale = 1e3; break;
            case 'M': scale = 1e6; break;
            case 'B': case 'G': scale = 1e9; break;
            case 'T': scale = 1e12; break;
            default: break;
        }
        if (scale != 1) text.pop_back();
    }
    size_t used = 0;
    double parsed = 0;
    try {
        parsed = std::stod(text, &used);
    } catch (const std::exception&) {
        bad(key, value, "a number");
    }
    if (used != text.size() || !std::isfinite(parsed) || parsed < 0) bad(key, value, "a non-negative number");
    return parsed * scale;
}

double positive(std::string_view key, std::string_view value) {
    const double v = number(key, value);
    if (v <= 0) bad(key, value, "a positive number");
    return v;
}

int whole(std::string_view key, std::string_view value, int at_least = 1) {
    const double v = number(key, value);
    if (v != std::floor(v) || v < at_least || v > 1e9) bad(key, value, fmt::format("a whole number >= {}", at_least));
    return static_cast<int>(v);
}

bool boolean(std::string_view key, std::string_view value) {
    const std::string v = trim(value);
    if (v == "true" || v == "yes" || v == "1" || v == "on") return true;
    if (v == "false" || v == "no" || v == "0" || v == "off") return false;
    bad(key, value, "true or false");
}

std::vector<std::string> words(std::string_view value) {
    std::vector<std::string> out;
    std::string current;
    for (char c : value) {
        if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
            if (!current.empty()) out.push_back(current), current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty()) out.push_back(current);
    return out;
}

// "F=1.2,I=1.3,W=0.9[,FB=2.8]" in milliseconds.
// The chunk syntax of every --chunk-costs; the old meaning of plan's chunk-costs (F=..,I=..,W=.. in ms) is now
// op-costs-ms, and said so.
ChunkCosts component_chunk_costs(std::string_view key, std::string_view value) {
    try {
        return parse_chunk_costs(value);
    } catch (const ChunkCostError& e) {
        if (value.find("F=") != std::string_view::npos || value.find("I=") != std::string_view::npos)
            bad(key, value, "chunk component costs (attn_f=..,dispatch_f=..,...); measured F, I, W op costs in ms are op-costs-ms");
        bad(key, value, "chunk component costs in ms: " + e.message);
    }
}

MeasuredChunk chunk_costs(std::string_view key, std::string_view value, MeasuredChunk chunk) {
    for (const std::string& item : words(value)) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) bad(key, value, "F=..,I=..,W=..[,FB=..] in milliseconds");
        const std::string name = item.substr(0, eq);
        const double v = number(key, item.substr(eq + 1));
        if (name == "F") chunk.F = v;
        else if (name == "I") chunk.I = v;
        else if (name == "W") chunk.W = v;
        else if (name == "FB") chunk.FB = v;
        else bad(key, value, "F=..,I=..,W=..[,FB=..] in milliseconds");
    }
    if (chunk.F <= 0 || chunk.I <= 0) bad(key, value, "a set of costs with F > 0 and I > 0");
    return chunk;
}

using Setter = std::function<void(PlanRequest&, std::string_view key, std::string_view value)>;

struct Setting {
    std::string key, help;
    Setter set;
};

const std::vector<Setting>& settings() {
    static const std::vector<Setting> table = {
        {"preset", "a known model and batch: " + fmt::format("{}", fmt::join(preset_names(), ", ")),
         [](PlanRequest& r, auto, auto v) { apply_preset(r, trim(v)); }},
        {"gpus", "GPUs in the job", [](PlanRequest& r, auto k, auto v) { r.cluster.gpus = whole(k, v); }},
        {"gpus-per-node", "GPUs per node (default 8)", [](PlanRequest& r, auto k, auto v) { r.cluster.gpus_per_node = whole(k, v); }},
        {"intra-node-gbps", "GB/s per GPU inside a node (default 400)",
         [](PlanRequest& r, auto k, auto v) { r.cluster.intra_node_gbps = positive(k, v); }},
        {"inter-node-gbps", "GB/s per GPU between nodes (default 50)",
         [](PlanRequest& r, auto k, auto v) { r.cluster.inter_node_gbps = positive(k, v); }},
        {"gpu-tflops", "peak dense TFLOP/s per GPU (default 989, H100/H800 BF16)",
         [](PlanRequest& r, auto k, auto v) { r.cluster.gpu_tflops = positive(k, v); }},
        {"mfu", "achieved fraction of peak for the FLOP-based estimate (default 0.4)",
         [](PlanRequest& r, auto k, auto v) {
             r.cluster.mfu = positive(k, v);
             if (r.cluster.mfu > 1) bad(k, v, "a fraction in (0, 1]");
         }},
        {"gpu-memory-gb", "memory per GPU in GB (default 80)", [](PlanRequest& r, auto k, auto v) { r.cluster.gpu_memory_gb = positive(k, v); }},
        {"layers", "transformer layers", [](PlanRequest& r, auto k, auto v) { r.model.layers = whole(k, v); }},
        {"hidden", "hidden size", [](PlanRequest& r, auto k, auto v) { r.model.hidden = whole(k, v); }},
        {"params", "total parameters, e.g. 70B or 671e9", [](PlanRequest& r, auto k, auto v) { r.model.total_params = positive(k, v); }},
        {"active-params", "parameters active per token (MoE; default: all)",
         [](PlanRequest& r, auto k, auto v) { r.model.active_params = positive(k, v); }},
        {"expert-share", "fraction of the parameters in routed experts (0 = dense)",
         [](PlanRequest& r, auto k, auto v) {
             r.model.expert_share = number(k, v);
             if (r.model.expert_share >= 1) bad(k, v, "a fraction in [0, 1)");
         }},
        {"moe-layers", "layers with routed experts (default: all, when expert-share > 0)",
         [](PlanRequest& r, auto k, auto v) { r.model.moe_layers = whole(k, v, 0); }},
        {"top-k", "routed experts per token (default 8)", [](PlanRequest& r, auto k, auto v) { r.model.top_k = whole(k, v); }},
        {"ep", "expert parallel size: routed experts are sharded over this many GPUs",
         [](PlanRequest& r, auto k, auto v) { r.training.ep = whole(k, v); }},
        {"tp", "tensor parallel size (default 1)", [](PlanRequest& r, auto k, auto v) { r.training.tp = whole(k, v); }},
        {"seq-len", "tokens per sequence (default 4096)", [](PlanRequest& r, auto k, auto v) { r.training.sequence_length = whole(k, v); }},
        {"global-batch", "sequences per optimizer step", [](PlanRequest& r, auto k, auto v) { r.training.global_batch = whole(k, v); }},
        {"microbatch-size", "sequences per micro-batch (default 1)",
         [](PlanRequest& r, auto k, auto v) { r.training.microbatch_size = whole(k, v); }},
        {"bytes-per-param", "bytes per weight (default 2, BF16)",
         [](PlanRequest& r, auto k, auto v) { r.training.bytes_per_param = positive(k, v); }},
        {"grad-bytes-per-param", "bytes per gradient (default 2)",
         [](PlanRequest& r, auto k, auto v) { r.training.grad_bytes_per_param = number(k, v); }},
        {"optimizer-bytes-per-param", "optimizer bytes per parameter before ZeRO-1 sharding over DP (default 12)",
         [](PlanRequest& r, auto k, auto v) { r.training.optimizer_bytes_per_param = number(k, v); }},
        {"duplicate-experts", "count DualPipe's 2nd copy for expert shards too (default false)",
         [](PlanRequest& r, auto k, auto v) { r.training.duplicate_experts = boolean(k, v); }},
        {"activation-bytes-per-token-layer", "activation stash per token per layer (default 34 x hidden)",
         [](PlanRequest& r, auto k, auto v) { r.training.activation_bytes_per_token_layer = positive(k, v); }},
        {"op-costs-ms", "measured op costs in ms for one micro-batch through op-costs-layers layers: F=..,I=..,W=..[,FB=..]",
         [](PlanRequest& r, auto k, auto v) { r.training.chunk = chunk_costs(k, v, r.training.chunk.value_or(MeasuredChunk{})); }},
        {"chunk-costs", "measured MoE chunk component costs in ms, as every --chunk-costs: layers=L,attn_f=..,dispatch_f=..,... "
                        "(per layer; the plan times every option with the chunk model at them)",
         [](PlanRequest& r, auto k, auto v) { r.training.components = component_chunk_costs(k, v); }},
        {"op-costs-layers", "layers in the chunk that op-costs-ms measured (default 1)",
         [](PlanRequest& r, auto k, auto v) {
             MeasuredChunk c = r.training.chunk.value_or(MeasuredChunk{});
             c.layers = whole(k, v);
             r.training.chunk = c;
         }},
        {"families", "schedule families to consider, comma separated (default: every family of `pipeproof list` but seq1f1b, "
         "priced only when named: k = --segments, no efficiency lost by its shorter kernels)",
         [](PlanRequest& r, auto k, auto v) {
             r.families = words(v);
             if (r.families.empty()) bad(k, v, "a list of families");
         }},
        {"segments", "Seq1F1B's sequence segments per micro-batch k, when --families names seq1f1b (default 2, at most 64)",
         [](PlanRequest& r, auto k, auto v) {
             r.segments = whole(k, v);
             if (r.segments > 64) bad(k, v, "at most 64 segments");
         }},
        {"exclude-families", "schedule families not to consider, comma separated",
         [](PlanRequest& r, auto k, auto v) {
             r.excluded_families = words(v);
             if (r.excluded_families.empty()) bad(k, v, "a list of families");
         }},
        {"pp", "PP degrees to consider, comma separated (default: powers of two)",
         [](PlanRequest& r, auto k, auto v) {
             r.pp_degrees.clear();
             for (const auto& w : words(v)) r.pp_degrees.push_back(whole(k, w));
         }},
        {"top", "options to report (default 6)", [](PlanRequest& r, auto k, auto v) { r.top = whole(k, v); }},
    };
    return table;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& setting_keys() {
    static const auto keys = [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& s : settings()) out.emplace_back(s.key, s.help);
        return out;
    }();
    return keys;
}

void apply_setting(PlanRequest& request, std::string_view key, std::string_view value) {
    for (const auto& s : settings())
        if (s.key == key) return s.set(request, key, value);
    throw PlanSpecError(fmt::format("unknown setting '{}'", key));
}

void apply_settings(PlanRequest& request, const std::vector<std::pair<std::string, std::string>>& settings) {
    for (const auto& [key, value] : settings)
        if (key == "preset") apply_setting(request, key, value);
    for (const auto& [key, value] : settings)
        if (key != "preset") apply_setting(request, key, value);
}

std::vector<std::pair<std::string, std::string>> parse_plan_config(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t line_no = 0, pos = 0;
    while (pos <= text.size()) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        const std::string content = trim(line);
        if (content.empty()) {
            if (end == text.size()) break;
            continue;
        }
        const auto eq = content.find('=');
        if (eq == std::string::npos) throw PlanSpecError(fmt::format("line {}: expected 'key = value'", line_no));
        std::string key = trim(content.substr(0, eq));
        if (key.rfind("--", 0) == 0) key = key.substr(2);
        out.emplace_back(key, trim(content.substr(eq + 1)));
        if (end == text.size()) break;
    }
    return out;
}

std::vector<std::string> preset_names() { return {"dense-70b", "deepseek-v3"}; }

void apply_preset(PlanRequest& request, std::string_view name) {
    ModelSpec& m = request.model;
    if (name == "dense-70b") {
        // Llama-2/3 70B shape: 80 layers, hidden 8192, 70e9 parameters, no experts.
        m = ModelSpec{"dense 70B", 80, 8192, 70e9, 0, 0, -1, 1};
        request.training.ep = 1;
        if (request.training.global_batch == 0) request.training.global_batch = 1024;
        return;
    }
    if (name == "deepseek-v3") {
        // DeepSeek-V3 (arXiv:2412.19437): 61 layers (58 with 256 routed experts + 1 shared), hidden 7168,
        // 671e9 parameters, 37e9 active, 8 routed experts per token; trained with PP 16, EP 64, ZeRO-1 DP,
        // 15360 sequences of 4096 tokens per step. Routed experts: 58 x 256 x 3 x 7168 x 2048 = 654e9
        // parameters, i.e. about 0.97 of the total.
        m = ModelSpec{"DeepSeek-V3 671B MoE", 61, 7168, 671e9, 37e9, 0.97, 58, 8};
        request.training.ep = 64;
        request.training.sequence_length = 4096;
        if (request.training.global_batch == 0) request.training.global_batch = 15360;
        return;
    }
    throw PlanSpecError(fmt::format("preset: unknown model '{}' (known: {})", name, fmt::join(preset_names(), ", ")));
}

std::vector<std::string> candidate_families(const PlanRequest& request) {
    std::vector<std::string> out;
    if (request.families.empty()) {
        for (const ScheduleFamily& family : schedule_families())
            // Priced only when named: the plan does not model the efficiency its shorter kernels lose (docs/planner.md).
            if (!family_takes_segments(family.name)) out.push_back(family.name);
    } else {
        out = request.families;
    }
    std::erase_if(out, [&](const std::string& name) {
        return std::any_of(request.excluded_families.begin(), request.excluded_families.end(), [&](const std::string& excluded) {
            const ScheduleFamily* a = find_family(name);
            const ScheduleFamily* b = find_family(excluded);
            return a && a == b;
        });
    });
    return out;
}

void validate(const PlanRequest& r) {
    // A mistyped exclusion would silently exclude nothing.
    for (const std::string& name : r.excluded_families)
        if (!find_family(name)) throw PlanSpecError("exclude-families: " + unknown_family_message(name));
    if (r.cluster.gpus < 1) throw PlanSpecError("gpus: the number of GPUs is required");
    if (r.model.layers < 1) throw PlanSpecError("layers: the model's layer count is required (or a preset)");
    if (r.model.hidden < 1) throw PlanSpecError("hidden: the model's hidden size is required (or a preset)");
    if (r.model.total_params <= 0) throw PlanSpecError("params: the model's parameter count is required (or a preset)");
    if (r.training.global_batch < 1) throw PlanSpecError("global-batch: sequences per step are required");
    if (r.model.active() > r.model.total_params) throw PlanSpecError("active-params exceeds params");
    if (r.model.moe_layer_count() > r.model.layers) throw PlanSpecError("moe-layers exceeds layers");
    if (r.model.expert_share > 0 && r.training.ep < 1) throw PlanSpecError("ep must be at least 1");
    if (r.training.tp > r.cluster.gpus) throw PlanSpecError("tp exceeds the number of GPUs");
    // k prices Seq1F1B only: without it among the candidates the flag would change nothing.
    const auto candidates = candidate_families(r);
    if (r.segments && std::none_of(candidates.begin(), candidates.end(), [](const std::string& name) {
            const ScheduleFamily* family = find_family(name);
            return family && family_takes_segments(family->name);
        }))
        throw PlanSpecError("segments: k prices seq1f1b only, which the plan does not consider (name it in families)");
}

}  // namespace pp::plan
