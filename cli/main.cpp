// pipeproof: verify, time, search and prove pipeline-parallel training schedules.
// Exit codes: 0 clean, 1 violations found (or a claim refuted), 2 bad input or usage, 3 undecided.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "formats/input_error.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <iostream>
#include <map>

int main(int argc, char** argv) {
    using namespace pp::cli;
    CLI::App app{"pipeproof: verify, time and prove pipeline-parallel training schedules"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "help for every subcommand");
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
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kBadInput;
    }
    try {
        for (auto& [sub, run] : runners)
            if (sub->parsed()) return run();
    } catch (const pp::InputError& e) {
        std::cerr << e.where() << ": error: " << e.what() << "\n";
        return kBadInput;
    } catch (const UsageError& e) {
        std::cerr << "pipeproof: error: " << e.what() << "\n";
        return kBadInput;
    } catch (const pp::GenerateError& e) {
        std::cerr << "pipeproof: error: " << e.what() << "\n";
        return kBadInput;
    } catch (const pp::SimulationError& e) {
        std::cerr << "pipeproof: error: " << e.what() << "\n";
        return kViolations;
    } catch (const pp::ChunkBestUndecided& e) {
        std::cerr << "pipeproof: undecided: " << e.what() << "\n";
        return kUndecided;
    }
    return kBadInput;
}
