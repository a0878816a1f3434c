#pragma once
// pipeproof's own schedule format: a small header and one line per rank (grammar in docs/formats.md).
//
//   # 1F1B, 2 ranks, 2 micro-batches
//   ranks 2
//   microbatches 2
//   costs F=1 I=1 W=1 comm=0
//   rank 0: 0F0 0F1 0B0 0B1
//   rank 1: 1F0 1B0 1F1 1B1
//
// Ops use PyTorch's action syntax (stage, letter, micro-batch), "@k" marks pipeline k > 0, "(a;b)" is an
// overlapped F&B pair and "." an explicit empty slot.
#include "model/schedule.hpp"

#include <string>
#include <string_view>

namespace pp {

// Throws InputError (file:line:column) on anything it cannot read unambiguously.
Schedule read_native(std::string_view text, const std::string& file_name);
std::string write_native(const Schedule& schedule);

}  // namespace pp
