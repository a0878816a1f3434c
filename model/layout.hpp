#pragma once
// Stage layouts: which layers each model block holds, in Megatron-Core's --pipeline-model-parallel-layout syntax
// (megatron/core/transformer/pipeline_parallel_layer_layout.py; docs: "Custom Pipeline Model Parallel Layout"):
// blocks split by '|', E embedding, t transformer decoder layer, m MTP layer, L loss; `x*N` repeats one layer,
// `(...)*N` a piece that may hold '|'; commas and spaces are cosmetic; an empty block (`E||t|L`) is legal.
// Blocks are listed in model order: Megatron's VPP rank 0 over PP ranks 0..P-1, then VPP rank 1, ... -- block b
// of the loop map runs on rank b mod P, which is what pipeproof's stage -> block map already says.
//
// A block's costs are the sum of its layers' costs, its activation stash the sum of its layers' sizes: the
// layer costs say what one layer of each kind runs at, so uneven blocks are timed and counted as they are.
#include "model/costs.hpp"
#include "model/rational.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

enum class LayerKind { Embedding, Decoder, Mtp, Loss };
inline constexpr int kLayerKinds = 4;
inline constexpr std::string_view kLayerLetters = "EtmL";  // indexed by LayerKind

// How many layers of each kind one block holds.
struct BlockLayers {
    std::array<int, kLayerKinds> count{};
    int of(LayerKind kind) const { return count[static_cast<int>(kind)]; }
    bool empty() const { return count == std::array<int, kLayerKinds>{}; }
    bool operator==(const BlockLayers&) const = default;
};

struct StageLayout {
    std::vector<BlockLayers> blocks;
    std::string text;  // as given
};

// The parsed layout; throws CostSyntaxError (message, 0-based offset into `text`) on bad input, or when it would
// hold more than kMaxLayoutBlocks blocks or kMaxLayoutLayers layers (repetition counts are bounded, not trusted).
inline constexpr int kMaxLayoutBlocks = 1 << 16;
inline constexpr long kMaxLayoutLayers = 1L << 20;
StageLayout parse_stage_layout(std::string_view text);

// "E+3t", "2t", "m", "-" (empty): one block, for tables and messages.
std::string format_block_layers(const BlockLayers& block);

// What one layer of each kind costs and stashes. Defaults: a decoder or MTP layer costs `decoder` (the command's
// --costs) and stashes one unit; embedding and loss cost and stash nothing until given. No layer names an F&B or
// F&I pair cost: a pair joins two blocks' layers, so the callers refuse FB and FI under a layout.
struct LayerCosts {
    std::array<OpCosts, kLayerKinds> costs{};
    std::array<Rational, kLayerKinds> sizes{Rational(0), Rational(1), Rational(1), Rational(0)};
    std::array<bool, kLayerKinds> costs_given{};  // for the note that says which defaults were used
    std::array<bool, kLayerKinds> size_given{};

    explicit LayerCosts(const OpCosts& decoder);
    // "E:F=1,I=0.5,W=0.5" (one item of --layer-costs: E, m or L, once each); throws CostSyntaxError.
    void apply_costs(std::string_view item);
    // "E=0,L=2,m=1" (--layer-sizes): a layer's stash in decoder-layer units; throws CostSyntaxError.
    void apply_sizes(std::string_view text);
};

// A block's op costs: each op kind the sum over its layers (B, FB, FI summed only when every layer has one; an
// empty block runs its ops in zero time).
OpCosts block_costs(const BlockLayers& block, const LayerCosts& layers);
// A block's stash in decoder-layer units: the sum of its layers' sizes.
Rational block_stash(const BlockLayers& block, const LayerCosts& layers);

}  // namespace pp
