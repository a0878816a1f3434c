#pragma once
// Durations per op kind (optionally per model block) and a P2P latency added on every dependency that
// crosses ranks. B defaults to I + W; an overlapped pair defaults to the sum of its two ops (FB, when given,
// for every pair; FI, when given, for the pairs whose backward is an I -- chunk costs derive both).
// Activation memory: a (stage, micro-batch) stash is allocated when its F starts and released when its
// W ends (or its B, when the backward is not split). Sizes default to one unit per stash.
#include "model/op.hpp"
#include "model/rational.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

struct OpCosts {
    Rational F{1}, I{1}, W{1};
    std::optional<Rational> B;   // full backward; default I + W
    std::optional<Rational> FB;  // overlapped F&B pair; default F + (its backward)
    std::optional<Rational> FI;  // overlapped F&I pair (backward split); default FB when given, else F + I
    Rational full_backward() const { return B ? *B : I + W; }
};

struct Costs {
    OpCosts base;
    std::map<int, OpCosts> per_block;  // overrides for individual model blocks
    Rational comm{0};

    const OpCosts& of_block(int block) const;
    Rational duration(OpKind kind, int block) const;
    Rational pair_duration(const Op& forward, int forward_block, const Op& backward, int backward_block) const;
    // Every value, so that a TimeScale can include them all.
    std::vector<Rational> all_values() const;
};

// Every op and pair cost times `factor`; comm (a latency) unchanged. A sequence segment runs at 1/k of the costs.
Costs scaled_op_costs(const Costs& costs, const Rational& factor);

// "F=1,I=1.5,W=0.5,B=2,FB=2,comm=0" (commas or spaces). Throws CostSyntaxError on bad input.
struct CostSyntaxError {
    std::string message;
    size_t offset;  // 0-based character offset into the parsed text
};
Costs parse_costs(std::string_view text);
// Applies "key=value" items to an existing OpCosts / Costs (used for per-block lines too).
void apply_cost_items(std::string_view text, OpCosts& op_costs, Rational* comm);
std::string format_costs(const Costs& costs);
std::string format_op_costs(const OpCosts& costs);  // one block's: "F=..,I=..,W=.." and B, FB, FI when set

struct ActivationModel {
    Rational forward_alloc{1};  // allocated at the start of F
    Rational input_grad_free{0};  // released at the end of I; the rest at the end of W (B releases all)
    // Uneven stages (--layout): stage_scale[pipeline][stage] multiplies both sizes for that stage's stashes (its
    // layers' share); empty when every stash is one size.
    std::vector<std::vector<Rational>> stage_scale;
    bool uniform() const { return stage_scale.empty(); }
    Rational scale_of(int pipeline, int stage) const;
    bool operator==(const ActivationModel&) const = default;
};

// Both sizes times `factor` (the per-stage scales unchanged): a sequence segment stashes 1/k of a micro-batch.
ActivationModel scaled_sizes(ActivationModel sizes, const Rational& factor);

// "F=1,I=11/16": what F allocates and I releases (keys F and I only; I at most F). Throws CostSyntaxError.
ActivationModel parse_activation_sizes(std::string_view text);
std::string format_activation_sizes(const ActivationModel& sizes);

}  // namespace pp
