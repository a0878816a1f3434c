// pipeproof sweep: `search` (or `compare`: the schedule library against the lower bound, no solver) over a
// grid of (placement, P, M, costs, memory cap), one JSON line per instance. --shard K/N keeps the
// instances whose index i (counting from 0 in grid order) has i mod N == K, so a job array can split a
// sweep: `pipeproof sweep ... --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`, or with GNU parallel
// `parallel pipeproof sweep ... --shard {}/4 ::: 0 1 2 3`.
#include "cli/search_io.hpp"
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
#include "cli/errors.hpp"
#include "cli/stop_signal.hpp"
#include "formats/json_text.hpp"
#include "limits/deadline.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

// A line that could not be answered says why as every error document does: `errors`, one entry.
void put_error(nlohmann::json& line, const std::string& kind, const std::string& message) {
    line["status"] = kStatusError;
    line["errors"] = error_json(kBadInput, {ErrorEntry(kind, message)})["errors"];
}

struct GridPoint {
    std::string placement;
    int ranks = 0, microbatches = 0;
    std::string costs;
    std::string memory;  // "none" or a number
};

// The schedule library against the lower bound (no solver): what `compare` reports for one instance.
nlohmann::json compare_line(const SearchProblem& problem) {
    nlohmann::json j;
    if (problem.memory_limit && *problem.memory_limit < memory_floor(problem.placement).units) {
        j["status"] = json_status(SearchStatus::Infeasible);
        return j;
    }
    const Instance inst = build_instance(problem);
    const TaskBounds bounds = compute_task_bounds(inst, true);
    Ticks lower = analytic_lower_bound(inst, bounds).value;
    for (const FormulaBound& f : formula_bounds(inst)) lower = std::max(lower, f.value);
    put_number(j, "lower_bound", inst.to_units(lower));
    nlohmann::json rows = nlohmann::json::array();  // as compare's rows: one object per schedule, in library order
    for (WarmStart& w : generator_warm_starts(problem.placement)) {
        if (!same_placement(w.schedule.placement, problem.placement)) continue;
        const Evaluation e = evaluate_schedule(inst, w.schedule);
        const std::string name = w.origin.substr(w.origin.find(':') + 1);
        if (!e.ok) {
            rows.push_back({{"family", name}, {"valid", false}, {"reason", e.problem}});
            continue;
        }
        const double gap = lower > 0 ? static_cast<double>(e.value - inst.to_ticks(lower)) / static_cast<double>(inst.to_ticks(lower)) : 0.0;
        nlohmann::json entry = {{"family", name}, {"valid", true}, {"gap_fraction", gap}};
        put_number(entry, "value", inst.scale.to_units(e.value));
        rows.push_back(std::move(entry));
    }
    j["rows"] = std::move(rows);
    j["status"] = kStatusOk;
    return j;
}

struct SweepCommand {
    std::string mode = "search";
    std::vector<std::string> placements = {"1f1b"};
    std::vector<int> ranks, microbatches;
    std::vector<std::string> costs = {"F=1,I=1,W=1,comm=0"};
    std::vector<std::string> memories = {"none"};
    std::string objective = "makespan";
    std::string units = "stage";  // --units, as search takes it
    TimeUnitInput time_unit;      // --time-unit: named on every line
    std::optional<double> time_limit;  // the whole sweep (this shard)
    double instance_time_limit = 60;   // one search
    std::string shard = "0/1";
    std::string output = "-";

    // Exit: 0 when every instance got an answer, 3 when some are UNKNOWN (the search ran out of time, or the
    // --time-limit of the sweep ran out before the instance was reached), 2 when an instance is bad input.
    int run() {
        const StopOnSignal stop;  // SIGINT/SIGTERM: the running instance answers with what it has, the rest are not reached
        int k = 0, n = 1;
        if (std::sscanf(shard.c_str(), "%d/%d", &k, &n) != 2 || n < 1 || k < 0 || k >= n)
            throw UsageError("--shard expects K/N with 0 <= K < N, got '" + shard + "'");
        std::ofstream file;
        if (output != "-") {
            file.open(output);
            if (!file) throw UsageError("cannot write '" + output + "'");
        }
        std::ostream& out = output == "-" ? std::cout : file;
        const auto start = std::chrono::steady_clock::now();
        auto remaining = [&]() -> std::optional<double> {
            if (!time_limit) return std::nullopt;
            return *time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        };
        size_t index = 0, unknown = 0, errors = 0, lines = 0;
        for (const auto& placement : placements)
            for (int P : ranks)
                for (int M : microbatches)
                    for (const auto& c : costs)
                        for (const auto& memory : memories) {
                            const size_t i = index++;
                            if (static_cast<int>(i % static_cast<size_t>(n)) != k) continue;
                            const nlohmann::json j = line(i, {placement, P, M, c, memory}, remaining());
                            // (a const operator[] here drew a false -Warray-bounds from GCC 12's inliner)
                            const std::string status = j.value("status", std::string());
                            unknown += status == kStatusUnknown;
                            errors += status == kStatusError;
                            ++lines;
                            out << json_text(j) << "\n" << std::flush;
                        }
        if (unknown || errors)
            std::cerr << fmt::format("sweep: {} instances, {} unknown, {} error\n", lines, unknown, errors);
        return errors ? kBadInput : unknown ? kUndecided : kOk;
    }

    // `left`: seconds left of the sweep's --time-limit (nullopt: no limit).
    nlohmann::json line(size_t index, const GridPoint& g, std::optional<double> left) const {
        nlohmann::json j;
        j["index"] = index;
        j["mode"] = mode;
        j["placement"] = g.placement;
        j["ranks"] = g.ranks;
        j["microbatches"] = g.microbatches;
        j["costs"] = g.costs;
        j["time_unit"] = time_unit.json();
        j["memory_limit"] = nullptr;  // the number, once the instance is read (a cap that is not one is the line's error)
        j["objective"] = objective;
        if (limits::stop_requested()) {
            j["status"] = kStatusUnknown;
            j["reason"] = "not reached: stopped by a signal";
            return j;
        }
        if (left && *left <= 0) {
            j["status"] = kStatusUnknown;
            j["reason"] = fmt::format("not reached: the sweep's --time-limit of {} s ran out", *time_limit);
            return j;
        }
        const double seconds = left ? std::min(instance_time_limit, *left) : instance_time_limit;
        // The instance's limit covers everything it does: building the problem, warm starts, the search (which
        // keeps its own, with its grace), the comparison.
        const limits::ScopedDeadline scope(limits::Deadline::after(seconds + (mode == "compare" ? 0 : hard_stop_grace(seconds))));
        const auto started = std::chrono::steady_clock::now();
        try {
            SearchProblem problem =
                search_problem_from(g.placement, g.ranks, g.microbatches, g.costs, g.memory, std::nullopt, objective, nullptr);
            if (units == "rank") scale_to_rank_units(problem);
            put_search_instance(j, problem);
            put_units(j, units == "rank" ? "rank (each stage at its share of the given costs and cap)" : "stage");
            require_positive_durations(problem);
            if (mode == "compare") {
                j.update(compare_line(problem), true);  // merged: "exact" keeps memory_limit
                return j;
            }
            SearchOptions options;
            options.started = started;
            options.time_limit = seconds;
            options.stop = &limits::stop_flag();
            options.warm_starts = generator_warm_starts(problem.placement);
            nlohmann::json r = search_result_json(search(problem, options));
            r.erase("log");
            r.erase("z3_calls");
            const nlohmann::json cert = r["lower_bound_certificate"];
            r["lower_bound_certificate"] = {{"kind", cert["kind"]}, {"argument", cert["argument"]}};
            j.update(r, true);  // merged: "exact" keeps memory_limit
        } catch (const limits::Expired& e) {
            j["status"] = kStatusUnknown;
            j["reason"] = e.what + fmt::format(" (instance limit {} s)", seconds);
        } catch (const UsageError& e) {
            put_error(j, "usage", e.what());
        } catch (const std::exception& e) {
            put_error(j, "input", e.what());
        }
        return j;
    }
};

}  // namespace

Runner add_sweep(CLI::App& app) {
    auto cmd = std::make_shared<SweepCommand>();
    auto* sub = app.add_subcommand("sweep", "run search (or compare the schedule library) over a grid of instances, one JSON line each");
    refuse_layout_options(*sub, "its grid takes one cost set per instance");
    sub->add_option("--mode", cmd->mode, "search (default) or compare (library schedules against the lower bound, no solver)")
        ->check(one_of({"search", "compare"}));
    sub->add_option("--placement", cmd->placements, "placements: 1f1b, v, interleaved:V, dualpipe (comma-separated or repeated)")
        ->delimiter(',');
    sub->add_option("-P,--ranks", cmd->ranks, "rank counts (comma-separated or repeated)")
        ->delimiter(',')
        ->required()
        ->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batch counts (comma-separated or repeated)")
        ->delimiter(',')
        ->required()
        ->check(CLI::Range(1, kMaxMicrobatches));
    cmd->time_unit.add_option(*sub);
    sub->add_option("--costs", cmd->costs, "a cost set F=..,I=..,W=..,comm=..; repeat the option for several");
    sub->add_option("--memory-limit", cmd->memories, "caps per rank, 'none' for unlimited (comma-separated or repeated)")->delimiter(',');
    add_units_option(*sub, cmd->units);
    sub->add_option("--objective", cmd->objective, "makespan or span")->check(one_of({"makespan", "span"}));
    sub->add_option("--time-limit", cmd->time_limit,
                    "seconds for the whole sweep (this shard); instances not reached in time are UNKNOWN (exit 3)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--instance-time-limit", cmd->instance_time_limit, "seconds per search (default 60)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--shard", cmd->shard, "K/N: only instances with index mod N == K (K from 0)");
    sub->add_option("-o,--output", cmd->output, "JSON lines file (default: standard output)");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
