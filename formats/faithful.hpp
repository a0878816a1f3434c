#pragma once
// What writing a schedule in a format would not keep. A file that reads back with another meaning (a
// verdict or a timing that changes) is worse than no file, so `convert` refuses each loss unless asked to
// drop it (cli/cmd_convert.cpp); the other writers print it as a warning.
#include "formats/load.hpp"
#include "model/schedule.hpp"

#include <string>
#include <vector>

namespace pp {

struct FormatLoss {
    std::string key;     // what `--drop` names: comms, placement, letters, costs, memory
    std::string detail;  // what exactly would be lost, for the message
};

// The --drop keywords, in the order losses are reported.
const std::vector<std::string>& format_loss_keys();

// Native text and JSON keep everything but a compute_comms file's SEND/RECV actions. PyTorch's CSV keeps
// no costs or memory model, and its reader infers the placement and the letters' era: the written text is
// read back to see whether they come back the same. A schedule the CSV cannot hold at all (two pipelines,
// sequence segments)
// is the writer's error, not a loss.
std::vector<FormatLoss> format_losses(const Schedule& schedule, FileFormat format, TorchEra era);

}  // namespace pp
