#pragma once
// Splitting text into lines and words with 1-based line and column numbers, shared by the readers.
// Accepts LF and CRLF and a UTF-8 byte-order mark; rejects NUL bytes and invalid UTF-8 with the position
// of the first bad byte, so binary garbage gets a clear error instead of a guess.
#include "formats/input_error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

// Positions are 32-bit (line, column): a reader refuses a larger text up front (InputError) rather than
// wrapping a line number.
inline constexpr std::size_t kMaxTextBytes = 0x7FFFFFFF;
void check_text_size(std::string_view text, const std::string& file);
void check_file_size(std::uint64_t bytes, const std::string& file);  // the same for a file of `bytes`
// The length of the longest prefix of plain ASCII without NUL (what every valid file mostly is), scanned
// 8 bytes at a time; the byte after it needs a closer look.
std::size_t plain_ascii_prefix(std::string_view text);
// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 when it is not valid UTF-8 (also
// overlong forms, UTF-16 surrogates, code points above U+10FFFF): what every reader accepts as text.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

struct TextLine {
    int number = 0;          // 1-based
    std::string_view text;   // without the line end (and without a BOM on line 1)
};

struct Word {
    std::string_view text;
    int column = 0;          // 1-based byte column within the line
};

// One line at a time, so that reading costs O(1) memory per line (a file of blank lines costs nothing).
// The constructor checks the whole text (size, NUL bytes, UTF-8) and throws InputError at the first bad
// byte; a text ending in a line end has no empty last line.
class LineCursor {
public:
    LineCursor(std::string_view text, const std::string& file);
    bool next(TextLine& line);   // false after the last line
    int last_number() const { return number_; }  // of the line returned last (0 before the first)

private:
    std::string_view text_;
    std::size_t start_ = 0;
    int number_ = 0;
    bool done_ = false;
};

// Words separated by spaces or tabs; stops at '#' (a comment).
std::vector<Word> split_words(std::string_view line);
void split_words(std::string_view line, std::vector<Word>& words);  // into `words`, reusing its storage

// The same words one at a time, for a rank line of 10^5 ops that need not be listed first.
class WordCursor {
public:
    explicit WordCursor(std::string_view line) : line_(line) {}
    bool next(Word& word);  // false after the last word
    // The number of words left, exactly (the comment excluded): to reserve once.
    std::size_t words_left() const;
    // The line and where the words left start in it (for a reader that scans them itself).
    std::string_view line() const { return line_; }
    std::size_t position() const { return done_ ? line_.size() : i_; }

private:
    std::string_view line_;
    std::size_t i_ = 0;
    bool done_ = false;
};

}  // namespace pp
