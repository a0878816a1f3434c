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
#include <cctype>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>

namespace {

// A short flag the subcommand does not have and no flag resembles: what it has instead. -M on the commands that
// answer for every M gets the reason there is none.
std::string missing_flag_hint(const CLI::App& command, const std::string& flag, const std::vector<std::string>& known_short) {
    const std::string name = command.get_name();
    const bool every_m = name == "prove" || name == "formula";
    if (every_m && (flag == "-M" || flag == "-m"))
        return fmt::format("{}: `pipeproof {}` answers for every number of micro-batches, so it takes no -M; "
                           "`pipeproof simulate` or `compare` time one M\n",
                           flag, name);
    std::string shorts;
    for (const std::string& known : known_short)
        if (known != "-h") shorts += (shorts.empty() ? "" : ", ") + known;
    return fmt::format("{}: unknown flag for `pipeproof {}`{}; see `pipeproof {} --help`\n", flag, name,
                       shorts.empty() ? "" : " (its short flags: " + shorts + ")", name);
}

// "did you mean '--memory-limit'?" for each flag on the command line that the subcommand does not have: a long
// flag gets the nearest long name; a short one (-p) the short flag that differs only in case (-P), else the nearest
// long name of its letter.
std::string flag_typo_hints(const CLI::App& app, int argc, char** argv) {
    const auto parsed = app.get_subcommands();
    const CLI::App& command = parsed.empty() ? app : *parsed.front();
    std::vector<std::string> known_long, known_short;
    std::map<std::string, std::string> long_of_short;  // "-P" -> "--ranks"
    for (const CLI::App* scope : {&command, &app})
        for (const CLI::Option* option : scope->get_options()) {
            const auto& lnames = option->get_lnames();
            for (const std::string& name : lnames) known_long.push_back("--" + name);
            for (const std::string& name : option->get_snames()) {
                known_short.push_back("-" + name);
                if (!lnames.empty()) long_of_short["-" + name] = "--" + lnames.front();
            }
        }
    std::string hints;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "--") break;
        const bool is_long = arg.size() >= 3 && arg.substr(0, 2) == "--";
        const bool is_short = arg.size() == 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]));
        if (!is_long && !is_short) continue;
        const std::string flag(arg.substr(0, arg.find('=')));
        const auto& known = is_long ? known_long : known_short;
        if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
        std::optional<std::string> nearest;
        if (is_long) {
            nearest = pp::nearest_spelling(flag, known_long);
        } else {
            for (const std::string& name : known_short)
                if (pp::to_lower(name) == pp::to_lower(flag)) nearest = name;
        }
        if (!nearest) {
            if (is_short) hints += missing_flag_hint(command, flag, known_short);
            continue;
        }
        const auto long_name = long_of_short.find(*nearest);
        hints += fmt::format("{}: unknown flag; did you mean '{}'{}?\n", flag, *nearest,
                             long_name == long_of_short.end() ? "" : " (" + long_name->second + ")");
    }
    return hints;
}

using Adder = pp::cli::Runner (*)(CLI::App&);
struct Command {
    std::string_view name;
    Adder adder;
};
// In the order `pipeproof --help` lists them.
const Command kCommands[] = {
    {"verify", pp::cli::add_verify},   {"simulate", pp::cli::add_simulate}, {"show", pp::cli::add_show},
    {"convert", pp::cli::add_convert}, {"list", pp::cli::add_list},         {"generate", pp::cli::add_generate},
    {"compare", pp::cli::add_compare}, {"search", pp::cli::add_search},     {"sweep", pp::cli::add_sweep},
    {"prove", pp::cli::add_prove},     {"refute", pp::cli::add_refute},     {"formula", pp::cli::add_formula},
    {"report", pp::cli::add_report},   {"plan", pp::cli::add_plan},         {"demo", pp::cli::add_demo},
    {"chunk", pp::cli::add_chunk},     {"equiv", pp::cli::add_equiv}};

// The subcommand a command line names, when it is one of ours: only that one is set up. CLI11 builds every
// option of every subcommand it is given, a fifth of the start-up of a short run such as `verify` of a small
// file. Anything else -- no command, a misspelt one, --help-all, an option before the command -- gets them
// all, for the listings and the suggestions.
std::optional<std::string_view> named_command(int argc, char** argv) {
    for (int k = 1; k < argc; ++k)
        if (std::string_view(argv[k]) == "--help-all") return std::nullopt;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "--max-ops") {  // the one top-level option that takes a value
            ++k;
            continue;
        }
        if (arg.empty() || arg[0] == '-') return std::nullopt;
        for (const auto& command : kCommands)
            if (command.name == arg) return arg;
        return std::nullopt;
    }
    return std::nullopt;
}

// "verfy: not a pipeproof command; did you mean 'verify'?" for a first word that names no command.
std::string command_typo_hint(int argc, char** argv) {
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--max-ops") {
            ++k;
            continue;
        }
        if (arg.empty() || arg[0] == '-') continue;
        std::vector<std::string> names;
        for (const auto& command : kCommands) {
            if (command.name == arg) return "";
            names.emplace_back(command.name);
        }
        const auto nearest = pp::nearest_spelling(arg, names);
        return fmt::format("{}: not a pipeproof command{}\n", arg,
                           nearest ? "; did you mean '" + *nearest + "'?" : " (`pipeproof --help` lists them)");
    }
    return "";
}

int run(int argc, char** argv) {
    using namespace pp::cli;
    CLI::App app{"pipeproof: verify, time and prove pipeline-parallel training schedules"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "help for every subcommand");
    app.set_version_flag("--version", std::string("pipeproof ") + PIPEPROOF_VERSION);
    set_invocation(argc, argv, std::string("pipeproof ") + PIPEPROOF_VERSION);
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
    const std::optional<std::string_view> named = named_command(argc, argv);
    for (const auto& [name, adder] : kCommands)
        if (!named || *named == name) add(adder);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A bad flag or value: the suggestions first (a mistyped flag is usually the cause of what CLI11 reports,
        // e.g. `-p 4` leaves --ranks missing), then CLI11's text, on stderr; in JSON mode the error document on
        // stdout. An unknown flag with a suggestion needs no "arguments were not expected" line after it.
        const std::string hints = command_typo_hint(argc, argv) + flag_typo_hints(app, argc, argv);
        std::cerr << hints;
        if (!hints.empty() && dynamic_cast<const CLI::ExtrasError*>(&e))
            std::cerr << "Run with --help or --help-all for more information.\n";
        else
            app.exit(e);
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
