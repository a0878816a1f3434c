// pipeproof simulate FILE: exact start and end of every op (longest path), makespan, idle per rank,
// bubble, peak activations, critical path.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
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

    int run() {
        const Schedule schedule = input.load(costs);  // v-zb: ordered for the costs it is timed at
        const Costs c = costs.resolve(schedule);
        costs.warn_unused_letters(schedule);
        const auto timed = verify_and_simulate(schedule, c, costs.activations(&schedule), comm_model_from(comm_model),
                                               costs.memory_limit(schedule, std::nullopt),
                                               ops ? SlotTimes::AllSlots : SlotTimes::SummaryOnly);
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
            {
                const auto limit = costs.memory_limit(schedule, std::nullopt);  // the flag's, or the file's at the share
                put_memory_limit(j, limit ? limit : schedule.memory_limit);     // else the file's own, as the verdict
            }
            if (costs.chunk_table) add_exposure_json(j, schedule, *costs.chunk_table);
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
        }
        return timed.valid() ? kOk : kViolations;  // the verdict of `verify`, whatever the timing
    }
};

}  // namespace

Runner add_simulate(CLI::App& app) {
    auto cmd = std::make_shared<SimulateCommand>();
    auto* sub = app.add_subcommand("simulate", "exact timing: makespan, idle per rank, bubble, peak memory, critical path");
    cmd->input.add_options(*sub);
    cmd->costs.add_options(*sub);
    sub->add_flag("--json", cmd->json, "machine-readable output");
    sub->add_flag("--ops", cmd->ops, "also list the start and end of every slot (and, batched, the batch before it)");
    add_comm_model_option(*sub, cmd->comm_model);
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
