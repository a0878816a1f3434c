// pipeproof prove FAMILY -P p --property bubble-constant|dependencies|deadlock-free|memory-bound
// Statements for every admissible micro-batch count (proofs/prove.hpp, proofs/method.md).
// Exit: 0 PROVED, 1 REFUTED, 3 UNKNOWN, 2 bad input.
#include "cli/commands.hpp"
#include "formats/certificate_json.hpp"
#include "formats/input_error.hpp"
#include "cli/common.hpp"
#include "cli/vocabulary.hpp"
#include "cli/watchdog.hpp"
#include "cli/formula_json.hpp"
#include "formats/json_text.hpp"
#include "render/ascii_gantt.hpp"
#include "proofs/claim.hpp"
#include "proofs/prove.hpp"
#include "proofs/readable.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

nlohmann::json proof_json(const ProofResult& r, Basis basis) {
    nlohmann::json j;
    j["family"] = r.family;
    j["ranks"] = r.ranks;
    j["stages_per_rank"] = optional_json(r.stages_per_rank);
    j["group_size"] = optional_json(r.group_size);
    j["microbatches_from"] = r.m_origin;  // the statement is for every admissible M >= this
    j["step"] = r.step;
    j["statement"] = r.statement;
    j["status"] = r.verdict == Verdict::Proved ? "proved" : r.verdict == Verdict::Refuted ? "refuted" : "unknown";
    // The summary is written in DeepSeek's letters; its bubble is rewritten in the basis (as format_proof does).
    const std::string text = format_proof(r, basis);
    // The summary as format_proof writes it in the basis: the line after "result: ".
    const std::string key = "\nresult: ";
    const size_t at = text.find(key);
    j["result"] = at == std::string::npos ? r.summary : text.substr(at + key.size(), text.find('\n', at + 1) - at - key.size());
    if (!r.missing.empty()) j["missing"] = r.missing;
    j["assumptions"] = r.assumptions;
    for (const auto& o : r.obligations)
        j["obligations"].push_back({{"name", o.name}, {"statement", o.statement}, {"method", o.method},
                                    {"holds", o.holds}, {"seconds", o.seconds}, {"file", o.file}});
    if (r.counterexample) {
        const auto& cx = *r.counterexample;
        nlohmann::json c{{"ranks", cx.ranks}, {"microbatches", cx.microbatches}, {"what", cx.what}};
        if (cx.other_microbatches) c["other_microbatches"] = *cx.other_microbatches;
        if (cx.costs) c["costs"] = cost_point_json(*cx.costs, basis);
        // Batched timing: the kind of refutation ("comm-deadlock", "comm-mismatch": no bubble for any M >=
        // for_every_M_from; "comm-growth": a proved unbounded lower bound) and the recurring witness.
        if (!cx.kind.empty()) c["kind"] = cx.kind;
        if (cx.for_every_m_from) c["for_every_microbatches_from"] = *cx.for_every_m_from;
        if (!cx.witness.empty()) c["witness"] = cx.witness;
        j["counterexample"] = c;
    }
    // One type per field: an exact bubble is a number ("bubble", exact text in "exact"), a symbolic one a
    // formula text ("bubble_formula", in the letters of "basis").
    if (r.bubble_exact) put_number(j, "bubble", *r.bubble_exact);
    if (r.bubble_symbolic) {
        j["bubble_formula"] = r.region ? r.bubble_symbolic->str(*r.region, basis) : r.bubble_symbolic->str(basis);
        j["basis"] = basis_name(basis);
        j["bubble_forms"] = nlohmann::json::array();
        for (const auto& f : r.bubble_symbolic->forms) j["bubble_forms"].push_back(form_json(f, basis));
    }
    if (r.bubble_exact || r.bubble_symbolic) {
        j["constant_from_microbatches"] = r.constant_from_m;
        j["before_microbatches_from"] = nlohmann::json::array();
        for (size_t k = 0; k < r.early_bubbles.size(); ++k) {
            nlohmann::json e{{"microbatches", r.early_bubbles[k].first}};
            if (k < r.early_exact.size()) put_number(e, "bubble", r.early_exact[k]);
            else e["bubble_formula"] = r.bubble_symbolic ? deepseek_text_in(r.early_bubbles[k].second, basis) : r.early_bubbles[k].second;
            j["before_microbatches_from"].push_back(e);
        }
    }
    if (!r.peaks.empty()) {
        put_numbers(j, "peaks", r.peaks);
        put_numbers(j, "peaks_at_microbatches_from", r.peaks_at_origin);
        j["peaks_from_microbatches"] = r.peaks_from_m;  // `peaks` holds for every admissible M from here on
    }
    return j;
}

// --certificate DIR: the directory, and DIR/obligations for the SMT-LIB2 files the proof writes (returned).
std::string prepare_certificate_dir(const std::string& dir) {
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(dir) / "obligations", error);
    if (error) throw UsageError("--certificate " + dir + ": cannot create the directory (" + error.message() + ")");
    std::filesystem::remove(std::filesystem::path(dir) / kCertificateFile, error);  // never a stale one beside new files
    return (std::filesystem::path(dir) / "obligations").string();
}

struct ProveCommand {
    std::string family;
    int ranks = 0;
    std::optional<int> stages_per_rank, group_size, segments, residue;
    std::optional<int> from_m;
    std::string property = "bubble-constant";
    std::optional<std::string> costs;
    std::vector<std::string> stage_costs;
    std::vector<std::string> assume;
    bool symbolic_comm = false;
    std::optional<std::string> memory_bound;
    std::optional<std::string> activation;
    std::optional<std::string> layout, layer_sizes;  // --layout: uneven stages at exact costs
    std::vector<std::string> layer_costs;
    std::string emit;
    std::optional<std::string> certificate_dir;  // --certificate: what the proof rests on, for pipeproof-check
    std::string model = "dataflow";
    bool json = false;
    bool timeline = false;
    ChunkInput chunks;
    std::optional<double> time_limit;     // seconds; UNKNOWN (exit 3) with what was established when it runs out
    std::optional<double> memory_budget;  // MB of resident memory, likewise
    std::string basis = "pytorch";
    std::string units = "stage";

    // The certificate of a PROVED result (DIR/certificate.json beside the obligations); the line the text output ends
    // with. Nothing but the obligations when the verdict is another: there is no proof to certify.
    std::string write_certificate_for(const ProofResult& result, const FamilySpec& spec, const ProveOptions& options) const {
        if (result.verdict != Verdict::Proved)
            return fmt::format("certificate: none (the verdict is {}; {} holds only the obligations written)\n",
                               verdict_name(result.verdict), *certificate_dir);
        Certificate c = finish_certificate(result, spec, options, *certificate_dir);
        c.tool = tool_name();
        c.command = invocation();
        write_certificate(c, *certificate_dir);
        // What pipeproof-check reads: a number past the format's bounds (numerator and denominator at most 2^40) would
        // leave a certificate nobody can check, so it is read back here and removed if it does not read.
        try {
            (void)read_certificate(*certificate_dir);
        } catch (const InputError& e) {
            std::filesystem::remove(std::filesystem::path(*certificate_dir) / "certificate.json");
            throw UsageError(fmt::format("--certificate: the proof holds, but its certificate would not read back ({}: "
                                         "{}), so none is written; smaller activation sizes or costs keep its numbers "
                                         "within the format's 2^40",
                                         e.where(), e.what()));
        }
        return fmt::format("certificate: {} (re-derive it: pipeproof-check {}){}\n", *certificate_dir, *certificate_dir,
                           c.not_carried.empty() ? "" : "; it does not carry every step, so the checker answers NOT CHECKED");
    }

    // Uneven stages: every block at its layers' summed costs and each stage's stash at its layers' share -- exact numbers,
    // so the proof is at exact costs; the placement is read off the family's first admissible instance (every M has it).
    void apply_layout(CostInput& input, const FamilySpec& spec, ProveOptions& options) const {
        if (!costs || *costs == "symbolic")
            throw UsageError("--layout needs exact --costs (one decoder layer's): a layout's blocks sum their layers' "
                             "costs, which symbolic costs cannot name");
        if (chunks.given()) throw UsageError("--layout takes op costs per layer (--costs), not --chunk-costs");
        if (units == "rank") throw UsageError("--layout gives each block its layers' own costs; --units rank does not apply");
        if (find_family(spec.name) && find_family(spec.name)->orders_for_costs)
            throw UsageError(spec.name + " orders for one cost set shared by every stage; --layout gives each block its own");
        input.costs = costs;
        const Schedule sample = spec.generate(spec.m0);
        options.costs = input.resolve(sample);
        options.activations = input.activations(&sample);
    }

    // Seq1F1B: the units are proved as micro-batches at 1/k of the costs and the stash (FamilySpec::segments).
    void per_segment_unit(const FamilySpec& spec, ProveOptions& options) const {
        const Rational share(1, spec.segments);
        if (model == "batched") throw UsageError(spec.name + " with sequence segments: dataflow timing only");
        if (layout || chunks.given() || !stage_costs.empty())
            throw UsageError(spec.name + " with sequence segments: one cost set (--costs), no layout or per-stage costs");
        if (options.costs) options.costs = scaled_op_costs(*options.costs, share);
        if (options.region) {  // the assumptions were stated in a micro-batch's costs
            CostRegion per_unit = with_op_costs_scaled(*options.region, share, " (in a micro-batch's costs)");
            per_unit.finish();  // the image of a pointed cone under a positive scaling: pointed and non-empty still
            options.region = per_unit;
        }
        options.activations = scaled_sizes(options.activations, share);
    }

    // The proved per-unit bubble p in a micro-batch's costs: a unit runs at 1/k of every op cost and comm stays, so
    // bubble(F, I, W, comm) = p(F/k, I/k, W/k, comm) = p(F, I, W, k*comm) / k, every form being linear. The line
    // and JSON member that say so; the proof itself (and its certificate) stays per unit.
    static MaxPoly microbatch_numerator(const MaxPoly& per_unit, int k) {
        MaxPoly numerator;
        for (LinForm form : per_unit.forms) {
            auto& comm = form.c[static_cast<int>(CostVar::comm)];
            comm = checked_mul(comm, k);
            numerator.forms.push_back(form);
        }
        return numerator;
    }
    static std::string microbatch_bubble_text(const MaxPoly& numerator, int k, const CostRegion& region, Basis basis) {
        const std::string text = numerator.str(region, basis);
        return text == "0" ? text : fmt::format("({})/{}", text, k);
    }

    int run() {
        start_budget(time_limit, memory_budget, json, "unknown", "verdict: UNKNOWN");
        std::string why;
        const std::optional<int> k = proof_segments(family, segments);
        auto spec = family_spec(family, ranks, &why, stages_per_rank, group_size, k, residue);
        if (!spec) throw UsageError(why);
        note_default_stages_per_rank(family, ranks, stages_per_rank);
        note_default_group_size(family, ranks, group_size);
        const auto prop = parse_property(property);
        if (!prop) throw UsageError("unknown property '" + property + "'");
        // Only the bubble is a formula in a stage's costs; peaks are restated in rank units, and the order properties
        // read no units.
        const ProofUnits proof_in = proof_units(units, family, ranks, stages_per_rank, *prop != Property::BubbleConstant);
        const std::string& units_line = proof_in.line;
        ProveOptions options;
        options.property = *prop;
        if (from_m && *prop != Property::BubbleConstant) throw UsageError("--from-M applies to bubble-constant only");
        options.from_m = from_m;
        options.model = model == "batched" ? TimingModel::Batched : TimingModel::Dataflow;
        // Only the bubble is timed: the other properties are about the dependency graph, which --model does not change.
        // Under blocking batches a program may deadlock although the graph is acyclic: that is a bubble question.
        if (options.model == TimingModel::Batched && *prop != Property::BubbleConstant)
            throw UsageError("--model batched applies to bubble-constant: " + property +
                             " is about the dependency graph whatever the timing (whether the blocking batches deadlock: "
                             "prove --model batched, the bubble, answers \"no batched timing\" then; one instance: "
                             "verify --comm-model batched)");
        options.emit_dir = emit;
        if (certificate_dir) options.emit_dir = prepare_certificate_dir(*certificate_dir);
        const Basis b = resolve_basis(basis, family);
        CostInput input;
        input.stage_costs = stage_costs;
        input.activation = activation;
        input.layout = layout;
        input.layer_costs = layer_costs;
        input.layer_sizes = layer_sizes;
        options.activations = input.activations();
        // Nothing ignored silently: assumptions cut the symbolic region, which exact costs do not have.
        if (!assume.empty() && (layout || chunks.given() || (costs && *costs != "symbolic")))
            throw UsageError("--assume cuts the symbolic cost region; with exact costs (--costs, --layout, --chunk-costs) "
                             "there is none (drop --assume, or --costs for symbolic costs)");
        if (layout) {
            apply_layout(input, *spec, options);
        } else if (chunks.given()) {  // issue 11: exact op costs derived from chunk costs
            if (costs) throw UsageError("--chunk-costs derives the exact costs: give it or --costs, not both");
            options.costs = chunks.resolve(Schedule{}, !stage_costs.empty())->costs();
        } else if (costs && *costs != "symbolic") {
            input.costs = costs;
            options.costs = input.resolve(Schedule{});
        } else if (!stage_costs.empty()) {
            throw UsageError("--stage-costs needs exact --costs (symbolic costs are uniform across stages)");
        } else {
            CostRegion region = CostRegion::standard(symbolic_comm);
            for (const auto& text : assume) {
                try {
                    for (auto& c : parse_constraints(in_parser_letters(text, b))) region.add(std::move(c));
                } catch (const ClaimError& e) {
                    throw UsageError("--assume: " + e.message);
                }
            }
            try {
                region.finish();
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("cost region: ") + e.what());
            }
            options.region = region;
        }
        // v-zb orders for the costs it runs at: exact costs order it for them, symbolic ones keep its default order.
        if (options.costs)
            order_family_for_costs(*spec, *options.costs,
                                   activation ? std::optional<ActivationModel>(options.activations) : std::nullopt);
        if (spec->segments > 1) per_segment_unit(*spec, options);
        if (memory_bound) {
            auto v = parse_rational(*memory_bound);
            if (!v) throw UsageError("--memory-bound expects a number");
            options.memory_bound = *v / proof_in.share;  // in a stage's stashes, as the prover counts them
        }
        ProofResult result = prove(*spec, options);
        if (spec->segments > 1)
            result.assumptions.insert(result.assumptions.begin(),
                                      segment_units_assumption(spec->segments, "below -- in the statement, the obligations "
                                                                               "and a counterexample --"));
        const std::string certificate_line = certificate_dir ? write_certificate_for(result, *spec, options) : "";
        // The proof counts a stage's stashes; rank units restate the peaks (the proof text keeps its own count).
        std::string rank_peaks;
        if (proof_in.share != Rational(1) && !result.peaks.empty()) {
            for (Rational& p : result.peaks) p *= proof_in.share;
            for (Rational& p : result.peaks_at_origin) p *= proof_in.share;
            std::vector<std::string> values;
            for (const Rational& p : result.peaks) values.push_back(format_rational(p));
            rank_peaks = fmt::format("in rank units (a stage's stash is {} of a rank's): activation peak per rank = [{}] for "
                                     "every M >= {}; the proof below counts a stage's stashes\n",
                                     format_rational(proof_in.share), fmt::join(values, " "), result.peaks_from_m);
        }
        // A refuted peak is told in a stage's stashes, as the proof counts them: say how they convert.
        if (proof_in.share != Rational(1) && *prop == Property::MemoryBound && result.counterexample)
            rank_peaks = fmt::format("in rank units: the counterexample counts a stage's stashes, each {} of a rank's "
                                     "(multiply by {}{})\n",
                                     format_rational(proof_in.share), format_rational(proof_in.share),
                                     memory_bound && options.memory_bound
                                         ? fmt::format("; the bound {} in rank units is {} there", *memory_bound,
                                                       format_rational(*options.memory_bound))
                                         : std::string());
        // The bubble readably: its pieces and the family's published formula, checked on the region (Z3).
        std::optional<ReadableBubble> readable;
        if (result.verdict == Verdict::Proved && result.bubble_symbolic && options.region)
            readable = readable_bubble(spec->name, spec->ranks, spec->stages_per_rank, *result.bubble_symbolic,
                                       *options.region);
        if (json) {
            nlohmann::json j = proof_json(result, b);
            j["segments"] = spec->segments;
            if (spec->segments > 1 && result.bubble_symbolic && options.region) {
                const MaxPoly numerator = microbatch_numerator(*result.bubble_symbolic, spec->segments);
                nlohmann::json forms = nlohmann::json::array();
                for (const auto& f : numerator.forms) forms.push_back(form_json(f, b));
                j["bubble_per_microbatch"] = {
                    {"formula", microbatch_bubble_text(numerator, spec->segments, *options.region, b)},
                    {"divisor", spec->segments},
                    {"forms", forms}};
            }
            if (readable) j["bubble_readable"] = readable_json(*readable, b);
            if (certificate_dir)
                j["certificate"] = result.verdict == Verdict::Proved ? nlohmann::json(*certificate_dir) : nlohmann::json(nullptr);
            put_units(j, units_line);
            std::cout << json_text(j, 2) << "\n";
        } else {
            std::string text = format_proof(result, b);
            if (!rank_peaks.empty()) {  // right after the result line
                const auto at = text.find("\nassumptions");
                text.insert(at == std::string::npos ? text.size() : at + 1, rank_peaks);
            }
            if (readable) {  // right after the result line, before the assumptions and obligations
                const auto at = text.find("\nassumptions");
                text.insert(at == std::string::npos ? text.size() : at + 1, format_readable(*readable, b));
            }
            if (spec->segments > 1 && result.bubble_symbolic && options.region) {
                const auto at = text.find("\nassumptions");
                const MaxPoly numerator = microbatch_numerator(*result.bubble_symbolic, spec->segments);
                text.insert(at == std::string::npos ? text.size() : at + 1,
                            fmt::format("in a micro-batch's costs (each letter a whole micro-batch's, comm as it is): bubble = "
                                        "{}\n",
                                        microbatch_bubble_text(numerator, spec->segments, *options.region, b)));
            }
            std::cout << text << "units: " << units_line << "\n" << certificate_line;
            if (timeline && result.counterexample && result.counterexample->schedule) {
                const Schedule& s = *result.counterexample->schedule;
                const Costs c = result.counterexample->costs ? costs_at(*result.counterexample->costs)
                                                             : options.costs.value_or(Costs{});
                try {
                    std::cout << "\ntimeline of the counterexample (P=" << result.counterexample->ranks
                              << ", M=" << s.placement.total_microbatches() << "):\n"
                              << ascii_gantt(s, simulate(s, c));
                } catch (const SimulationError&) {
                }
            }
        }
        switch (result.verdict) {
            case Verdict::Proved: return kOk;
            case Verdict::Refuted: return kViolations;
            case Verdict::Unknown: return kUndecided;
        }
        return kUndecided;
    }
};

}  // namespace

Runner add_prove(CLI::App& app) {
    auto cmd = std::make_shared<ProveCommand>();
    auto* sub = app.add_subcommand("prove", "prove a property of a schedule family for every micro-batch count");
    sub->add_option("family", cmd->family, "schedule family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->required()->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank,
                    "stages per rank (interleaved-1f1b, zb1p, looped-bfs; default 2)")->check(CLI::Range(1, kMaxStagesPerRank));
    sub->add_option("--group-size", cmd->group_size,
                    std::string(kGroupSizeHelp) + "; the statement is then for the M that are multiples of G")
        ->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("--residue", cmd->residue,
                    "with --group-size G (Megatron's order): the statement for the M with M mod G = this (0, the default, "
                    "or P <= it < G: Megatron's other admissible M)")
        ->check(CLI::Range(0, kMaxMicrobatches));
    sub->add_option("--segments", cmd->segments,
                    "sequence segments per micro-batch k (seq1f1b, default 2; equal segments; the proof is per unit, at 1/k of the "
                    "costs)")
        ->check(CLI::Range(1, kMaxProvedSegments));
    sub->add_option("--from-M", cmd->from_m,
                    "bubble-constant: the statement for every admissible M >= this (default: the least such M0 is "
                    "found and printed)");
    sub->add_option("--property", cmd->property, "bubble-constant | dependencies | deadlock-free | memory-bound")
        ->check(one_of({"bubble-constant", "dependencies", "deadlock-free", "memory-bound"}));
    sub->add_option("--costs", cmd->costs, "exact costs F=..,I=..,W=..,B=..,FB=..,comm=.. or 'symbolic' (default)");
    sub->add_option("--stage-costs", cmd->stage_costs, "per-block override BLOCK:F=..,.. (exact costs only)");
    cmd->chunks.add_options(*sub);
    sub->add_option("--assume", cmd->assume,
                    "extra linear assumption on symbolic costs, e.g. 'FB >= B' or 'I == F' (repeatable; '&&' joins)");
    sub->add_flag("--symbolic-comm", cmd->symbolic_comm, "let comm range over comm >= 0 (default: comm = 0)");
    sub->add_option("--memory-bound", cmd->memory_bound, "memory-bound: the per-rank activation bound to prove");
    sub->add_option("--activation-sizes", cmd->activation, "activation sizes F=..,I=.. (as in verify)");
    add_layout_options(*sub, cmd->layout, cmd->layer_costs, cmd->layer_sizes);
    sub->add_option("--certificate", cmd->certificate_dir,
                    "write what a PROVED rests on into this directory (certificate.json and its SMT-LIB2 obligations), "
                    "for the independent checker: pipeproof-check DIR");
    sub->add_option("--emit-proof,--emit", cmd->emit,
                    "write the SMT-LIB2 obligations into this directory (as search --emit-proof; --emit is the old spelling)");
    sub->add_option("--model", cmd->model, "timing model: dataflow (default) or batched")
        ->check(one_of({"dataflow", "batched"}));
    sub->add_flag("--json", cmd->json, "machine-readable result");
    sub->add_flag("--timeline", cmd->timeline, "draw the counterexample's timeline");
    add_budget_options(*sub, cmd->time_limit, cmd->memory_budget);
    add_basis_option(*sub, cmd->basis);
    add_proof_units_option(*sub, cmd->units);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
