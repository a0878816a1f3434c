#pragma once
// What every subcommand shares: where the schedule comes from (a file, or a generator name with -P -M -V),
// the costs, and exact numbers in JSON.
#include "cli/chunk_cli.hpp"
#include "formats/load.hpp"
#include "model/layout.hpp"
#include "model/schedule.hpp"
#include "proofs/cost_space.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pp {
struct ScheduleFamily;
}

namespace pp::cli {

enum ExitCode { kOk = 0, kViolations = 1, kBadInput = 2, kUndecided = 3 };

// --group-size G on every command that generates by family name (Megatron-Core's
// --microbatch-group-size-per-virtual-pipeline-stage; interleaved-1f1b and combined-1f1b take it; group-interleaved
// its own group size, the reference's --interleave-group-size).
inline constexpr const char* kGroupSizeHelp =
    "micro-batch group size G (generator: interleaved-1f1b runs Megatron-Core's tunable order with it, combined-1f1b "
    "takes it, default P; Megatron requires P <= G <= M and M mod G == 0 or >= P; group-interleaved takes 1 <= G <= P, default ceil(P/2))";

// Ranges of the count flags (-P, -M, -V, --stages) wherever they appear; the readers allow the same.
inline constexpr int kMaxRanks = kMaxStagesPerPipeline;  // 65536: one stage per rank at the least
inline constexpr int kMaxMicrobatches = 1'000'000;
inline constexpr int kMaxStagesPerRank = 1'000;
inline constexpr int kMaxBlock = 1'000'000;  // model block numbers (--stage-costs), as the native reader allows

// A usage error detected after parsing (exit 2).
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A question the command could not settle within its limits (exit 3, "undecided"), e.g. simulate
// --choose-offloads out of time before any choice was found.
struct UndecidedError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct CostInput;

struct ScheduleInput {
    std::string source;                  // FILE, or a family name from `pipeproof list`
    std::optional<int> ranks, microbatches, stages_per_rank;
    std::optional<int> group_size;       // --group-size: Megatron's micro-batch group size (interleaved-1f1b, combined-1f1b)
    std::optional<int> segments;         // --segments: Seq1F1B's sequence segments per micro-batch (seq1f1b)
    std::optional<std::string> segment_costs;  // --segment-costs: each segment's share of the costs (segmented schedules)
    std::optional<std::string> format;   // native | torch-csv | json
    std::string torch_era = "current";   // current | 2024
    std::optional<int> stages;           // PyTorch CSV: number of stages, if not inferred

    void add_options(CLI::App& app, bool positional_required = true);
    Schedule load() const;
    Schedule load_as_given() const;  // load() without --segment-costs applied
    // load(), and a family whose order depends on the timing (ScheduleFamily::orders_for_costs: v-zb) generated for
    // what its stages run at under `timing`: the costs as the command resolves them (in rank units each stage's
    // share of them) and the --activation-sizes when given. So the schedule timed is the one ordered for its costs.
    Schedule load(const CostInput& timing) const;
    // `schedule` generated again for `stage_costs` (what each of its stages runs at) and `sizes` when `source` names
    // a family whose order depends on them; `schedule` unchanged otherwise (a file, or any other family).
    Schedule ordered_for(Schedule schedule, const Costs& stage_costs, const std::optional<ActivationModel>& sizes) const;
    // The family `source` names, when it is not a file; nullptr otherwise.
    const ScheduleFamily* generated_family() const;
};

// --time-unit us|ms|s on the timing commands: the unit the costs are written in. The text output, the pictures'
// axes and the JSON ("time_unit") name it, and the trace and GPU-hours take their seconds per unit from it. Without
// it times are in plain cost units (JSON: null). A positive number is the old spelling of compare's
// --seconds-per-unit: seconds per cost unit, no unit named.
struct TimeUnitInput {
    std::optional<std::string> text;

    void add_option(CLI::App& app);
    std::optional<std::string> name() const;              // "us", "ms", "s", or none
    std::optional<Rational> seconds_per_unit() const;     // from the name or the old numeric spelling
    std::string suffix() const;                           // " ms", or "" without a named unit
    nlohmann::json json() const;                          // "ms" or null
    // The seconds per unit of a --seconds-per-unit flag and of this option together: either alone, both when they
    // agree (a usage error when they do not); none when neither is given.
    std::optional<Rational> seconds_with(const std::optional<std::string>& seconds_flag) const;
};

struct CostInput {
    std::optional<std::string> costs;        // "F=1,I=1,W=1,comm=0"
    std::vector<std::string> stage_costs;    // "BLOCK:F=2,I=2"
    std::optional<std::string> activation;   // "F=..,I=.." sizes: allocated by F, released by I
    std::optional<std::string> layout;       // --layout: Megatron's layout string (model/layout.hpp)
    std::vector<std::string> layer_costs;    // --layer-costs "E:F=..,I=..,W=.." (with --layout)
    std::optional<std::string> layer_sizes;  // --layer-sizes "E=0,L=2" (with --layout)
    ChunkInput chunks;                       // --chunk-costs, --pattern (issue 11)
    mutable std::optional<ChunkTable> chunk_table;  // set by resolve() when the costs were derived from chunk costs
    // --units (issue 31): "stage" = costs and activation sizes as given, per stage; "rank" = those of a 1/P share
    // of the model, so each stage runs at its share P / (model blocks) of them (a V stage at half): times,
    // activation sizes, peaks and memory limits then all count in 1/P-of-the-model units.
    std::string units = "stage";
    TimeUnitInput time_unit;                 // --time-unit

    // with_units = false: the command registers --units itself (compare, report scale by the share on their own).
    void add_options(CLI::App& app, bool with_units = true);
    bool rank_units() const { return units == "rank"; }
    // What each stage runs at: 1 in stage units, P / blocks in rank units.
    Rational share(const Schedule& schedule) const;
    // For the cost line and the JSON "units" field: "stage", or "rank, each stage at 1/2 of the given costs".
    std::string units_text(const Schedule& schedule) const;
    // A warning on stderr for each cost letter of --costs/--stage-costs that no op of the schedule uses (B on a
    // file whose backward is split into I and W, FB without an F&B pair, ...): it changes nothing, so it was
    // likely meant for another letter.
    void warn_unused_letters(const Schedule& schedule) const;
    // The memory limit in the units of the peaks: the flag's as given, else the file's (stage units) at the share.
    std::optional<Rational> memory_limit(const Schedule& schedule, const std::optional<Rational>& flag) const;
    // Command line over file over F=I=W=1, comm=0. A --stage-costs block the schedule's placement does not
    // have is a usage error unless every_block_exists is false (compare/report: checked over all schedules).
    // In rank units, every duration times share(schedule).
    Costs resolve(const Schedule& schedule, bool every_block_exists = true) const;
    Costs resolve_as_given(const Schedule& schedule, bool every_block_exists = true) const;
    bool flag_sets_block(int block) const;  // a --stage-costs item names this block
    void check_stage_blocks(const std::vector<Schedule>& schedules) const;  // usage error: a block none of them has
    // Every flag's syntax, without a schedule (UsageError); add_options runs it once the command line is parsed.
    void check_syntax() const;
    // The flag's sizes, else the file's (`activation-sizes`), else one unit per stash; with --layout each stage's
    // stash scaled by its block's layers.
    ActivationModel activations(const Schedule* schedule = nullptr) const;
    // --layout with its layer costs and sizes, parsed and checked against the other flags (UsageError); nullopt
    // without --layout. Notes on stderr which layer costs and sizes are defaults.
    struct ResolvedLayout {
        StageLayout layout;
        LayerCosts layers;
        Rational comm{0};
    };
    std::optional<ResolvedLayout> resolved_layout() const;
    // --layout at another decoder layer's costs (a point of refute's grid): every block at its layers' costs, the
    // decoder layer -- and the MTP layer unless --layer-costs gives it -- at `decoder`, comm as given; the E and L
    // costs as --layer-costs gives them.
    Costs layout_costs_at(const Schedule& sample, const OpCosts& decoder, const Rational& comm) const;
    mutable std::optional<ResolvedLayout> layout_cache;  // parsed (and its defaults noted) once per command
    bool memory_limit_flag_given = false;  // verify --memory-limit: a file's own limit is then not used
};

// compare and report: `schedule` (loaded by `input`) generated again when its family orders for the costs (v-zb), for
// what each of its stages runs at in their row -- the given costs, at the stage's share of the model when
// `model_share` (like for like), chunk costs at the stage's layers -- and the --activation-sizes when given.
Schedule ordered_for_row(const ScheduleInput& input, Schedule schedule, const CostInput& costs, bool model_share);

// --units stage|rank on a command (default given), with the description every timing command shares.
CLI::Option* add_units_option(CLI::App& app, std::string& units);
// --layout, --layer-costs and --layer-sizes (help texts shared by every command that takes them).
void add_layout_options(CLI::App& app, std::optional<std::string>& layout, std::vector<std::string>& layer_costs,
                        std::optional<std::string>& layer_sizes);
// On a command that does not take a layout yet: --layout, --layer-costs and --layer-sizes refused with the reason
// (exit 2), not as unknown flags.
void refuse_layout_options(CLI::App& app, const std::string& reason);
// The stash of every (pipeline, stage) of `placement` in decoder-layer units under a layout (its block's layers).
std::vector<std::vector<Rational>> layout_stage_stash(const Placement& placement, const CostInput::ResolvedLayout& resolved);

// compare and report: whether each stage runs at its model share of the given costs (--units rank, their default).
// With --layout the blocks' costs are their layers' own, so stage units apply, and an explicit --units rank is refused.
bool model_share_costs(const CostInput& costs, const std::string& units, bool per_stage_costs, const CLI::Option* units_flag);
// --units on prove, formula and refute, in the timing commands' words. "stage": costs and peaks per stage, as the
// published formulas state them (DualPipeV's and ZB-V's per chunk). "rank": a stage runs at its share P / blocks of
// a rank's costs (a V stage at 1/2, interleaved at 1/V) and holds that share of a rank's stash. Where a stage is a
// 1/P share both read the same. Otherwise a command that restates its results in rank units (`converts`: refute's
// claims; prove's peaks) takes them; one whose symbolic results stay per stage (formula, prove's bubble) refuses,
// naming the substitution, rather than read them per stage silently.
struct ProofUnits {
    std::string line;    // the output's units line and JSON units_detail
    Rational share{1};   // what a stage runs at in rank units (1 in stage units)
};
ProofUnits proof_units(const std::string& units, const std::string& family, int ranks, std::optional<int> stages_per_rank,
                       bool converts);
void add_proof_units_option(CLI::App& app, std::string& units);

TorchEra parse_era(const std::string& name);
std::optional<FileFormat> parse_optional_format(const std::optional<std::string>& name);

// The command line as the user typed it, and this build's name ("pipeproof 0.5.0 (git ...)"), for what a command
// writes about itself (a certificate's header). Set once by main().
void set_invocation(int argc, char** argv, std::string tool);
const std::string& invocation();
const std::string& tool_name();

// Nothing is chosen silently: a family that takes V, used without -V, says on stderr which V it took.
void note_default_stages_per_rank(const ScheduleFamily& family, const Schedule& schedule);
void note_default_stages_per_rank(const std::string& family, int ranks, std::optional<int> given);
// group-interleaved without --group-size: the default G = ceil(P/2) it runs at, on stderr.
void note_default_group_size(const ScheduleFamily& family, int ranks, std::optional<int> given);
void note_default_group_size(const std::string& family, int ranks, std::optional<int> given);
// Whether one of `names` (files or family names) is a family that `takes` a parameter (family_takes_group_size,
// family_takes_segments): compare and report refuse --group-size and --segments that no row would use.
bool names_a_family_that(const std::vector<std::string>& names, bool (*takes)(std::string_view));
// --group-size on compare and report, which time several families: "G" for every family that takes one, or
// "FAMILY=G" for one of them (repeatable; a family's own G wins over the plain one), so interleaved-1f1b (P <= G)
// and group-interleaved (G <= P) can sit in one table.
struct GroupSizeInput {
    std::vector<std::string> items;
    void add_option(CLI::App& app);
    bool given() const { return !items.empty(); }
    // Refuses a malformed item, a family that takes no G or is not among `names`, and a family (or the plain G)
    // given twice; `command` names where the rows go ("compared", "in the report").
    void validate(const std::vector<std::string>& names, const std::string& where) const;
    std::optional<int> for_family(const std::string& family) const;  // after validate
};
// seq1f1b without --segments: the default k it runs at, on stderr.
void note_default_segments(const std::string& family, std::optional<int> given);
// The assumption line of a proof about Seq1F1B's segment units: what a unit runs at, and that every cost and size
// `where` is a unit's.
std::string segment_units_assumption(int k, const std::string& where);
// The proofs' --segments (prove, formula, refute): at most this many, as certificates carry.
inline constexpr int kMaxProvedSegments = 64;
// Seq1F1B's k for a proof: the given --segments or the family's default; nullopt for a family without segments
// (a usage error when --segments was given for it).
std::optional<int> proof_segments(const std::string& family, std::optional<int> given);

// One argument of a command a note cites, quoted for a POSIX shell: 'Et|t*3' ('\'' for a quote inside).
std::string shell_quoted(const std::string& text);
// The flags a cited `pipeproof prove` run needs to take the same cost region: --symbolic-comm and each assumption
// (in PyTorch's letters, as prove reads them by default).
std::string region_flags(bool symbolic_comm, const std::vector<std::string>& assumptions);
inline constexpr int kMaxSegments = 1'000;
// G as the family runs it at P = ranks: the given one, else group-interleaved's default ceil(P/2), else none.
std::optional<int> resolved_group_size(const std::string& family, int ranks, std::optional<int> given);
// V as the family runs it at P = ranks: the given one, else its default (nullopt for a family without V).
std::optional<int> resolved_stages_per_rank(const std::string& family, int ranks, std::optional<int> given);
// Microseconds per cost unit in a trace, from --seconds-per-unit (exact text) or its old spelling
// --trace-unit-us; 1000 (one unit = 1 ms) when neither is given. Usage error for both, or a non-positive value.
// The values an option takes, as CLI::IsMember checks them, and a refusal that lists them and names the nearest
// ("--property: 'bubble-constnt' is not one of bubble-constant, ...; did you mean 'bubble-constant'?").
CLI::Validator one_of(std::vector<std::string> values);

double trace_microseconds_per_unit(const std::optional<std::string>& seconds_per_unit, const std::optional<double>& us_per_unit);

// A usage error naming `flag` when `path` ("-" = standard output) cannot be written: its directory is missing
// or not writable, or the file exists and is not writable. Nothing is created.
void require_writable(const std::string& path, const std::string& flag);

// save_schedule for a command's output: a schedule a format cannot hold is a usage error. What the format
// would not keep (formats/faithful.hpp) is refused as a usage error unless its key is in `drop` (convert's
// --drop), and named in a warning on stderr when dropped; without `drop` (generate, search -o: the schedule
// exists only in this run) every loss is a warning.
void write_schedule_output(const Schedule& schedule, const std::string& path, std::optional<FileFormat> format,
                           TorchEra era = TorchEra::Current, bool csv_crlf = true,
                           const std::vector<std::string>* drop = nullptr);

// Numbers in --json (issue 14): every field has one JSON type whatever its value. A quantity is always a JSON
// number -- a whole value that fits 64 bits as an integer, anything else as the nearest double -- and its exact
// text ("7/3", "1557000000000000.908") sits under the "exact" object next to it, with the same key.
nlohmann::json number_json(const Rational& value);
// The value, or null when there is none.
inline nlohmann::json optional_json(const std::optional<int>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
// object[key] = number_json(value), object["exact"][key] = its exact text.
void put_number(nlohmann::json& object, const std::string& key, const Rational& value);
// The same for a list: object[key] = [numbers], object["exact"][key] = [exact texts].
void put_numbers(nlohmann::json& object, const std::string& key, const std::vector<Rational>& values);
// The cost point of a symbolic result as {"F": number, ..., "exact": {"F": "1/3", ...}}: every cost in PyTorch's
// and DeepSeek's letters (I, and B = the full backward); in the Zero Bubble paper's, B is the input gradient and
// the full backward (I + W) has no key.
nlohmann::json cost_point_json(const std::array<Rational, kCostVars>& point, Basis basis = Basis::PyTorch);
// The whole part of a memory cap in activations, saturated at INT_MAX (a larger cap never binds).
int whole_activations(const Rational& value);

// prove / refute / formula: --time-limit and --memory-budget (UNKNOWN, exit 3, when they run out) and
// --basis paper|deepseek|pytorch|zero-bubble (the letters of symbolic results and of what the user writes).
void add_budget_options(CLI::App& app, std::optional<double>& time_limit, std::optional<double>& memory_budget);
void add_basis_option(CLI::App& app, std::string& basis);
// The letters --basis names for `family`: "paper" is the family's own paper's (Zero Bubble's for the ZB family,
// DeepSeek's otherwise; proofs/cost_space.hpp paper_basis_of). An unknown name is a UsageError listing the valid ones.
Basis resolve_basis(const std::string& name, const std::string& family);

}  // namespace pp::cli
