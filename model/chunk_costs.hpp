#pragma once
// The inside of a chunk (issue 11): the per-layer component costs of one model block of an MoE model, as
// the DeepSeek-V3 report (arXiv 2412.19437, §3.2.1 and Figure 4) and Megatron-Core's combined 1F1B layer
// plan (megatron/core/models/common/model_chunk_schedule_plan.py) split it.
//
// A chunk = one micro-batch through one model block of L layers. Per layer:
//   forward   attn_f (compute)  dispatch_f (network)  mlp_f (compute)  combine_f (network)
//   backward  combine_b (network)  mlp_i, mlp_w (compute: input- and weight-gradient of the experts)
//             dispatch_b (network)  attn_i, attn_w (compute: the same split of attention)
//   optional  shared_f, shared_i, shared_w: the shared expert (compute), which needs the layer's attention
//             output like the routed experts but not the all-to-all, so it can run under dispatch/combine.
// "network" is the expert-parallel (EP) all-to-all stream; everything else runs on the compute stream.
// A component of cost 0 does not exist (a dense layer has no dispatch/combine: Megatron's NoopScheduleNode).
//
// Two knobs besides the costs:
//   slowdown  contention (default 0): while a network component runs, compute progresses at rate
//             1/(1 + slowdown) -- the SMs the all-to-all kernels take from the GEMMs (DeepSeek gives 20 of
//             the H800's 132 SMs to communication; Megatron reports ~20 % GEMM slowdown with DeepEP). It
//             does not model bandwidth sharing between EP and PP traffic, nor compute slowing the network.
//   pp        the PP send/recv of one chunk's tensor. PP P2P has its own channel, between slots: it becomes
//             the schedule's P2P latency `comm` (model/costs.hpp), paid on every dependency that crosses
//             ranks, exactly as opaque costs time it. It is not part of a slot's duration nor of its
//             exposed all-to-all time; a PP transfer that is not hidden shows up as idle time (bubble).
//
// Text form (flags, the native `chunks` line): KEY=VALUE items separated by commas or spaces, in any order:
//   layers=2,attn_f=1,dispatch_f=1.5,mlp_f=2,combine_f=1.5,combine_b=1.5,mlp_i=2,mlp_w=1,dispatch_b=1.5,
//   attn_i=1,attn_w=0.5[,shared_f=..,shared_i=..,shared_w=..][,slowdown=1/4][,pp=0.2]
// A value applies to every layer; KEY@LAYER=VALUE overrides one layer (layers are 0..L-1 in model order).
// The ten keys attn_f .. attn_w must all be given (0 is allowed): a forgotten key is an error, not a 0.
#include "model/rational.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

enum class Component : std::uint8_t {
    AttnF, DispatchF, MlpF, CombineF,                 // forward
    CombineB, MlpI, MlpW, DispatchB, AttnI, AttnW,    // backward
    SharedF, SharedI, SharedW,                        // optional shared expert
};
inline constexpr int kComponents = 13;
inline constexpr int kRequiredComponents = 10;  // AttnF .. AttnW

enum class Stream : std::uint8_t { Compute = 0, Network = 1 };
inline constexpr int kStreams = 2;

// Which part of the backward a component belongs to (F: forward; I: input-gradient; W: weight-gradient).
enum class ChunkPart : std::uint8_t { Forward, InputGrad, WeightGrad };

const char* component_key(Component c);                        // "attn_f", ...
std::optional<Component> component_from_key(std::string_view key);
Stream stream_of(Component c);
ChunkPart part_of(Component c);
const char* stream_name(Stream s);                             // "compute" | "network"

struct ChunkCosts {
    int layers = 1;
    std::vector<std::array<Rational, kComponents>> layer{std::array<Rational, kComponents>{}};  // [layer][component]
    Rational slowdown{0};
    std::optional<Rational> pp;

    Rational cost(Component c, int l) const { return layer[static_cast<size_t>(l)][static_cast<size_t>(c)]; }
    void set(Component c, int l, const Rational& value) { layer[static_cast<size_t>(l)][static_cast<size_t>(c)] = value; }
    void set_all(Component c, const Rational& value);
    void resize(int layer_count);  // keeps layer 0's values for new layers
    // Every cost, slowdown and pp, so a TimeScale can include them.
    std::vector<Rational> all_values() const;
    friend bool operator==(const ChunkCosts&, const ChunkCosts&) = default;
};

inline constexpr int kMaxChunkLayers = 1000;

// Bad text: what and where (0-based character offset into the parsed text).
struct ChunkCostError {
    std::string message;
    size_t offset = 0;
};

// Throws ChunkCostError: unknown key, a value that is not a non-negative number (a negative cost is named
// as such), a layer override outside 0..L-1, a key given twice, a required key missing.
ChunkCosts parse_chunk_costs(std::string_view text);
// Canonical text (parse_chunk_costs(format_chunk_costs(c)) == c).
std::string format_chunk_costs(const ChunkCosts& costs);

}  // namespace pp
