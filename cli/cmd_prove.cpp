// Placeholder: `pipeproof prove` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_prove(CLI::App& app) {
    app.add_subcommand("prove", "(not available yet) prove a property of a schedule family for every micro-batch count")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'prove' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
