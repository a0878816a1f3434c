#include "model/overlap_pattern.hpp"

#include <fmt/format.h>

#include <charconv>

namespace pp {
namespace {

using C = Component;

// The full F&B pair's stream lists and extra edges of a named pattern, over component_slot ids.
struct FullOrder {
    std::array<std::vector<int>, kStreams> lists;
    std::vector<std::pair<int, int>> extra;
};

void push(FullOrder& o, Component c, int layer) {
    o.lists[static_cast<size_t>(stream_of(c))].push_back(component_slot(c, layer));
}

// DeepSeek-V3 Figure 4 (and Megatron-Core's TransformerLayerSchedulePlan.run): see the header.
FullOrder figure4_order(int L) {
    FullOrder o;
    push(o, C::AttnF, 0);
    push(o, C::SharedF, 0);
    push(o, C::CombineB, L - 1);
    for (int j = 0; j < L; ++j) {
        const int m = L - 1 - j;
        for (auto c : {C::MlpI, C::MlpW}) push(o, c, m);
        push(o, C::MlpF, j);
        for (auto c : {C::SharedI, C::AttnI, C::SharedW, C::AttnW}) push(o, c, m);
        if (j + 1 < L) {
            push(o, C::AttnF, j + 1);
            push(o, C::SharedF, j + 1);
        }
        push(o, C::DispatchF, j);
        push(o, C::DispatchB, m);
        push(o, C::CombineF, j);
        if (m > 0) push(o, C::CombineB, m - 1);
    }
    return o;
}

FullOrder megatron_order(int L) {
    FullOrder o = figure4_order(L);
    for (int m = 0; m < L; ++m) {
        o.extra.emplace_back(component_slot(C::MlpW, m), component_slot(C::DispatchB, m));
        if (m > 0) {
            o.extra.emplace_back(component_slot(C::AttnW, m), component_slot(C::CombineB, m - 1));
            o.extra.emplace_back(component_slot(C::SharedW, m), component_slot(C::CombineB, m - 1));
        }
        o.extra.emplace_back(component_slot(C::SharedF, m), component_slot(C::DispatchF, m));
    }
    return o;
}

FullOrder serial_order(int L) {
    std::vector<int> chain;
    for (int l = 0; l < L; ++l)
        for (auto c : {C::AttnF, C::SharedF, C::DispatchF, C::MlpF, C::CombineF}) chain.push_back(component_slot(c, l));
    for (int l = L - 1; l >= 0; --l)
        for (auto c : {C::CombineB, C::MlpI, C::MlpW, C::DispatchB, C::SharedI, C::SharedW, C::AttnI, C::AttnW})
            chain.push_back(component_slot(c, l));
    FullOrder o;
    for (size_t k = 0; k < chain.size(); ++k) {
        const auto c = static_cast<Component>(chain[k] % kComponents);
        o.lists[static_cast<size_t>(stream_of(c))].push_back(chain[k]);
        if (k > 0) o.extra.emplace_back(chain[k - 1], chain[k]);
    }
    return o;
}

StreamOrder restrict_order(const FullOrder& full, const SlotDag& dag) {
    StreamOrder order;
    for (int s = 0; s < kStreams; ++s)
        for (int id : full.lists[static_cast<size_t>(s)])
            if (const int node = dag.index[static_cast<size_t>(id)]; node >= 0) order.lists[static_cast<size_t>(s)].push_back(node);
    if (!full.extra.empty()) {
        // Extra edges through left-out components: follow data and extra edges alike.
        std::vector<std::pair<int, int>> edges = full_data_edges(dag.layers);
        edges.insert(edges.end(), full.extra.begin(), full.extra.end());
        order.extra = contract_edges(dag, dag.layers, edges);
    }
    return order;
}

std::string ordinal(int k) {
    const int n = k + 1;
    const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
    return fmt::format("{}{}", n, suffix);
}

}  // namespace

std::string PatternSpec::name() const {
    switch (kind) {
        case PatternKind::DeepSeek: return "deepseek";
        case PatternKind::Megatron: return "megatron";
        case PatternKind::Serial: return "serial";
        case PatternKind::Best: return "best";
        case PatternKind::Custom: return "custom";
    }
    return "?";
}

PatternSpec parse_pattern(std::string_view text) {
    PatternSpec spec;
    size_t first = 0;
    while (first < text.size() && (text[first] == ' ' || text[first] == '\t')) ++first;
    size_t last = text.size();
    while (last > first && (text[last - 1] == ' ' || text[last - 1] == '\t')) --last;
    const std::string_view word = text.substr(first, last - first);
    if (word == "deepseek") return spec;
    if (word == "megatron") return spec.kind = PatternKind::Megatron, spec;
    if (word == "serial") return spec.kind = PatternKind::Serial, spec;
    if (word == "best") return spec.kind = PatternKind::Best, spec;
    if (word.find(':') == std::string_view::npos)
        throw PatternSyntaxError{fmt::format("unknown pattern '{}' (expected deepseek, megatron, serial, best, or a custom "
                                             "order 'compute: attn_f0 mlp_i0 ... / network: combine_b0 dispatch_f0 ...')",
                                             word),
                                 first};
    spec.kind = PatternKind::Custom;
    std::array<bool, kStreams> seen{};
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('/', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view part = text.substr(pos, end - pos);
        const size_t colon = part.find(':');
        if (colon == std::string_view::npos)
            throw PatternSyntaxError{"expected 'compute:' or 'network:' before the components of a stream", pos};
        size_t h = 0;
        while (h < colon && (part[h] == ' ' || part[h] == '\t')) ++h;
        size_t he = colon;
        while (he > h && (part[he - 1] == ' ' || part[he - 1] == '\t')) --he;
        const std::string_view head = part.substr(h, he - h);
        Stream stream;
        if (head == "compute" || head == "C") stream = Stream::Compute;
        else if (head == "network" || head == "N") stream = Stream::Network;
        else
            throw PatternSyntaxError{fmt::format("expected 'compute:' or 'network:', got '{}:'", head), pos + h};
        if (seen[static_cast<size_t>(stream)])
            throw PatternSyntaxError{fmt::format("the {} stream is listed twice", stream_name(stream)), pos + h};
        seen[static_cast<size_t>(stream)] = true;
        size_t i = colon + 1;
        while (i < part.size()) {
            while (i < part.size() && (part[i] == ' ' || part[i] == '\t' || part[i] == ',')) ++i;
            if (i >= part.size()) break;
            const size_t start = i;
            while (i < part.size() && part[i] != ' ' && part[i] != '\t' && part[i] != ',') ++i;
            const std::string_view entry = part.substr(start, i - start);
            size_t digits = entry.size();
            while (digits > 0 && entry[digits - 1] >= '0' && entry[digits - 1] <= '9') --digits;
            const auto component = component_from_key(entry.substr(0, digits));
            int layer = 0;
            const std::string_view number = entry.substr(digits);
            const auto [p, error] = std::from_chars(number.data(), number.data() + number.size(), layer);
            if (!component || number.empty() || error != std::errc{} || p != number.data() + number.size())
                throw PatternSyntaxError{fmt::format("expected a component and its layer such as attn_f0 or mlp_w3, got '{}'", entry),
                                         pos + start};
            spec.lists[static_cast<size_t>(stream)].push_back({*component, layer, 0, static_cast<int>(pos + start) + 1});
        }
        pos = end + 1;
    }
    return spec;
}

std::string format_pattern(const PatternSpec& spec) {
    if (spec.kind != PatternKind::Custom) return spec.name();
    std::string text;
    for (int s = 0; s < kStreams; ++s) {
        if (s > 0) text += " / ";
        text += stream_name(static_cast<Stream>(s));
        text += ":";
        for (const auto& e : spec.lists[static_cast<size_t>(s)]) text += fmt::format(" {}{}", component_key(e.component), e.layer);
    }
    return text;
}

StreamOrder pattern_order(PatternKind kind, const SlotDag& dag) {
    switch (kind) {
        case PatternKind::DeepSeek: return restrict_order(figure4_order(dag.layers), dag);
        case PatternKind::Megatron: return restrict_order(megatron_order(dag.layers), dag);
        case PatternKind::Serial: return restrict_order(serial_order(dag.layers), dag);
        default: break;
    }
    throw std::logic_error("pattern_order: not a fixed pattern");
}

std::optional<OrderProblem> check_order(const SlotDag& dag, const StreamOrder& order) {
    const int n = dag.node_count();
    std::vector<int> count(static_cast<size_t>(n), 0);
    for (int s = 0; s < kStreams; ++s)
        for (size_t k = 0; k < order.lists[static_cast<size_t>(s)].size(); ++k) {
            const int v = order.lists[static_cast<size_t>(s)][k];
            if (v < 0 || v >= n) return OrderProblem{"a list names a node that is not in the slot", static_cast<Stream>(s), static_cast<int>(k)};
            if (dag.nodes[static_cast<size_t>(v)].stream() != static_cast<Stream>(s))
                return OrderProblem{fmt::format("{} is a {} component, listed on the {} stream", dag.nodes[static_cast<size_t>(v)].name(),
                                                stream_name(dag.nodes[static_cast<size_t>(v)].stream()), stream_name(static_cast<Stream>(s))),
                                    static_cast<Stream>(s), static_cast<int>(k)};
            if (++count[static_cast<size_t>(v)] > 1)
                return OrderProblem{fmt::format("{} is listed twice", dag.nodes[static_cast<size_t>(v)].name()), static_cast<Stream>(s),
                                    static_cast<int>(k)};
        }
    for (int v = 0; v < n; ++v)
        if (count[static_cast<size_t>(v)] == 0)
            return OrderProblem{fmt::format("{} is not listed (every component of positive cost must be)", dag.nodes[static_cast<size_t>(v)].name()),
                                dag.nodes[static_cast<size_t>(v)].stream(), -1};
    std::vector<std::vector<int>> preds = dag.pred;
    for (const auto& [a, b] : order.extra) preds[static_cast<size_t>(b)].push_back(a);
    std::vector<bool> done(static_cast<size_t>(n), false);
    std::array<size_t, kStreams> head{};
    auto ready = [&](int v) {
        for (int p : preds[static_cast<size_t>(v)])
            if (!done[static_cast<size_t>(p)]) return false;
        return true;
    };
    for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < kStreams; ++s) {
            const auto& list = order.lists[static_cast<size_t>(s)];
            while (head[static_cast<size_t>(s)] < list.size() && ready(list[head[static_cast<size_t>(s)]])) {
                done[static_cast<size_t>(list[head[static_cast<size_t>(s)]])] = true;
                ++head[static_cast<size_t>(s)];
                progress = true;
            }
        }
    }
    // Stuck: say what each stream waits for; point at a head that waits for a later entry of its own list
    // (the plainest reading: the list puts a component before its own input), else at the compute head.
    std::vector<std::string> waits;
    std::optional<OrderProblem> at;
    for (int s = 0; s < kStreams; ++s) {
        const auto& list = order.lists[static_cast<size_t>(s)];
        const size_t k = head[static_cast<size_t>(s)];
        if (k >= list.size()) continue;
        const int v = list[k];
        int blocker = -1;
        for (int p : preds[static_cast<size_t>(v)])
            if (!done[static_cast<size_t>(p)]) {
                blocker = p;
                break;
            }
        const auto& node = dag.nodes[static_cast<size_t>(v)];
        const auto& need = dag.nodes[static_cast<size_t>(blocker)];
        const bool same_stream = need.stream() == node.stream();
        waits.push_back(fmt::format("{} ({} on the {} stream) needs {}{}", node.name(), ordinal(static_cast<int>(k)), stream_name(node.stream()),
                                    need.name(), same_stream ? ", which the same stream runs only later" : ", which has not run"));
        if (!at || same_stream) at = OrderProblem{"", static_cast<Stream>(s), static_cast<int>(k)};
    }
    if (!at) return std::nullopt;
    at->message = fmt::format("the pattern breaks a dependency, so the slot can never finish: {}", fmt::join(waits, "; "));
    return at;
}

void check_custom_pattern(const PatternSpec& spec, const ChunkCosts& costs) {
    const SlotDag pair = build_slot_dag(SlotKind::PairFB, costs);
    std::vector<std::vector<bool>> listed(1, std::vector<bool>(pair.index.size(), false));
    StreamOrder order;
    std::array<std::vector<const PatternEntry*>, kStreams> entry_of;  // per list position
    for (int s = 0; s < kStreams; ++s)
        for (const PatternEntry& e : spec.lists[static_cast<size_t>(s)]) {
            if (e.layer >= costs.layers)
                throw PatternError{fmt::format("{}{}: layer {} does not exist (the chunk has {} layer{})", component_key(e.component), e.layer,
                                               e.layer, costs.layers, costs.layers == 1 ? "" : "s"),
                                   e};
            if (stream_of(e.component) != static_cast<Stream>(s))
                throw PatternError{fmt::format("{}{} is a {} component, listed on the {} stream", component_key(e.component), e.layer,
                                               stream_name(stream_of(e.component)), stream_name(static_cast<Stream>(s))),
                                   e};
            const int id = component_slot(e.component, e.layer);
            if (listed[0][static_cast<size_t>(id)])
                throw PatternError{fmt::format("{}{} is listed twice", component_key(e.component), e.layer), e};
            listed[0][static_cast<size_t>(id)] = true;
            if (const int node = pair.index[static_cast<size_t>(id)]; node >= 0) {
                order.lists[static_cast<size_t>(s)].push_back(node);
                entry_of[static_cast<size_t>(s)].push_back(&e);
            }
        }
    if (auto problem = check_order(pair, order)) {
        std::optional<PatternEntry> where;
        if (problem->position >= 0) where = *entry_of[static_cast<size_t>(problem->stream)][static_cast<size_t>(problem->position)];
        else if (!spec.lists[static_cast<size_t>(problem->stream)].empty()) where = spec.lists[static_cast<size_t>(problem->stream)].back();
        throw PatternError{problem->message, where};
    }
}

StreamOrder custom_order(const PatternSpec& spec, const ChunkCosts& costs, const SlotDag& dag) {
    check_custom_pattern(spec, costs);
    StreamOrder order;
    for (int s = 0; s < kStreams; ++s)
        for (const PatternEntry& e : spec.lists[static_cast<size_t>(s)])
            if (const int node = dag.index[static_cast<size_t>(component_slot(e.component, e.layer))]; node >= 0)
                order.lists[static_cast<size_t>(s)].push_back(node);
    return order;
}

}  // namespace pp
