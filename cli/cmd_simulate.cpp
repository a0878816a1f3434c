// pipeproof simulate FILE: exact start and end of every op (longest path), makespan, idle per rank,
// bubble, peak activations, critical path.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
#include "cli/offload_options.hpp"
#include "cli/report.hpp"
#include "formats/json_stream.hpp"

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct SimulateCommand {
    ScheduleInput input;
    CostInput costs;
    bool json = false;
    bool ops = false;
    std::string comm_model = "dataflow";
    OffloadInput offload;
    std::optional<std::string> memory_limit;

    int run() {
        (void)offload.policy();  // the flags checked before the schedule is read
        if (offload.active() && comm_model_from(comm_model) != CommModel::Dataflow)
            throw UsageError("--offload times with the dataflow model only (give --comm-model dataflow)");
        std::optional<Rational> limit_override;
        if (memory_limit) {
            limit_override = parse_rational(*memory_limit);
            if (!limit_override || *limit_override < Rational(0))
                throw UsageError("--memory-limit expects a non-negative number, got '" + *memory_limit + "'");
        }
        costs.memory_limit_flag_given = memory_limit.has_value();  // a file's own limit is then not used
        Schedule schedule = input.load(costs);  // v-zb: ordered for the costs it is timed at
        const Costs c = costs.resolve(schedule);
        costs.warn_unused_letters(schedule);
        // The flag's limit, or the file's at the share, else the file's own. With --offload it holds for the
        // resident stashes (the offload report checks it), not for the order-based peak verify checks.
        const auto flag_limit = costs.memory_limit(schedule, limit_override);
        const auto limit = flag_limit ? flag_limit : schedule.memory_limit;
        if (offload.active()) schedule.memory_limit.reset();
        auto timed = verify_and_simulate(schedule, c, costs.activations(&schedule), comm_model_from(comm_model),
                                         offload.active() ? std::nullopt : flag_limit,
                                         ops ? SlotTimes::AllSlots : SlotTimes::SummaryOnly);
        const auto moved = offload_for_timed(offload, schedule, c, costs.activations(&schedule), timed, limit);
        // Under `batched`, --ops also shows the blocking batch committed before each slot (only --ops reads it).
        std::vector<std::string> batch_before(ops ? timed.slots.slot_count() : 0);
        if (ops && timed.timing.model == CommModel::Batched) {
            const CommProgram program = batched_program(schedule);
            for (size_t r = 0; r < program.size(); ++r)
                for (const CommStep& step : program[r])
                    if (step.slot >= 0 && !step.batch.empty())
                        batch_before[timed.slots.rank_begin[r] + static_cast<std::uint32_t>(step.slot)] = format_batch(step.batch);
        }
        if (json) {
            auto j = simulation_json(schedule, timed.slots, timed.sim, c, timed.timing, costs.units_text(schedule),
                                         costs.time_unit.name());
            put_verdict(j, timed.verdict);
            put_memory_limit(j, limit);
            if (costs.chunk_table) add_exposure_json(j, schedule, *costs.chunk_table);
            if (moved) j["offload"] = offload_json(schedule, *moved, ops);
            if (ops) {  // written slot by slot: the document stays small whatever the schedule's size
                write_json_with_array(std::cout, j, "slots", timed.slots.slot_count(), [&](size_t s) {
                    nlohmann::json slot = slot_time_json(schedule, timed, static_cast<std::uint32_t>(s));
                    if (!batch_before[s].empty()) slot["batch_before"] = batch_before[s];
                    return slot;
                }, 2);
                std::cout << "\n";
            } else {
                std::cout << json_text(j, 2) << "\n";
            }
        } else {
            if (!timed.valid()) std::cout << invalid_banner(schedule, timed.verdict);
            std::cout << simulation_text(schedule, timed.slots, timed.sim, c, timed.timing, costs.units_text(schedule),
                                         costs.time_unit.name());
            if (costs.chunk_table) std::cout << exposure_text(schedule, *costs.chunk_table);
            if (ops)
                for (std::uint32_t s = 0; s < timed.slots.slot_count(); ++s)
                    std::cout << "rank " << timed.slots.rank_of(s) << " " << format_slot(timed.slots.slot(schedule, s))
                              << " " << timed.sim.scale.format(timed.sim.start[s]) << " "
                              << timed.sim.scale.format(timed.sim.end[s])
                              << (batch_before[s].empty() ? "" : " after " + batch_before[s]) << "\n";
            if (moved) std::cout << offload_text(schedule, *moved, ops);  // after the plain slot times
        }
        // The verdict of `verify` (with --offload: the device and host limits on resident and moved stashes),
        // whatever the timing.
        return timed.valid() ? kOk : kViolations;
    }
};

}  // namespace

Runner add_simulate(CLI::App& app) {
    auto cmd = std::make_shared<SimulateCommand>();
    auto* sub = app.add_subcommand("simulate", "exact timing: makespan, idle per rank, bubble, peak memory, critical path");
    cmd->input.add_options(*sub);
    cmd->costs.add_options(*sub);
    sub->add_flag("--json", cmd->json, "machine-readable output");
    sub->add_flag("--ops", cmd->ops,
                  "also list the start and end of every slot (and, batched, the batch before it; with --offload, the "
                  "slots and transfers under offload too)");
    add_comm_model_option(*sub, cmd->comm_model);
    sub->add_option("--memory-limit", cmd->memory_limit,
                    "per-rank activation limit (units of one stage-activation); with --offload it holds for the resident "
                    "stashes");
    cmd->offload.add_options(*sub);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
