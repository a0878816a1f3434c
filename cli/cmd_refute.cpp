// placeholder while being written
#include "cli/commands.hpp"
#include "cli/common.hpp"
namespace pp::cli {
Runner add_refute(CLI::App& app) {
    app.add_subcommand("refute", "(being written)")->allow_extras();
    return [] { return kBadInput; };
}
}  // namespace pp::cli
