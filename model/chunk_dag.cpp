#include "model/chunk_dag.hpp"

#include <fmt/format.h>

namespace pp {

const char* slot_kind_name(SlotKind kind) {
    switch (kind) {
        case SlotKind::F: return "F";
        case SlotKind::I: return "I";
        case SlotKind::W: return "W";
        case SlotKind::B: return "B";
        case SlotKind::PairFI: return "F&I";
        case SlotKind::PairFB: return "F&B";
    }
    return "?";
}

std::optional<SlotKind> slot_kind_from_name(std::string_view name) {
    if (name == "F") return SlotKind::F;
    if (name == "I") return SlotKind::I;
    if (name == "W") return SlotKind::W;
    if (name == "B") return SlotKind::B;
    if (name == "pair" || name == "F&B" || name == "FB") return SlotKind::PairFB;
    if (name == "pair-fi" || name == "F&I" || name == "FI") return SlotKind::PairFI;
    return std::nullopt;
}

SlotKind slot_kind_of(const Slot& slot) {
    if (slot.is_pair()) return slot.ops[1].kind == OpKind::I ? SlotKind::PairFI : SlotKind::PairFB;
    switch (slot.ops[0].kind) {
        case OpKind::F: return SlotKind::F;
        case OpKind::I: return SlotKind::I;
        case OpKind::W: return SlotKind::W;
        case OpKind::B: return SlotKind::B;
    }
    return SlotKind::F;
}

bool has_part(SlotKind kind, ChunkPart part) {
    switch (part) {
        case ChunkPart::Forward: return kind == SlotKind::F || kind == SlotKind::PairFI || kind == SlotKind::PairFB;
        case ChunkPart::InputGrad:
            return kind == SlotKind::I || kind == SlotKind::B || kind == SlotKind::PairFI || kind == SlotKind::PairFB;
        case ChunkPart::WeightGrad: return kind == SlotKind::W || kind == SlotKind::B || kind == SlotKind::PairFB;
    }
    return false;
}

std::string ChunkNode::name() const { return fmt::format("{}{}", component_key(component), layer); }

int SlotDag::find(Component c, int layer) const {
    if (layer < 0 || layer >= layers) return -1;
    return index[static_cast<size_t>(component_slot(c, layer))];
}

Rational SlotDag::stream_total(Stream s) const {
    Rational total{0};
    for (const auto& node : nodes)
        if (node.stream() == s) total += node.cost;
    return total;
}

std::vector<std::pair<int, int>> full_data_edges(int layers) {
    std::vector<std::pair<int, int>> edges;
    auto edge = [&](Component a, int la, Component b, int lb) { edges.emplace_back(component_slot(a, la), component_slot(b, lb)); };
    using C = Component;
    for (int l = 0; l < layers; ++l) {
        edge(C::AttnF, l, C::DispatchF, l);
        edge(C::DispatchF, l, C::MlpF, l);
        edge(C::MlpF, l, C::CombineF, l);
        if (l + 1 < layers) edge(C::CombineF, l, C::AttnF, l + 1);
        edge(C::AttnF, l, C::SharedF, l);
        edge(C::SharedF, l, C::CombineF, l);

        edge(C::CombineB, l, C::MlpI, l);
        edge(C::MlpI, l, C::DispatchB, l);
        edge(C::DispatchB, l, C::AttnI, l);
        if (l > 0) edge(C::AttnI, l, C::CombineB, l - 1);
        edge(C::MlpI, l, C::MlpW, l);
        edge(C::AttnI, l, C::AttnW, l);
        edge(C::CombineB, l, C::SharedI, l);
        edge(C::SharedI, l, C::AttnI, l);
        edge(C::SharedI, l, C::SharedW, l);
    }
    return edges;
}

std::vector<std::pair<int, int>> contract_edges(const SlotDag& dag, int layers, const std::vector<std::pair<int, int>>& edges) {
    const int n = layers * kComponents;
    std::vector<std::vector<int>> out(static_cast<size_t>(n));
    for (const auto& [a, b] : edges) out[static_cast<size_t>(a)].push_back(b);
    std::vector<std::pair<int, int>> result;
    std::vector<int> seen(static_cast<size_t>(n), -1), stack;
    for (int u = 0; u < n; ++u) {
        const int from = dag.index[static_cast<size_t>(u)];
        if (from < 0) continue;
        stack.assign(out[static_cast<size_t>(u)].begin(), out[static_cast<size_t>(u)].end());
        while (!stack.empty()) {
            const int v = stack.back();
            stack.pop_back();
            if (seen[static_cast<size_t>(v)] == u) continue;
            seen[static_cast<size_t>(v)] = u;
            const int to = dag.index[static_cast<size_t>(v)];
            if (to >= 0) {
                result.emplace_back(from, to);
                continue;
            }
            for (int w : out[static_cast<size_t>(v)]) stack.push_back(w);
        }
    }
    return result;
}

SlotDag build_slot_dag(SlotKind kind, const ChunkCosts& costs) {
    SlotDag dag;
    dag.kind = kind;
    dag.layers = costs.layers;
    dag.index.assign(static_cast<size_t>(costs.layers * kComponents), -1);
    for (int l = 0; l < costs.layers; ++l)
        for (int k = 0; k < kComponents; ++k) {
            const auto c = static_cast<Component>(k);
            const Rational cost = costs.cost(c, l);
            if (!has_part(kind, part_of(c)) || cost <= Rational(0)) continue;
            dag.index[static_cast<size_t>(component_slot(c, l))] = dag.node_count();
            dag.nodes.push_back({c, l, cost});
        }
    dag.succ.assign(dag.nodes.size(), {});
    dag.pred.assign(dag.nodes.size(), {});
    for (const auto& [a, b] : contract_edges(dag, costs.layers, full_data_edges(costs.layers))) {
        dag.succ[static_cast<size_t>(a)].push_back(b);
        dag.pred[static_cast<size_t>(b)].push_back(a);
    }
    return dag;
}

}  // namespace pp
