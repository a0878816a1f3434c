// Placeholder: `pipeproof sweep` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_sweep(CLI::App& app) {
    app.add_subcommand("sweep", "(not available yet) run search or compare over a grid of instances, one JSON line each")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'sweep' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
