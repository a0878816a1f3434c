#include "render/trace_json.hpp"

#include "model/dag.hpp"
#include "formats/json_stream.hpp"
#include "render/chunks.hpp"
#include "verifier/memory.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sstream>

namespace pp {
namespace {

using nlohmann::json;

double units_of(const Simulation& sim, Ticks ticks) {
    return static_cast<double>(ticks) / static_cast<double>(sim.scale.ticks_per_unit);
}

json metadata(const char* name, size_t pid, json args) {
    return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", std::move(args)}};
}

// An op's name is its file notation ("0F3", "3B1@1"), unique on its rank. Perfetto colours a slice by its
// name with the digits removed, so "0F3" and "2F5" share a colour (kind F, pipeline 0) while "3F0@1" (the
// reverse pipeline) gets another; a rank's later stages of one pipeline get a letter (" b", " c"), so the
// V's way back is coloured apart from its way down.
std::string op_name(const Op& op, const ChunkNumbers& chunks, bool pipelines) {
    std::string name = format_op(op);
    const int chunk = chunks.at({op.pipeline, op.stage});
    if (!pipelines && chunk > 0) name += std::string(" ") + static_cast<char>('a' + chunk % 26);
    return name;
}

// chrome://tracing colours by "cname", from its fixed palette: one colour per kind, another for the rank's
// other chunks (the reverse pipeline, the V's way back).
const char* colour_of(OpKind kind, bool other_chunk) {
    switch (kind) {
        case OpKind::F: return other_chunk ? "rail_idle" : "thread_state_iowait";
        case OpKind::I: return other_chunk ? "thread_state_runnable" : "rail_response";
        case OpKind::W: return other_chunk ? "thread_state_uninterruptible" : "detailed_memory_dump";
        case OpKind::B: return other_chunk ? "rail_load" : "thread_state_running";
    }
    return "generic_work";
}

// With k sequence segments an op's number is a segment unit: the micro-batch and segment are named apart.
json op_args(const Op& op, int segments) {
    json args = {{"op", format_op(op)}, {"kind", std::string(1, kind_letter(op.kind))}, {"pipeline", static_cast<int>(op.pipeline)},
                 {"stage", static_cast<int>(op.stage)}, {"microbatch", op.microbatch / segments}};
    if (segments > 1) args["segment"] = op.microbatch % segments;
    return args;
}

json slot_event(const Slot& slot, size_t rank, double start_us, double dur_us, const ChunkNumbers& chunks, bool pipelines,
                int segments) {
    json event = {{"ph", "X"}, {"pid", rank}, {"tid", 0}, {"ts", start_us}, {"dur", dur_us}};
    const bool other = chunks.at({slot.ops[0].pipeline, slot.ops[0].stage}) % 2 == 1;
    if (slot.is_pair()) {
        event["name"] = op_name(slot.ops[0], chunks, pipelines) + " + " + op_name(slot.ops[1], chunks, pipelines);
        event["cat"] = "pair";
        event["cname"] = other ? "terrible" : "bad";
        event["args"] = {{"slot", format_slot(slot)}, {"forward", op_args(slot.ops[0], segments)},
                         {"backward", op_args(slot.ops[1], segments)}};
    } else {
        event["name"] = op_name(slot.ops[0], chunks, pipelines);
        event["cat"] = std::string(1, kind_letter(slot.ops[0].kind));
        event["cname"] = colour_of(slot.ops[0].kind, other);
        event["args"] = op_args(slot.ops[0], segments);
    }
    return event;
}

// One flow arrow (Chrome's "s"/"f" pair, bound to the enclosing slices) per dependency that crosses ranks:
// from the op that produces a tensor to the op on another rank that needs it, so the critical path can be
// followed rank to rank.
void add_flows(JsonStream& events, const Schedule& schedule, const Simulation& sim, const TraceOptions& options,
               double units_per_tick) {
    const ScheduleGraph g = build_schedule_graph(schedule);
    std::uint64_t id = 0;
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const EdgeInfo& info = g.graph[e];
            if (info.kind != EdgeKind::Dependency || !info.cross_rank) continue;
            const std::uint32_t v = target_of(g.graph, e);
            const DependencyLink link = dependency_link(schedule, g, v, info);
            const std::string name = format_op(link.from) + " -> " + format_op(link.to);
            const double from_ts = static_cast<double>(sim.start[u]) * units_per_tick * options.us_per_unit;
            const double to_ts = static_cast<double>(sim.start[v]) * units_per_tick * options.us_per_unit;
            events.value(json{{"ph", "s"}, {"id", id}, {"name", name}, {"cat", "p2p"}, {"pid", g.slot_rank[u]},
                              {"tid", 0}, {"ts", from_ts}});
            events.value(json{{"ph", "f"}, {"bp", "e"}, {"id", id}, {"name", name}, {"cat", "p2p"},
                              {"pid", g.slot_rank[v]}, {"tid", 0}, {"ts", to_ts}});
            ++id;
        }
}

// The counter steps at slot starts (allocations) only, which is when the profile is sampled; releases
// show up at the next sample. That is enough to read peaks; the SVG draws the exact step curve.
void add_counters(JsonStream& events, const Schedule& schedule, const Simulation& sim, size_t rank, size_t first,
                  const TraceOptions& options) {
    const auto profile = activation_profile(schedule, static_cast<int>(rank), options.activations);
    for (size_t k = 0; k < profile.size(); ++k) {
        const Rational& v = profile[k];
        events.value(json{{"name", "activations"}, {"ph", "C"}, {"pid", rank}, {"tid", 0},
                          {"ts", units_of(sim, sim.start[first + k]) * options.us_per_unit},
                          {"args", {{"live", static_cast<double>(v.numerator()) / static_cast<double>(v.denominator())}}}});
    }
}

// The rank's host link as a thread of its own, one event per transfer.
void add_link(JsonStream& events, const Simulation& sim, size_t rank, const std::vector<LinkBox>& boxes,
              const TraceOptions& options) {
    events.value(json{{"name", "thread_name"}, {"ph", "M"}, {"pid", rank}, {"tid", 1}, {"args", {{"name", "host link"}}}});
    for (const LinkBox& box : boxes) {
        const char* direction = box.to_host ? "offload" : "reload";
        events.value(json{{"ph", "X"}, {"pid", rank}, {"tid", 1}, {"name", std::string(direction) + " " + box.stash},
                          {"cat", direction}, {"cname", box.to_host ? "good" : "yellow"},
                          {"ts", units_of(sim, box.start) * options.us_per_unit},
                          {"dur", units_of(sim, box.end - box.start) * options.us_per_unit},
                          {"args", {{"stash", box.stash}, {"direction", direction}}}});
    }
}

}  // namespace

void write_trace_json(std::ostream& out, const Schedule& schedule, const Simulation& sim, const TraceOptions& options) {
    // Compact and written event by event: large schedules have millions of events.
    JsonStream stream(out, -1);
    stream.begin_object();
    stream.key("displayTimeUnit");
    stream.value(json("ms"));
    stream.key("otherData");
    stream.value(json{{"generator", "pipeproof"},
                      {"schedule", schedule.source},
                      {"time_unit", fmt::format("ts and dur in microseconds; 1 cost unit = {:g} us", options.us_per_unit)},
                      {"us_per_cost_unit", options.us_per_unit},
                      {"makespan_units", units_of(sim, sim.makespan)}});
    stream.key("traceEvents");
    stream.begin_array();
    const bool pipelines = chunks_are_pipelines(schedule.placement);
    size_t global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const ChunkNumbers chunks = chunk_numbers(schedule.ranks[r]);
        stream.value(metadata("process_name", r, {{"name", "rank " + std::to_string(r)}}));
        stream.value(metadata("process_sort_index", r, {{"sort_index", r}}));
        stream.value(metadata("thread_name", r, {{"name", "compute"}}));
        const size_t first = global;
        for (const Slot& slot : schedule.ranks[r]) {
            const double start = units_of(sim, sim.start[global]) * options.us_per_unit;
            const double dur = units_of(sim, sim.end[global] - sim.start[global]) * options.us_per_unit;
            stream.value(slot_event(slot, r, start, dur, chunks, pipelines, schedule.segments));
            ++global;
        }
        if (options.counters) add_counters(stream, schedule, sim, r, first, options);
        if (options.links && r < options.links->size()) add_link(stream, sim, r, (*options.links)[r], options);
    }
    if (options.flows) add_flows(stream, schedule, sim, options, 1.0 / static_cast<double>(sim.scale.ticks_per_unit));
    stream.end_array();
    stream.end_object();
    out << "\n";
}

std::string trace_json(const Schedule& schedule, const Simulation& sim, const TraceOptions& options) {
    std::ostringstream out;
    write_trace_json(out, schedule, sim, options);
    return out.str();
}

}  // namespace pp
