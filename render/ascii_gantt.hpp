#pragma once
// A terminal timeline: one row per rank, time to scale, each slot a box labelled with its op letter and
// micro-batch, overlapped F&B pairs in braces, idle time as dots -- in the spirit of DualPipe's figures.
// Letters: F I W B as PyTorch; a rank's second stage (V shapes, DualPipe's reverse direction) is drawn
// in lower case, so "F3" and "f3" are different chunks of micro-batch 3.
#include "model/schedule.hpp"
#include "verifier/simulate.hpp"

#include <string>

namespace pp {

struct GanttOptions {
    int max_width = 160;  // characters for the time axis
};

std::string ascii_gantt(const Schedule& schedule, const Simulation& simulation, const GanttOptions& options = {});

}  // namespace pp
