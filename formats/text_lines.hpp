#pragma once
// Splitting text into lines and words with 1-based line and column numbers, shared by the readers.
// Accepts LF and CRLF and a UTF-8 byte-order mark; rejects NUL bytes and invalid UTF-8 with the position
// of the first bad byte, so binary garbage gets a clear error instead of a guess.
#include "formats/input_error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pp {

struct TextLine {
    int number = 0;          // 1-based
    std::string_view text;   // without the line end (and without a BOM on line 1)
};

struct Word {
    std::string_view text;
    int column = 0;          // 1-based byte column within the line
};

// Throws InputError for NUL bytes or invalid UTF-8.
std::vector<TextLine> split_lines(std::string_view text, const std::string& file);
// Words separated by spaces or tabs; stops at '#' (a comment).
std::vector<Word> split_words(std::string_view line);

}  // namespace pp
