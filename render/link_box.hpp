#pragma once
// A transfer on a rank's host link (activation offload), as every picture draws it: the ASCII chart's row under
// the rank, the SVG's link row, the trace's "host link" thread.
#include "model/rational.hpp"

#include <string>

namespace pp {

struct LinkBox {
    Ticks start = 0, end = 0;
    std::string label;       // "o3": offload of micro-batch 3's stash, "r3": its reload (case as its forward's)
    bool to_host = true;     // offload; false: reload
    std::string stash;       // the forward whose stash moves, as files write it ("2F3")
};

}  // namespace pp
