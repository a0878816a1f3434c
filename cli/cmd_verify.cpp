// pipeproof verify FILE: completeness, placement, dependency order, deadlock (with the cycle), memory,
// and for compute_comms files SEND/RECV matching and rendezvous deadlock. Exit 0 clean, 1 violations.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "schedules/reference_comm.hpp"
#include "verifier/batched.hpp"
#include "verifier/comms.hpp"
#include "verifier/pytorch_compat.hpp"
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

    nlohmann::json violation_json(const Violation& v) const {
        nlohmann::json j = {{"kind", violation_name(v.kind)}, {"message", v.message}};
        if (v.rank >= 0) j["rank"] = v.rank;
        if (v.position >= 0) j["position"] = v.position;
        if (v.op) j["op"] = format_op(*v.op);
        if (v.loc.known()) j["line"] = v.loc.line, j["column"] = v.loc.column;
        if (!v.witness.empty()) j["witness"] = v.witness;
        return j;
    }

    std::string located(const Schedule& s, const Violation& v) const {
        if (v.loc.known()) return fmt::format("{}:{}:{}", s.source, v.loc.line, v.loc.column);
        return s.source;
    }

    int run() {
        Schedule schedule = input.load();  // may get its reference P2P program (batched model)
        VerifyOptions options;
        options.activations = costs.activations();
        if (memory_limit) {
            auto limit = parse_rational(*memory_limit);
            if (!limit) throw UsageError("--memory-limit expects a non-negative number, got '" + *memory_limit + "'");
            options.memory_limit = *limit;
        } else {
            options.memory_limit = schedule.memory_limit;
        }
        VerifyReport report = verify(schedule, options);
        if (schedule.actions)
            for (auto& v : check_comms(schedule)) report.violations.push_back(std::move(v));
        // Under the batched model the P2P program itself must match per channel and complete.
        if (comm_model_from(comm_model) == CommModel::Batched && report.ok())
            if (const auto family = attach_reference_comm_program(schedule))
                std::cerr << fmt::format("{}: the order is {}'s: checking its reference's P2P program\n", schedule.source, *family);
        if (comm_model_from(comm_model) == CommModel::Batched && report.ok())
            for (auto& v : check_comm_program(schedule, batched_program(schedule))) report.violations.push_back(std::move(v));
        std::optional<std::string> torch_verdict;
        if (pytorch_compat) torch_verdict = pytorch_validate_schedule(schedule);
        size_t suppressed = 0;
        for (size_t n : report.suppressed) suppressed += n;

        if (json) {
            nlohmann::json out = {{"file", schedule.source},
                                  {"valid", report.ok()},
                                  {"ranks", schedule.placement.ranks},
                                  {"ops", schedule.op_count()},
                                  {"violations", nlohmann::json::array()},
                                  {"suppressed", suppressed}};
            for (const auto& v : report.violations) out["violations"].push_back(violation_json(v));
            for (const auto& p : report.peak_activations) out["peak_activations"].push_back(exact_json(p));
            if (options.memory_limit) out["memory_limit"] = exact_json(*options.memory_limit);
            if (pytorch_compat)
                out["pytorch"] = {{"valid", !torch_verdict.has_value()}, {"message", torch_verdict.value_or("")}};
            std::cout << out.dump(2) << "\n";
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
                                         schedule.source, schedule.placement.ranks, schedule.op_count(),
                                         schedule.slot_count(),
                                         schedule.actions ? ", sends and receives match"
                                         : comm_model == "batched" ? ", blocking P2P batches match and complete"
                                                                   : "");
            else
                std::cout << fmt::format("{}: {} violation{}\n", schedule.source, report.violations.size() + suppressed,
                                         report.violations.size() + suppressed == 1 ? "" : "s");
            std::cout << fmt::format("peak activations per rank: {}{}\n", fmt::join(peaks, " "),
                                     options.memory_limit ? " (limit " + format_rational(*options.memory_limit) + ")" : "");
            if (pytorch_compat)
                std::cout << (torch_verdict ? "PyTorch _validate_schedule: rejects: " + *torch_verdict
                                            : std::string("PyTorch _validate_schedule: accepts"))
                          << "\n";
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
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
