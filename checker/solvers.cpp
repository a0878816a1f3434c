// z3 and cvc5 as processes, each with a time limit of its own and a kill after it: an SMT-LIB2 obligation counts
// only when both answer unsat to every (check-sat) in it.
#include "checker/internal.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

extern char** environ;

namespace pp::check {

SolverAnswer run_solver(const std::string& solver, const std::filesystem::path& file, double seconds, int queries) {
    SolverAnswer out;
    out.solver = solver;
    std::vector<std::string> args;
    if (solver == "z3") {
        args = {"z3", fmt::format("-T:{}", std::max(1, static_cast<int>(seconds + 0.999))), file.string()};
    } else if (solver == "cvc5") {
        args = {"cvc5", "--incremental", fmt::format("--tlimit-per={}", static_cast<long long>(seconds * 1000)), file.string()};
    } else {
        out.error = "unknown solver '" + solver + "'";
        return out;
    }
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) {
        out.error = "cannot create a pipe";
        return out;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const auto started = std::chrono::steady_clock::now();
    const int spawned = posix_spawnp(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fd[1]);
    if (spawned != 0) {
        close(pipe_fd[0]);
        out.error = solver + " is not installed (Debian's package " + solver + ")";
        return out;
    }
    // Read everything it prints; kill it a few seconds after its own limit should have stopped it.
    std::string text;
    const auto hard = started + std::chrono::duration<double>(seconds * queries + 5);
    bool killed = false;
    for (char buffer[4096];;) {
        pollfd fd{pipe_fd[0], POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(hard - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        if (poll(&fd, 1, static_cast<int>(std::min<long long>(left, 1000))) <= 0) continue;
        const ssize_t n = read(pipe_fd[0], buffer, sizeof buffer);
        if (n <= 0) break;
        text.append(buffer, static_cast<size_t>(n));
    }
    close(pipe_fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (killed) {
        out.error = fmt::format("{} did not answer within {:.0f} s", solver, seconds * queries + 5);
        return out;
    }
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line == "sat" || line == "unsat" || line == "unknown" || line == "timeout") out.answers.push_back(line);
        else if (!line.empty() && line.rfind("(error", 0) == 0) out.error = solver + ": " + line;
    }
    return out;
}

std::string require_unsat(const std::string& step, const std::filesystem::path& file, int queries, const CheckOptions& options) {
    std::string said;
    for (const std::string& solver : options.solvers) {
        const SolverAnswer a = run_solver(solver, file, options.solver_seconds, queries);
        if (!a.error.empty()) reject(step, fmt::format("{} ({})", a.error, file.filename().string()));
        if (static_cast<int>(a.answers.size()) != queries)
            reject(step, fmt::format("{} gave {} answer(s) to the {} queries of {}", solver, a.answers.size(), queries,
                                     file.filename().string()));
        for (size_t k = 0; k < a.answers.size(); ++k)
            if (a.answers[k] != "unsat")
                reject(step, fmt::format("{} answers {} to query {} of {} (unsat expected)", solver, a.answers[k], k + 1,
                                         file.filename().string()));
        said += fmt::format("{}{} unsat ({:.2f} s)", said.empty() ? "" : ", ", solver, a.seconds);
    }
    return said;
}

}  // namespace pp::check
