#pragma once
// Chunk costs on the command line (issue 11): --chunk-costs KEY=VALUE,... and --pattern NAME on every
// timing command, the chunk table they derive (verifier/chunk_derive.hpp, `best` certified by
// solver/chunk_best_z3.hpp), and the exposed-communication figures added to the timing printouts.
//
// Where chunk costs come from: --chunk-costs, else the schedule file's `chunks` section -- unless --costs
// or --stage-costs give opaque costs (flags win over the file; --costs and --chunk-costs together are a
// usage error). The pattern: --pattern, else the file's, else deepseek. --pattern without chunk costs is a
// usage error. Bad values exit 2 naming the flag and the character, or the file's line:column.
#include "model/schedule.hpp"
#include "verifier/chunk_derive.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pp::cli {

struct ChunkInput {
    std::optional<std::string> chunk_costs;  // --chunk-costs
    std::optional<std::string> pattern;      // --pattern

    void add_options(CLI::App& app);
    // nullopt when no chunk costs apply. `opaque_given`: --costs/--stage-costs were given.
    std::optional<ChunkTable> resolve(const Schedule& schedule, bool opaque_given) const;
    bool given() const { return chunk_costs.has_value() || pattern.has_value(); }
};

// Parsing and derivation with the CLI's error translation (UsageError for flags, InputError for files).
ChunkCosts chunk_costs_from_flag(const std::string& text);
PatternSpec pattern_from_flag(const std::string& text);
ChunkTable derive_for_cli(const ChunkCosts& costs, const PatternSpec& pattern);

// Chunk costs under compare's model-share costs (verifier/compare.hpp): a stage that holds `share` of the 1/P
// model share given runs layers x share layers. When that is a whole number the stage's chunk is derived
// exactly with that many layers (the first ones' costs); otherwise every cost is scaled by the share, as for
// op costs. `given` is what to pass to compare_schedule (it scales by the share again), `exposure` the
// per-rank exposed all-to-all of the stage.
struct StageChunks {
    Costs given;
    ChunkExposure exposure;
    std::string pattern;
    bool exact = true;     // derived with a whole number of layers (or no scaling needed)
    int stage_layers = 0;  // layers per stage when exact
};
StageChunks chunks_at_share(const Schedule& schedule, const ChunkTable& table, bool model_share_costs);

// JSON of one timed slot kind: duration, exposed_comm, network_time, compute_time, components.
nlohmann::json slot_timing_json(const SlotKindTiming& timing);
// The chunk section of a timing printout: costs, pattern, per slot kind duration and exposure.
nlohmann::json chunk_table_json(const ChunkTable& table);
// Adds per rank `exposed_comm`, `network_comm`, `hidden_share` to simulation_json's "ranks", and "chunks".
void add_exposure_json(nlohmann::json& simulation, const Schedule& schedule, const ChunkTable& table);
// The same as text: one line per slot kind, one per rank.
std::string exposure_text(const Schedule& schedule, const ChunkTable& table);
std::string percent_text(const Rational& fraction);

// --chunk-costs symbolic (cli/chunk_symbolic.cpp): the slot formula with its Z3 proofs and the family's
// per-rank exposure, and the counterexample search for claims about exposed communication.
int run_chunk_formula(const std::string& family, int ranks, const std::optional<std::string>& pattern, int layers, bool shared,
                      const std::string& op, const std::string& emit_dir);
int run_chunk_refute(const std::string& claim, const std::string& family, int p_lo, int p_hi,
                     const std::optional<std::pair<int, int>>& m_range, const std::optional<std::string>& pattern, int layers,
                     bool shared, int width, bool json);

}  // namespace pp::cli
