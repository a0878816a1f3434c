// pipeproof report NAME... -P -M [-V] [--costs ...] -o report.html: one self-contained HTML page with the
// compare table, the published bubble formulas next to the measured values, and the timelines.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/offload_options.hpp"
#include "cli/report.hpp"
#include "render/html_report.hpp"
#include "render/markup.hpp"
#include "render/svg_timeline.hpp"
#include "schedules/registry.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct ReportCommand {
    std::vector<std::string> names;
    std::optional<int> ranks, microbatches, stages_per_rank, segments;
    GroupSizeInput group_size;
    OffloadInput offload;  // --offload: each row timed with its stashes moved too (a table column)
    CostInput costs;
    std::string output = "report.html";
    std::string comm_model = "dataflow";
    std::optional<std::int64_t> tokens_per_microbatch;
    std::optional<std::string> seconds_per_unit;
    bool per_stage_costs = false;  // the old spelling of --units stage
    std::string units = "rank";
    const CLI::Option* units_flag = nullptr;
    std::string title = "pipeproof report";

    ScheduleInput input_for(const std::string& name) const {
        ScheduleInput input;
        input.source = name;
        input.ranks = ranks;
        input.microbatches = microbatches;
        input.stages_per_rank = stages_per_rank;
        if (!std::filesystem::exists(name))  // the families that take G or k get them, as in compare
            if (const ScheduleFamily* family = find_family(name)) {
                if (family_takes_group_size(family->name)) input.group_size = group_size.for_family(family->name);
                if (family_takes_segments(family->name)) input.segments = segments;
            }
        return input;
    }

    CompareOptions compare_options() const {
        CompareOptions options;
        options.comm_model = comm_model_from(comm_model);
        options.model_share_costs = model_share_costs(costs, units, per_stage_costs, units_flag);
        options.activations = costs.activations();
        // GPU-hours need the tokens and the seconds per unit (--seconds-per-unit, or --time-unit's); a time unit
        // alone only names the unit.
        const auto seconds = costs.time_unit.seconds_with(seconds_per_unit);
        if (tokens_per_microbatch && !seconds)
            throw UsageError("GPU-hours need --tokens-per-microbatch and the seconds per cost unit (--time-unit or --seconds-per-unit)");
        if (seconds_per_unit && !tokens_per_microbatch)
            throw UsageError("GPU-hours need both --tokens-per-microbatch and --seconds-per-unit");
        if (tokens_per_microbatch) {
            if (*tokens_per_microbatch <= 0) throw UsageError("--tokens-per-microbatch must be positive");
            options.seconds_per_unit = seconds;
            options.tokens_per_microbatch = tokens_per_microbatch;
        }
        return options;
    }

    ReportSchedule entry(const std::string& name, const Schedule& schedule, size_t index, CompareOptions options,
                         std::string& costs_text) const {
        options.activations = costs.activations(&schedule);  // with --layout, each stage's stash is its block's layers
        Costs given = costs.resolve(schedule, false);  // blocks checked over all schedules in run()
        std::optional<StageChunks> stage;  // issue 11: a stage's chunk holds its share of the layers
        if (costs.chunk_table) given = (stage = chunks_at_share(schedule, *costs.chunk_table, options.model_share_costs))->given;
        costs_text = format_costs(given);
        ReportSchedule s;
        s.family = name;
        s.row = compare_schedule(schedule, given, options);
        if (const auto report = offload_for_row(offload, schedule, s.row, options.activations))
            s.offload = offload_cell(*report, s.row);
        // Pictures and formulas use what each stage ran at (the given costs scaled to the stage's model share).
        const Costs& c = s.row.stage_costs;
        const auto timed = verify_and_simulate(schedule, c, costs.activations(&schedule), options.comm_model);
        if (!timed.valid())  // over its memory limit: the one verdict of `verify`, no page for it
            throw SimulationError(schedule.source + " is not valid, so it gets no report (run `pipeproof verify`):\n" +
                                  violations_text(schedule, timed.verdict));
        if (ranks && microbatches) s.formula = published_bubble_formula(name, *ranks, *microbatches, stages_per_rank, c);
        SvgOptions svg;
        svg.activations = costs.activations(&schedule);
        svg.costs = &c;
        svg.id_prefix = fmt::format("s{}", index);
        svg.time_unit = costs.time_unit.name().value_or("");
        svg.subtitle = "costs per stage " + format_costs(c) + "; timing model: " + timed.timing.label();
        if (stage) {  // the exposed all-to-all per rank
            std::vector<std::string> per_rank;
            for (const auto& x : stage->exposure.exposed) per_rank.push_back(format_rational(x));
            svg.subtitle += fmt::format("; pattern {}; exposed all-to-all per rank {} (all ranks' all-to-all: {})", stage->pattern,
                                        fmt::join(per_rank, " "), format_rational(stage->exposure.total_network()));
            const Rational network = stage->exposure.total_network();
            s.exposed_comm = fmt::format("{} ({})", fmt::join(per_rank, " "),
                                         network > Rational(0) ? percent_text(Rational(1) - stage->exposure.total_exposed() / network)
                                                               : std::string("no all-to-all"));
        }
        if (const std::string problem = svg_size_problem(schedule); problem.empty())
            s.svg = svg_timeline(schedule, timed.sim, svg);
        else
            s.svg = "<p class=\"missing\">No picture: " + xml_escape(problem) + ".</p>";
        return s;
    }

    int run() {
        group_size.validate(names, "in the report");
        check_table_offload_flags(offload, comm_model);
        if (segments && !names_a_family_that(names, family_takes_segments))
            throw UsageError("--segments applies to seq1f1b, and it is not in the report");
        const CompareOptions options = compare_options();
        ReportPage page;
        page.title = title;
        std::string costs_text;
        std::vector<Schedule> schedules;
        for (const auto& name : names) schedules.push_back(input_for(name).load());
        costs.check_stage_blocks(schedules);  // a --stage-costs block must exist in at least one of them
        for (size_t k = 0; k < names.size(); ++k) {
            // v-zb: ordered for what its stages run at on this page
            schedules[k] = ordered_for_row(input_for(names[k]), std::move(schedules[k]), costs, options.model_share_costs);
            page.schedules.push_back(entry(names[k], schedules[k], k, options, costs_text));
        }
        page.parameters = fmt::format(
            "{}{}{}costs {}{} {}; timing model {}", ranks ? fmt::format("P = {}, ", *ranks) : "",
            microbatches ? fmt::format("M = {}, ", *microbatches) : "", stages_per_rank ? fmt::format("V = {}, ", *stages_per_rank) : "",
            costs_text, costs.time_unit.name() ? " (times in " + *costs.time_unit.name() + ")" : "",
            options.model_share_costs
                ? "per 1/P of the model (like for like: a schedule that cuts the model into S blocks runs each stage at P/S "
                  "of them; --units stage to time every stage at the costs as given)"
                : costs.layout ? "per decoder layer, each block at its layers' sum under --layout '" + *costs.layout + "'"
                               : "per stage, as given (--units stage)",
            comm_model);
        std::ofstream out(output, std::ios::binary);
        if (!out) throw UsageError("cannot write '" + output + "'");
        out << html_report(page);
        if (!out) throw UsageError("error while writing '" + output + "'");
        std::cout << "wrote " << output << " (" << names.size() << " schedules)\n";
        return kOk;
    }
};

}  // namespace

Runner add_report(CLI::App& app) {
    auto cmd = std::make_shared<ReportCommand>();
    auto* sub = app.add_subcommand("report", "one self-contained HTML page with the compare table, pictures and formulas");
    sub->add_option("schedules", cmd->names, "family names (see `pipeproof list`) or schedule files")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks (generator)")->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batches (generator)")->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank, "stages per rank (generator)")
        ->check(CLI::Range(1, kMaxStagesPerRank));
    cmd->group_size.add_option(*sub);
    cmd->offload.add_options(*sub, false);
    sub->add_option("--segments", cmd->segments, "sequence segments per micro-batch k (seq1f1b, default 2)")
        ->check(CLI::Range(1, kMaxSegments));
    cmd->costs.add_options(*sub, false);
    cmd->units_flag = add_units_option(*sub, cmd->units);  // default rank: like for like across V
    add_comm_model_option(*sub, cmd->comm_model);
    sub->add_option("-o,--output", cmd->output, "HTML file to write (default report.html)");
    sub->add_option("--title", cmd->title, "page title");
    sub->add_option("--tokens-per-microbatch", cmd->tokens_per_microbatch, "tokens in one micro-batch (for GPU-hours)");
    sub->add_option("--seconds-per-unit", cmd->seconds_per_unit, "seconds per cost unit (for GPU-hours)");
    sub->add_flag("--per-stage-costs", cmd->per_stage_costs, "old spelling of --units stage");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
