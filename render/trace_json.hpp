#pragma once
// Chrome / Perfetto trace-event JSON (the "JSON Array/Object Format" that chrome://tracing and
// ui.perfetto.dev open): one process per rank ("rank r"), one thread "compute" in it, and one complete
// event ("ph":"X") per slot whose duration is the slot's cost, named by the op as the files write it ("0F3",
// "3B1@1": unique on the rank; coloured by kind and direction, see op_name in the .cpp). An overlapped F&B
// pair is one event named "0F3 + 3B1@1" (category "pair") with both ops in its args, so a rank's event
// durations add up to its busy time. A counter track "activations" per rank follows the live activation
// memory, and a flow arrow joins each op to the op on another rank that consumes its output. With host-link
// rows (show --offload) each rank has a second thread, "host link", with one event per transfer ("offload 2F3",
// "reload 2F3"; category offload or reload).
//
// Units: trace timestamps are microseconds. Costs have no unit of their own, so one cost unit is mapped
// to `us_per_unit` microseconds (default 1000: F=1 becomes a 1 ms event); the mapping is written into the
// file's metadata ("otherData").
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "render/link_box.hpp"
#include "verifier/simulate.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace pp {

struct TraceOptions {
    double us_per_unit = 1000.0;    // microseconds per cost unit
    ActivationModel activations{};  // for the counter track
    bool counters = true;
    bool flows = true;              // an arrow per cross-rank dependency (producer -> consumer)
    const std::vector<std::vector<LinkBox>>* links = nullptr;  // per rank, its host-link transfers
};

// Written event by event (memory does not grow with the number of events).
void write_trace_json(std::ostream& out, const Schedule& schedule, const Simulation& simulation,
                      const TraceOptions& options = {});
std::string trace_json(const Schedule& schedule, const Simulation& simulation, const TraceOptions& options = {});

}  // namespace pp
