#pragma once
// Overlap patterns (issue 11): how a slot's components (model/chunk_dag.hpp) are ordered on the rank's
// two streams. A pattern is data: one ordered list of components per stream, plus extra ordering edges.
// Each component then starts when its stream has finished the component before it in the list and its
// inputs (data edges, extra edges) are done (verifier/slot_timing.hpp times that exactly).
//
// Every named pattern is written once, for the full F&B pair; every other slot kind (lone F, I, W, B, an
// F&I pair) uses its restriction: the lists keep the slot's components in the same order, and an extra
// edge that ran through a left-out component becomes a direct edge (the same contraction as the data
// edges). Written for a forward chunk X and a backward chunk Y, layers j = 0..L-1 and m = L-1-j:
//
//   deepseek  DeepSeek-V3 Figure 4, period by period (research note moe-overlap-research.md §1.2):
//               compute  attn_f[0] shared_f[0] | per j: mlp_i[m] mlp_w[m] mlp_f[j] shared_i[m] attn_i[m]
//                        shared_w[m] attn_w[m] attn_f[j+1] shared_f[j+1]
//               network  combine_b[L-1] | per j: dispatch_f[j] dispatch_b[m] combine_f[j] combine_b[m-1]
//             so the forward's dispatch hides under the backward's MLP input-gradient, the backward's dispatch
//             under MLP weight-gradient + forward MLP, the forward's combine under attention input-gradient
//             and the backward's next combine under attention weight-gradient + the next forward attention.
//             The figure's red barriers are not modelled (their positions are not legible in the report);
//             components synchronise by data only. This is also Megatron-Core's order with
//             --delay-wgrad-compute (same per-stream lists: TransformerLayerSchedulePlan.run).
//   megatron  Megatron-Core's combined 1F1B layer plan (--overlap-moe-expert-parallel-comm) as it runs by
//             default, without --delay-wgrad-compute: the same lists, but a weight gradient is computed
//             inside its node, so the next network component waits for it:
//               extra edges mlp_w[m] -> dispatch_b[m], attn_w[m] -> combine_b[m-1], shared_w[m] -> combine_b[m-1]
//             and the shared expert is inside the attention node (no moe_shared_expert_overlap):
//               extra edge shared_f[j] -> dispatch_f[j]
//   serial    one component at a time, chain order: the forward chunk (per layer attn_f shared_f dispatch_f
//             mlp_f combine_f), then the backward chunk (per layer from L-1: combine_b mlp_i mlp_w
//             dispatch_b shared_i shared_w attn_i attn_w). Duration = the plain sum; every network
//             component is exposed.
//   best      not a fixed order: the minimum duration over every pair of stream orders that respects the
//             data edges, per slot kind (verifier/chunk_best.hpp, solver/chunk_best_z3.hpp).
//   custom    written out: "compute: attn_f0 mlp_i0 ... / network: combine_b0 dispatch_f0 ...", components
//             named by cost key and layer, for the F&B pair (other slot kinds use its restriction).
//             Components of cost 0 may be listed or not; every other component exactly once, on its own
//             stream, in an order that can run.
#include "model/chunk_dag.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

enum class PatternKind : std::uint8_t { DeepSeek, Megatron, Serial, Best, Custom };

struct PatternEntry {
    Component component{};
    int layer = 0;
    int line = 0;    // where it was written (1-based; 0 when not from a file)
    int column = 0;  // 1-based column in its line (or character in the flag's value)
};

struct PatternSpec {
    PatternKind kind = PatternKind::DeepSeek;
    std::array<std::vector<PatternEntry>, kStreams> lists;  // Custom only
    std::string origin;                                     // "--pattern" or the file it came from
    std::string name() const;                               // "deepseek", ..., "custom"
};

struct PatternSyntaxError {
    std::string message;
    size_t offset = 0;  // 0-based character offset into the parsed text
};

// "deepseek" | "megatron" | "serial" | "best" | "compute: ... / network: ..." (also "C:"/"N:"; entries
// separated by spaces or commas). Entry columns are offset + 1. Throws PatternSyntaxError.
PatternSpec parse_pattern(std::string_view text);
std::string format_pattern(const PatternSpec& spec);  // parse_pattern(format_pattern(p)) has the same lists

// Per-stream orders of a slot's nodes (indices into SlotDag::nodes) and extra edges (from, to).
struct StreamOrder {
    std::array<std::vector<int>, kStreams> lists;
    std::vector<std::pair<int, int>> extra;
};

// The order of a named fixed pattern (DeepSeek, Megatron, Serial) for this slot.
StreamOrder pattern_order(PatternKind kind, const SlotDag& dag);

// Why an order cannot be used: the message and, when it is about a listed entry, which one.
struct PatternError {
    std::string message;
    std::optional<PatternEntry> at;
};

// The order a custom pattern gives this slot. The pattern is checked against the full F&B pair of the
// same chunk costs (every present component once, on its stream, no deadlock), so every restriction runs
// too. Throws PatternError.
StreamOrder custom_order(const PatternSpec& spec, const ChunkCosts& costs, const SlotDag& dag);
// The check alone (what custom_order does for the F&B pair).
void check_custom_pattern(const PatternSpec& spec, const ChunkCosts& costs);

// An order can run when each list holds exactly the slot's nodes of that stream and the list order, data
// edges and extra edges have no cycle. nullopt when it can; else the problem, naming the stream position
// (list index) where a stream gets stuck.
struct OrderProblem {
    std::string message;
    Stream stream = Stream::Compute;
    int position = -1;
};
std::optional<OrderProblem> check_order(const SlotDag& dag, const StreamOrder& order);

}  // namespace pp
