// Placeholder: `pipeproof compare` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_compare(CLI::App& app) {
    app.add_subcommand("compare", "(not available yet) compare schedules: makespan, bubble, idle per rank, memory, parameter copies")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'compare' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
