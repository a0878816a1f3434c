#pragma once
// simulate's activation-offload flags (verifier/offload.hpp): --offload FRACTION, --host-link TIME,
// --reload-lookahead L, --host-link-duplex, --offload-chunks C,.., --host-memory X, and what simulate prints
// with them.
#include "render/ascii_gantt.hpp"
#include "solver/offload_choice.hpp"
#include "verifier/compare.hpp"
#include "verifier/offload.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pp::cli {

struct OffloadInput {
    std::optional<std::string> fraction;     // --offload
    std::optional<std::string> host_link;    // --host-link "T" or "offload=T,reload=T"
    std::optional<int> lookahead;            // --reload-lookahead (default 1)
    bool duplex = false;                     // --host-link-duplex
    std::optional<std::string> chunks;       // --offload-chunks
    std::optional<std::string> host_memory;  // --host-memory
    bool choose = false;                     // --choose-offloads
    std::optional<double> time_limit;        // --time-limit (with --choose-offloads; default kChoiceSeconds)
    static constexpr double kChoiceSeconds = 60;

    // with_limits = false (compare): --host-memory, --choose-offloads and --time-limit stay out of the help (the
    // command refuses them with a reason).
    void add_options(CLI::App& app, bool with_limits = true);
    bool active() const { return fraction.has_value(); }
    // The policy the flags give (UsageError on bad syntax, a flag without --offload, or --offload without
    // --host-link).
    OffloadPolicy policy() const;
};

// What the offload changed against the plain timing of the same schedule: the figures simulate prints.
struct OffloadReport {
    OffloadPolicy policy;
    OffloadTiming timing;
    Rational makespan_without;
    std::vector<Rational> peak_without;   // per rank, the order-based peak (verify's)
    std::optional<Rational> device_limit; // --memory-limit (or the file's), checked against the device peak
    // Device peaks above the memory limit (memory-limit) and host peaks above --host-memory (host-memory-limit),
    // for verify's verdict.
    std::vector<Violation> violations;
    std::optional<OffloadChoice> choice;  // --choose-offloads: how the moved stashes were chosen
};

OffloadReport offload_report(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                             const OffloadPolicy& policy, const Rational& makespan_without,
                             std::vector<Rational> peak_without, const std::optional<Rational>& device_limit);
// The report the flags ask for: of the policy as given, or with --choose-offloads of the stashes Z3 chooses under
// the device limit (a UsageError without one; UndecidedError when no choice was found in time; an infeasible cap
// reports every eligible stash moved, with its violations).
OffloadReport offload_report(const OffloadInput& input, const Schedule& schedule, const Costs& costs,
                             const ActivationModel& sizes, const Rational& makespan_without,
                             std::vector<Rational> peak_without, const std::optional<Rational>& device_limit);
struct Timed;  // cli/report.hpp
// simulate and show: with --offload, the report for a schedule `verify_and_simulate` timed (nullopt without
// --offload, or when the schedule breaks the rules and has no timing), its violations added to timed's verdict.
std::optional<OffloadReport> offload_for_timed(const OffloadInput& input, const Schedule& schedule, const Costs& costs,
                                               const ActivationModel& sizes, Timed& timed,
                                               const std::optional<Rational>& device_limit);

// compare and report: the offload flags they take (the policy as given, dataflow timing; choosing stashes and bounding
// the host are simulate's and verify's), refused otherwise with the reason.
void check_table_offload_flags(const OffloadInput& input, const std::string& comm_model);
// A compare row's schedule timed with offload: at its stage's costs, and with model-share costs its stashes (so the
// host link's time per unit) in the table's 1/P-of-the-model units, like its peaks; an error names the row.
std::optional<OffloadReport> offload_for_row(const OffloadInput& input, const Schedule& schedule, const CompareRow& row,
                                             const ActivationModel& sizes);
// One line for a table cell: makespan and overhead, device peak (against the plain one), host peak.
std::string offload_cell(const OffloadReport& report, const CompareRow& row);

// With `ops`, also every slot's start and end under offload and every transfer (stream order per rank).
std::string offload_text(const Schedule& schedule, const OffloadReport& report, bool ops);
// One line for a picture's subtitle: the policy's numbers, the makespan with and without, the peaks.
std::string offload_summary(const OffloadReport& report);
nlohmann::json offload_json(const Schedule& schedule, const OffloadReport& report, bool ops);

// show --offload: the offload timing as the chart draws a Simulation (slot times, makespan, each rank's busy, idle
// and resident peak), and each rank's transfers as link-row boxes ("O3"/"R3", lower case for an odd chunk as the
// chart writes its forward).
Simulation offload_simulation(const Schedule& schedule, const OffloadReport& report);
std::vector<std::vector<LinkBox>> offload_link_rows(const Schedule& schedule, const OffloadReport& report);

}  // namespace pp::cli
