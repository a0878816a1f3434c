#pragma once
// The benches run pipeproof (and awk, python3) as a user does: a child process whose output is thrown away,
// measured by wall time, CPU time (user + system, from wait4) and peak RSS.
#include <string>
#include <vector>

struct ChildRun {
    int exit_code = -1;  // -1 when it did not exit normally; 127 when it could not be started
    double wall_s = 0;
    double cpu_s = 0;
    long rss_kib = 0;
};

// Runs argv (argv[0] looked up on PATH) with stdout and stderr sent to /dev/null, and waits for it.
ChildRun run_quiet_child(const std::vector<std::string>& argv);
