// pipeproof: verify, time, search and prove pipeline-parallel training schedules.
// Exit codes: 0 clean, 1 violations found (or a claim refuted), 2 bad input or usage, 3 undecided.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/errors.hpp"
#include "cli/memory_policy.hpp"
#include "formats/json_text.hpp"
#include "model/size_budget.hpp"
#include "model/spelling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

namespace {

// "did you mean '--memory-limit'?" for each --flag on the command line that the subcommand does not have.
std::string flag_typo_hints(const CLI::App& app, int argc, char** argv) {
    const auto parsed = app.get_subcommands();
    const CLI::App& command = parsed.empty() ? app : *parsed.front();
    std::vector<std::string> known;
    for (const CLI::App* scope : {&command, &app})
        for (const CLI::Option* option : scope->get_options())
            for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
    std::string hints;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "--") break;
        if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
        const std::string flag(arg.substr(0, arg.find('=')));
        if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
        if (const auto nearest = pp::nearest_spelling(flag, known))
            hints += fmt::format("{}: unknown flag; did you mean '{}'?\n", flag, *nearest);
    }
    return hints;
}

int run(int argc, char** argv) {
    using namespace pp::cli;
    CLI::App app{"pipeproof: verify, time and prove pipeline-parallel training schedules"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "help for every subcommand");
    app.set_version_flag("--version", std::string("pipeproof ") + PIPEPROOF_VERSION);
    // Options of the top level may also follow the subcommand (`pipeproof verify big.txt --max-ops 2e8`).
    app.fallthrough();
    double max_ops = static_cast<double>(pp::kDefaultMaxOps);
    app.add_option("--max-ops", max_ops,
                   fmt::format("largest schedule accepted, in ops (default {}); larger inputs are rejected up front "
                               "with an estimate of their size",
                               pp::format_count(pp::kDefaultMaxOps)))
        ->check(CLI::Range(1.0, 1e18));
    std::map<CLI::App*, Runner> runners;
    auto add = [&](Runner (*adder)(CLI::App&)) {
        const size_t before = app.get_subcommands({}).size();
        Runner run = adder(app);
        runners[app.get_subcommands({})[before]] = std::move(run);
    };
    for (auto adder : {add_verify, add_simulate, add_show, add_convert, add_list, add_generate, add_compare, add_search, add_sweep,
                        add_prove, add_refute, add_formula, add_report, add_plan, add_demo, add_chunk})
        add(adder);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A bad flag or value: CLI11's text on stderr, and in JSON mode the error document on stdout.
        app.exit(e);
        const std::string hints = flag_typo_hints(app, argc, argv);
        std::cerr << hints;
        if (json_errors())
            std::cout << pp::json_text(error_json(kBadInput, {{"usage", e.what() + (hints.empty() ? "" : "\n" + hints)}}), 2) << "\n";
        return kBadInput;
    }
    pp::set_max_ops(static_cast<std::uint64_t>(max_ops));
    for (auto& [sub, run] : runners)
        if (sub->parsed()) return run();
    return kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
    pp::cli::configure_allocation();
    // JSON mode is known before parsing, so that even a parse error answers in JSON (cli/errors.hpp).
    pp::cli::set_json_errors(pp::cli::wants_json(argc, argv));
    // The one handler: whatever a command throws becomes a message and an exit code (cli/errors.hpp).
    try {
        return run(argc, argv);
    } catch (...) {
        return pp::cli::report_exception(std::current_exception());
    }
}
