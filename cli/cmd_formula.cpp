// Placeholder: `pipeproof formula` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_formula(CLI::App& app) {
    app.add_subcommand("formula", "(not available yet) derive each rank's idle time as an expression in the costs")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'formula' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
