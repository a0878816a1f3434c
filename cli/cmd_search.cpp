// Placeholder: `pipeproof search` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_search(CLI::App& app) {
    app.add_subcommand("search", "(not available yet) optimal schedule search with Z3 (minimum makespan under a memory cap, with a proof)")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'search' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
