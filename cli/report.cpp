#include "cli/report.hpp"

#include "cli/vocabulary.hpp"

#include "cli/common.hpp"
#include "schedules/reference_comm.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pp::cli {

std::string violations_text(const Schedule& schedule, const VerifyReport& report, size_t at_most) {
    std::string text;
    for (size_t k = 0; k < report.violations.size() && k < at_most; ++k) {
        const auto& v = report.violations[k];
        const std::string where =
            v.loc.known() ? fmt::format("{}:{}:{}", schedule.source, v.loc.line, v.loc.column) : schedule.source;
        text += fmt::format("{}: error [{}]: {}\n", where, violation_name(v.kind), v.message);
    }
    const size_t listed = std::min(report.violations.size(), at_most), total = violation_count(report);
    if (total > listed) text += fmt::format("... and {} more violations not listed\n", total - listed);
    text += fmt::format("{}: {}\n", schedule.source, violation_count_text(report));
    return text;
}

std::string violation_count_text(const VerifyReport& report) {
    const size_t total = violation_count(report);
    return fmt::format("{} violation{}", total, total == 1 ? "" : "s");
}

void put_verdict(nlohmann::json& out, const VerifyReport& report) {
    out["status"] = report.ok() ? "valid" : "invalid";
    out["valid"] = report.ok();
    out["violations"] = nlohmann::json::array();
    for (const auto& v : report.violations) out["violations"].push_back(violation_json(v));
    out["violation_count"] = violation_count(report);
    out["suppressed"] = violation_count(report) - report.violations.size();
}

nlohmann::json violation_json(const Violation& v) {
    nlohmann::json j = {{"kind", violation_name(v.kind)}, {"message", v.message}};
    if (v.rank >= 0) j["rank"] = v.rank;
    if (v.position >= 0) j["position"] = v.position;
    if (v.op) j["op"] = format_op(*v.op);
    if (v.loc.known()) j["line"] = v.loc.line, j["column"] = v.loc.column;
    if (!v.witness.empty()) j["witness"] = v.witness;
    return j;
}

std::string invalid_banner(const Schedule& schedule, const VerifyReport& report) {
    return fmt::format("INVALID: {} (as `pipeproof verify` reports them); the timing below is of a schedule that "
                       "breaks them:\n",
                       violation_count_text(report)) +
           violations_text(schedule, report);
}

VerdictOptions verdict_options(const Schedule& schedule, const ActivationModel& activations, CommModel model,
                               const std::optional<Rational>& memory_limit) {
    VerdictOptions options;
    options.verify.activations = activations;
    options.verify.memory_limit = memory_limit ? memory_limit : schedule.memory_limit;
    options.model = model;
    return options;
}

std::string TimingModel::label() const {
    if (model == CommModel::Dataflow) return "dataflow";
    return attached_program ? "batched (reference comm order)" : "batched (generic rule)";
}

void add_comm_model_option(CLI::App& app, std::string& comm_model) {
    app.add_option("--comm-model", comm_model,
                   "timing model: dataflow (each op starts once its inputs arrived) or batched (a blocking batch of "
                   "sends and receives before every op, as DeepSeek's DualPipe runs it)")
        ->check(one_of({"dataflow", "batched"}))
        ->capture_default_str();
}

CommModel comm_model_from(const std::string& name) { return parse_comm_model(name).value_or(CommModel::Dataflow); }

Timed verify_and_simulate(const Schedule& input, const Costs& costs, const ActivationModel& activations,
                          CommModel model, const std::optional<Rational>& memory_limit, SlotTimes kept) {
    // A file holding DualPipe's (or DualPipeV's) exact order runs its reference's P2P program.
    std::optional<Schedule> recognised;
    if (model == CommModel::Batched && !input.comm_program) {
        Schedule copy = input;
        if (attach_reference_comm_program(copy)) recognised = std::move(copy);
    }
    const Schedule& schedule = recognised ? *recognised : input;
    // A valid schedule's dataflow timing comes from the same walk that passes it (verifier/dataflow_walk.hpp);
    // the graph is built only to explain a violation, or for batched timing.
    const VerdictOptions options = verdict_options(schedule, activations, model, memory_limit);
    std::optional<Simulation> walked = model == CommModel::Dataflow ? time_if_clean(schedule, costs, kept) : std::nullopt;
    VerifyReport report = walked ? complete_verdict(schedule, verify_walked(schedule, options.verify, walked->ops), options)
                                 : verdict(schedule, options);
    TimingModel timing{model, model == CommModel::Batched && uses_attached_program(schedule)};
    if (!only_memory_violations(report)) {
        std::string text = violations_text(schedule, report);
        for (const auto& v : report.violations)
            if (v.kind == ViolationKind::CommDeadlock || v.kind == ViolationKind::CommMismatch)
                for (const auto& step : v.witness) text += "  " + step + "\n";
        nlohmann::json listed = nlohmann::json::array();
        for (const auto& v : report.violations) listed.push_back(violation_json(v));
        throw InvalidScheduleError("the schedule is not valid, so it has no timing (run `pipeproof verify`; timing model " +
                                       timing.label() + "):\n" + text,
                                   schedule.source, std::move(listed));
    }
    Simulation sim;
    if (walked) {
        sim = std::move(*walked);
        for (size_t r = 0; r < sim.ranks.size(); ++r) sim.ranks[r].peak_activations = report.peak_activations[r];
    } else {
        sim = model == CommModel::Dataflow
                  ? simulate(schedule, costs, activations)
                  : simulate_batched(schedule, build_schedule_graph(schedule), batched_program(schedule), costs, activations);
    }
    return {number_ranks(schedule), std::move(sim), timing, std::move(report)};
}

namespace {

std::string percent(const Rational& fraction) {
    return fmt::format("{:.2f}%", 100.0 * static_cast<double>(fraction.numerator()) / static_cast<double>(fraction.denominator()));
}

}  // namespace

std::string simulation_text(const Schedule& schedule, const SlotNumbering& slots, const Simulation& sim, const Costs& costs,
                            const TimingModel& timing, const std::string& units, const std::optional<std::string>& time_unit) {
    const auto& t = sim.scale;
    const std::string in_unit = time_unit ? " " + *time_unit : "";
    std::string text = fmt::format("{}: {} ranks, {} ops; costs {}{} (units: {}); timing model: {}\n", schedule.source,
                                   schedule.placement.ranks, sim.ops, format_costs(costs), in_unit, units, timing.label());
    if (schedule.segments > 1)
        text += fmt::format("sequence segments: {} per micro-batch, each op a segment unit at {} of the costs and 1/{} of "
                            "the stash; peaks in micro-batch stashes\n",
                            schedule.segments,
                            schedule.segment_cost_shares.empty()
                                ? "1/" + std::to_string(schedule.segments)
                                : "its segment's share (" + format_segment_cost_shares(schedule.segment_cost_shares) + ")",
                            schedule.segments);
    text += fmt::format("makespan {}{}   bubble (largest idle) {}{}   bubble fraction {} ({})\n", t.format(sim.makespan),
                        in_unit, t.format(sim.bubble), in_unit, format_rational(sim.bubble_fraction),
                        percent(sim.bubble_fraction));
    const std::string column = time_unit ? " (" + *time_unit + ")" : "";
    text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>6}\n", "rank", "busy" + column, "idle" + column, "span" + column, "peak");
    for (size_t r = 0; r < sim.ranks.size(); ++r) {
        const auto& rt = sim.ranks[r];
        text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>6}\n", r, t.format(rt.busy), t.format(rt.idle),
                            t.format(rt.last_end - rt.first_start), format_rational(rt.peak_activations));
    }
    std::vector<std::string> path;
    for (auto s : sim.critical_path) path.push_back(fmt::format("r{}:{}", slots.rank_of(s), format_slot(slots.slot(schedule, s))));
    text += fmt::format("critical path ({} slots): {}\n", path.size(), fmt::join(path, " -> "));
    return text;
}

nlohmann::json simulation_json(const Schedule& schedule, const SlotNumbering& slots, const Simulation& sim, const Costs& costs,
                               const TimingModel& timing, const std::string& cost_units,
                               const std::optional<std::string>& time_unit) {
    auto units = [&](nlohmann::json& object, const std::string& key, Ticks ticks) { put_number(object, key, sim.scale.to_units(ticks)); };
    nlohmann::json j = {{"file", schedule.source},
                        {"timing_model", comm_model_name(timing.model)},
                        {"timing_model_detail", timing.label()},
                        {"costs", format_costs(costs)}};
    put_instance(j, schedule);
    put_units(j, cost_units);
    j["time_unit"] = time_unit ? nlohmann::json(*time_unit) : nlohmann::json(nullptr);
    units(j, "makespan", sim.makespan);
    units(j, "bubble", sim.bubble);
    put_number(j, "bubble_fraction", sim.bubble_fraction);
    for (size_t r = 0; r < sim.ranks.size(); ++r) {
        const auto& rt = sim.ranks[r];
        nlohmann::json rank = {{"rank", r}};
        units(rank, "busy", rt.busy);
        units(rank, "idle", rt.idle);
        units(rank, "span", rt.last_end - rt.first_start);
        put_number(rank, "peak_activations", rt.peak_activations);
        j["per_rank"].push_back(std::move(rank));
    }
    for (size_t k = 0; k < sim.critical_path.size(); ++k) {
        const std::uint32_t s = sim.critical_path[k];
        nlohmann::json step = {{"slot", format_slot(slots.slot(schedule, s))}, {"rank", slots.rank_of(s)}};
        units(step, "start", sim.path_start[k]);
        units(step, "end", sim.path_end[k]);
        j["critical_path"].push_back(std::move(step));
    }
    return j;
}

nlohmann::json slot_time_json(const Schedule& schedule, const Timed& timed, std::uint32_t s) {
    nlohmann::json j{{"rank", timed.slots.rank_of(s)}, {"slot", format_slot(timed.slots.slot(schedule, s))}};
    put_number(j, "start", timed.sim.scale.to_units(timed.sim.start[s]));
    put_number(j, "end", timed.sim.scale.to_units(timed.sim.end[s]));
    return j;
}

}  // namespace pp::cli
