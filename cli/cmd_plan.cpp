// Placeholder: `pipeproof plan` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_plan(CLI::App& app) {
    app.add_subcommand("plan", "(not available yet) recommend a pipeline strategy for a cluster and a model")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'plan' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
