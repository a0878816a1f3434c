#pragma once
// The one place where an exception becomes an exit code. Every subcommand runs inside it (main.cpp), so no
// input can end the process with std::terminate: bad input and usage exit 2 (`file:line:column: error: ...`,
// or the flag that was wrong), an invalid schedule asked to be timed exits 1, and anything unforeseen is
// reported as an internal error with exit 2 rather than a crash.
#include <exception>

namespace pp::cli {

// Prints the current exception (call from a catch block) to stderr and returns the exit code for it.
int report_exception(std::exception_ptr error);

}  // namespace pp::cli
