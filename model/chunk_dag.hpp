#pragma once
// The component DAG of one slot (issue 11). A slot -- what a rank runs as one unit -- is a lone F, I, W or
// B, or an overlapped pair F&B (or F&I). Its nodes are the components (model/chunk_costs.hpp) of the
// chunk parts it runs, one per layer:
//   F    the forward components of layers 0..L-1
//   I    the backward's network and input-gradient components (W runs in a later slot)
//   W    the weight-gradient components only (their I ran earlier, so they wait for nothing in the slot)
//   B    I and W together (W inline, as DeepSeek's overlapped backwards and Megatron's do)
//   F&I, F&B   a forward chunk X and a backward chunk Y of a different micro-batch, with no edge between
//        them: a pair is two independent chains sharing the rank's two streams.
// Data edges (every pattern):
//   forward  attn_f[l] -> dispatch_f[l] -> mlp_f[l] -> combine_f[l] -> attn_f[l+1]
//            attn_f[l] -> shared_f[l] -> combine_f[l]          (the shared output is added at the combine)
//   backward combine_b[l] -> mlp_i[l] -> dispatch_b[l] -> attn_i[l] -> combine_b[l-1]   (layers L-1 .. 0)
//            mlp_i[l] -> mlp_w[l],  attn_i[l] -> attn_w[l]     (W has no successor)
//            combine_b[l] -> shared_i[l] -> attn_i[l],  shared_i[l] -> shared_w[l]
// Components of cost 0 are left out, and an edge path through left-out components becomes a direct edge,
// so a dense layer (no dispatch/combine) chains attn straight to mlp.
#include "model/chunk_costs.hpp"
#include "model/op.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pp {

enum class SlotKind : std::uint8_t { F = 0, I = 1, W = 2, B = 3, PairFI = 4, PairFB = 5 };
inline constexpr int kSlotKinds = 6;

const char* slot_kind_name(SlotKind kind);                  // "F", "I", "W", "B", "F&I", "F&B"
// "F", "I", "W", "B", "pair" (= F&B), "pair-fi" (= F&I)
std::optional<SlotKind> slot_kind_from_name(std::string_view name);
SlotKind slot_kind_of(const Slot& slot);
bool has_part(SlotKind kind, ChunkPart part);

struct ChunkNode {
    Component component{};
    int layer = 0;
    Rational cost{0};
    Stream stream() const { return stream_of(component); }
    std::string name() const;  // "attn_f0", "mlp_w3": the cost key and the layer
};

struct SlotDag {
    SlotKind kind = SlotKind::F;
    int layers = 1;
    std::vector<ChunkNode> nodes;                       // positive cost only
    std::vector<std::vector<int>> succ, pred;           // data edges (contracted through left-out components)
    std::vector<int> index;                             // (layer * kComponents + component) -> node, -1 when absent

    int node_count() const { return static_cast<int>(nodes.size()); }
    int find(Component c, int layer) const;             // -1 when absent
    // Sum of the costs of the nodes on one stream.
    Rational stream_total(Stream s) const;
};

SlotDag build_slot_dag(SlotKind kind, const ChunkCosts& costs);

// Every (component, layer) of a full F&B pair with L layers: index = layer * kComponents + component.
inline int component_slot(Component c, int layer) { return layer * kComponents + static_cast<int>(c); }

// The data edges of the full F&B pair over all components (cost or not), as (from, to) component_slot ids.
std::vector<std::pair<int, int>> full_data_edges(int layers);

// Reachability through left-out components: for every present pair (u, v) such that some path u -> v in
// `edges` (over component_slot ids) has only left-out inner vertices, the edge (node(u), node(v)).
std::vector<std::pair<int, int>> contract_edges(const SlotDag& dag, int layers, const std::vector<std::pair<int, int>>& edges);

}  // namespace pp
