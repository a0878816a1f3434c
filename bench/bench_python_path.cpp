// pipeproof_bench python-path [FAMILY P V M]: `pipeproof verify FILE` + `pipeproof simulate FILE` against the
// dry run a PyTorch user does on the same schedule CSV in Python (bench/pytorch_path.py: read the CSV into
// actions, _validate_schedule, _add_send_recv, _simulate_comms_compute; our own re-implementation of
// PyTorch's algorithms, run by the system Python), in one run. Each command is a child process, the way a
// user runs it; the figure is its CPU time (user + system, from wait4), the best and the median run, and its
// peak RSS. Five rounds, the three commands interleaved in each (a change in the shared virtual CPU's speed hits
// all three alike); a round runs each 20 ms pipeproof command five times and the 3 s Python path once, since a
// VM's noise on one 20 ms run (±25 % here) is what a 3 s run averages away. The file
// is written by a child too (`pipeproof generate ... --format torch-csv`), so this process never holds it.
// Default: interleaved-1f1b P=8 V=2 M=4096, i.e. 131,072 ops (P x V stages x M micro-batches x {F, B}).
#include "child_process.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#ifndef PP_SOURCE_DIR
#define PP_SOURCE_DIR "."
#endif

namespace {

constexpr int kRounds = 5;
constexpr int kShortRunsPerRound = 5;  // pipeproof's runs; the Python path runs once a round
constexpr const char* kPython = "/usr/bin/python3";

struct Usage {
    std::vector<double> cpu_s;  // user + system, one per run
    long rss_kib = 0;           // the largest peak
    double best() const { return *std::min_element(cpu_s.begin(), cpu_s.end()); }
    double median() const {
        std::vector<double> sorted = cpu_s;
        std::sort(sorted.begin(), sorted.end());
        return sorted[sorted.size() / 2];
    }
};

// Runs argv once with stdout and stderr sent to /dev/null; folds its CPU time and peak RSS into `best`.
// Exits the bench when the command cannot run or fails: a failed run's time means nothing.
void run_child(const std::vector<std::string>& argv, Usage& best) {
    const ChildRun run = run_quiet_child(argv);
    if (run.exit_code != 0) {
        fmt::print(stderr, "{} {} failed (exit status {})\n", argv[0], argv.size() > 1 ? argv[1] : "", run.exit_code);
        std::exit(2);
    }
    best.cpu_s.push_back(run.cpu_s);
    best.rss_kib = std::max(best.rss_kib, run.rss_kib);
}

// What a command prints (stdout and stderr), run once through the shell.
std::string output_of(const std::string& command) {
    std::FILE* out = popen((command + " 2>&1").c_str(), "r");
    if (!out) return {};
    std::string text;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
    pclose(out);
    return text;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

int run_python_path_bench(int argc, char** argv, const std::string& self) {
    if (argc != 0 && argc != 4) {
        fmt::print(stderr, "usage: pipeproof_bench python-path [FAMILY P V M]   (default interleaved-1f1b 8 2 4096)\n");
        return 2;
    }
    const std::string family = argc ? argv[0] : "interleaved-1f1b";
    const std::string P = argc ? argv[1] : "8", V = argc ? argv[2] : "2", M = argc ? argv[3] : "4096";
    const std::string pipeproof = (std::filesystem::path(self).parent_path() / "pipeproof").string();
    const std::string script = std::string(PP_SOURCE_DIR) + "/bench/pytorch_path.py";
    if (!std::filesystem::exists(script)) {
        fmt::print(stderr, "cannot find {}\n", script);
        return 2;
    }
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("pipeproof_bench_python_{}", getpid());
    std::filesystem::create_directories(dir);
    const std::string path = (dir / fmt::format("{}_P{}_V{}_M{}.csv", family, P, V, M)).string();
    Usage generate;
    run_child({pipeproof, "generate", family, "-P", P, "-V", V, "-M", M, "--format", "torch-csv", "-o", path}, generate);

    // Once, untimed: what each side reports about the file (and that both accept it).
    const std::string verified = output_of(quoted(pipeproof) + " verify " + quoted(path));
    const std::string python = output_of(std::string(kPython) + " " + quoted(script) + " " + quoted(path));
    fmt::print("{} P={} V={} M={}, PyTorch CSV of {:.0f} KiB\n", family, P, V, M,
               std::filesystem::file_size(path) / 1024.0);
    fmt::print("pipeproof verify: {}", verified.substr(0, verified.find('\n') + 1));
    fmt::print("Python path: {}", python);

    Usage verify, simulate, python_path;
    for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < kShortRunsPerRound; ++k) {
            run_child({pipeproof, "verify", path}, verify);
            run_child({pipeproof, "simulate", path}, simulate);
        }
        run_child({kPython, script, path}, python_path);
    }
    const double ours = verify.best() + simulate.best();
    fmt::print("CPU seconds (user + sys) of each command as a child process: best and median of {} runs of each "
               "pipeproof command and {} of the Python path, interleaved:\n",
               kRounds * kShortRunsPerRound, kRounds);
    fmt::print("{:<42}{:>10}{:>10}{:>14}\n", "command", "best", "median", "peak RSS MiB");
    auto row = [](const char* name, const Usage& usage) {
        fmt::print("{:<42}{:>10.4f}{:>10.4f}{:>14.1f}\n", name, usage.best(), usage.median(), usage.rss_kib / 1024.0);
    };
    row("pipeproof verify FILE", verify);
    row("pipeproof simulate FILE", simulate);
    fmt::print("{:<42}{:>10.4f}{:>10.4f}\n", "verify + simulate", ours, verify.median() + simulate.median());
    row("python3 bench/pytorch_path.py FILE", python_path);
    fmt::print("ratio: the Python path takes {:.0f}x the CPU time of verify + simulate (two processes; {:.0f}x "
               "median to median)\n",
               python_path.best() / ours, python_path.median() / (verify.median() + simulate.median()));
    // `simulate` runs every check of `verify` before it times (an invalid file gets its violations and no
    // timing), as the Python path validates and then simulates in one process: the same work, one start-up.
    fmt::print("ratio: the Python path takes {:.0f}x the CPU time of simulate alone (it verifies, then times: one "
               "process, like the Python path; {:.0f}x median to median)\n",
               python_path.best() / simulate.best(), python_path.median() / simulate.median());
    std::filesystem::remove_all(dir);
    return 0;
}
