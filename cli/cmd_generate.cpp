// pipeproof list / generate NAME -P -M [-V] [--costs ...]: the schedule library.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "formats/json_text.hpp"
#include "model/cost_presets.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct GenerateCommand {
    std::string name;
    int ranks = 0, microbatches = 0;
    std::optional<int> stages_per_rank, group_size, segments;
    std::string output = "-";
    std::optional<std::string> format;
    std::string era = "current";
    std::string line_end = "lf";
    std::optional<std::string> costs, activation_sizes, memory_limit;

    int run() {
        const ScheduleFamily* family = find_family(name);
        if (!family) throw UsageError(unknown_family_message(name));
        GenerateParams params{ranks, microbatches, stages_per_rank};
        params.group_size = group_size;
        params.segments = segments;
        try {
            if (costs) params.costs = parse_costs(*costs);
        } catch (const CostSyntaxError& e) {
            throw UsageError("--costs: " + e.message);
        }
        try {
            if (activation_sizes) params.activation_sizes = parse_activation_sizes(*activation_sizes);
        } catch (const CostSyntaxError& e) {
            throw UsageError("--activation-sizes: " + e.message);
        }
        if (memory_limit) {
            params.memory_limit = parse_rational(*memory_limit);
            if (!params.memory_limit) throw UsageError("--memory-limit expects a non-negative number, got '" + *memory_limit + "'");
        }
        Schedule schedule = family->generate(params);
        if (!stages_per_rank) note_default_stages_per_rank(*family, schedule);
        note_default_group_size(*family, ranks, group_size);
        note_default_segments(family->name, segments);
        // The file carries what it was generated for: simulate and verify then time and check it at the same.
        schedule.costs = params.costs;
        schedule.activation_sizes = params.activation_sizes;
        schedule.memory_limit = params.memory_limit;
        auto out_format = parse_optional_format(format);
        if (!out_format && output == "-") out_format = FileFormat::Native;
        write_schedule_output(schedule, output, out_format, parse_era(era), line_end == "crlf");
        return kOk;
    }
};

}  // namespace

namespace {

int list_cost_presets(bool json) {
    nlohmann::json all = nlohmann::json::array();
    for (const CostPreset& p : cost_presets()) {
        if (json) all.push_back({{"name", p.name}, {"costs", p.costs}, {"source", p.source}});
        else std::cout << fmt::format("{:<17} {}\n{:<17} {}\n", p.name, p.costs, "", p.source);
    }
    if (json) std::cout << json_text(nlohmann::json{{"status", kStatusOk}, {"cost_presets", all}}, 2) << "\n";
    else std::cout << "Use a name wherever costs are given (--costs zb-1.5b); items after it override (--costs zb-1.5b,comm=0).\n";
    return kOk;
}

}  // namespace

Runner add_list(CLI::App& app) {
    auto json = std::make_shared<bool>(false);
    auto presets = std::make_shared<bool>(false);
    auto* sub = app.add_subcommand("list", "the schedule families, their parameters and preconditions (--costs: cost presets)");
    sub->add_flag("--json", *json, "{\"status\": \"ok\", \"families\": [{name, summary, parameters, requires, source}, ...]}");
    sub->add_flag("--costs", *presets, "the named cost presets (published profiles) instead of the families");
    return [json, presets]() -> int {
        if (*presets) return list_cost_presets(*json);
        nlohmann::json all = nlohmann::json::array();
        for (const auto& f : schedule_families()) {
            if (*json)
                all.push_back({{"name", f.name}, {"summary", f.summary}, {"parameters", f.parameters},
                               {"requires", f.preconditions}, {"source", f.source}});
            else
                std::cout << fmt::format("{:<17} {}\n{:<17} parameters: {}; requires: {}; order from: {}\n", f.name, f.summary, "",
                                         f.parameters, f.preconditions, f.source);
        }
        if (*json) std::cout << json_text(nlohmann::json{{"status", kStatusOk}, {"families", all}}, 2) << "\n";
        return kOk;
    };
}

Runner add_generate(CLI::App& app) {
    auto cmd = std::make_shared<GenerateCommand>();
    auto* sub = app.add_subcommand("generate", "write a schedule of a published family");
    sub->add_option("name", cmd->name, "family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->required()->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batches (total)")->required()->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank, "stages per rank")->check(CLI::Range(1, kMaxStagesPerRank));
    sub->add_option("--group-size", cmd->group_size, kGroupSizeHelp)->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("--segments", cmd->segments, "sequence segments per micro-batch k (seq1f1b, default 2)")
        ->check(CLI::Range(1, kMaxSegments));
    sub->add_option("-o,--output", cmd->output, "output file (format from its extension; - = stdout)");
    sub->add_option("--format", cmd->format, "native, torch-csv or json");
    sub->add_option("--costs", cmd->costs,
                    "costs per stage (F=..,I=..,W=..,comm=.. or a preset): what v-zb orders for; written into the file");
    sub->add_option("--activation-sizes", cmd->activation_sizes,
                    "F=..,I=..: allocated by F, released by I (rest at W): v-zb's memory model; written into the file");
    sub->add_option("--memory-limit", cmd->memory_limit,
                    "per-rank activation limit v-zb orders within (default 2P); written into the file, where verify checks it");
    sub->add_option("--torch-era", cmd->era, "letters for PyTorch CSV output")->check(one_of({"current", "2024"}));
    sub->add_option("--csv-line-end", cmd->line_end, "PyTorch CSV line ends: lf (default, as the schedule files PyTorch and torchtitan ship) or crlf (as Python's csv module writes by default)")
        ->check(one_of({"crlf", "lf"}));
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
