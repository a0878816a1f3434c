#pragma once
// cli/ — the thin `pipeproof` command line on top of every other folder.
//
// Each subcommand registers itself on the app and returns the function that runs it (its exit code).
#include <CLI/CLI.hpp>

#include <functional>

namespace pp::cli {

using Runner = std::function<int()>;

Runner add_verify(CLI::App& app);
Runner add_simulate(CLI::App& app);
Runner add_show(CLI::App& app);
Runner add_convert(CLI::App& app);
Runner add_list(CLI::App& app);
Runner add_generate(CLI::App& app);
Runner add_demo(CLI::App& app);
Runner add_search(CLI::App& app);
Runner add_sweep(CLI::App& app);
Runner add_compare(CLI::App& app);
Runner add_report(CLI::App& app);
Runner add_plan(CLI::App& app);
Runner add_prove(CLI::App& app);
Runner add_refute(CLI::App& app);
Runner add_formula(CLI::App& app);
Runner add_chunk(CLI::App& app);
Runner add_equiv(CLI::App& app);

}  // namespace pp::cli
