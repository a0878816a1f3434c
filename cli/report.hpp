#pragma once
// Text and JSON renderings of a simulation shared by simulate, show and demo.
#include "model/schedule.hpp"
#include "verifier/batched.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verdict.hpp"
#include "verifier/verify.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace pp::cli {

// The verifier's findings in short text form (for commands that need a valid schedule first): the first
// `at_most`, then how many more; the total is violation_count(report), as `verify` counts them.
std::string violations_text(const Schedule& schedule, const VerifyReport& report, size_t at_most = 10);
// "N violation(s)", as `verify` prints it.
std::string violation_count_text(const VerifyReport& report);
// The violations as `verify --json` lists them.
nlohmann::json violation_json(const Violation& v);
// The verdict's members of every document that has one (verify, simulate, show): status "valid" or "invalid",
// valid, violations (the listed ones, [] when valid), violation_count (all, as `verify` counts them) and suppressed
// (counted, not listed).
void put_verdict(nlohmann::json& out, const VerifyReport& report);

// Which timing model produced a simulation: every timing printout names it.
struct TimingModel {
    CommModel model = CommModel::Dataflow;
    bool attached_program = false;  // batched: the generator's reference comm order, not the generic rule
    std::string label() const;      // "dataflow", "batched (reference comm order)", "batched (generic rule)"
};

// `units`: what the costs are per (CostInput::units_text), printed with them. `time_unit`: the unit of the costs
// (--time-unit: "us", "ms", "s"), written after every time and as the JSON's time_unit; none = plain cost units.
std::string simulation_text(const Schedule& schedule, const SlotNumbering& slots, const Simulation& sim, const Costs& costs,
                            const TimingModel& timing = {}, const std::string& units = "stage",
                            const std::optional<std::string>& time_unit = std::nullopt);
nlohmann::json simulation_json(const Schedule& schedule, const SlotNumbering& slots, const Simulation& sim, const Costs& costs,
                               const TimingModel& timing = {}, const std::string& units = "stage",
                               const std::optional<std::string>& time_unit = std::nullopt);

// --comm-model dataflow|batched, shared by the timing commands.
void add_comm_model_option(CLI::App& app, std::string& comm_model);
CommModel comm_model_from(const std::string& name);

// The options of the one verdict (verifier/verdict.hpp): the file's memory limit unless `memory_limit`
// replaces it.
VerdictOptions verdict_options(const Schedule& schedule, const ActivationModel& activations, CommModel model,
                               const std::optional<Rational>& memory_limit = std::nullopt);

// verdict + simulate. Throws SimulationError (exit 1) with the violations listed when the schedule cannot
// run: anything but the memory limit (under `batched`, also an inconsistent or deadlocking P2P program).
// A schedule over its memory limit is still timed -- it runs, with more memory -- and `verdict` holds the
// violations: the caller prints invalid_banner() with the timing and exits 1.
struct Timed {
    SlotNumbering slots;  // the numbering of sim's slots
    Simulation sim;
    TimingModel timing;
    VerifyReport verdict;
    bool valid() const { return verdict.ok(); }
};
// One slot of a timed schedule (sim kept every slot's times): {"rank", "slot", "start", "end", "exact": {...}}.
nlohmann::json slot_time_json(const Schedule& schedule, const Timed& timed, std::uint32_t slot);
// What verify_and_simulate throws for a schedule that cannot run: the text (as before) and the violations as
// `verify --json` lists them, so that a --json run answers with them (cli/errors.cpp).
struct InvalidScheduleError : SimulationError {
    InvalidScheduleError(const std::string& text, std::string file_, nlohmann::json violations_)
        : SimulationError(text), file(std::move(file_)), violations(std::move(violations_)) {}
    std::string file;
    nlohmann::json violations;  // array of violation_json
};
// `kept`: whether sim holds the start and end of every slot, or (SummaryOnly) only the critical path's;
// batched timing always holds them.
Timed verify_and_simulate(const Schedule& schedule, const Costs& costs, const ActivationModel& activations,
                          CommModel model = CommModel::Dataflow, const std::optional<Rational>& memory_limit = std::nullopt,
                          SlotTimes kept = SlotTimes::AllSlots);
// "INVALID: N violations (as `pipeproof verify` reports them); the timing below is of a schedule that breaks
// them:" followed by violations_text.
std::string invalid_banner(const Schedule& schedule, const VerifyReport& report);

}  // namespace pp::cli
