#pragma once
// schedules/ — one generator per published family. Uses model/ only.
//
// The schedule library: one generator per published family, each in its own file under schedules/,
// citing where its order comes from. Generators enforce exactly the reference's preconditions and throw
// GenerateError with the reference's reason otherwise.
#include "model/schedule.hpp"
#include "schedules/step_program.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

struct GenerateParams {
    int ranks = 0;                        // P
    int microbatches = 0;                 // M (total, over all pipelines)
    std::optional<int> stages_per_rank;   // V, where the family has it
    // For the families whose order depends on the timing (ScheduleFamily::orders_for_costs: v-zb), what they order
    // for: the costs every stage runs at (exact: the greedy compares times), the activation model and the per-rank
    // memory limit in activations of one stage. Unset: the family's defaults (`pipeproof list`). The other families
    // ignore them.
    std::optional<Costs> costs{};
    std::optional<ActivationModel> activation_sizes{};
    std::optional<Rational> memory_limit{};
    // Megatron-Core's microbatch_group_size_per_vp_stage (--group-size G, Megatron's
    // --microbatch-group-size-per-virtual-pipeline-stage): interleaved-1f1b runs Megatron's tunable order with it
    // (PyTorch's order without), combined-1f1b takes it (default P). The other families refuse it (GenerateError).
    std::optional<int> group_size{};
    // Seq1F1B's sequence segments per micro-batch (--segments k; default kDefaultSegments). Only seq1f1b takes it.
    std::optional<int> segments{};
};
inline constexpr int kDefaultSegments = 2;

struct GenerateError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

struct ScheduleFamily {
    std::string name;           // as the CLI spells it: "1f1b", "dualpipe", ...
    std::string summary;        // one line
    std::string parameters;     // e.g. "P, M, V"
    std::string preconditions;  // e.g. "P even, M even, M >= 2P"
    std::string source;         // where the order comes from
    std::function<Schedule(const GenerateParams&)> generate;
    // The order depends on GenerateParams::costs (and activation sizes, memory limit): commands that generate the
    // family by name pass the costs they time it at, so that the schedule timed is the one ordered for them.
    bool orders_for_costs = false;
    // "v" when every schedule of the family is on the V map (rank r holds stages r and 2P-1-r), so that a caller can
    // skip it for another placement without generating it (search's warm starts); empty when it depends on V.
    std::string placement{};
    // The families whose generator runs a step program (schedules/step_program.hpp): that program, for
    // GenerateParams::ranks (and stages_per_rank); M is read only by Megatron's order, for its residue modulo G (one
    // program per residue; M = 0 takes the multiples of G). Empty for the others.
    std::function<FamilyStepProgram(const GenerateParams&)> step_program{};
    // The families whose generator runs a zone program (several loops grow with M on a rank: GPipe, Looped BFS), the
    // same way. Empty for the others.
    std::function<FamilyStepProgram(const GenerateParams&)> zone_program{};
};

const std::vector<ScheduleFamily>& schedule_families();
// The families that take GenerateParams::group_size (--group-size): interleaved-1f1b, combined-1f1b.
bool family_takes_group_size(std::string_view name);
// The families that take GenerateParams::segments (--segments): seq1f1b.
bool family_takes_segments(std::string_view name);
// Any case; '_' counts as '-' ("ZB_H1" finds "zb-h1"). nullptr when there is no such family.
const ScheduleFamily* find_family(std::string_view name);
// "unknown schedule family 'dualpip'; did you mean 'dualpipe'? (families: gpipe, 1f1b, ...)"
std::string unknown_family_message(std::string_view name);

}  // namespace pp
