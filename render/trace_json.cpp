#include "render/trace_json.hpp"

#include "verifier/memory.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pp {
namespace {

using nlohmann::json;

double units_of(const Simulation& sim, Ticks ticks) {
    return static_cast<double>(ticks) / static_cast<double>(sim.scale.ticks_per_unit);
}

json metadata(const char* name, size_t pid, json args) {
    return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", std::move(args)}};
}

// "F3" for an op; the micro-batch's pipeline is in the args, not the name, so names group well.
std::string op_name(const Op& op) { return std::string(1, kind_letter(op.kind)) + std::to_string(op.microbatch); }

json op_args(const Op& op) {
    return {{"op", format_op(op)}, {"kind", std::string(1, kind_letter(op.kind))}, {"pipeline", op.pipeline},
            {"stage", op.stage}, {"microbatch", op.microbatch}};
}

json slot_event(const Slot& slot, size_t rank, double start_us, double dur_us) {
    json event = {{"ph", "X"}, {"pid", rank}, {"tid", 0}, {"ts", start_us}, {"dur", dur_us}};
    if (slot.is_pair()) {
        event["name"] = op_name(slot.ops[0]) + "+" + op_name(slot.ops[1]);
        event["cat"] = "pair";
        event["args"] = {{"slot", format_slot(slot)}, {"forward", op_args(slot.ops[0])}, {"backward", op_args(slot.ops[1])}};
    } else {
        event["name"] = op_name(slot.ops[0]);
        event["cat"] = std::string(1, kind_letter(slot.ops[0].kind));
        event["args"] = op_args(slot.ops[0]);
    }
    return event;
}

// The counter steps at slot starts (allocations) only, which is when the profile is sampled; releases
// show up at the next sample. That is enough to read peaks; the SVG draws the exact step curve.
void add_counters(json& events, const Schedule& schedule, const Simulation& sim, size_t rank, size_t first,
                  const TraceOptions& options) {
    const auto profile = activation_profile(schedule.ranks[rank], options.activations);
    for (size_t k = 0; k < profile.size(); ++k) {
        const Rational& v = profile[k];
        events.push_back({{"name", "activations"}, {"ph", "C"}, {"pid", rank}, {"tid", 0},
                          {"ts", units_of(sim, sim.start[first + k]) * options.us_per_unit},
                          {"args", {{"live", static_cast<double>(v.numerator()) / static_cast<double>(v.denominator())}}}});
    }
}

}  // namespace

std::string trace_json(const Schedule& schedule, const Simulation& sim, const TraceOptions& options) {
    json events = json::array();
    size_t global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        events.push_back(metadata("process_name", r, {{"name", "rank " + std::to_string(r)}}));
        events.push_back(metadata("process_sort_index", r, {{"sort_index", r}}));
        events.push_back(metadata("thread_name", r, {{"name", "compute"}}));
        const size_t first = global;
        for (const Slot& slot : schedule.ranks[r]) {
            const double start = units_of(sim, sim.start[global]) * options.us_per_unit;
            const double dur = units_of(sim, sim.end[global] - sim.start[global]) * options.us_per_unit;
            events.push_back(slot_event(slot, r, start, dur));
            ++global;
        }
        if (options.counters) add_counters(events, schedule, sim, r, first, options);
    }
    json trace = {{"traceEvents", std::move(events)},
                  {"displayTimeUnit", "ms"},
                  {"otherData",
                   {{"generator", "pipeproof"},
                    {"schedule", schedule.source},
                    {"time_unit", fmt::format("ts and dur in microseconds; 1 cost unit = {:g} us", options.us_per_unit)},
                    {"us_per_cost_unit", options.us_per_unit},
                    {"makespan_units", units_of(sim, sim.makespan)}}}};
    return trace.dump() + "\n";  // compact: large schedules have hundreds of thousands of events
}

}  // namespace pp
