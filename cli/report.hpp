#pragma once
// Text and JSON renderings of a simulation shared by simulate, show and demo.
#include "model/schedule.hpp"
#include "verifier/batched.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace pp::cli {

// The verifier's findings in short text form (for commands that need a valid schedule first).
std::string violations_text(const Schedule& schedule, const VerifyReport& report, size_t at_most = 10);

// Which timing model produced a simulation: every timing printout names it.
struct TimingModel {
    CommModel model = CommModel::Dataflow;
    bool attached_program = false;  // batched: the generator's reference comm order, not the generic rule
    std::string label() const;      // "dataflow", "batched (reference comm order)", "batched (generic rule)"
};

std::string simulation_text(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs,
                            const TimingModel& timing = {});
nlohmann::json simulation_json(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs,
                               const TimingModel& timing = {});

// --comm-model dataflow|batched, shared by the timing commands.
void add_comm_model_option(CLI::App& app, std::string& comm_model);
CommModel comm_model_from(const std::string& name);

// verify + simulate; throws SimulationError with the violations listed when the schedule is not valid
// (under `batched`, also when its communication program is inconsistent or deadlocks).
struct Timed {
    ScheduleGraph graph;
    Simulation sim;
    TimingModel timing;
};
Timed verify_and_simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations,
                          CommModel model = CommModel::Dataflow);

}  // namespace pp::cli
