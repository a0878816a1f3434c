#pragma once
// A terminal timeline: one row per rank, time to scale, each slot a box labelled with its op letter and
// micro-batch, overlapped F&B pairs in braces, idle time as dots -- in the spirit of DualPipe's figures.
// Letters: F I W B as PyTorch. Chunks are told apart by case: with several pipelines (DualPipe, Chimera) lower
// case is pipeline 1 (DualPipe's reverse direction); with one pipeline and several stages per rank (V shapes,
// interleaved) lower case is the rank's 2nd (4th, ...) stage. The legend says which.
//
// The scale is a round number of time units per column (1, 2, 2.5 or 5 times a power of ten) chosen so that every
// label fits whole in its box; when that would exceed the width budget, boxes too narrow for their label show
// only the op letter (a pair: "{}"), and the legend says so.
#include "model/schedule.hpp"
#include "render/link_box.hpp"
#include "verifier/simulate.hpp"

#include <string>
#include <vector>

namespace pp {

struct GanttOptions {
    int max_width = 200;  // characters for the time axis
    std::string title;    // a first line, e.g. which instance this is ("counterexample: P=4, M=8")
    std::string time_unit;  // "ms" etc. for the legend's scale; empty: plain time units
    // Per rank, its host-link transfers, drawn on a row under the rank (blank where the link is free); null: none.
    const std::vector<std::vector<LinkBox>>* links = nullptr;
};

std::string ascii_gantt(const Schedule& schedule, const Simulation& simulation, const GanttOptions& options = {});

}  // namespace pp
