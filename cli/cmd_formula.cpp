// pipeproof formula FAMILY -P p: each rank's idle time as a piecewise-linear function of the costs, valid for
// every admissible M from M0 on, with the region of cost space of each piece (proofs/formula.hpp).
// Exit: 0 formula derived (periodicity proved), 3 no formula / not proved, 2 bad input.
#include "cli/commands.hpp"
#include "cli/chunk_point.hpp"
#include "cli/common.hpp"
#include "cli/vocabulary.hpp"
#include "cli/formula_json.hpp"
#include "cli/watchdog.hpp"
#include "formats/json_text.hpp"
#include "proofs/claim.hpp"
#include "proofs/formula.hpp"
#include "proofs/readable.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct FormulaCommand {
    std::string family;
    int ranks = 0;
    std::optional<int> stages_per_rank, group_size, segments;
    std::vector<std::string> assume;
    bool symbolic_comm = false;
    bool zb_basis = false;
    ChunkInput chunks;
    std::optional<int> chunk_layers;  // this and the next three: --chunk-costs symbolic only
    bool shared_expert = false;
    std::optional<std::string> op;
    std::string emit;
    std::string basis = "pytorch";
    std::string units = "stage";
    bool json = false;
    std::optional<double> time_limit;     // seconds; UNKNOWN (exit 3) with what was established when it runs out
    std::optional<double> memory_budget;  // MB of resident memory, likewise

    int run() {
        start_budget(time_limit, memory_budget, json, "unknown", "formula: UNKNOWN");
        std::string why;
        const std::optional<int> k = proof_segments(family, segments);
        const auto spec = family_spec(family, ranks, &why, stages_per_rank, group_size, k);
        if (!spec) throw UsageError(why);
        if (spec->segments > 1 && chunks.given())
            throw UsageError(spec->name + " with sequence segments: the formulas are in op costs (--costs letters), not "
                                          "--chunk-costs");
        note_default_stages_per_rank(family, ranks, stages_per_rank);
        note_default_group_size(family, ranks, group_size);
        const std::string units_line = proof_units(units, family, ranks, stages_per_rank, false).line;
        // Nothing ignored silently: each of these flags applies to one kind of costs only.
        const bool chunk_symbolic = chunks.chunk_costs && *chunks.chunk_costs == "symbolic";
        if (!chunk_symbolic && (chunk_layers || shared_expert || op || !emit.empty()))
            throw UsageError("--chunk-layers, --shared-expert, --op and --emit apply to --chunk-costs symbolic");
        if (symbolic_comm && chunks.given())
            throw UsageError("--symbolic-comm lets comm range over the symbolic cost region; chunk costs derive comm");
        if (chunk_symbolic) {
            // Its output is text only; in JSON mode that is said as a JSON error rather than printed as text.
            if (json) throw UsageError("formula --chunk-costs symbolic has no --json output yet (its formulas are text only)");
            return run_chunk_formula(family, ranks, chunks.pattern, chunk_layers.value_or(1), shared_expert,
                                     op.value_or("pair"), emit);
        }
        const Basis letters = zb_basis ? Basis::PyTorch : resolve_basis(basis, family);  // of --assume and the output
        CostRegion region = CostRegion::standard(symbolic_comm);
        if (chunks.given()) {
            // Issue 11: the costs derived from chunk costs, as the ray through that point (cli/chunk_point.hpp).
            const Costs c = chunks.resolve(Schedule{}, false)->costs();
            require_one_pair_cost(family, ranks, ranks, c, "formula");
            region = derived_point_region(c);
        }
        std::vector<std::string> assumed;  // in PyTorch's letters
        try {
            for (const auto& text : assume) {
                assumed.push_back(in_parser_letters(text, letters));
                for (auto& c : parse_constraints(assumed.back())) region.add(std::move(c));
            }
            region.finish();
            // Seq1F1B: the formulas are a segment unit's, which runs at 1/k of the op costs the assumptions state.
            if (spec->segments > 1) {
                region = with_op_costs_scaled(region, Rational(1, spec->segments), " (in a micro-batch's costs)");
                region.finish();
            }
        } catch (const ClaimError& e) {
            throw UsageError("--assume: " + e.message);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("cost region: ") + e.what());
        }
        Basis b = letters;
        if (!region.b_is_i_plus_w) b = Basis::PyTorch;  // I = B - W only where it holds (e.g. not at a chunk point)
        // For the prove run the output cites: the region, or the chunk costs' exact point (prove takes no
        // assumptions there, and needs none: the point is in the region or the formula is empty).
        std::string flags = chunks.given() ? "" : region_flags(symbolic_comm, assumed);
        if (chunks.chunk_costs) flags += " --chunk-costs " + shell_quoted(*chunks.chunk_costs);
        if (chunks.pattern) flags += " --pattern " + shell_quoted(*chunks.pattern);
        FormulaResult result = derive_formula(*spec, region, flags);
        if (spec->segments > 1)
            result.proof.assumptions.insert(result.proof.assumptions.begin(),
                                            segment_units_assumption(spec->segments, "in the formulas below"));
        std::optional<PublishedMatch> published;
        if (result.missing.empty() && result.proof.bubble_symbolic)
            published = match_published(spec->name, spec->ranks, spec->stages_per_rank, *result.proof.bubble_symbolic,
                                        region);
        if (json) {
            nlohmann::json j{{"family", spec->name}, {"ranks", spec->ranks},
                             {"stages_per_rank", optional_json(spec->stages_per_rank)},
                             {"group_size", optional_json(spec->group_size)}, {"segments", spec->segments},
                             {"basis", basis_name(b)},
                             {"assumptions", result.proof.assumptions},
                             {"proof", verdict_name(result.proof.verdict)}};
            put_units(j, units_line);
            // The one verdict every document carries (issue 31): proved only when every obligation went through.
            j["status"] = result.missing.empty() && result.proof.verdict == Verdict::Proved ? "proved" : "unknown";
            if (!result.missing.empty()) {
                j["missing"] = result.missing;
            } else {
                j["per_rank"] = nlohmann::json::array();
                for (const auto& rf : result.ranks) {
                    nlohmann::json r{{"rank", rf.rank}, {"valid_from_microbatches", rf.valid_from_m}};
                    for (const auto& pw : rf.by_residue) r["idle_by_residue"].push_back(pieces_json(pw, b));
                    for (const auto& [m, v] : rf.exceptions) r["exceptions"].push_back({{"microbatches", m}, {"idle", v.str(b)}});
                    j["per_rank"].push_back(r);
                }
                j["bubble_readable"] = {{"valid_from_microbatches", result.bubble_from_m}, {"pieces", pieces_json(result.bubble, b)}};
                if (published) j["bubble_readable"]["published"] = published_json(*published, b);
            }
            std::cout << json_text(j, 2) << "\n";
        } else {
            std::cout << format_formula(result, b);
            if (published) std::cout << "    " << format_published(*published, b) << "\n";
            std::cout << "units: " << units_line << "\n";
        }
        return result.missing.empty() && result.proof.verdict == Verdict::Proved ? kOk : kUndecided;
    }
};

}  // namespace

Runner add_formula(CLI::App& app) {
    auto cmd = std::make_shared<FormulaCommand>();
    auto* sub = app.add_subcommand("formula", "each rank's idle time as a piecewise-linear formula in the costs, for every M");
    refuse_layout_options(*sub, "its formulas are in one cost set per stage");
    sub->add_option("family", cmd->family, "schedule family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->required()->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank,
                    "stages per rank (interleaved-1f1b, zb1p, looped-bfs; default 2)")->check(CLI::Range(1, kMaxStagesPerRank));
    sub->add_option("--group-size", cmd->group_size,
                    std::string(kGroupSizeHelp) + "; the formulas are then for the M that are multiples of G")
        ->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("--segments", cmd->segments,
                    "sequence segments per micro-batch k (seq1f1b, default 2; equal segments): the formulas are a segment "
                    "unit's, at 1/k of the costs")
        ->check(CLI::Range(1, kMaxProvedSegments));
    sub->add_option("--assume", cmd->assume, "extra linear assumption on the costs, e.g. 'FB >= B' (repeatable)");
    sub->add_flag("--symbolic-comm", cmd->symbolic_comm, "let comm range over comm >= 0 (default: comm = 0)");
    add_basis_option(*sub, cmd->basis);
    add_proof_units_option(*sub, cmd->units);
    sub->add_flag("--pytorch-basis", cmd->zb_basis, "the same as --basis pytorch (old spelling)");
    sub->add_flag("--json", cmd->json, "machine-readable formulas: each piece's value and its region as a list of inequalities");
    cmd->chunks.add_options(*sub);
    sub->add_option("--chunk-layers", cmd->chunk_layers, "--chunk-costs symbolic: layers per chunk (default 1)");
    sub->add_flag("--shared-expert", cmd->shared_expert, "--chunk-costs symbolic: include the shared expert's costs");
    sub->add_option("--op", cmd->op, "--chunk-costs symbolic: the slot, F, I, W, B, pair (default) or pair-fi");
    sub->add_option("--emit", cmd->emit, "--chunk-costs symbolic: write the Z3 obligations as SMT-LIB2 here");
    add_budget_options(*sub, cmd->time_limit, cmd->memory_budget);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
