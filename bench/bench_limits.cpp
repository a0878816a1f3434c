// pipeproof_bench limits [M]: the figures of README "Input limits" (issue 29), measured on the pipeproof binary
// next to this one, each command as a child process the way a user runs it.
//   memory per op: the peak RSS (wait4) of show --json, simulate --ops --json, show --trace and
//     generate --format json on 1F1B P=8 at M (default 65536: 1,048,576 ops), less the peak of the same command
//     at P=2 M=2, divided by the op count;
//   limit margins: the wall time of commands given --time-limit 3 past their limit, run one at a time.
#include "child_process.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// Runs argv quietly; a command that cannot be started ends the bench.
ChildRun run_child(const std::vector<std::string>& argv) {
    const ChildRun run = run_quiet_child(argv);
    if (run.exit_code == 127) {
        fmt::print(stderr, "could not run {}\n", argv[0]);
        std::exit(2);
    }
    return run;
}

std::vector<std::string> with_size(std::vector<std::string> args, int P, int M) {
    for (auto& a : args) {
        if (a == "{P}") a = std::to_string(P);
        if (a == "{M}") a = std::to_string(M);
    }
    return args;
}

}  // namespace

int run_limits_bench(int argc, char** argv, const std::string& self) {
    const int M = argc > 0 ? std::atoi(argv[0]) : 65536;
    const std::string pipeproof = (std::filesystem::path(self).parent_path() / "pipeproof").string();
    const std::string scratch = (std::filesystem::temp_directory_path() / "pipeproof-bench-limits").string();
    std::filesystem::create_directories(scratch);
    const double ops = 8.0 * M * 2;
    fmt::print("memory per op, 1f1b P=8 M={} ({:.0f} ops): peak RSS less the same command at P=2 M=2\n", M, ops);
    const std::vector<std::pair<std::string, std::vector<std::string>>> outputs = {
        {"show --json", {pipeproof, "show", "1f1b", "-P", "{P}", "-M", "{M}", "--json"}},
        {"simulate --ops --json", {pipeproof, "simulate", "1f1b", "-P", "{P}", "-M", "{M}", "--ops", "--json"}},
        {"show --trace", {pipeproof, "show", "1f1b", "-P", "{P}", "-M", "{M}", "--trace", scratch + "/trace.json"}},
        {"generate --format json",
         {pipeproof, "generate", "1f1b", "-P", "{P}", "-M", "{M}", "--format", "json", "-o", scratch + "/s.json"}},
    };
    for (const auto& [name, args] : outputs) {
        const ChildRun small = run_child(with_size(args, 2, 2));
        const ChildRun big = run_child(with_size(args, 8, M));
        fmt::print("  {:<24}{:>8.0f} bytes/op  (peak {:.0f} MiB, {:.1f} s, exit {})\n", name,
                   (big.rss_kib - small.rss_kib) * 1024.0 / ops, big.rss_kib / 1024.0, big.wall_s, big.exit_code);
    }
    fmt::print("time limits: wall time past --time-limit 3, one command at a time\n");
    const std::vector<std::vector<std::string>> limited = {
        {pipeproof, "search", "-P", "32", "-M", "256", "--placement", "1f1b", "--costs",
         "F=18522,I=18086,W=9337,comm=601", "--memory-limit", "64", "--time-limit", "3"},
        {pipeproof, "search", "-P", "500", "-M", "1000", "--time-limit", "3"},
        {pipeproof, "search", "-P", "8", "-M", "16", "--placement", "dualpipe", "--costs",
         "F=18522,I=18086,W=9337,comm=601", "--memory-limit", "8", "--time-limit", "3"},
        {pipeproof, "prove", "zbv", "-P", "64", "--time-limit", "3"},
        {pipeproof, "formula", "zb-h2", "-P", "256", "--time-limit", "3"},
        {pipeproof, "refute", "--claim", "makespan > 0", "1f1b", "-P", "2", "-M", "1..2147483647", "--time-limit", "3"},
        {pipeproof, "sweep", "--mode", "search", "-P", "6", "-M", "65536", "--time-limit", "3",
         "--instance-time-limit", "1"},
        {pipeproof, "sweep", "--mode", "compare", "-P", "1", "-M", "10000", "--time-limit", "3"},
    };
    for (const auto& args : limited) {
        const ChildRun run = run_child(args);
        std::string line;
        for (size_t k = 1; k < args.size() && k < 5; ++k) line += args[k] + " ";
        fmt::print("  {:<36}{:>6.2f} s past the limit (exit {})\n", line + "...", run.wall_s - 3.0, run.exit_code);
    }
    return 0;
}
