// pipeproof_bench read [FAMILY P M...]: verify and simulate of a schedule file against `awk` counting its
// tokens, in one run, for the native text and the PyTorch CSV of the same schedule (issue 10's yardstick).
// Each command runs as a child process, the way a user runs it; the figure is its CPU time (user + system,
// from wait4, best of 5, the three commands interleaved) and its peak RSS. The schedule files are written by a child too: Linux reports a
// child's peak RSS as at least its parent's peak at the fork, so this process never holds a schedule.
// Several M give the growth exponent between consecutive sizes.
// Default: zbv P=64 at M = 2048, 4096, 8192 (the last is 3,145,728 ops).
#include "schedules/registry.hpp"

#include "child_process.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Usage {
    double cpu_s = 1e300;  // user + system
    long rss_kib = 0;
};

constexpr int kRepeats = 5;

// The better CPU time of the two, and the larger peak RSS.
void keep_best(Usage& best, const Usage& run) {
    best.cpu_s = std::min(best.cpu_s, run.cpu_s);
    best.rss_kib = std::max(best.rss_kib, run.rss_kib);
}

// Runs argv with stdout and stderr sent to /dev/null; best CPU time of `repeats` runs.
Usage run_child(const std::vector<std::string>& argv, int repeats = 3) {
    Usage best;
    for (int k = 0; k < repeats; ++k) {
        const ChildRun run = run_quiet_child(argv);
        if (run.exit_code == -1 || run.exit_code == 127) {
            fmt::print(stderr, "could not run {}\n", argv[0]);
            std::exit(2);
        }
        keep_best(best, {run.cpu_s, run.rss_kib});
    }
    return best;
}

// The op count `pipeproof verify --json` reports for a file.
double op_count_of(const std::string& pipeproof, const std::string& path) {
    const std::string command = "'" + pipeproof + "' verify --json '" + path + "'";
    std::FILE* out = popen(command.c_str(), "r");
    if (!out) return 0;
    std::string text;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
    pclose(out);
    const auto at = text.find("\"ops\": ");
    return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + 7, nullptr);
}

}  // namespace

int run_read_bench(int argc, char** argv, const std::string& self) {
    const std::string family = argc > 0 ? argv[0] : "zbv";
    const int P = argc > 1 ? std::stoi(argv[1]) : 64;
    std::vector<int> Ms;
    for (int k = 2; k < argc; ++k) Ms.push_back(std::stoi(argv[k]));
    if (Ms.empty()) Ms = {2048, 4096, 8192};
    const pp::ScheduleFamily* f = pp::find_family(family);
    if (!f) {
        fmt::print(stderr, "unknown family {}\n", family);
        return 2;
    }
    const std::string pipeproof = (std::filesystem::path(self).parent_path() / "pipeproof").string();
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("pipeproof_bench_read_{}", getpid());
    std::filesystem::create_directories(dir);
    fmt::print("{} P={}: CPU seconds (user + sys, best of {}, runs interleaved) and peak RSS of each command as a "
               "child process\n", family, P, kRepeats);
    fmt::print("{:<8}{:>6}{:>10}{:>9}{:>10}{:>8}{:>12}{:>8}{:>10}{:>10}\n", "format", "M", "ops", "awk s", "verify s",
               "x awk", "simulate s", "x awk", "B/op ver", "B/op sim");
    struct Row {
        double ops, verify, simulate;
    };
    for (const char* ext : {"txt", "csv"}) {
        std::vector<Row> rows;
        for (int M : Ms) {
            const std::string path = (dir / fmt::format("s{}.{}", M, ext)).string();
            run_child({pipeproof, "generate", family, "-P", std::to_string(P), "-M", std::to_string(M), "-o", path}, 1);
            const double ops = op_count_of(pipeproof, path);
            if (ops <= 0) {
                fmt::print(stderr, "could not generate {} P={} M={}\n", family, P, M);
                return 2;
            }
            const std::string program = "{n += NF} END {print n}";  // native: fields split at blanks
            const std::vector<std::string> awk_argv = std::string(ext) == "csv" ? std::vector<std::string>{"awk", "-F,", program, path}
                                                                              : std::vector<std::string>{"awk", program, path};
            // Interleaved, so that a change in the machine's speed (a shared virtual CPU) hits all three alike.
            Usage awk, verify, simulate;
            for (int k = 0; k < kRepeats; ++k) {
                keep_best(awk, run_child(awk_argv, 1));
                keep_best(verify, run_child({pipeproof, "verify", path}, 1));
                keep_best(simulate, run_child({pipeproof, "simulate", path}, 1));
            }
            fmt::print("{:<8}{:>6}{:>10}{:>9.3f}{:>10.3f}{:>8.1f}{:>12.3f}{:>8.1f}{:>10.0f}{:>10.0f}\n",
                       std::string(ext) == "csv" ? "torchcsv" : "native", M, ops, awk.cpu_s, verify.cpu_s,
                       verify.cpu_s / awk.cpu_s, simulate.cpu_s, simulate.cpu_s / awk.cpu_s,
                       verify.rss_kib * 1024.0 / ops, simulate.rss_kib * 1024.0 / ops);
            rows.push_back({ops, verify.cpu_s, simulate.cpu_s});
            std::filesystem::remove(path);
        }
        for (size_t k = 1; k < rows.size(); ++k) {
            const double growth = std::log(rows[k].ops / rows[k - 1].ops);
            fmt::print("  growth exponent {:.0f} -> {:.0f} ops: verify {:.2f}, simulate {:.2f}\n", rows[k - 1].ops,
                       rows[k].ops, std::log(rows[k].verify / rows[k - 1].verify) / growth,
                       std::log(rows[k].simulate / rows[k - 1].simulate) / growth);
        }
    }
    std::filesystem::remove_all(dir);
    return 0;
}
