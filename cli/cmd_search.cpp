// pipeproof search: the best schedule for a placement, costs and memory cap, with a proven lower bound
// (solver/search.hpp). Exit 0 with a schedule (OPTIMAL or FEASIBLE), 1 when proven infeasible, 3 when
// nothing was found in time.
#include "cli/search_io.hpp"
#include "cli/search_scope.hpp"
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
#include "cli/stop_signal.hpp"
#include "cli/watchdog.hpp"
#include "formats/json_text.hpp"
#include "formats/load.hpp"
#include "model/size_budget.hpp"
#include "model/spelling.hpp"
#include "limits/deadline.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

namespace pp::cli {
namespace {

nlohmann::json certificate_json(const SearchResult& r) {
    nlohmann::json j;
    j["kind"] = r.lower_bound_kind;
    put_number(j, "value", r.units(r.lower_bound));
    j["argument"] = r.lower_bound_argument;
    if (r.infeasible) {
        j["memory_floor"] = r.infeasible->units;
        j["rank"] = r.infeasible->rank;
        return j;
    }
    const LowerBound& a = r.analytic;
    nlohmann::json analytic;
    analytic["kind"] = a.kind;
    put_number(analytic, "value", r.units(a.value * r.quantum));
    if (a.rank >= 0) analytic["rank"] = a.rank;
    if (a.kind == "rank-load") {
        put_number(analytic, "start_threshold", r.units(a.a * r.quantum));
        put_number(analytic, "load", r.units(a.load * r.quantum));
        put_number(analytic, "tail_threshold", r.units(a.b * r.quantum));
        analytic["ops"] = a.count;
    }
    analytic["head_chain"] = a.head_chain;
    analytic["tail_chain"] = a.tail_chain;
    analytic["derivation"] = a.derivation;
    j["analytic"] = analytic;
    nlohmann::json formulas = nlohmann::json::array();
    for (const FormulaBound& f : r.formulas) {
        formulas.push_back({{"formula", f.name},
                            {"equals_lower_bound", f.value * r.quantum == r.lower_bound},
                            {"derivation", f.derivation}});
        put_number(formulas.back(), "value", r.units(f.value * r.quantum));
    }
    j["formulas"] = formulas;
    if (r.proof_bound >= 0) {
        put_number(j, "smt2_query_bound", r.units(r.proof_bound));
        j["smt2_engine"] = r.proof_engine;
    }
    return j;
}

std::string proof_header(const SearchResult& r, const std::string& what) {
    std::string h;
    h += "; pipeproof search: " + what + "\n";
    h += "; Query: is there a schedule whose " + std::string(r.objective == Objective::Span ? "span" : "makespan") +
         " is <= " + format_rational(r.units(r.proof_bound)) + "?  Expected answer: unsat.\n";
    h += "; Time unit of the formula: 1 = " + format_rational(r.units(r.quantum)) +
         " (the gcd of every duration and the latency: as-soon-as-possible schedules start on multiples of it).\n";
    h += "; Encoding: " + r.proof_engine + ". " +
         (r.proof_engine == "time-indexed"
              ? "'X.s.m<=t' is true iff op X (F, I, W) of stage s, micro-batch m (@p: pipeline p) starts at or before t;\n"
                "; a variable outside an op's window [earliest, latest start] is a constant. 'run.*' and 'live.*' are\n"
                "; auxiliaries for the per-rank one-at-a-time and memory cardinality constraints; 'pair.*' chooses\n"
                "; overlapped F&I pairs.\n"
              : r.proof_engine == "critical-path"
              ? "the difference constraints of the longest path behind the bound (every one of them is a constraint\n"
                "; of the full problem, so unsat here means unsat for every schedule).\n"
              : r.proof_engine == "rank-relaxation"
              ? "the one-rank relaxation (solver/rank_relaxation.hpp): only the ops of one rank; 's.X.s.m' is the start\n"
                "; of op X of stage s, micro-batch m, 'o.a<b' orders two of them, 'live.*' counts activations. Each op's\n"
                "; window and each delay 's.b - s.a >= d' (a longest path through ops of other ranks, at least durations)\n"
                "; holds in every schedule whose objective is <= the bound, so unsat here means unsat for every schedule.\n"
              : "'s.X.s.m' is the start of op X of stage s, micro-batch m; 'o.a<b' orders two ops of one rank;\n"
                "; 'live.*' counts activations for the memory cap.\n");
    if (r.proof_engine != "critical-path" && r.proof_engine != "rank-relaxation")
        h += r.proof_plain_windows
             ? "; Windows: longest paths over the precedence constraints written in this file, so they remove no solution.\n"
             : "; Windows: longest paths plus same-rank loads (solver/lower_bound.hpp: every same-rank ancestor of an op runs\n"
               "; before it, one at a time, so start >= a + their total duration for any a below all their earliest starts);\n"
               "; the query with plain longest-path windows was not shown in time.\n" +
                   std::string(r.proof_engine == "disjunctive"
                                   ? "; Idle-budget cuts (solver/rank_budget.hpp), on the ranks where they apply: per op,\n"
                                     "; start - (work of its rank started before it) between the rank's head (+ forced warm-up\n"
                                     "; idle) and bound - load (- forced cool-down idle); implied by those lemmas for every\n"
                                     "; schedule within the bound, not by this file's clauses.\n"
                                   : "");
    h += "; Symmetry breaking: each (stage, kind) runs its micro-batches in order (lossless for identical\n"
         "; micro-batches, proof in solver/search_instance.hpp); with it a memory cap L on a one-stage rank is the\n"
         "; precedence F(s,m) after W(s,m-L).\n";
    h += "; Re-check: z3 " + std::string(r.status == SearchStatus::Optimal ? "optimality.smt2" : "lower_bound.smt2") + "\n";
    return h;
}

// search.json (docs/certificates.md, "Search certificates"): what pipeproof-check re-derives on its own -- the
// schedule file's makespan, and that no schedule of its placement's ops ends below the lower bound.
void write_search_claim(const SearchResult& r, const std::string& file, const SearchProblem& problem) {
    nlohmann::json j;
    j["format"] = "pipeproof search certificate";
    j["version"] = 1;
    j["status"] = json_status(r.status);
    j["objective"] = r.objective == Objective::Span ? "span" : "makespan";
    j["placement"] = placement_name(problem.placement);
    j["schedule"] = "schedule.txt";
    j["pairs_allowed"] = problem.overlap.has_value();
    j["value"] = format_rational(r.units(r.objective == Objective::Span ? r.value : r.makespan));
    j["lower_bound"] = format_rational(r.units(r.lower_bound));
    j["bound_kind"] = r.lower_bound_kind;
    j["bound_argument"] = r.lower_bound_argument;
    std::ofstream(file) << json_text(j, 2) << "\n";
}

void write_proof(const SearchResult& r, const std::string& dir, const SearchProblem& problem) {
    std::filesystem::create_directories(dir);
    const auto path = [&](const std::string& name) { return (std::filesystem::path(dir) / name).string(); };
    nlohmann::json cert = search_result_json(r);
    std::ofstream(path("certificate.json")) << json_text(cert, 2) << "\n";
    std::string readme = "pipeproof search certificate\n\nstatus: " + std::string(search_status_name(r.status)) + "\n";
    if (r.schedule) {
        save_schedule(*r.schedule, path("schedule.txt"), FileFormat::Native);
        readme += "schedule.txt: the schedule found; re-check it with\n  pipeproof verify schedule.txt && pipeproof simulate schedule.txt\n";
    }
    readme += "certificate.json: the lower bound and its argument (kind, numbers, the chains of ops behind them).\n";
    if (r.schedule) {
        write_search_claim(r, path("search.json"), problem);
        readme += "search.json: the claim (the schedule's makespan, the lower bound) for the independent checker:\n"
                  "  pipeproof-check " + dir + "    # re-times schedule.txt and re-derives the bound on its own\n";
    }
    if (!r.proof_smt2.empty()) {
        const std::string name = r.proof_bound + r.quantum >= r.value && r.status == SearchStatus::Optimal
                                     ? "optimality.smt2"
                                     : "lower_bound.smt2";
        std::ofstream(path(name)) << proof_header(r, "P=" + std::to_string(problem.placement.ranks) + " M=" +
                                                          std::to_string(problem.placement.total_microbatches()) +
                                                          " costs " + format_costs(problem.costs) +
                                                          (problem.memory_limit ? " memory-limit " + format_rational(*problem.memory_limit) : "") +
                                                          (problem.activations == ActivationModel{} ? ""
                                                           : " activation-sizes " + format_activation_sizes(problem.activations)))
                                  << r.proof_smt2;
        readme += name + ": the SMT-LIB2 query \"value <= " + format_rational(r.units(r.proof_bound)) +
                  "\"; re-check with a stock z3 (Debian package z3):\n  z3 " + name + "    # prints: unsat\n";
    } else {
        readme += "No SMT-LIB2 file: the lower bound is the analytic argument in certificate.json.\n";
    }
    std::ofstream(path("README.txt")) << readme;
}

// Seconds the watchdog leaves the search, after its hard deadline or a stop request, to write its own answer.
constexpr double kSearchAnswerGrace = 5;

// A step that ignores the stop request and the deadline, for the tests of the watchdog only: with
// PIPEPROOF_TEST_STALL_SECONDS=S the search sleeps S seconds after it returned, before it answers.
void stall_for_tests() {
    if (const char* text = std::getenv("PIPEPROOF_TEST_STALL_SECONDS"))
        std::this_thread::sleep_for(std::chrono::duration<double>(std::strtod(text, nullptr)));
}

struct SearchCommand {
    std::optional<int> ranks, microbatches;
    std::string placement = "1f1b";
    std::optional<std::string> costs, memory, overlap;
    std::vector<std::string> stage_costs;
    std::string objective = "makespan";
    double time_limit = 60;
    std::optional<std::string> output, proof_dir, format;
    std::string engine = "auto";
    unsigned seed = 0;
    bool json = false, no_generators = false, no_symmetry = false, quiet = false, periodic = false;
    double progress_interval = 2;
    std::string units = "stage";  // --units
    CLI::Option* units_option = nullptr;
    TimeUnitInput time_unit;      // --time-unit: named in the output and the JSON
    mutable std::string units_line = "stage (costs and cap per stage, as given)";

    std::optional<std::string> activation_sizes;  // --activation-sizes F=..,I=..
    std::optional<std::string> layout, layer_sizes;  // --layout, --layer-sizes: uneven stages
    std::vector<std::string> layer_costs;            // --layer-costs
    // With --layout, the schedule -o writes holds the order and one decoder layer's costs and sizes, so that
    // `verify/simulate FILE --costs .. --layout ..` re-derives exactly what was searched (the proof directory keeps
    // the per-block costs and sizes searched, so that it reads on its own).
    mutable std::optional<Costs> layout_file_costs;
    mutable ActivationModel layout_file_activations;
    ChunkInput chunks;  // issue 11: op costs derived from chunk costs; --overlap chunk / chunk-FI = the derived F&B / F&I pair cost

    int run() {
        const auto started = Clock::now();  // the time limit covers reading and generating warm starts too
        const StopOnSignal stop;
        // The backstop: should a step ignore the stop request or the hard deadline, the answer is still written.
        start_search_watchdog(time_limit, hard_stop_grace(time_limit) + kSearchAnswerGrace, kSearchAnswerGrace, json);
        if (const auto names = placement_list(placement)) return run_scope(*names, started, stop);
        std::vector<WarmStart> starts;
        // --overlap chunk: F&B pairs at the F&B cost derived from --chunk-costs; chunk-FI: F&I pairs at the derived F&I cost.
        const bool chunk_fb = overlap && *overlap == "chunk", chunk_fi = overlap && *overlap == "chunk-FI";
        std::optional<ChunkSpec> file_chunks;  // a --placement FILE's `chunks` line: its costs, like every other field
        SearchProblem problem = search_problem_from(placement, ranks, microbatches, costs, memory,
                                                    chunk_fb || chunk_fi ? std::nullopt : overlap, objective, &starts,
                                                    stage_costs, &file_chunks);
        if (activation_sizes) {  // over the file's `activation-sizes`, as in verify
            try {
                problem.activations = parse_activation_sizes(*activation_sizes);
            } catch (const CostSyntaxError& e) {
                throw UsageError("--activation-sizes: " + e.message);
            }
        }
        apply_layout(problem);
        if ((chunk_fb || chunk_fi) && !chunks.chunk_costs && !file_chunks)
            throw UsageError("--overlap " + *overlap + " needs --chunk-costs (or a --placement file with a 'chunks' line)");
        std::optional<ChunkTable> chunk_table;
        Schedule chunk_source;  // what ChunkInput reads a file's chunk costs from
        chunk_source.chunks = file_chunks;
        if (chunks.given() || file_chunks)
            chunk_table = chunks.resolve(chunk_source, costs.has_value() || !stage_costs.empty());
        if (chunk_table) {
            const Costs derived = chunk_table->costs();
            problem.costs.base = derived.base;
            problem.costs.comm = derived.comm;
            if (chunk_fb) {
                problem.overlap = derived.base.FB;
                problem.pair_kind = PairKind::ForwardBackward;
            } else if (chunk_fi) {
                problem.overlap = derived.base.FI;
                problem.pair_kind = PairKind::ForwardInput;
            }
        }
        const Rational share = apply_units(problem, chunk_table.has_value());
        require_positive_durations(problem);
        if (output) check_output_before_search(problem);
        problem.symmetry_breaking = !no_symmetry;
        SearchOptions options = search_options(started, stop);
        if (!no_generators) {
            // Generating stops once the limit has run out (the search then answers with what it established).
            const limits::ScopedDeadline scope(limits::Deadline::after(time_limit));
            for (auto& w : generator_warm_starts(problem.placement)) starts.push_back(std::move(w));
        }
        options.warm_starts = std::move(starts);

        SearchResult r = search(problem, options);
        if (r.schedule && chunk_table) {
            // The schedule carries the chunk costs it was found under (not their derived op costs), so `simulate`
            // of the written file re-derives the same costs and prints the exposed all-to-all.
            r.schedule->chunks = ChunkSpec{chunk_table->chunk, chunk_table->pattern, {}};
            r.schedule->costs.reset();
        }
        if (r.schedule && output) {
            Schedule written = *r.schedule;
            if (layout_file_costs) {  // the order with one decoder layer's costs: --layout re-derives the rest
                written.costs = layout_file_costs;
                written.memory_limit.reset();
                if (layout_file_activations == ActivationModel{}) written.activation_sizes.reset();
                else written.activation_sizes = layout_file_activations;
                std::cerr << fmt::format("note: --layout: {} holds the order and one decoder layer's costs; re-check it "
                                         "with the same --costs and --layout{}\n",
                                         *output, problem.memory_limit ? fmt::format(" (verify --memory-limit {})",
                                                                                     format_rational(*problem.memory_limit))
                                                                       : std::string());
            }
            write_schedule_output(written, *output, parse_optional_format(format));
        }
        if (proof_dir) write_proof(r, *proof_dir, problem);
        stall_for_tests();
        if (!claim_answer()) for (;;) pause();  // the watchdog is writing its answer and ends the process
        if (json) {
            nlohmann::json j = search_result_json(r);
            put_search_instance(j, problem);
            put_units(j, units_line);
            j["time_unit"] = time_unit.json();
            put_number(j, "stage_share", share);
            const std::vector<std::string> searched{placement_name(problem.placement)};
            j["scope"] = {{"searched", searched},
                          {"optimal_over", r.status == SearchStatus::Optimal ? searched : std::vector<std::string>{}}};
            if (r.schedule && !output) j["schedule"] = render_schedule(*r.schedule, FileFormat::Native);
            if (output && r.schedule) j["schedule_file"] = *output;
            if (proof_dir) j["proof_dir"] = *proof_dir;
            if (r.schedule && chunk_table) {
                const ChunkExposure e = exposure_per_rank(*r.schedule, *chunk_table);
                put_numbers(j, "exposed_comm_per_rank", e.exposed);
                put_numbers(j, "network_comm_per_rank", e.network);
                j["chunks"] = chunk_table_json(*chunk_table);
            }
            std::cout << json_text(j, 2) << "\n";
        } else {
            print_text(r, problem, chunk_table ? &*chunk_table : nullptr);
        }
        if (r.status == SearchStatus::Infeasible) return kViolations;
        if (!r.schedule) return kUndecided;
        return kOk;
    }

    SearchOptions search_options(Clock::time_point started, const StopOnSignal& stop) const {
        SearchOptions options;
        options.time_limit = time_limit;
        options.started = started;
        options.seed = seed;
        options.want_proof = proof_dir.has_value();
        options.periodic = periodic;
        options.engine = engine == "time-indexed" ? SearchEngine::TimeIndexed
                         : engine == "disjunctive" ? SearchEngine::Disjunctive
                         : engine == "none"        ? SearchEngine::None
                                                   : SearchEngine::Auto;
        if (!quiet) {
            options.progress = [](const SearchProgress& p) { std::cerr << format_progress(p) << std::endl; };
            options.progress_interval = progress_interval;
        }
        options.stop = stop.flag();
        return options;
    }

    // Several placements (`--placement any` or a list): compared in a rank's share of the model, so the
    // options that are per stage or per placement are refused rather than reinterpreted.
    int run_scope(const std::vector<std::string>& names, Clock::time_point started, const StopOnSignal& stop) const {
        const auto refuse = [&](bool given, const std::string& what) {
            if (given)
                throw UsageError(what + " is per placement; search one placement (--placement 1f1b, v, interleaved:V or "
                                        "dualpipe) to use it, not '" + placement + "'");
        };
        refuse(units_option && units_option->count() > 0 && units == "stage",
               "--units stage (several placements compare in rank units: a V stage is half a rank's model)");
        refuse(!stage_costs.empty(), "--stage-costs");
        refuse(overlap.has_value(), "--overlap");
        refuse(activation_sizes.has_value(), "--activation-sizes");
        refuse(chunks.given(), "--chunk-costs");
        refuse(layout.has_value(), "--layout");
        if (!ranks || !microbatches) throw UsageError("search --placement " + placement + " needs -P and -M");
        ScopeRequest request;
        request.placements = names;
        request.any = to_lower(placement) == "any";
        request.ranks = *ranks;
        request.microbatches = *microbatches;
        request.costs = costs;
        request.memory = memory;
        request.output = output;
        request.format = parse_optional_format(format);
        request.proof_dir = proof_dir;
        request.objective = objective;
        request.symmetry_breaking = !no_symmetry;
        request.no_generators = no_generators;
        request.json = json;
        request.time_unit = time_unit.json();
        if (output) require_writable(*output, "-o");
        return run_search_scope(request, search_options(started, stop));
    }

    // --units rank: the costs and cap given are those of a 1/P share of the model; each stage runs at its share
    // P / blocks of them (a V stage at half) and holds that share of a 1/P stash, so the cap in stage
    // activations is cap / share. What is searched, printed and written is in stage units. Returns the share.
    Rational apply_units(SearchProblem& problem, bool chunk_costs) const {
        if (units != "rank") return Rational(1);
        if (!costs && !chunk_costs && std::filesystem::exists(placement))
            throw UsageError("--units rank scales the costs given by --costs or --chunk-costs; a --placement file's costs are "
                             "per stage (give --costs, or drop --units rank)");
        const Rational share = scale_to_rank_units(problem);
        units_line = fmt::format(
            "rank (each of the {} stages runs at {} of the given costs{}; what is printed and written is per stage)",
            problem.placement.blocks(), format_rational(share),
            problem.memory_limit ? fmt::format(", the cap is {} stage activations", format_rational(*problem.memory_limit)) : "");
        return share;
    }

    // --layout: each block runs at its layers' summed costs and each stage stashes its layers' size. The exact
    // encodings and bounds count one stash size for every stage, so under a memory cap the stages must stash alike
    // (the cap is then in decoder-layer stashes); without a cap the found schedule's peaks are verified per stage.
    void apply_layout(SearchProblem& problem) const {
        CostInput input;
        input.costs = costs;
        input.stage_costs = stage_costs;
        input.layout = layout;
        input.layer_costs = layer_costs;
        input.layer_sizes = layer_sizes;
        const auto resolved = input.resolved_layout();  // refuses --layer-* without --layout, and a bad layout
        if (!resolved) return;
        if (std::filesystem::exists(placement))
            throw UsageError("--layout applies to a placement searched from -P and -M; --placement " + placement +
                             " takes its costs, limit and sizes from the file");
        if (units == "rank") throw UsageError("--layout gives each block its layers' own costs; --units rank does not apply");
        if (chunks.given()) throw UsageError("--layout with --chunk-costs: give the layers' op costs (--costs, --layer-costs)");
        if (problem.overlap)
            throw UsageError("search with --layout does not take F&B pairs (FB or --overlap): a pair's cost would differ per block");
        Schedule shape;
        shape.placement = problem.placement;
        problem.costs = input.resolve(shape);  // checks that the layout has one block per model block
        const auto stash = layout_stage_stash(problem.placement, *resolved);
        std::vector<std::string> sizes;
        bool alike = true;
        for (const auto& pipeline : stash)
            for (const Rational& size : pipeline) {
                sizes.push_back(format_rational(size));
                alike = alike && size == stash.front().front();
            }
        layout_file_costs = Costs{resolved->layers.costs[static_cast<int>(LayerKind::Decoder)], {}, resolved->comm};
        layout_file_activations = problem.activations;  // per decoder layer, as --activation-sizes gave them
        if (alike && stash.front().front() == Rational(0) && problem.memory_limit)
            throw UsageError("every stage of this layout stashes nothing (--layer-sizes), so --memory-limit has nothing to count");
        if (alike && stash.front().front() > Rational(0)) {
            problem.activations.forward_alloc *= stash.front().front();
            problem.activations.input_grad_free *= stash.front().front();
        } else if (problem.memory_limit) {
            throw UsageError(fmt::format("search counts one stash size for every stage under --memory-limit, and this layout's "
                                         "stages stash {} decoder layers: drop --memory-limit (the schedule found is then "
                                         "verified with each stage's own stash) or give a layout whose stages stash alike",
                                         fmt::join(sizes, ", ")));
        } else {
            problem.activations.stage_scale = stash;
        }
        units_line = fmt::format("stage, each block its layers' sum under --layout '{}' (costs per decoder layer{})", *layout,
                                 problem.memory_limit ? "; the cap in decoder-layer stashes" : "");
    }

    // A search can run for minutes: a result it could not write would be lost, so the output is checked first.
    void check_output_before_search(const SearchProblem& problem) const {
        const FileFormat chosen = parse_optional_format(format).value_or(format_from_name(*output));
        if (chosen == FileFormat::TorchCsv && problem.placement.pipeline_count() > 1)
            throw UsageError(fmt::format("-o {}: PyTorch's CSV format holds one pipeline and this placement has {}; write "
                                         "native text (.txt) or JSON (.json)",
                                         *output, problem.placement.pipeline_count()));
        require_writable(*output, "-o");
    }

    void print_text(const SearchResult& r, const SearchProblem& problem, const ChunkTable* chunk_table) const {
        const char* what = r.objective == Objective::Span ? "span" : "makespan";
        std::cout << "status: " << search_status_name(r.status);
        if (r.status == SearchStatus::Optimal || r.status == SearchStatus::Feasible)
            std::cout << " for placement " << placement_name(problem.placement)
                      << " only (other placements were not searched: --placement any searches 1f1b, v, interleaved:2..4 "
                         "and dualpipe and names the best)";
        std::cout << "\n";
        Schedule shape;
        shape.placement = problem.placement;
        std::cout << fmt::format("instance: {}; objective {}; memory limit {}\n", shape_text(shape), what,
                                 problem.memory_limit ? format_rational(*problem.memory_limit) : "none");
        std::cout << "units: " << units_line << (time_unit.name() ? "; times in " + *time_unit.name() : "") << "\n";
        if (r.stopped) std::cout << "stopped: on request (SIGINT/SIGTERM) before the time limit\n";
        if (r.status == SearchStatus::Infeasible) {
            std::cout << "reason: " << r.lower_bound_argument << "\n";
        } else if (r.schedule) {
            std::cout << what << ": " << format_rational(r.units(r.value)) << "  (simulator; makespan "
                      << format_rational(r.units(r.makespan)) << ")\n";
            std::cout << "lower bound: " << format_rational(r.units(r.lower_bound)) << "  (" << r.lower_bound_kind << ")\n";
            const Rational gap = r.units(r.value - r.lower_bound);
            std::cout << "gap: " << format_rational(gap);
            if (r.lower_bound > 0)
                std::cout << fmt::format("  ({:.3f} %)", 100.0 * static_cast<double>(r.value - r.lower_bound) /
                                                             static_cast<double>(r.lower_bound));
            std::cout << "\nfrom: " << r.origin << "\n";
            std::cout << "argument: " << r.lower_bound_argument << "\n";
            if (r.mirror_bound >= 0)
                std::cout << "mirror-symmetric: none below " << format_rational(r.units(r.mirror_bound))
                          << (r.mirror_bound == r.value ? " (this schedule is the best of them)" : "") << ": "
                          << r.mirror_argument << "\n";
        }
        if (r.periodic && r.periodic->found) {
            const PeriodicBlock& b = *r.periodic;
            std::cout << "periodic block: period " << format_rational(r.units(b.period * r.quantum)) << " per micro-batch, "
                      << (Rational(b.period) == b.bound ? "throughput-optimal" : "above the throughput bound")
                      << " (bound " << format_rational(b.bound * Rational(r.quantum) / Rational(r.scale.ticks_per_unit))
                      << ": " << b.bound_argument << ")\n";
            int ranks = 0;
            for (const auto& c : b.classes) ranks = std::max(ranks, c.rank + 1);
            std::istringstream word(periodic_word(b, ranks));
            for (std::string line; std::getline(word, line);) std::cout << "  " << line << "\n";
        }
        std::cout << fmt::format("time: {:.2f} s\n", r.seconds);
        if (!quiet)
            for (const auto& line : r.log) std::cout << "  " << line << "\n";
        if (r.schedule && chunk_table) std::cout << exposure_text(*r.schedule, *chunk_table);
        if (r.schedule && !output) std::cout << "\n" << render_schedule(*r.schedule, FileFormat::Native);
    }
};

}  // namespace

namespace {

// The kind of the pairs a schedule holds (nullopt: none); a file mixing F&B and F&I pairs is refused.
std::optional<PairKind> pairs_in(const Schedule& s, const std::string& file) {
    std::optional<PairKind> kind;
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots) {
            if (!slot.is_pair()) continue;
            const PairKind k = slot.ops[1].kind == OpKind::I ? PairKind::ForwardInput : PairKind::ForwardBackward;
            if (kind && *kind != k)
                throw UsageError("--placement " + file + ": the file pairs F with B in some slots and with I in others; "
                                 "search forms one kind of pair (--overlap FB= or FI=)");
            kind = k;
        }
    return kind;
}

// The one pair cost of the costs (FB of the base and of every block), nullopt when none is given.
std::optional<Rational> uniform_pair_cost(const Costs& costs) {
    std::optional<Rational> fb = costs.base.FB;
    for (const auto& [block, c] : costs.per_block) {
        if (c.FB == fb) continue;
        throw UsageError("search needs one F&B cost for every block (FB differs on block " + std::to_string(block) +
                         "); give it with --overlap FB=..");
    }
    return fb;
}

}  // namespace

void write_search_proof(const SearchResult& r, const std::string& dir, const SearchProblem& problem) {
    write_proof(r, dir, problem);
}

Rational scale_to_rank_units(SearchProblem& problem) {
    const Rational share = stage_share(problem.placement);
    problem.costs = scaled_costs(problem.costs, share);
    if (problem.overlap) *problem.overlap *= share;
    if (problem.memory_limit) *problem.memory_limit /= share;
    return share;
}

void require_positive_durations(const SearchProblem& problem) {
    for (int block = 0; block < std::max(problem.placement.blocks(), 1); ++block)
        for (OpKind kind : {OpKind::F, OpKind::I, OpKind::W})
            if (problem.costs.duration(kind, block) <= Rational(0))
                throw UsageError(fmt::format("search needs a positive duration for every op: {} costs {}{}", kind_letter(kind),
                                             format_rational(problem.costs.duration(kind, block)),
                                             problem.placement.blocks() > 1 ? fmt::format(" on block {}", block) : ""));
}

SearchProblem search_problem_from(const std::string& placement, std::optional<int> ranks, std::optional<int> microbatches,
                                  const std::optional<std::string>& costs, const std::optional<std::string>& memory,
                                  const std::optional<std::string>& overlap, const std::string& objective,
                                  std::vector<WarmStart>* file_start, const std::vector<std::string>& stage_costs,
                                  std::optional<ChunkSpec>* file_chunks) {
    SearchProblem problem;
    problem.objective = objective == "span" ? Objective::Span : Objective::Makespan;
    Schedule base;  // the costs (and pairs) the command line starts from: the file's, or none
    std::optional<PairKind> file_pairs;
    if (is_placement_name(placement)) {
        if (!ranks || !microbatches) throw UsageError("search --placement " + placement + " needs -P and -M");
        try {
            problem.placement = placement_from_name(placement, *ranks, *microbatches);
            problem.placement.validate();  // within the stages a pipeline can hold, too
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        require_placement_size(problem.placement);  // SizeLimitError: exit 2 with the estimate
        require_search_size(problem.placement);
    } else {
        if (!std::filesystem::exists(placement))
            throw UsageError("--placement: '" + placement + "' is neither 1f1b, v, interleaved:V, dualpipe nor a schedule file");
        Schedule s = load_schedule(placement, std::nullopt);
        if (s.segments > 1)
            throw UsageError(placement + fmt::format(": its micro-batches are cut into {} sequence segments, which search does "
                                                     "not model yet (verify, simulate, show and compare time it)", s.segments));
        require_search_size(s.placement);
        problem.placement = s.placement;
        problem.memory_limit = s.memory_limit;  // exact, as the file gives it
        problem.activations = s.activation_sizes.value_or(ActivationModel{});
        file_pairs = pairs_in(s, placement);
        base.costs = s.costs;
        if (s.chunks && !file_chunks && !costs)
            throw UsageError(placement + ": its costs are chunk costs (a 'chunks' line), which this command does not derive; "
                             "give --costs");
        if (file_chunks) *file_chunks = s.chunks;
        if (file_start) file_start->push_back({"file:" + placement, std::move(s)});
    }
    // The same cost syntax as every other command: --costs over the file's costs, then --stage-costs.
    CostInput input;
    input.costs = costs;
    input.stage_costs = stage_costs;
    base.placement = problem.placement;  // so that --stage-costs names only blocks that exist
    problem.costs = input.resolve(base);
    if (memory && *memory != "none") {
        const auto value = parse_rational(*memory);
        if (!value) throw UsageError("--memory-limit expects a number of activations (exact: 7.5 or 15/2) or none, got '" + *memory + "'");
        problem.memory_limit = *value;
    } else if (memory) {
        problem.memory_limit.reset();
    }
    // Pairs: --overlap FB=x (F with a full backward, DeepSeek's F&B) or FI=x (F with an input-gradient I);
    // else an FB cost in the costs (from --costs or the file) allows F&B pairs, or the kind of pair the
    // file holds.
    if (overlap) {
        const std::string& text = *overlap;
        const bool fb = text.rfind("FB=", 0) == 0, fi = text.rfind("FI=", 0) == 0;
        const auto value = fb || fi ? parse_rational(text.substr(3)) : std::nullopt;
        if (!value || *value <= Rational(0))
            throw UsageError("--overlap expects FB=<duration> (an F with a full backward B, DeepSeek's F&B) or "
                             "FI=<duration> (an F with an input-gradient I; W runs on its own), got '" + text + "'");
        problem.overlap = *value;
        problem.pair_kind = fb ? PairKind::ForwardBackward : PairKind::ForwardInput;
    } else if (const auto fb = uniform_pair_cost(problem.costs)) {
        if (*fb <= Rational(0)) throw UsageError("the F&B cost FB must be positive");
        problem.overlap = *fb;
        problem.pair_kind = file_pairs.value_or(PairKind::ForwardBackward);
    }
    return problem;
}

// The steady state: period per micro-batch, the throughput bound and its argument, the block as a word.
nlohmann::json periodic_json(const SearchResult& r) {
    const PeriodicBlock& b = *r.periodic;
    nlohmann::json j;
    j["found"] = b.found;
    put_number(j, "throughput_bound", b.bound * Rational(r.quantum) / Rational(r.scale.ticks_per_unit));
    j["throughput_bound_argument"] = b.bound_argument;
    if (!b.found) {
        j["reason"] = b.reason;
        return j;
    }
    put_number(j, "period", r.units(b.period * r.quantum));
    j["throughput_optimal"] = Rational(b.period) == b.bound;
    j["live_peak"] = b.live_peak;
    j["anchored_rank"] = b.anchored_rank;
    int ranks = 0;
    for (const auto& c : b.classes) ranks = std::max(ranks, c.rank + 1);
    j["word"] = periodic_word(b, ranks);
    if (r.periodic_value >= 0) put_number(j, "repeated_value", r.units(r.periodic_value));
    return j;
}

void put_search_instance(nlohmann::json& out, const SearchProblem& problem) {
    Schedule shape;
    shape.placement = problem.placement;
    put_instance(out, shape);
    out.erase("inferred");
    put_memory_limit(out, problem.memory_limit);
    out["objective"] = problem.objective == Objective::Span ? "span" : "makespan";
    out["costs"] = format_costs(problem.costs);
}

nlohmann::json search_result_json(const SearchResult& r) {
    nlohmann::json j;
    j["status"] = json_status(r.status);
    j["objective"] = r.objective == Objective::Span ? "span" : "makespan";
    j["seconds"] = std::round(r.seconds * 1000) / 1000;
    j["stopped"] = r.stopped;
    if (r.mirror_bound >= 0) {
        nlohmann::json m;
        put_number(m, "none_below", r.units(r.mirror_bound));
        m["argument"] = r.mirror_argument;
        j["mirror_symmetric"] = m;
    }
    if (r.schedule) {
        put_number(j, "makespan", r.units(r.makespan));
        if (r.objective == Objective::Span) put_number(j, "span", r.units(r.value));
        put_number(j, "value", r.units(r.value));
        put_number(j, "simulator_span", r.units(r.simulator_span));
        put_number(j, "lower_bound", r.units(r.lower_bound));
        put_number(j, "gap", r.units(r.value - r.lower_bound));
        j["gap_fraction"] = r.lower_bound > 0 ? static_cast<double>(r.value - r.lower_bound) / static_cast<double>(r.lower_bound) : 0.0;
        j["origin"] = r.origin;
    } else {
        j["makespan"] = nullptr;
        if (r.status == SearchStatus::Infeasible) j["lower_bound"] = nullptr;
        else put_number(j, "lower_bound", r.units(r.lower_bound));
    }
    j["lower_bound_certificate"] = certificate_json(r);
    j["tasks"] = r.tasks;
    put_number(j, "time_quantum", r.units(r.quantum));  // the encodings' grid step, in cost units
    if (r.greedy_value >= 0) {
        j["greedy"] = {{"rules", r.greedy_rules}};
        put_number(j["greedy"], "value", r.units(r.greedy_value));
    }
    if (r.warm_start_value >= 0) {
        j["best_generator"] = {{"origin", r.best_warm_start}};
        put_number(j["best_generator"], "value", r.units(r.warm_start_value));
    }
    nlohmann::json calls = nlohmann::json::array();
    for (const auto& c : r.calls) {
        calls.push_back({{"answer", z3_answer_name(c.answer)}, {"engine", c.engine},
                         {"variables", c.variables}, {"constraints", c.constraints},
                         {"seconds", std::round((c.build_seconds + c.solve_seconds) * 1000) / 1000}, {"note", c.reason}});
        put_number(calls.back(), "bound", r.units(c.bound));
    }
    j["z3_calls"] = calls;
    if (r.periodic) j["periodic"] = periodic_json(r);
    j["log"] = r.log;
    return j;
}

Runner add_search(CLI::App& app) {
    auto cmd = std::make_shared<SearchCommand>();
    auto* sub = app.add_subcommand("search", "optimal schedule search: minimum makespan (or span) under a memory cap, with a proof");
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batches (total)")->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("--placement", cmd->placement,
                    "1f1b (one stage per rank), v (2 stages per rank, V map), interleaved:V (loop map), dualpipe "
                    "(bidirectional), a comma-separated list of them, any (all of 1f1b, v, interleaved:2..4, dualpipe: "
                    "the best of them, in rank units), or a schedule FILE (its placement, costs and memory limit)");
    cmd->time_unit.add_option(*sub);
    sub->add_option("--costs", cmd->costs,
                    "durations F=..,I=..,W=..,comm=.. (exact: 1.75 or 7/4); default F=I=W=1, comm=0; FB=.. allows F&B pairs");
    sub->add_option("--stage-costs", cmd->stage_costs, "per-block override BLOCK:F=..,I=..,W=.. (repeatable)");
    sub->add_option("--memory-limit", cmd->memory,
                    "activations per rank (one unit = one stage's stash of one micro-batch; exact, e.g. 7.5), or none");
    sub->add_option("--activation-sizes", cmd->activation_sizes,
                    "what F allocates and I releases, in --memory-limit's units (W releases the rest): F=1,I=0 (default, whole "
                    "stashes); the Zero Bubble paper's model is F=1,I=1-M_W/M_B, e.g. F=1,I=83/131 for its 1.5B model");
    sub->add_option("--overlap", cmd->overlap,
                    "FB=..: an F and a full backward B (I and W fused) on one rank may run as one unit of this cost "
                    "(DeepSeek's F&B); FI=..: an F and an input-gradient I (W runs on its own); chunk / chunk-FI: the F&B / F&I "
                    "cost derived from --chunk-costs");
    cmd->chunks.add_options(*sub);
    add_layout_options(*sub, cmd->layout, cmd->layer_costs, cmd->layer_sizes);
    sub->add_option("--objective", cmd->objective, "makespan (default) or span (Zero Bubble's per-stage span)")
        ->check(one_of({"makespan", "span"}));
    sub->add_option("--time-limit", cmd->time_limit, "seconds for the whole search (default 60)")->check(CLI::PositiveNumber);
    sub->add_option("-o,--output", cmd->output, "write the schedule found here (format from the extension)");
    sub->add_option("--format", cmd->format, "output format: native, torch-csv or json");
    auto* certificate = sub->add_option("--certificate", cmd->proof_dir,
                                        "write the certificate here: schedule.txt, search.json (re-derived by "
                                        "pipeproof-check DIR), certificate.json and the UNSAT query as SMT-LIB2");
    sub->add_option("--emit-proof", cmd->proof_dir, "the same as --certificate (older spelling)")->excludes(certificate);
    sub->add_option("--engine", cmd->engine, "auto, time-indexed, disjunctive or none (greedy and bounds only)")
        ->check(one_of({"auto", "time-indexed", "disjunctive", "none"}));
    sub->add_option("--seed", cmd->seed, "Z3 random seed");
    sub->add_flag("--no-generators", cmd->no_generators, "do not start from the schedule library");
    sub->add_flag("--periodic", cmd->periodic,
                  "also search the best periodic block (steady state) with its throughput certificate; on by itself "
                  "when no exact encoding fits the whole instance");
    sub->add_flag("--no-symmetry-breaking", cmd->no_symmetry, "search without per-class micro-batch order (slow; for cross-checks)");
    sub->add_flag("--json", cmd->json, "machine-readable output");
    add_units_option(*sub, cmd->units);
    cmd->units_option = sub->get_option("--units");
    sub->add_flag("-q,--quiet", cmd->quiet, "the result only: no progress lines on standard error, no search log");
    sub->add_option("--progress-interval", cmd->progress_interval,
                    "seconds between progress lines when nothing improves (default 2)")
        ->check(CLI::PositiveNumber);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
