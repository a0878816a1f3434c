// pipeproof refute --claim 'EXPR' FAMILY -P a..b [-M a..b] [--costs symbolic|GRID] [--json]
// Searches for the smallest instance and costs that break a claim (proofs/claim.hpp for the language).
// Exit: 1 counterexample found (the claim is false), 0 the claim holds over the searched space, 3 undecided,
// 2 bad input.
#include "cli/commands.hpp"
#include "cli/chunk_point.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "cli/vocabulary.hpp"
#include "cli/watchdog.hpp"
#include "cli/formula_json.hpp"
#include "formats/json_text.hpp"
#include "render/ascii_gantt.hpp"
#include "proofs/claim.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <limits>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

// "N" or "A..B" with 1 <= A <= B <= most: checked before any work (an empty range would make a vacuous
// HOLDS, a huge -P an instance that cannot be built).
std::pair<int, int> parse_range(const std::string& text, const char* what, long long most) {
    const size_t dots = text.find("..");
    std::pair<long long, long long> range;
    try {
        size_t used = 0;
        const std::string first = text.substr(0, dots);
        range.first = std::stoll(first, &used);
        if (used != first.size()) throw std::invalid_argument(text);
        range.second = range.first;
        if (dots != std::string::npos) {
            const std::string last = text.substr(dots + 2);
            range.second = std::stoll(last, &used);
            if (used != last.size()) throw std::invalid_argument(text);
        }
    } catch (const std::exception&) {
        throw UsageError(std::string(what) + " expects N or A..B, got '" + text + "'");
    }
    if (range.first < 1 || range.second > most)
        throw UsageError(fmt::format("{} {}: each value must lie in 1..{}", what, text, most));
    if (range.first > range.second)
        throw UsageError(fmt::format("{} {}: an empty range (A > B) would make a claim hold over no instance", what, text));
    return {static_cast<int>(range.first), static_cast<int>(range.second)};
}

struct RefuteCommand {
    std::string claim;
    std::string family;
    std::string ranks;
    std::optional<std::string> microbatches;
    std::optional<int> stages_per_rank, group_size, segments;
    std::string costs = "symbolic";
    std::vector<std::string> assume;
    bool symbolic_comm = false;
    std::string model = "dataflow";
    int steps = 3;
    int width = 200;
    bool json = false;
    ChunkInput chunks;
    std::optional<int> chunk_layers;  // --chunk-costs symbolic only (default 1)
    bool shared_expert = false;
    std::optional<double> time_limit;     // seconds; UNKNOWN (exit 3) with what was established when it runs out
    std::optional<double> memory_budget;  // MB of resident memory, likewise
    std::string basis = "pytorch";
    std::string units = "stage";
    std::optional<std::string> layout, layer_sizes;  // --layout: uneven stages, at a grid's exact costs
    std::vector<std::string> layer_costs;

    // Uneven stages: each grid point is one decoder layer's costs, every block runs at its layers' sum and every
    // stage stashes its layers' share (the claim's costs and peaks in those units). One P: a layout has one block
    // count.
    void apply_layout(RefuteOptions& options) const {
        if (options.symbolic)
            throw UsageError("--layout needs a --costs grid (one decoder layer's costs): a layout's blocks sum their "
                             "layers' costs, which the symbolic region cannot name");
        if (options.p_lo != options.p_hi) throw UsageError("--layout fixes the number of model blocks: give one P");
        if (chunks.given()) throw UsageError("--layout takes op costs per layer (--costs), not --chunk-costs");
        if (units == "rank") throw UsageError("--layout gives each block its layers' own costs; --units rank does not apply");
        if (family_takes_segments(family))
            throw UsageError(family + " with sequence segments: one cost set per unit, no layout");
        if (const ScheduleFamily* known = find_family(family); known && known->orders_for_costs)
            throw UsageError(family + " orders for one cost set shared by every stage; --layout gives each block its own");
        for (const char* pair : {"FB", "FI", "F&B", "F&I"})
            if (options.grid.find(pair) != std::string::npos)
                throw UsageError("--layout: a pair runs at the sum of its two ops' layer costs, so the grid gives no FB "
                                 "or FI (F&B, F&I)");
        std::string why;
        const auto spec = family_spec(family, options.p_lo, &why, stages_per_rank, group_size);
        if (!spec) throw UsageError(why);
        CostInput input;
        input.layout = layout;
        input.layer_costs = layer_costs;
        input.layer_sizes = layer_sizes;
        input.costs = "F=1,I=1,W=1";  // what parses the layout; each grid point then gives the decoder layer's costs
        const Schedule sample = spec->generate(spec->m0);
        (void)input.layout_costs_at(sample, OpCosts{}, Rational(0));  // the layout's blocks against the placement, now
        options.activations = input.activations(&sample);
        options.point_costs = [input, sample](const CostPoint& point) {
            const Costs at = costs_at(point);
            OpCosts decoder = at.base;
            decoder.FB.reset();  // a pair runs at its two ops' layer sums (the grid names none: refused above)
            return input.layout_costs_at(sample, decoder, at.comm);
        };
    }

    // The flags `pipeproof prove` needs to re-run the proofs this refute relies on (RefuteOptions::prove_flags): the
    // layout's, and over the symbolic region its assumptions as prove reads them (a stage's op costs, where the claim's
    // are a rank's; a micro-batch's for sequence segments, which prove divides itself). Grid points add their costs.
    std::string prove_flags(const RefuteOptions& options, const Rational& claim_share, const std::vector<std::string>& texts,
                            const std::vector<CostConstraint>& assumed) const {
        std::string out;
        if (layout) out += " --layout " + shell_quoted(*layout);
        for (const std::string& costs : layer_costs) out += " --layer-costs " + shell_quoted(costs);
        if (layer_sizes) out += " --layer-sizes " + shell_quoted(*layer_sizes);
        if (!options.symbolic) return out;
        if (claim_share == Rational(1)) return out + region_flags(symbolic_comm, texts);
        CostRegion stated;
        stated.constraints = assumed;
        std::vector<std::string> restated;
        for (const CostConstraint& c : with_op_costs_scaled(stated, claim_share).constraints)
            restated.push_back(constraint_text(c));
        return out + region_flags(symbolic_comm, restated);
    }

    int run() {
        start_budget(time_limit, memory_budget, json, kStatusUnknown, "UNDECIDED");
        // The claim, the assumptions and a cost grid are read in the letters of --basis (default: the family's
        // own paper's), so the Zero Bubble paper's (p-1)(F+B-W) means F + I - W for zb-h1.
        const Basis b = resolve_basis(basis, family);
        std::string claim_read;
        try {
            claim_read = in_parser_letters(claim, b);
            if (costs != "symbolic") costs = in_parser_letters(costs, b);
        } catch (const ClaimError& e) {
            throw UsageError("claim: " + e.message);
        }
        RefuteOptions options;
        std::optional<Costs> chunk_point;  // the op costs derived from exact --chunk-costs
        std::tie(options.p_lo, options.p_hi) = parse_range(ranks, "-P", kMaxRanks);
        if (microbatches) options.m_range = parse_range(*microbatches, "-M", std::numeric_limits<int>::max());
        options.stages_per_rank = stages_per_rank;
        options.group_size = group_size;
        note_default_stages_per_rank(family, options.p_lo, stages_per_rank);
        note_default_group_size(family, options.p_lo, group_size);
        if (!group_size && options.p_lo != options.p_hi && resolved_group_size(family, options.p_lo, std::nullopt))
            throw UsageError("group-interleaved over a range of P needs --group-size: its default ceil(P/2) changes with P");
        const std::optional<int> G = resolved_group_size(family, options.p_lo, group_size);
        const ProofUnits claim_units = proof_units(units, family, options.p_lo, stages_per_rank, true);
        const std::string& units_line = claim_units.line;
        options.rank_share = claim_units.share;
        // Seq1F1B: the prover works on segment units at 1/k of a micro-batch's costs and stash, which is the same
        // restatement as rank units: the claim's costs and peaks stay a micro-batch's.
        options.segments = proof_segments(family, segments);
        if (options.segments) options.rank_share = options.rank_share / Rational(*options.segments);
        // Nothing ignored silently: each of these flags applies to one kind of costs only.
        const bool chunk_symbolic = chunks.chunk_costs && *chunks.chunk_costs == "symbolic";
        if (!chunk_symbolic && (chunk_layers || shared_expert))
            throw UsageError("--chunk-layers and --shared-expert apply to --chunk-costs symbolic");
        if (symbolic_comm && (costs != "symbolic" || chunks.given()))
            throw UsageError("--symbolic-comm lets comm range over the symbolic cost region; a --costs grid or chunk costs "
                             "name comm themselves (comm=.. in the grid)");
        if (chunk_symbolic)
            return run_chunk_refute(claim_read, family, options.p_lo, options.p_hi, options.m_range, chunks.pattern,
                                    chunk_layers.value_or(1), shared_expert, width, json);
        if (chunks.given()) {  // issue 11: the single cost point derived from chunk costs
            if (costs != "symbolic") throw UsageError("--chunk-costs derives the costs: give it or a --costs grid, not both");
            chunk_point = chunks.resolve(Schedule{}, false)->costs();
            require_one_pair_cost(family, options.p_lo, options.p_hi, *chunk_point, "refute");
            const Costs& c = *chunk_point;
            costs = fmt::format("F={},I={},W={},B={},FB={},comm={}", format_rational(c.base.F), format_rational(c.base.I),
                                format_rational(c.base.W), format_rational(c.base.full_backward()),
                                format_rational(c.base.FB.value_or(c.base.F + c.base.full_backward())), format_rational(c.comm));
        }
        options.symbolic = costs == "symbolic";
        options.grid = options.symbolic ? "" : costs;
        options.model = model == "batched" ? TimingModel::Batched : TimingModel::Dataflow;
        options.default_steps = steps;
        // A grid names its comm values itself; the region then only keeps its points physical (FB <= F + B, ...).
        options.region = CostRegion::standard(symbolic_comm || !options.symbolic);
        if (chunk_point) options.region = derived_point_region(*chunk_point);  // B may be < I + W (cli/chunk_point.hpp)
        if (layout || !layer_costs.empty() || layer_sizes) {
            if (!layout) throw UsageError("--layer-costs and --layer-sizes apply to --layout, which is not given");
            apply_layout(options);
        }
        RefuteResult r;
        try {
            std::vector<std::string> texts;  // in PyTorch's letters
            std::vector<CostConstraint> assumed;
            for (const auto& text : assume) {
                texts.push_back(in_parser_letters(text, b));
                for (auto& c : parse_constraints(texts.back())) {
                    assumed.push_back(c);
                    options.region.add(std::move(c));
                }
            }
            options.prove_flags = prove_flags(options, claim_units.share, texts, assumed);
            r = refute(family, claim_read, options);
            if (layout)
                r.notes.insert(r.notes.begin(), "--layout: the grid's and the claim's costs are one decoder layer's (a "
                                                "block runs at its layers' sum), peaks count decoder-layer stashes");
        } catch (const ClaimError& e) {
            // The chunk quantities (issue 11) have their own evaluator, reached only by --chunk-costs symbolic;
            // exact --chunk-costs give one cost point for the schedule-level names above.
            std::string hint;
            for (const char* name : {"exposed_comm", "network_comm", "pair_exposed", "pair_time"})
                if (e.message.find("unknown name '" + std::string(name)) != std::string::npos)
                    hint = std::string("; ") + name + " is a chunk quantity: refute it with --chunk-costs symbolic";
            throw UsageError("claim: " + e.message + hint);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        // The proved bubble (symbolic costs, at the largest P searched), readably: pieces and the published formula.
        std::optional<ReadableBubble> readable;
        if (r.bubble && r.bubble_region && options.rank_share == Rational(1))  // a formula in a stage's costs
            readable = readable_bubble(r.family, r.bubble_P, options.stages_per_rank, *r.bubble, *r.bubble_region);
        if (json) {
            nlohmann::json j{{"status", r.status == RefuteResult::Undecided ? kStatusUnknown : refute_status_name(r.status)}, {"claim", claim}, {"family", r.family},
                             {"stages_per_rank", optional_json(resolved_stages_per_rank(family, options.p_lo, stages_per_rank))}, {"group_size", optional_json(G)}, {"segments", options.segments.value_or(1)},
                             {"basis", basis_name(b)}, {"claim_in_pytorch_letters", r.claim}};
            put_units(j, units_line);
            if (readable) {
                j["bubble_readable"] = readable_json(*readable, b);
                j["bubble_readable"]["ranks"] = r.bubble_P;
                j["bubble_readable"]["valid_from_microbatches"] = r.bubble_from_m;
            }
            if (r.status == RefuteResult::Refuted) {
                nlohmann::json c{{"ranks", r.P}, {"microbatches", r.M}};
                c["costs"] = cost_point_json(*r.costs, b);
                for (const auto& v : r.values) c["values"][v.text] = v.value;
                j["counterexample"] = c;
            } else {
                j["counterexample"] = nullptr;
            }
            j["searched"] = {{"instances", r.instances}, {"cost_points", r.cost_points}, {"solver_calls", r.solver_calls}};
            j["notes"] = r.notes;
            std::cout << json_text(j, 2) << "\n";
        } else {
            std::cout << "claim: " << claim << "\n";
            if (claim_read != claim)  // the notations clash on B: say how the claim was read
                std::cout << "letters: " << basis_legend(b) << "; read as: " << r.claim << " (PyTorch's letters)\n";
            const auto V = resolved_stages_per_rank(family, options.p_lo, stages_per_rank);
            std::cout << "family: " << r.family << (V ? fmt::format("  V={}", *V) : "")
                      << (G ? fmt::format("  G={}", *G) : "") << "\n";
            if (r.status == RefuteResult::Refuted) {
                std::string costs_line;
                for (int i = 0; i < kCostVars; ++i)  // in the basis' letters (no full-backward letter in the ZB paper's)
                    if (b != Basis::ZeroBubble || i != static_cast<int>(CostVar::B))
                        costs_line += fmt::format("{}{}={}", costs_line.empty() ? "" : ",", cost_var_name(i, b),
                                                  format_rational((*r.costs)[i]));
                std::cout << "REFUTED: counterexample at P=" << r.P << ", M=" << r.M << ", costs " << costs_line << "\n";
                for (const auto& v : r.values) std::cout << "  " << v.text << " = " << v.value << "\n";
                std::cout << "(re-checked by exact simulation)\n";
                if (r.schedule && r.schedule_costs) {
                    try {
                        GanttOptions g;
                        g.max_width = width;
                        g.title = fmt::format("counterexample timeline: {}, P = {}, M = {}, costs {}{}", r.family, r.P, r.M,
                                              costs_line,
                                              options.segments
                                                  ? fmt::format(" (a micro-batch's; drawn as its {} segment units, numbered "
                                                                "m*k + j, each at 1/{} of them, the peaks counting unit "
                                                                "stashes)",
                                                                *options.segments, *options.segments)
                                              : options.rank_share == Rational(1)
                                                  ? ""
                                                  : fmt::format(" (rank units; the peaks drawn count a stage's stashes, {} "
                                                                "of a rank's)",
                                                                format_rational(options.rank_share)));
                        // The stash sizes the claim's peaks count (a layout's per stage), so the drawn peaks agree.
                        std::cout << "\n"
                                  << ascii_gantt(*r.schedule, simulate(*r.schedule, *r.schedule_costs, options.activations), g);
                    } catch (const SimulationError& e) {
                        std::cout << "(no timeline: " << e.what() << ")\n";
                    }
                }
            } else {
                std::cout << (r.status == RefuteResult::Holds ? "HOLDS" : "UNDECIDED")
                          << fmt::format(": no counterexample among {} instance(s){}\n", r.instances,
                                         options.symbolic ? (r.status == RefuteResult::Holds
                                                                 ? ", every cost point of the region (Z3: unsat per instance)"
                                                                 : ", searched over the region by Z3 (see the notes)")
                                                          : fmt::format(", {} cost point(s)", r.cost_points));
            }
            for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
            if (readable)
                std::cout << fmt::format("the bubble at P={}, for every admissible M >= {} (proved):\n", r.bubble_P,
                                         r.bubble_from_m)
                          << format_readable(*readable, b);
            std::cout << "units: " << units_line << "\n";
            if (options.symbolic) {
                std::cout << "cost region:";
                for (const auto& c : options.region.describe()) std::cout << " [" << c << "]";
                std::cout << "\n";
            }
        }
        switch (r.status) {
            case RefuteResult::Refuted: return kViolations;
            case RefuteResult::Holds: return kOk;
            case RefuteResult::Undecided: return kUndecided;
        }
        return kUndecided;
    }
};

}  // namespace

Runner add_refute(CLI::App& app) {
    auto cmd = std::make_shared<RefuteCommand>();
    auto* sub = app.add_subcommand("refute", "search for the smallest instance and costs that break a claim");
    add_layout_options(*sub, cmd->layout, cmd->layer_costs, cmd->layer_sizes);
    sub->add_option("--claim", cmd->claim, "the claim, e.g. 'bubble == (P/2-1)*(FB+B-3*W)' or 'bubble(M+2) > bubble(M)'")
        ->required();
    sub->add_option("family", cmd->family, "schedule family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks: N or A..B")->required();
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batches: N or A..B (default: every admissible M)");
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank,
                    "stages per rank (interleaved-1f1b, zb1p, looped-bfs; default 2)")->check(CLI::Range(1, kMaxStagesPerRank));
    sub->add_option("--group-size", cmd->group_size,
                    std::string(kGroupSizeHelp) + "; only the M that are multiples of G are searched")
        ->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("--segments", cmd->segments,
                    "sequence segments per micro-batch k (seq1f1b, default 2; equal segments; the claim's costs and "
                    "peaks are a micro-batch's)")
        ->check(CLI::Range(1, kMaxProvedSegments));
    sub->add_option("--costs", cmd->costs,
                    "'symbolic' (default: every cost point of the region, by Z3) or a grid such as "
                    "'F=1,I=1..2@0.5,W=0.5|1,FB=2..3@0.5' (B defaults to I+W, FB to F+B)");
    sub->add_option("--assume", cmd->assume, "extra linear assumption on symbolic costs (repeatable)");
    cmd->chunks.add_options(*sub);
    sub->add_option("--chunk-layers", cmd->chunk_layers, "--chunk-costs symbolic: layers per chunk (default 1)");
    sub->add_flag("--shared-expert", cmd->shared_expert, "--chunk-costs symbolic: include the shared expert's costs");
    sub->add_flag("--symbolic-comm", cmd->symbolic_comm, "let comm range over comm >= 0 (default: comm = 0)");
    sub->add_option("--model", cmd->model, "timing model: dataflow (default) or batched (grids only)")
        ->check(one_of({"dataflow", "batched"}));
    sub->add_option("--steps", cmd->steps, "admissible M values per P searched when M is unbounded and no proof closes it");
    sub->add_option("--width", cmd->width, "timeline width");
    sub->add_flag("--json", cmd->json, "machine-readable result");
    add_budget_options(*sub, cmd->time_limit, cmd->memory_budget);
    add_basis_option(*sub, cmd->basis);
    add_proof_units_option(*sub, cmd->units);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
