#pragma once
// Bad input: where it is (file:line:column, 1-based) and what was expected. The CLI prints it as
// "file:line:col: error: message" and exits with code 2.
#include <stdexcept>
#include <string>

namespace pp {

struct InputError : std::runtime_error {
    InputError(std::string file_, int line_, int column_, const std::string& message_)
        : std::runtime_error(message_), file(std::move(file_)), line(line_), column(column_) {}
    std::string file;
    int line = 0;    // 0 when the error is not tied to a position
    int column = 0;
    std::string where() const;  // "file:line:col" (or just "file")
};

}  // namespace pp
