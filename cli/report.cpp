#include "cli/report.hpp"

#include "cli/common.hpp"
#include "schedules/reference_comm.hpp"

#include <fmt/format.h>

namespace pp::cli {

std::string violations_text(const Schedule& schedule, const VerifyReport& report, size_t at_most) {
    std::string text;
    for (size_t k = 0; k < report.violations.size() && k < at_most; ++k) {
        const auto& v = report.violations[k];
        const std::string where =
            v.loc.known() ? fmt::format("{}:{}:{}", schedule.source, v.loc.line, v.loc.column) : schedule.source;
        text += fmt::format("{}: error [{}]: {}\n", where, violation_name(v.kind), v.message);
    }
    if (report.violations.size() > at_most) text += fmt::format("... ({} in all)\n", report.violations.size());
    return text;
}

std::string TimingModel::label() const {
    if (model == CommModel::Dataflow) return "dataflow";
    return attached_program ? "batched (reference comm order)" : "batched (generic rule)";
}

void add_comm_model_option(CLI::App& app, std::string& comm_model) {
    app.add_option("--comm-model", comm_model,
                   "timing model: dataflow (each op starts once its inputs arrived) or batched (a blocking batch of "
                   "sends and receives before every op, as DeepSeek's DualPipe runs it)")
        ->check(CLI::IsMember({"dataflow", "batched"}))
        ->capture_default_str();
}

CommModel comm_model_from(const std::string& name) { return parse_comm_model(name).value_or(CommModel::Dataflow); }

Timed verify_and_simulate(const Schedule& input, const Costs& costs, const ActivationModel& activations,
                          CommModel model) {
    // A file holding DualPipe's (or DualPipeV's) exact order runs its reference's P2P program.
    std::optional<Schedule> recognised;
    if (model == CommModel::Batched && !input.comm_program) {
        Schedule copy = input;
        if (attach_reference_comm_program(copy)) recognised = std::move(copy);
    }
    const Schedule& schedule = recognised ? *recognised : input;
    VerifyOptions options;
    options.activations = activations;
    ScheduleGraph graph = build_schedule_graph(schedule);
    const VerifyReport report = verify(schedule, graph, options);
    if (!report.ok())
        throw SimulationError("the schedule is not valid, so it has no timing (run `pipeproof verify`):\n" +
                              violations_text(schedule, report));
    TimingModel timing{model, model == CommModel::Batched && uses_attached_program(schedule)};
    if (model == CommModel::Dataflow) {
        Simulation sim = simulate(schedule, graph, costs, activations);
        return {std::move(graph), std::move(sim), timing};
    }
    const CommProgram program = batched_program(schedule);
    VerifyReport comm;
    comm.violations = check_comm_program(schedule, program);
    if (!comm.ok()) {
        std::string text = violations_text(schedule, comm);
        for (const auto& v : comm.violations)
            for (const auto& step : v.witness) text += "  " + step + "\n";
        throw SimulationError("the schedule's blocking communication batches (" + timing.label() +
                              ") cannot run, so it has no batched timing:\n" + text);
    }
    Simulation sim = simulate_batched(schedule, graph, program, costs, activations);
    return {std::move(graph), std::move(sim), timing};
}

namespace {

std::string percent(const Rational& fraction) {
    return fmt::format("{:.2f}%", 100.0 * static_cast<double>(fraction.numerator()) / static_cast<double>(fraction.denominator()));
}

}  // namespace

std::string simulation_text(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs,
                            const TimingModel& timing) {
    const auto& t = sim.scale;
    std::string text = fmt::format("{}: {} ranks, {} ops; costs {}; timing model: {}\n", schedule.source,
                                   schedule.placement.ranks, schedule.op_count(), format_costs(costs), timing.label());
    text += fmt::format("makespan {}   bubble (largest idle) {}   bubble fraction {} ({})\n", t.format(sim.makespan),
                        t.format(sim.bubble), format_rational(sim.bubble_fraction), percent(sim.bubble_fraction));
    text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>6}\n", "rank", "busy", "idle", "span", "peak");
    for (size_t r = 0; r < sim.ranks.size(); ++r) {
        const auto& rt = sim.ranks[r];
        text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>6}\n", r, t.format(rt.busy), t.format(rt.idle),
                            t.format(rt.last_end - rt.first_start), format_rational(rt.peak_activations));
    }
    std::vector<std::string> path;
    for (auto s : sim.critical_path) path.push_back(fmt::format("r{}:{}", graph.slot_rank[s], format_slot(graph.slot(schedule, s))));
    text += fmt::format("critical path ({} slots): {}\n", path.size(), fmt::join(path, " -> "));
    return text;
}

nlohmann::json simulation_json(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs,
                               const TimingModel& timing) {
    auto units = [&](Ticks ticks) { return exact_json(sim.scale.to_units(ticks)); };
    nlohmann::json j = {{"file", schedule.source},
                        {"timing_model", comm_model_name(timing.model)},
                        {"timing_model_detail", timing.label()},
                        {"costs", format_costs(costs)},
                        {"makespan", units(sim.makespan)},
                        {"bubble", units(sim.bubble)},
                        {"bubble_fraction", exact_json(sim.bubble_fraction)},
                        {"exact", {{"makespan", format_rational(sim.scale.to_units(sim.makespan))},
                                   {"bubble", format_rational(sim.scale.to_units(sim.bubble))},
                                   {"bubble_fraction", format_rational(sim.bubble_fraction)}}}};
    for (size_t r = 0; r < sim.ranks.size(); ++r) {
        const auto& rt = sim.ranks[r];
        j["ranks"].push_back({{"rank", r},
                              {"busy", units(rt.busy)},
                              {"idle", units(rt.idle)},
                              {"span", units(rt.last_end - rt.first_start)},
                              {"peak_activations", exact_json(rt.peak_activations)}});
    }
    for (auto s : sim.critical_path)
        j["critical_path"].push_back({{"slot", format_slot(graph.slot(schedule, s))},
                                      {"rank", graph.slot_rank[s]},
                                      {"start", units(sim.start[s])},
                                      {"end", units(sim.end[s])}});
    return j;
}

}  // namespace pp::cli
