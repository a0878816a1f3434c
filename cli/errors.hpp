#pragma once
// The one place where an exception becomes an exit code. Every subcommand runs inside it (main.cpp), so no
// input can end the process with std::terminate: bad input and usage exit 2 (`file:line:column: error: ...`,
// or the flag that was wrong), an invalid schedule asked to be timed exits 1, and anything unforeseen is
// reported as an internal error with exit 2 rather than a crash.
//
// JSON mode (issue 14): when the command line asks for --json (or runs `sweep`, whose output is JSON lines),
// every outcome is one JSON document on stdout -- errors included, as error_json() shapes them -- while the
// human text still goes to stderr. It is decided from argv before parsing, since a parse error comes before
// any option is read.
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pp::cli {

// --json anywhere before a "--", or the sweep subcommand.
bool wants_json(int argc, char** argv);
void set_json_errors(bool on);
bool json_errors();

// One error of an error document: where (file, line, column: null when not known) and what.
struct ErrorEntry {
    std::string kind;     // "usage", "input", "claim", "size-limit", a violation kind ("order", ...), "internal", ...
    std::string message;
    std::string file;     // "" = not tied to a file
    int line = 0, column = 0;  // 0 = not known
    nlohmann::json extra = nlohmann::json::object();  // a violation's rank, op, witness...

    ErrorEntry(std::string kind_, std::string message_, std::string file_ = "", int line_ = 0, int column_ = 0,
               nlohmann::json extra_ = nlohmann::json::object())
        : kind(std::move(kind_)), message(std::move(message_)), file(std::move(file_)), line(line_), column(column_),
          extra(std::move(extra_)) {}
};
// {"status": "error"|"unknown", "exit_code": N, "errors": [{"kind", "message", "file", "line", "column", ...}]}: status
// "error" for exit 2, "unknown" for exit 3. Exit 1 (the schedule breaks the rules) has verify's members instead:
// {"status": "invalid", "exit_code": 1, "valid": false, "violations": [the same entries], "violation_count": N}.
nlohmann::json error_json(int exit_code, const std::vector<ErrorEntry>& errors);
// Prints an error outcome: the text lines to stderr always, and in JSON mode the document to stdout.
void print_error(int exit_code, const std::vector<ErrorEntry>& errors, const std::string& text);

// Prints the current exception (call from a catch block) and returns the exit code for it.
int report_exception(std::exception_ptr error);

}  // namespace pp::cli
