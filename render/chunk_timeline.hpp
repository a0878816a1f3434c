#pragma once
// Pictures of the inside of slots (issue 11): the compute lane over the network lane, as DeepSeek-V3's
// Figure 4 draws one F&B pair.
//   chunk_ascii   one slot: a compute row, a network row and an "exposed" row marking the all-to-all time
//                 the compute stream does not hide, time to scale, then every component with its exact
//                 start and end
//   chunk_svg     the same as a picture: forward components orange, input-gradient blue, weight-gradient
//                 purple, all-to-alls of the forward chunk red and of the backward chunk teal, exposed time
//                 hatched under the network lane.  Structure: <g class="lane" data-stream="compute|network">,
//                 one <rect class="component" data-name="mlp_i0" data-stream=".."> per component,
//                 <rect class="exposed"> per exposed interval
//   chunk_trace   Chrome/Perfetto trace: one process, threads "compute" and "network"
//   ascii_chunk_lanes   a whole schedule (`show --chunks`): two rows per rank, every slot drawn by its
//                 kind's timeline at its simulated start, one letter per component
#include "model/schedule.hpp"
#include "render/ascii_gantt.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <string>

namespace pp {

std::string chunk_ascii(const SlotKindTiming& timing, int max_width = 160);
std::string chunk_svg(const SlotKindTiming& timing, const std::string& title);
std::string chunk_trace(const SlotKindTiming& timing, double us_per_unit = 1000.0);
std::string ascii_chunk_lanes(const Schedule& schedule, const Simulation& simulation, const ChunkTable& table,
                              const GanttOptions& options = {});

// Exposed intervals of a slot: network busy, compute idle (merged, in time order).
std::vector<std::pair<Rational, Rational>> exposed_intervals(const SlotKindTiming& timing);

}  // namespace pp
