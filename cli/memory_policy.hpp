#pragma once
// The executable's allocation policy (cli/memory_policy.cpp): huge pages for large blocks, a fixed mmap
// threshold. Call configure_allocation() first thing in main.

namespace pp::cli {

void configure_allocation();

}  // namespace pp::cli
