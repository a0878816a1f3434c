#include "formats/text_lines.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace pp {
namespace {

// Whether any of the 8 bytes is zero or has its high bit set (not plain ASCII).
bool has_zero_or_high_byte(std::uint64_t word) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    return ((word - kOnes) | word) & kHighs;
}

// The offset of the first NUL byte or invalid UTF-8 sequence, or npos. Plain ASCII goes 8 bytes at a time.
size_t first_binary_byte(std::string_view text) {
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        i += plain_ascii_prefix(text.substr(i));
        if (i >= n) break;
        if (text[i] == '\0') return i;
        const size_t length = utf8_sequence_length(text, i);
        if (length == 0) return i;
        i += length;
    }
    return std::string_view::npos;
}

void reject_binary(std::string_view text, const std::string& file) {
    const size_t bad = first_binary_byte(text);
    if (bad == std::string_view::npos) return;
    // Line and byte column of the bad byte, counted only now.
    const std::string_view before = text.substr(0, bad);
    const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
    const size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
    const int column = static_cast<int>(bad - line_start) + 1;
    if (text[bad] == '\0') throw InputError(file, line, column, "a NUL byte: this is not a text file");
    throw InputError(file, line, column, "invalid UTF-8: this is not a text file");
}

}  // namespace

size_t utf8_sequence_length(std::string_view text, size_t i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return 1;
    const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (length == 0 || lead > 0xF4 || lead == 0xC0 || lead == 0xC1 || i + length > text.size()) return 0;
    for (size_t k = 1; k < length; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    // Overlong 3/4-byte forms, UTF-16 surrogates and code points above U+10FFFF.
    if (lead == 0xE0 && byte(i + 1) < 0xA0) return 0;
    if (lead == 0xED && byte(i + 1) >= 0xA0) return 0;
    if (lead == 0xF0 && byte(i + 1) < 0x90) return 0;
    if (lead == 0xF4 && byte(i + 1) >= 0x90) return 0;
    return length;
}

size_t plain_ascii_prefix(std::string_view text) {
    const size_t n = text.size();
    size_t i = 0;
    for (std::uint64_t word; i + 8 <= n; i += 8) {
        std::memcpy(&word, text.data() + i, 8);
        if (has_zero_or_high_byte(word)) break;
    }
    while (i < n && text[i] != '\0' && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    return i;
}

void check_text_size(std::string_view text, const std::string& file) { check_file_size(text.size(), file); }

void check_file_size(std::uint64_t bytes, const std::string& file) {
    if (bytes > kMaxTextBytes)
        throw InputError(file, 0, 0,
                         "the file has " + std::to_string(bytes) + " bytes; files up to " +
                             std::to_string(kMaxTextBytes) + " bytes (2 GiB) are read (positions are 32-bit)");
}

LineCursor::LineCursor(std::string_view text, const std::string& file) {
    check_text_size(text, file);
    constexpr std::string_view bom = "\xEF\xBB\xBF";
    if (text.substr(0, 3) == bom) text.remove_prefix(3);
    reject_binary(text, file);
    text_ = text;
}

bool LineCursor::next(TextLine& line) {
    if (done_) return false;
    size_t end = text_.find('\n', start_);
    const bool last = end == std::string_view::npos;
    if (last) {
        end = text_.size();
        done_ = true;
        // The empty "line" after a final line end is not a line (but an empty text is one empty line).
        if (start_ == text_.size() && number_ > 0) return false;
    }
    std::string_view text = text_.substr(start_, end - start_);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line = {++number_, text};
    start_ = end + 1;
    return true;
}

std::vector<Word> split_words(std::string_view line) {
    std::vector<Word> words;
    split_words(line, words);
    return words;
}

void split_words(std::string_view line, std::vector<Word>& words) {
    words.clear();
    WordCursor cursor(line);
    for (Word word; cursor.next(word);) words.push_back(word);
}

namespace {

// What a byte is to the word splitter: part of a word, a separator, or the start of a comment.
enum class ByteClass : std::uint8_t { Word, Separator, Comment };
constexpr std::array<ByteClass, 256> kByteClass = [] {
    std::array<ByteClass, 256> table{};
    table[static_cast<unsigned char>(' ')] = table[static_cast<unsigned char>('\t')] = ByteClass::Separator;
    table[static_cast<unsigned char>('#')] = ByteClass::Comment;
    return table;
}();
ByteClass byte_class(char c) { return kByteClass[static_cast<unsigned char>(c)]; }

}  // namespace

bool WordCursor::next(Word& word) {
    const size_t n = line_.size();
    while (i_ < n && byte_class(line_[i_]) == ByteClass::Separator) ++i_;
    if (done_ || i_ >= n || line_[i_] == '#') return done_ = true, false;
    const size_t start = i_;
    while (i_ < n && byte_class(line_[i_]) == ByteClass::Word) ++i_;
    word = {line_.substr(start, i_ - start), static_cast<int>(start) + 1};
    return true;
}

size_t WordCursor::words_left() const {
    if (done_) return 0;
    std::string_view rest = line_.substr(i_);
    rest = rest.substr(0, rest.find('#'));
    // Word starts: a word byte after a separator (or first). Counting separators instead would reserve a
    // slot for every blank of a line padded with 10^8 spaces.
    size_t starts = 0;
    bool after_separator = true;
    for (char c : rest) {
        const bool separator = (c == ' ') | (c == '\t');
        starts += static_cast<size_t>(after_separator & !separator);  // branch-free
        after_separator = separator;
    }
    return starts;
}

}  // namespace pp
