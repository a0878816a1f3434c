// pipeproof verify FILE: completeness, placement, dependency order, deadlock (with the cycle), memory,
// and for compute_comms files SEND/RECV matching and rendezvous deadlock. Exit 0 clean, 1 violations.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "cli/offload_options.hpp"
#include "cli/report.hpp"
#include "cli/vocabulary.hpp"
#include "formats/json_text.hpp"
#include "schedules/reference_comm.hpp"
#include "verifier/batched.hpp"
#include "verifier/comms.hpp"
#include "verifier/pytorch_compat.hpp"
#include "verifier/verdict.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct VerifyCommand {
    ScheduleInput input;
    CostInput costs;
    std::optional<std::string> memory_limit;
    bool json = false;
    bool pytorch_compat = false;
    std::string comm_model = "dataflow";
    OffloadInput offload;

    std::string located(const Schedule& s, const Violation& v) const {
        if (v.loc.known()) return fmt::format("{}:{}:{}", s.source, v.loc.line, v.loc.column);
        return s.source;
    }

    int run() {
        // v-zb: ordered for the costs given; the schedule may get its reference P2P program (batched model)
        costs.memory_limit_flag_given = memory_limit.has_value();  // a file's own limit is then not used
        Schedule schedule = input.load(costs);
        std::optional<Rational> limit_override;
        if (memory_limit) {
            auto limit = parse_rational(*memory_limit);
            if (!limit) throw UsageError("--memory-limit expects a non-negative number, got '" + *memory_limit + "'");
            limit_override = *limit;
        }
        const CommModel model = comm_model_from(comm_model);
        // Under the batched model the P2P program itself must match per channel and complete.
        if (model == CommModel::Batched && !schedule.comm_program)
            if (const auto family = attach_reference_comm_program(schedule))
                std::cerr << fmt::format("{}: the order is {}'s: checking its reference's P2P program\n", schedule.source, *family);
        // With --offload the memory limit bounds the resident stashes, which needs the offload's timing: the order-based
        // check is left out and the offload report adds its violations (simulate does the same).
        (void)offload.policy();  // the flags checked before the schedule is read
        if (offload.active() && model != CommModel::Dataflow)
            throw UsageError("--offload times with the dataflow model only (give --comm-model dataflow)");
        const auto flag_limit = costs.memory_limit(schedule, limit_override);
        const auto device_limit = flag_limit ? flag_limit : schedule.memory_limit;
        if (offload.active()) schedule.memory_limit.reset();
        VerdictOptions options = verdict_options(schedule, costs.activations(&schedule), model, offload.active() ? std::nullopt : flag_limit);
        VerifyReport report = verdict(schedule, options);
        std::optional<OffloadReport> moved;
        if (offload.active() && report.ok()) {
            const Costs c = costs.resolve(schedule);
            const Simulation plain = simulate(schedule, c, costs.activations(&schedule));
            moved = offload_report(offload, schedule, c, costs.activations(&schedule), plain.scale.to_units(plain.makespan),
                                   report.peak_activations, device_limit);
            for (Violation& v : moved->violations) report.violations.push_back(v);
            options.verify.memory_limit = device_limit;  // printed as the limit the resident stashes keep
        }
        std::optional<std::string> torch_verdict;
        if (pytorch_compat) {
            // PyTorch's validator takes one pipeline's actions; a bidirectional schedule has no such verdict.
            if (schedule.placement.pipeline_count() != 1)
                throw UsageError(fmt::format("--pytorch-compat: PyTorch's _validate_schedule checks one pipeline; {} has {} "
                                             "(drop --pytorch-compat)", schedule.source, schedule.placement.pipeline_count()));
            torch_verdict = pytorch_validate_schedule(schedule);
        }
        const size_t suppressed = violation_count(report) - report.violations.size();

        if (json) {
            nlohmann::json out = {{"file", schedule.source}, {"ops", report.ops}};
            put_verdict(out, report);
            put_instance(out, schedule);
            put_units(out, costs.units_text(schedule));
            put_numbers(out, "peak_activations", std::vector<Rational>(report.peak_activations.begin(), report.peak_activations.end()));
            put_memory_limit(out, options.verify.memory_limit);
            if (pytorch_compat)
                out["pytorch"] = {{"valid", !torch_verdict.has_value()}, {"message", torch_verdict.value_or("")}};
            if (moved) out["offload"] = offload_json(schedule, *moved, false);
            std::cout << json_text(out, 2) << "\n";
        } else {
            for (const auto& v : report.violations) {
                std::cout << fmt::format("{}: error [{}]: {}\n", located(schedule, v), violation_name(v.kind), v.message);
                for (const auto& step : v.witness) std::cout << "    " << step << "\n";
            }
            if (suppressed) std::cout << fmt::format("... and {} more violations not listed\n", suppressed);
            std::vector<std::string> peaks;
            for (const auto& p : report.peak_activations) peaks.push_back(format_rational(p));
            if (report.ok())
                std::cout << fmt::format("{}: OK: {} ranks, {} ops in {} slots; every op once, on its rank, "
                                         "dependencies respected, no deadlock{}\n",
                                         schedule.source, schedule.placement.ranks, report.ops,
                                         schedule.slot_count(),
                                         schedule.actions ? ", sends and receives match"
                                         : comm_model == "batched" ? ", blocking P2P batches match and complete"
                                                                   : "");
            else
                std::cout << fmt::format("{}: {}\n", schedule.source, violation_count_text(report));
            std::cout << "shape: " << shape_text(schedule) << "\n";
            if (const std::string inferred = inferred_text(schedule); !inferred.empty()) std::cout << "note: " << inferred << "\n";
            std::cout << fmt::format("peak activations per rank{}: {}{}\n",
                                     costs.rank_units() ? " (rank units: 1/P of the model's stash)" : "", fmt::join(peaks, " "),
                                     !options.verify.memory_limit ? ""
                                     : moved ? " (order-based; with offload the limit " + format_rational(*options.verify.memory_limit) +
                                                   " bounds the resident peak below)"
                                             : " (limit " + format_rational(*options.verify.memory_limit) + ")");
            if (pytorch_compat)
                std::cout << (torch_verdict ? "PyTorch _validate_schedule: rejects: " + *torch_verdict
                                            : std::string("PyTorch _validate_schedule: accepts"))
                          << "\n";
            if (moved) std::cout << offload_text(schedule, *moved, false);
            else if (offload.active()) std::cout << "offload: not timed (the schedule breaks the rules above)\n";
        }
        return report.ok() ? kOk : kViolations;
    }
};

}  // namespace

Runner add_verify(CLI::App& app) {
    auto cmd = std::make_shared<VerifyCommand>();
    auto* sub = app.add_subcommand("verify", "check a schedule: every op once, placement, order, deadlock, memory, send/recv");
    cmd->input.add_options(*sub);
    cmd->costs.add_options(*sub);
    sub->add_option("--memory-limit", cmd->memory_limit, "per-rank activation limit (units of one stage-activation)");
    sub->add_flag("--json", cmd->json, "machine-readable output");
    sub->add_flag("--pytorch-compat", cmd->pytorch_compat, "also report PyTorch's own _validate_schedule verdict");
    add_comm_model_option(*sub, cmd->comm_model);
    cmd->offload.add_options(*sub);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
