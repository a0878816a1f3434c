#pragma once
// Runs the pipeproof binary the way a user does and captures exit code, stdout and stderr.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace pp::test {

struct CliResult {
    int exit_code = -1;
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

inline std::filesystem::path scratch_dir() {
    auto dir = std::filesystem::temp_directory_path() / ("pipeproof-tests-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

// A path in the scratch directory with nothing at it (what was there is removed), for a command to create.
inline std::filesystem::path fresh_dir(const std::string& name) {
    const auto dir = scratch_dir() / name;
    std::filesystem::remove_all(dir);
    return dir;
}

// Writes text to a fresh file in the scratch directory and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
    auto path = scratch_dir() / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

// Runs `program args` through the shell (args are shell words), stdout and stderr captured.
inline CliResult run_program(const std::string& program, const std::string& args) {
    static int counter = 0;
    const auto dir = scratch_dir();
    const auto out = dir / ("out" + std::to_string(counter) + ".txt");
    const auto err = dir / ("err" + std::to_string(counter++) + ".txt");
    const std::string command = program + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(command.c_str());
    CliResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = slurp(out);
    result.err = slurp(err);
    return result;
}

inline CliResult run_cli(const std::string& args) { return run_program(PP_CLI_PATH, args); }
#ifdef PP_CHECK_PATH
// The independent checker of proof certificates (checker/).
inline CliResult run_check(const std::string& args) { return run_program(PP_CHECK_PATH, args); }
#endif

}  // namespace pp::test
