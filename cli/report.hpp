#pragma once
// Text and JSON renderings of a simulation shared by simulate, show and demo.
#include "model/schedule.hpp"
#include "solver/simulate.hpp"
#include "solver/verify.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace pp::cli {

// The verifier's findings in short text form (for commands that need a valid schedule first).
std::string violations_text(const Schedule& schedule, const VerifyReport& report, size_t at_most = 10);

std::string simulation_text(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs);
nlohmann::json simulation_json(const Schedule& schedule, const ScheduleGraph& graph, const Simulation& sim, const Costs& costs);

// verify + simulate; throws SimulationError with the violations listed when the schedule is not valid.
struct Timed {
    ScheduleGraph graph;
    Simulation sim;
};
Timed verify_and_simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations);

}  // namespace pp::cli
