// pipeproof show FILE|NAME: the timeline as an ASCII Gantt chart, and on request as an SVG picture
// (--svg) and a Chrome/Perfetto trace (--trace).
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
#include "cli/offload_options.hpp"
#include "cli/report.hpp"
#include "formats/json_stream.hpp"
#include "render/ascii_gantt.hpp"
#include "render/chunk_timeline.hpp"
#include "render/svg_timeline.hpp"
#include "render/trace_json.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

template <class Writer>
void write_file(const std::string& path, const Writer& write) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw UsageError("cannot write '" + path + "'");
    write(out);
    out.flush();
    if (!out) throw UsageError("error while writing '" + path + "'");
}


struct ShowCommand {
    ScheduleInput input;
    CostInput costs;
    GanttOptions gantt;
    std::optional<std::string> svg_path, trace_path;
    int svg_width = 0;
    std::optional<std::string> seconds_per_unit;  // the trace's time unit; default 1 cost unit = 1 ms
    std::optional<double> us_per_unit;            // old spelling (--trace-unit-us)
    std::string comm_model = "dataflow";
    bool json = false;
    bool chunk_lanes = false;
    OffloadInput offload;

    int run() {
        (void)offload.policy();  // the flags checked before the schedule is read
        if (offload.active() && (chunk_lanes || comm_model_from(comm_model) != CommModel::Dataflow))
            throw UsageError("--offload draws the dataflow timing only (not --chunks or --comm-model batched yet)");
        Schedule schedule = input.load(costs);  // v-zb: ordered for the costs it is timed at
        if (svg_path)  // refused before anything is timed or written
            if (const std::string problem = svg_size_problem(schedule); !problem.empty())
                throw UsageError("--svg: " + problem);
        const Costs c = costs.resolve(schedule);
        costs.warn_unused_letters(schedule);
        // With --offload the limit holds for the resident stashes (the offload report checks it), as in simulate.
        const auto flag_limit = costs.memory_limit(schedule, std::nullopt);
        const auto limit = flag_limit ? flag_limit : schedule.memory_limit;
        if (offload.active()) schedule.memory_limit.reset();
        auto timed = verify_and_simulate(schedule, c, costs.activations(&schedule), comm_model_from(comm_model),
                                         offload.active() ? std::nullopt : flag_limit);
        const auto moved = offload_for_timed(offload, schedule, c, costs.activations(&schedule), timed, limit);
        if (svg_path && moved) {  // the host-link boxes are drawn too: refused before anything is printed
            std::size_t transfers = 0;
            for (const auto& row : offload_link_rows(schedule, *moved)) transfers += row.size();
            if (const std::string problem = svg_size_problem(schedule, transfers); !problem.empty())
                throw UsageError("--svg: " + problem);
        }
        if (json) {
            if (svg_path || trace_path) throw UsageError("--json prints the timeline as JSON; write --svg/--trace files in a separate run");
            // simulate's JSON document plus every slot's rank, start and end (the timeline the chart draws),
            // written slot by slot.
            nlohmann::json j = simulation_json(schedule, timed.slots, timed.sim, c, timed.timing, costs.units_text(schedule),
                                         costs.time_unit.name());
            if (costs.chunk_table) add_exposure_json(j, schedule, *costs.chunk_table);  // per rank exposed_comm (issue 11)
            put_verdict(j, timed.verdict);  // drawn, but the verdict of `verify` stands (keys as in simulate --json)
            {
                const auto limit = costs.memory_limit(schedule, std::nullopt);  // the flag's, or the file's at the share
                put_memory_limit(j, limit ? limit : schedule.memory_limit);     // else the file's own, as the verdict
            }
            // With --offload the document is the plain timing, as without it, plus simulate's `offload` object with
            // every slot and transfer under offload.
            if (moved) j["offload"] = offload_json(schedule, *moved, true);
            write_json_with_array(std::cout, j, "timeline", timed.slots.slot_count(),
                                  [&](size_t s) { return slot_time_json(schedule, timed, static_cast<std::uint32_t>(s)); }, 2);
            std::cout << "\n";
            return timed.valid() ? kOk : kViolations;
        }
        if (chunk_lanes && !costs.chunk_table)
            throw UsageError("--chunks draws the components of chunk costs: give --chunk-costs (or a file with a 'chunks' section)");
        GanttOptions chart = gantt;
        chart.time_unit = costs.time_unit.name().value_or("");
        chart.title = fmt::format("{}: {} ranks, M = {}{}", schedule.source, schedule.rank_count(),
                                  schedule.placement.total_microbatches() / schedule.segments,
                                  schedule.segments > 1 ? fmt::format(" x {} segments (op numbers are segment units m*{}+j)",
                                                                      schedule.segments, schedule.segments)
                                                        : std::string());
        if (!timed.valid()) std::cout << invalid_banner(schedule, timed.verdict);
        // With --offload every picture draws the offload timing, the rank's host link under it; the text gives both.
        std::vector<std::vector<LinkBox>> links;
        std::optional<Simulation> offload_timing;
        if (moved) {
            links = offload_link_rows(schedule, *moved);
            offload_timing = offload_simulation(schedule, *moved);
            chart.links = &links;
            chart.title += ", with offload (peak: resident stashes)";
        }
        const Simulation& drawn = moved ? *offload_timing : timed.sim;
        std::cout << ascii_gantt(schedule, drawn, chart);
        if (chunk_lanes) std::cout << ascii_chunk_lanes(schedule, timed.sim, *costs.chunk_table, gantt);
        std::cout << simulation_text(schedule, timed.slots, timed.sim, c, timed.timing, costs.units_text(schedule),
                                         costs.time_unit.name());
        if (moved) std::cout << offload_text(schedule, *moved, false);
        if (costs.chunk_table) std::cout << exposure_text(schedule, *costs.chunk_table);
        if (svg_path) {
            SvgOptions options;
            options.width = svg_width;
            options.activations = costs.activations(&schedule);
            options.costs = &c;
            options.time_unit = costs.time_unit.name().value_or("");
            options.subtitle = "costs " + format_costs(c) + "; timing model: " + timed.timing.label();
            if (moved) {
                options.links = &links;
                options.memory_curves = false;  // the device holds only the resident stashes: the text gives its peak
                options.subtitle = offload_summary(*moved) + "; " + options.subtitle;
            }
            if (!timed.valid()) options.subtitle = "INVALID (" + violation_count_text(timed.verdict) + ", see `pipeproof verify`); " + options.subtitle;
            write_file(*svg_path, [&](std::ostream& out) { out << svg_timeline(schedule, drawn, options); });
            std::cout << "wrote " << *svg_path << "\n";
        }
        if (trace_path) {
            TraceOptions options;
            options.us_per_unit = trace_us_per_unit();
            options.activations = costs.activations(&schedule);
            if (moved) {
                options.links = &links;
                options.counters = false;  // the order's live stashes are not the device's under offload
            }
            write_file(*trace_path, [&](std::ostream& out) { write_trace_json(out, schedule, drawn, options); });
            std::cout << "wrote " << *trace_path << " (1 cost unit = " << options.us_per_unit
                      << " us; timing model: " << timed.timing.label() << "; open in ui.perfetto.dev)\n";
        }
        return timed.valid() ? kOk : kViolations;  // drawn, but the verdict of `verify` stands
    }

    // --seconds-per-unit (or its old spelling), else --time-unit's, else 1 cost unit = 1 ms.
    double trace_us_per_unit() const {
        if (!seconds_per_unit && !us_per_unit)
            if (const auto seconds = costs.time_unit.seconds_per_unit()) return to_double(*seconds) * 1e6;
        if (seconds_per_unit) (void)costs.time_unit.seconds_with(seconds_per_unit);  // a contradiction is refused
        return trace_microseconds_per_unit(seconds_per_unit, us_per_unit);
    }
};

}  // namespace

Runner add_show(CLI::App& app) {
    auto cmd = std::make_shared<ShowCommand>();
    auto* sub = app.add_subcommand("show", "draw the timeline (ASCII Gantt chart, time to scale; --svg picture, --trace for Perfetto)");
    cmd->input.add_options(*sub);
    cmd->costs.add_options(*sub);
    sub->add_option("--width", cmd->gantt.max_width, "characters for the time axis")->check(CLI::Range(20, 2000));
    add_comm_model_option(*sub, cmd->comm_model);
    sub->add_flag("--json", cmd->json, "print the timing and every slot's start and end as JSON instead of the chart");
    sub->add_flag("--chunks", cmd->chunk_lanes, "also draw each rank's compute and network streams (needs chunk costs)");
    sub->add_option("--svg", cmd->svg_path, "also write the timeline as an SVG picture to this file");
    sub->add_option("--svg-width", cmd->svg_width, "SVG width in px (default: adaptive)")->check(CLI::Range(300, 20000));
    sub->add_option("--trace", cmd->trace_path, "also write a Chrome/Perfetto trace-event JSON to this file");
    sub->add_option("--seconds-per-unit", cmd->seconds_per_unit,
                    "seconds per cost unit in the trace (default 0.001: one unit = 1 ms), as in compare and report");
    sub->add_option("--trace-unit-us", cmd->us_per_unit, "old spelling: microseconds per cost unit in the trace")
        ->check(CLI::PositiveNumber);
    cmd->offload.add_options(*sub);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
