#include "model/chunk_costs.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>

namespace pp {
namespace {

constexpr std::array<const char*, kComponents> kKeys = {
    "attn_f", "dispatch_f", "mlp_f", "combine_f", "combine_b", "mlp_i", "mlp_w",
    "dispatch_b", "attn_i", "attn_w", "shared_f", "shared_i", "shared_w"};

// One KEY[@LAYER]=VALUE item as written.
struct Item {
    std::string_view key;
    std::optional<int> layer;
    std::string_view value;
    size_t key_offset = 0, layer_offset = 0, value_offset = 0;
};

[[noreturn]] void fail(size_t offset, std::string message) { throw ChunkCostError{std::move(message), offset}; }

std::vector<Item> split_items(std::string_view text) {
    std::vector<Item> items;
    auto is_sep = [](char c) { return c == ',' || c == ' ' || c == '\t'; };
    size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && is_sep(text[pos])) ++pos;
        if (pos >= text.size()) break;
        const size_t start = pos;
        while (pos < text.size() && !is_sep(text[pos])) ++pos;
        const std::string_view word = text.substr(start, pos - start);
        const size_t eq = word.find('=');
        if (eq == std::string_view::npos)
            fail(start, fmt::format("expected KEY=VALUE (e.g. layers=2, attn_f=1.5, mlp_w@1=2), got '{}'", word));
        Item item;
        item.key = word.substr(0, eq);
        item.key_offset = start;
        item.value = word.substr(eq + 1);
        item.value_offset = start + eq + 1;
        if (const size_t at = item.key.find('@'); at != std::string_view::npos) {
            const std::string_view digits = item.key.substr(at + 1);
            item.layer_offset = start + at + 1;
            int layer = 0;
            auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), layer);
            if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size() || layer < 0)
                fail(item.layer_offset, fmt::format("expected a layer number after '@' in '{}'", word));
            item.key = item.key.substr(0, at);
            item.layer = layer;
        }
        items.push_back(item);
    }
    return items;
}

Rational value_of(const Item& item) {
    if (!item.value.empty() && item.value[0] == '-')
        fail(item.value_offset, fmt::format("{} cannot be negative, got '{}'", item.key, item.value));
    auto value = parse_rational(item.value);
    if (!value)
        fail(item.value_offset,
             fmt::format("expected a non-negative number such as 2, 1.5 or 7/4 after '{}=', got '{}'", item.key, item.value));
    return *value;
}

}  // namespace

const char* component_key(Component c) { return kKeys[static_cast<size_t>(c)]; }

std::optional<Component> component_from_key(std::string_view key) {
    for (int k = 0; k < kComponents; ++k)
        if (key == kKeys[static_cast<size_t>(k)]) return static_cast<Component>(k);
    return std::nullopt;
}

Stream stream_of(Component c) {
    switch (c) {
        case Component::DispatchF:
        case Component::CombineF:
        case Component::CombineB:
        case Component::DispatchB: return Stream::Network;
        default: return Stream::Compute;
    }
}

ChunkPart part_of(Component c) {
    switch (c) {
        case Component::AttnF:
        case Component::DispatchF:
        case Component::MlpF:
        case Component::CombineF:
        case Component::SharedF: return ChunkPart::Forward;
        case Component::MlpW:
        case Component::AttnW:
        case Component::SharedW: return ChunkPart::WeightGrad;
        default: return ChunkPart::InputGrad;
    }
}

const char* stream_name(Stream s) { return s == Stream::Compute ? "compute" : "network"; }

void ChunkCosts::set_all(Component c, const Rational& value) {
    for (int l = 0; l < layers; ++l) set(c, l, value);
}

void ChunkCosts::resize(int layer_count) {
    const auto first = layer.empty() ? std::array<Rational, kComponents>{} : layer.front();
    layers = layer_count;
    layer.resize(static_cast<size_t>(layer_count), first);
}

std::vector<Rational> ChunkCosts::all_values() const {
    std::vector<Rational> values{slowdown};
    if (pp) values.push_back(*pp);
    for (const auto& costs : layer) values.insert(values.end(), costs.begin(), costs.end());
    return values;
}

ChunkCosts parse_chunk_costs(std::string_view text) {
    const std::vector<Item> items = split_items(text);
    ChunkCosts costs;
    // The layer count first: overrides anywhere in the text are checked against it.
    std::optional<size_t> layers_at;
    for (const Item& item : items) {
        if (item.key != "layers") continue;
        if (item.layer) fail(item.layer_offset - 1, "'layers' takes no '@LAYER'");
        if (layers_at) fail(item.key_offset, "'layers' is given twice");
        layers_at = item.key_offset;
        int layers = 0;
        auto [end, error] = std::from_chars(item.value.data(), item.value.data() + item.value.size(), layers);
        if (item.value.empty() || error != std::errc{} || end != item.value.data() + item.value.size() || layers < 1 ||
            layers > kMaxChunkLayers)
            fail(item.value_offset, fmt::format("expected the number of layers per chunk, a whole number in 1..{}, got '{}'",
                                                kMaxChunkLayers, item.value));
        costs.resize(layers);
    }
    std::map<std::pair<int, int>, size_t> seen;  // (component or -1/-2, layer or -1) -> offset
    std::array<bool, kComponents> given{};
    // Whole-chunk values first, then the per-layer overrides, whatever order they were written in.
    for (const bool overrides : {false, true})
        for (const Item& item : items) {
            if (item.key == "layers" || item.layer.has_value() != overrides) continue;
            const int layer = item.layer.value_or(-1);
            if (item.key == "slowdown" || item.key == "pp") {
                if (item.layer) fail(item.layer_offset - 1, fmt::format("'{}' applies to the whole chunk: no '@LAYER'", item.key));
                const int id = item.key == "pp" ? -1 : -2;
                if (!seen.emplace(std::make_pair(id, -1), item.key_offset).second)
                    fail(item.key_offset, fmt::format("'{}' is given twice", item.key));
                (item.key == "pp" ? costs.pp.emplace() : costs.slowdown) = value_of(item);
                continue;
            }
            const auto component = component_from_key(item.key);
            if (!component)
                fail(item.key_offset,
                     fmt::format("unknown chunk cost key '{}' (expected layers, attn_f, dispatch_f, mlp_f, combine_f, combine_b, "
                                 "mlp_i, mlp_w, dispatch_b, attn_i, attn_w, shared_f, shared_i, shared_w, slowdown or pp)",
                                 item.key));
            if (layer >= costs.layers)
                fail(item.layer_offset, fmt::format("layer {} does not exist: the chunk has {} layer{} (0..{}){}", layer,
                                                    costs.layers, costs.layers == 1 ? "" : "s", costs.layers - 1,
                                                    layers_at ? "" : "; set layers=L first"));
            if (!seen.emplace(std::make_pair(static_cast<int>(*component), layer), item.key_offset).second)
                fail(item.key_offset, fmt::format("'{}{}' is given twice", item.key, item.layer ? fmt::format("@{}", layer) : ""));
            const Rational value = value_of(item);
            if (item.layer) costs.set(*component, layer, value);
            else costs.set_all(*component, value);
            given[static_cast<size_t>(*component)] = true;
        }
    std::vector<std::string> missing;
    for (int k = 0; k < kRequiredComponents; ++k)
        if (!given[static_cast<size_t>(k)]) missing.push_back(kKeys[static_cast<size_t>(k)]);
    if (!missing.empty())
        fail(text.size(), fmt::format("missing chunk cost key{} {} (give all of attn_f, dispatch_f, mlp_f, combine_f, combine_b, "
                                      "mlp_i, mlp_w, dispatch_b, attn_i, attn_w; 0 is allowed)",
                                      missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
    return costs;
}

std::string format_chunk_costs(const ChunkCosts& costs) {
    std::vector<std::string> items{fmt::format("layers={}", costs.layers)};
    for (int k = 0; k < kComponents; ++k) {
        const auto c = static_cast<Component>(k);
        const Rational first = costs.cost(c, 0);
        bool any = !(first == Rational(0)) || k < kRequiredComponents;
        for (int l = 1; l < costs.layers; ++l) any = any || !(costs.cost(c, l) == Rational(0));
        if (!any) continue;
        items.push_back(fmt::format("{}={}", component_key(c), format_rational(first)));
        for (int l = 1; l < costs.layers; ++l)
            if (!(costs.cost(c, l) == first)) items.push_back(fmt::format("{}@{}={}", component_key(c), l, format_rational(costs.cost(c, l))));
    }
    if (!(costs.slowdown == Rational(0))) items.push_back("slowdown=" + format_rational(costs.slowdown));
    if (costs.pp) items.push_back("pp=" + format_rational(*costs.pp));
    return fmt::format("{}", fmt::join(items, ","));
}

}  // namespace pp
