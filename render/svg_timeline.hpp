#pragma once
// The timeline as an SVG picture, in the spirit of DualPipe's README figure: one lane per rank, time to
// scale, one box per slot coloured by op kind (F orange, I blue, W purple, B green; the rank's 2nd, 3rd,
// ... chunk in lighter shades), the micro-batch number on each box, a small triangle for the direction
// its pipeline flows when a schedule has both directions (DualPipe, V shapes), overlapped F&B pairs as
// one unit with a shared black border, idle time hatched, and under each lane the live activation
// memory as a step curve.
//
// Structure that tests and scripts can rely on:
//   <g class="lane" data-rank="r">                       one per rank
//     <g class="slot" data-rank="r" data-slot="k">       one per slot (class "slot pair" for a pair)
//       <rect class="op" data-rank="r" data-kind="F" data-op="2F3@1" .../>   one per op
//       <rect class="pair-border" .../>                  pairs only
//     <g class="link" data-rank="r">                     with host-link rows (show --offload): one per rank
//       <rect class="transfer" data-rank="r" data-direction="offload" data-stash="2F3" .../>   one per transfer
//     <path class="memory" .../>                         when memory curves are on
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "render/link_box.hpp"
#include "verifier/simulate.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace pp {

struct SvgOptions {
    int width = 0;                  // whole picture in px; 0 = adaptive (12-18 px for the shortest slot)
    bool memory_curves = true;
    ActivationModel activations{};  // sizes for the memory curves
    const Costs* costs = nullptr;   // splits a pair's box in proportion to its two ops; equal halves if null
    std::string title;              // default: the schedule's source
    std::string subtitle;           // extra text after the makespan and bubble line (e.g. the costs)
    std::string id_prefix = "pp";   // for ids in <defs>: distinct per picture when several share a page
    std::string time_unit;          // the time axis's unit ("ms" etc.); empty: cost units
    // Per rank, its host-link transfers, drawn on a row under its slots; null: none.
    const std::vector<std::vector<LinkBox>>* links = nullptr;
};

std::string svg_timeline(const Schedule& schedule, const Simulation& simulation, const SvgOptions& options = {});

// A picture holds about kSvgBytesPerSlot per slot (boxes, labels, memory curve; measured 300 on zbv P=64
// M=4096, a 467 MB file). Past kMaxSvgSlots (about 15 MB) it is not drawn: `show --svg` refuses with the size
// named, `report` keeps the table row and says why the picture is missing. --trace has no such limit.
inline constexpr std::size_t kSvgBytesPerSlot = 300;
inline constexpr std::size_t kMaxSvgSlots = 50000;
// Empty when the picture may be drawn, else why not ("1572864 slots, about 472 MB of SVG: over ..."). `link_boxes`
// (show --offload's host-link transfers) count as slots.
std::string svg_size_problem(const Schedule& schedule, std::size_t link_boxes = 0);

}  // namespace pp
