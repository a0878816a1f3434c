#include "formats/chunks_json.hpp"

#include "formats/input_error.hpp"

#include <fmt/format.h>

namespace pp {
namespace {

class ChunksReader {
public:
    explicit ChunksReader(std::string file) : file_(std::move(file)) {}

    ChunkSpec read(const nlohmann::json& j) {
        if (!j.is_object()) fail("/chunks", "expected an object with layers, costs and optionally layer_costs, slowdown, pp, pattern");
        for (const auto& [key, value] : j.items())
            if (key != "layers" && key != "costs" && key != "layer_costs" && key != "slowdown" && key != "pp" && key != "pattern")
                fail("/chunks/" + key, "unknown key (expected layers, costs, layer_costs, slowdown, pp or pattern)");
        ChunkSpec spec;
        ChunkCosts& c = spec.costs;
        if (j.contains("layers")) {
            const auto& v = j["layers"];
            if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxChunkLayers)
                fail("/chunks/layers", fmt::format("expected the number of layers per chunk, a whole number in 1..{}", kMaxChunkLayers));
            c.resize(v.get<int>());
        }
        if (!j.contains("costs")) fail("/chunks", "missing \"costs\"");
        std::array<bool, kComponents> given{};
        apply(j["costs"], "/chunks/costs", c, -1, given);
        std::vector<std::string> missing;
        for (int k = 0; k < kRequiredComponents; ++k)
            if (!given[static_cast<size_t>(k)]) missing.push_back(component_key(static_cast<Component>(k)));
        if (!missing.empty())
            fail("/chunks/costs", fmt::format("missing {} (all of attn_f .. attn_w must be given; 0 is allowed)", fmt::join(missing, ", ")));
        if (j.contains("layer_costs")) {
            const auto& list = j["layer_costs"];
            if (!list.is_array()) fail("/chunks/layer_costs", "expected an array with one object per layer");
            if (static_cast<int>(list.size()) != c.layers)
                fail("/chunks/layer_costs", fmt::format("has {} entr{}, but the chunk has {} layer{} (\"layers\": {})", list.size(),
                                                        list.size() == 1 ? "y" : "ies", c.layers, c.layers == 1 ? "" : "s", c.layers));
            for (size_t l = 0; l < list.size(); ++l) apply(list[l], fmt::format("/chunks/layer_costs/{}", l), c, static_cast<int>(l), given);
        }
        if (j.contains("slowdown")) c.slowdown = rational(j["slowdown"], "/chunks/slowdown");
        if (j.contains("pp")) c.pp = rational(j["pp"], "/chunks/pp");
        if (j.contains("pattern")) spec.pattern = pattern(j["pattern"], c);
        return spec;
    }

private:
    std::string file_;

    [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
        throw InputError(file_, 0, 0, fmt::format("at {}: {}", pointer, message));
    }

    Rational rational(const nlohmann::json& value, const std::string& at) const {
        if (value.is_number() && value.get<double>() < 0) fail(at, "a cost cannot be negative");
        if (value.is_string() && !value.get<std::string>().empty() && value.get<std::string>()[0] == '-')
            fail(at, "a cost cannot be negative");
        std::optional<Rational> parsed;
        if (value.is_number_unsigned()) parsed = Rational(value.get<std::int64_t>());
        else if (value.is_string()) parsed = parse_rational(value.get<std::string>());
        if (!parsed) fail(at, "expected an exact non-negative number such as \"1.5\" or \"7/4\"");
        return *parsed;
    }

    void apply(const nlohmann::json& j, const std::string& at, ChunkCosts& c, int layer, std::array<bool, kComponents>& given) const {
        if (!j.is_object()) fail(at, "expected an object of component costs");
        for (const auto& [key, value] : j.items()) {
            const auto component = component_from_key(key);
            if (!component)
                fail(at + "/" + key, "unknown component (expected attn_f, dispatch_f, mlp_f, combine_f, combine_b, mlp_i, mlp_w, "
                                     "dispatch_b, attn_i, attn_w, shared_f, shared_i or shared_w)");
            const Rational v = rational(value, at + "/" + key);
            if (layer < 0) c.set_all(*component, v), given[static_cast<size_t>(*component)] = true;
            else c.set(*component, layer, v);
        }
    }

    PatternSpec pattern(const nlohmann::json& j, const ChunkCosts& costs) const {
        PatternSpec spec;
        std::array<std::vector<std::string>, kStreams> pointers;
        if (j.is_string()) {
            try {
                spec = parse_pattern(j.get<std::string>());
            } catch (const PatternSyntaxError& e) {
                fail("/chunks/pattern", fmt::format("character {}: {}", e.offset + 1, e.message));
            }
            for (int s = 0; s < kStreams; ++s)
                for (size_t k = 0; k < spec.lists[static_cast<size_t>(s)].size(); ++k) pointers[static_cast<size_t>(s)].push_back("/chunks/pattern");
        } else if (j.is_object()) {
            for (const auto& [key, value] : j.items())
                if (key != "compute" && key != "network") fail("/chunks/pattern/" + key, "expected \"compute\" and \"network\" lists");
            std::string text;
            for (const char* stream : {"compute", "network"}) {
                const std::string at = std::string("/chunks/pattern/") + stream;
                if (!j.contains(stream) || !j[stream].is_array()) fail(at, "expected an array of components such as \"attn_f0\"");
                text += text.empty() ? "" : " / ";
                text += stream;
                text += ":";
                for (size_t k = 0; k < j[stream].size(); ++k) {
                    const auto& entry = j[stream][k];
                    if (!entry.is_string() || entry.get<std::string>().find_first_of(" \t,/:") != std::string::npos)
                        fail(fmt::format("{}/{}", at, k), "expected a component and its layer such as \"mlp_w3\"");
                    text += " " + entry.get<std::string>();
                    pointers[std::string(stream) == "compute" ? 0 : 1].push_back(fmt::format("{}/{}", at, k));
                }
            }
            try {
                spec = parse_pattern(text);
            } catch (const PatternSyntaxError& e) {
                // Name the entry the offset falls in.
                fail("/chunks/pattern", e.message);
            }
        } else {
            fail("/chunks/pattern", "expected a pattern name or {\"compute\": [...], \"network\": [...]}");
        }
        if (spec.kind == PatternKind::Custom) {
            try {
                check_custom_pattern(spec, costs);
            } catch (const PatternError& e) {
                std::string where = "/chunks/pattern";
                if (e.at)
                    for (int s = 0; s < kStreams; ++s)
                        for (size_t k = 0; k < spec.lists[static_cast<size_t>(s)].size(); ++k)
                            if (spec.lists[static_cast<size_t>(s)][k].column == e.at->column) where = pointers[static_cast<size_t>(s)][k];
                fail(where, e.message);
            }
        }
        spec.origin = file_;
        return spec;
    }
};

}  // namespace

ChunkSpec chunks_from_json(const nlohmann::json& chunks, const std::string& file) { return ChunksReader(file).read(chunks); }

nlohmann::ordered_json chunks_to_json(const ChunkSpec& spec) {
    const ChunkCosts& c = spec.costs;
    nlohmann::ordered_json j = {{"layers", c.layers}};
    nlohmann::ordered_json costs = nlohmann::ordered_json::object();
    bool uniform = true;
    for (int k = 0; k < kComponents; ++k) {
        const auto comp = static_cast<Component>(k);
        for (int l = 1; l < c.layers; ++l) uniform = uniform && c.cost(comp, l) == c.cost(comp, 0);
        if (k < kRequiredComponents || !(c.cost(comp, 0) == Rational(0))) costs[component_key(comp)] = format_rational(c.cost(comp, 0));
    }
    j["costs"] = costs;
    if (!uniform) {
        nlohmann::ordered_json layers = nlohmann::ordered_json::array();
        for (int l = 0; l < c.layers; ++l) {
            nlohmann::ordered_json layer = nlohmann::ordered_json::object();
            for (int k = 0; k < kComponents; ++k) {
                const auto comp = static_cast<Component>(k);
                if (!(c.cost(comp, l) == c.cost(comp, 0))) layer[component_key(comp)] = format_rational(c.cost(comp, l));
            }
            layers.push_back(layer);
        }
        j["layer_costs"] = layers;
    }
    if (!(c.slowdown == Rational(0))) j["slowdown"] = format_rational(c.slowdown);
    if (c.pp) j["pp"] = format_rational(*c.pp);
    if (spec.pattern) {
        if (spec.pattern->kind != PatternKind::Custom) {
            j["pattern"] = spec.pattern->name();
        } else {
            nlohmann::ordered_json p;
            for (int s = 0; s < kStreams; ++s) {
                nlohmann::ordered_json list = nlohmann::ordered_json::array();
                for (const auto& e : spec.pattern->lists[static_cast<size_t>(s)])
                    list.push_back(fmt::format("{}{}", component_key(e.component), e.layer));
                p[stream_name(static_cast<Stream>(s))] = list;
            }
            j["pattern"] = p;
        }
    }
    return j;
}

}  // namespace pp
