// pipeproof show FILE|NAME: the timeline as an ASCII Gantt chart.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "render/ascii_gantt.hpp"

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct ShowCommand {
    ScheduleInput input;
    CostInput costs;
    GanttOptions gantt;

    int run() {
        const Schedule schedule = input.load();
        const Costs c = costs.resolve(schedule);
        const auto timed = verify_and_simulate(schedule, c, costs.activations());
        std::cout << ascii_gantt(schedule, timed.sim, gantt);
        std::cout << simulation_text(schedule, timed.graph, timed.sim, c);
        return kOk;
    }
};

}  // namespace

Runner add_show(CLI::App& app) {
    auto cmd = std::make_shared<ShowCommand>();
    auto* sub = app.add_subcommand("show", "draw the timeline (ASCII Gantt chart, time to scale)");
    cmd->input.add_options(*sub);
    cmd->costs.add_options(*sub);
    sub->add_option("--width", cmd->gantt.max_width, "characters for the time axis")->check(CLI::Range(20, 2000));
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
