// Placeholder: `pipeproof refute` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_refute(CLI::App& app) {
    app.add_subcommand("refute", "(not available yet) search for the smallest counterexample to a claim")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'refute' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
