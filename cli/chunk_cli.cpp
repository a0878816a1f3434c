#include "cli/chunk_cli.hpp"

#include "cli/common.hpp"
#include "formats/input_error.hpp"
#include "solver/chunk_best_z3.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>

namespace pp::cli {

void ChunkInput::add_options(CLI::App& app) {
    app.add_option("--chunk-costs", chunk_costs,
                   "MoE chunk: layers=L and per-layer component costs attn_f,dispatch_f,mlp_f,combine_f,combine_b,mlp_i,"
                   "mlp_w,dispatch_b,attn_i,attn_w[,shared_f,shared_i,shared_w][,slowdown=s][,pp=p]; KEY@LAYER=V for one layer");
    app.add_option("--pattern", pattern,
                   "how a slot's components share the compute and network streams: deepseek (default), megatron, serial, "
                   "best, or 'compute: attn_f0 ... / network: combine_b0 ...'");
}

ChunkCosts chunk_costs_from_flag(const std::string& text) {
    try {
        return parse_chunk_costs(text);
    } catch (const ChunkCostError& e) {
        throw UsageError(fmt::format("--chunk-costs: at character {}: {}", e.offset + 1, e.message));
    }
}

PatternSpec pattern_from_flag(const std::string& text) {
    try {
        PatternSpec spec = parse_pattern(text);
        spec.origin = "--pattern";
        return spec;
    } catch (const PatternSyntaxError& e) {
        throw UsageError(fmt::format("--pattern: at character {}: {}", e.offset + 1, e.message));
    }
}

ChunkTable derive_for_cli(const ChunkCosts& costs, const PatternSpec& pattern) {
    try {
        return derive_chunk_table(costs, pattern, chunk_best_solver());
    } catch (const PatternError& e) {
        if (pattern.origin == "--pattern" || pattern.origin.empty()) {
            if (e.at) throw UsageError(fmt::format("--pattern: at character {}: {}", e.at->column, e.message));
            throw UsageError("--pattern: " + e.message);
        }
        throw InputError(pattern.origin, e.at ? e.at->line : 0, e.at ? e.at->column : 0, e.message);
    }
}

std::optional<ChunkTable> ChunkInput::resolve(const Schedule& schedule, bool opaque_given) const {
    if (chunk_costs && opaque_given)
        throw UsageError("--chunk-costs derives the op costs: give it or --costs/--stage-costs, not both (the P2P latency is "
                         "the chunk cost pp=...)");
    std::optional<ChunkCosts> costs;
    std::optional<PatternSpec> file_pattern;
    if (chunk_costs) {
        costs = chunk_costs_from_flag(*chunk_costs);
        if (schedule.chunks) file_pattern = schedule.chunks->pattern;
    } else if (schedule.chunks && !opaque_given) {
        costs = schedule.chunks->costs;
        file_pattern = schedule.chunks->pattern;
    }
    if (!costs) {
        if (pattern)
            throw UsageError("--pattern orders the components of chunk costs: give --chunk-costs (or a file with a 'chunks' "
                             "section, and no --costs)");
        return std::nullopt;
    }
    const PatternSpec spec = pattern ? pattern_from_flag(*pattern) : file_pattern.value_or(PatternSpec{});
    // The last derivation is reused while costs and pattern stay the same (compare resolves once per schedule).
    static std::optional<std::pair<std::string, ChunkTable>> cache;
    const std::string key = format_chunk_costs(*costs) + "|" + format_pattern(spec) + "|" + spec.origin;
    if (!cache || cache->first != key) cache.emplace(key, derive_for_cli(*costs, spec));
    return cache->second;
}

StageChunks chunks_at_share(const Schedule& schedule, const ChunkTable& table, bool model_share_costs) {
    StageChunks out;
    out.pattern = format_pattern(table.pattern);
    const Rational share = model_share_costs ? stage_share(schedule.placement) : Rational(1);
    if (share == Rational(1)) {
        out.given = table.costs();
        out.exposure = exposure_per_rank(schedule, table);
        out.stage_layers = table.chunk.layers;
        return out;
    }
    const Rational layers = Rational(table.chunk.layers) * share;
    if (layers.denominator() == 1 && layers.numerator() >= 1) {
        ChunkCosts stage = table.chunk;
        stage.layers = static_cast<int>(layers.numerator().to_int64());  // at most table.chunk.layers (share <= 1)
        stage.layer.resize(static_cast<size_t>(stage.layers));
        const ChunkTable stage_table = derive_for_cli(stage, table.pattern);
        out.given = scaled_costs(stage_table.costs(), Rational(1) / share);  // compare scales it back by the share
        out.exposure = exposure_per_rank(schedule, stage_table);
        out.stage_layers = stage.layers;
        return out;
    }
    out.exact = false;
    out.given = table.costs();
    out.exposure = exposure_per_rank(schedule, table);
    for (auto* v : {&out.exposure.exposed, &out.exposure.network})
        for (auto& x : *v) x *= share;
    return out;
}

std::string percent_text(const Rational& fraction) {
    return fmt::format("{:.1f}%", 100.0 * static_cast<double>(fraction.numerator()) / static_cast<double>(fraction.denominator()));
}

nlohmann::json slot_timing_json(const SlotKindTiming& t) {
    const auto& tl = t.timeline;
    nlohmann::json j = {{"op", slot_kind_name(t.kind)}, {"method", t.method}};
    put_number(j, "duration", tl.duration);
    put_number(j, "exposed_comm", tl.exposed_comm);
    put_number(j, "network_comm", tl.network_time);
    put_number(j, "compute_time", tl.compute_time);
    if (tl.network_time > Rational(0)) put_number(j, "hidden_share", Rational(1) - tl.exposed_comm / tl.network_time);
    if (t.lower_bound) {
        j["optimal"] = t.optimal;
        put_number(j, "lower_bound", *t.lower_bound);
        j["search_nodes"] = t.search_nodes;
    }
    std::vector<int> by_start(static_cast<size_t>(t.dag.node_count()));
    for (int v = 0; v < t.dag.node_count(); ++v) by_start[static_cast<size_t>(v)] = v;
    std::stable_sort(by_start.begin(), by_start.end(), [&](int a, int b) {
        const auto &ta = tl.times[static_cast<size_t>(a)], &tb = tl.times[static_cast<size_t>(b)];
        if (!(ta.start == tb.start)) return ta.start < tb.start;
        return t.dag.nodes[static_cast<size_t>(a)].stream() < t.dag.nodes[static_cast<size_t>(b)].stream();
    });
    nlohmann::json components = nlohmann::json::array();
    for (int v : by_start) {
        const auto& node = t.dag.nodes[static_cast<size_t>(v)];
        nlohmann::json component = {{"name", node.name()}, {"stream", stream_name(node.stream())}};
        put_number(component, "cost", node.cost);
        put_number(component, "start", tl.times[static_cast<size_t>(v)].start);
        put_number(component, "end", tl.times[static_cast<size_t>(v)].end);
        components.push_back(std::move(component));
    }
    j["components"] = components;
    nlohmann::json order;
    for (int s = 0; s < kStreams; ++s) {
        nlohmann::json list = nlohmann::json::array();
        for (int v : t.order.lists[static_cast<size_t>(s)]) list.push_back(t.dag.nodes[static_cast<size_t>(v)].name());
        order[stream_name(static_cast<Stream>(s))] = list;
    }
    j["order"] = order;
    return j;
}

nlohmann::json chunk_table_json(const ChunkTable& table) {
    nlohmann::json j = {{"chunk_costs", format_chunk_costs(table.chunk)}, {"pattern", format_pattern(table.pattern)}};
    for (const auto& t : table.kinds) {
        nlohmann::json k = slot_timing_json(t);
        k.erase("components");
        j["slot_kinds"][slot_kind_name(t.kind)] = k;
    }
    return j;
}

void add_exposure_json(nlohmann::json& simulation, const Schedule& schedule, const ChunkTable& table) {
    const ChunkExposure e = exposure_per_rank(schedule, table);
    for (size_t r = 0; r < e.exposed.size() && r < simulation["per_rank"].size(); ++r) {
        auto& rank = simulation["per_rank"][r];
        put_number(rank, "exposed_comm", e.exposed[r]);
        put_number(rank, "network_comm", e.network[r]);
        const auto share = e.hidden_share(r);
        if (share) put_number(rank, "hidden_share", *share);
        else rank["hidden_share"] = nullptr, rank["exact"]["hidden_share"] = nullptr;
    }
    nlohmann::json c = chunk_table_json(table);
    put_number(c, "exposed_comm_total", e.total_exposed());
    put_number(c, "network_comm_total", e.total_network());
    c["definitions"] = {
        {"exposed_comm", "of a rank (per_rank) or of one slot of a kind (slot_kinds): the EP all-to-all time during which "
                         "the compute stream is idle inside the slot (a pair counts both chunks' all-to-alls against both "
                         "chunks' compute), summed over the rank's slots"},
        {"network_comm", "of a rank or of one slot: its all-to-all costs"},
        {"hidden_share", "1 - exposed_comm / network_comm (null without network time)"},
        {"exposed_comm_total", "exposed_comm summed over the ranks"},
        {"network_comm_total", "network_comm summed over the ranks"}};
    simulation["chunks"] = c;
}

std::string exposure_text(const Schedule& schedule, const ChunkTable& table) {
    std::string text = fmt::format("chunk costs {}; pattern {}\n", format_chunk_costs(table.chunk), format_pattern(table.pattern));
    text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>8}  {}\n", "slot", "duration", "network", "exposed", "hidden", "how");
    for (const auto& t : table.kinds) {
        const auto& tl = t.timeline;
        text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>8}  {}\n", slot_kind_name(t.kind), format_rational(tl.duration),
                            format_rational(tl.network_time), format_rational(tl.exposed_comm),
                            tl.network_time > Rational(0) ? percent_text(Rational(1) - tl.exposed_comm / tl.network_time) : "-",
                            t.method);
    }
    const ChunkExposure e = exposure_per_rank(schedule, table);
    text += "EP all-to-all per rank (exposed = not hidden under the rank's compute inside its slots):\n";
    text += fmt::format("{:>5} {:>12} {:>12} {:>8}\n", "rank", "network", "exposed", "hidden");
    for (size_t r = 0; r < e.exposed.size(); ++r) {
        const auto share = e.hidden_share(r);
        text += fmt::format("{:>5} {:>12} {:>12} {:>8}\n", r, format_rational(e.network[r]), format_rational(e.exposed[r]),
                            share ? percent_text(*share) : "-");
    }
    return text;
}

}  // namespace pp::cli
