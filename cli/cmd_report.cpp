// Placeholder: `pipeproof report` is not written yet.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <iostream>

namespace pp::cli {

Runner add_report(CLI::App& app) {
    app.add_subcommand("report", "(not available yet) one self-contained HTML page with the compare table, pictures and formulas")->allow_extras();
    return [] {
        std::cerr << "pipeproof: error: 'report' is not available yet\n";
        return kBadInput;
    };
}

}  // namespace pp::cli
