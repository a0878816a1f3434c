// nlohmann's layout, reproduced: "{" and "[" alone, each entry on its own line indented by depth x indent,
// "key": value, a comma after every entry but the last, the closing bracket at the container's own depth;
// an empty container is "{}" / "[]". Compact: no spaces or line breaks at all.
#include "formats/json_stream.hpp"

namespace pp {

void JsonStream::element() {
    if (pending_key_) return;  // the key already placed it
    if (has_items_.empty()) return;
    if (has_items_.back()) out_ << ',';
    has_items_.back() = true;
    newline(has_items_.size());
}

void JsonStream::key(std::string_view name) {
    element();
    out_ << json_text(nlohmann::json(std::string(name))) << (indent_ >= 0 ? ": " : ":");
    pending_key_ = true;
}

void JsonStream::open(char bracket) {
    element();
    pending_key_ = false;
    out_ << bracket;
    has_items_.push_back(false);
}

void JsonStream::close(char bracket) {
    const bool items = has_items_.back();
    has_items_.pop_back();
    if (items) newline(has_items_.size());
    out_ << bracket;
}

void JsonStream::newline(size_t depth) {
    if (indent_ < 0) return;
    out_ << '\n' << std::string(depth * static_cast<size_t>(indent_), ' ');
}

void JsonStream::write_indented(const std::string& text) {
    if (indent_ < 0 || has_items_.empty()) {
        out_ << text;
        return;
    }
    // A nested value's own line breaks get the depth it is printed at (strings hold no raw line breaks).
    const std::string pad(has_items_.size() * static_cast<size_t>(indent_), ' ');
    size_t from = 0;
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', from)) {
        out_.write(text.data() + from, static_cast<std::streamsize>(at + 1 - from));
        out_ << pad;
        from = at + 1;
    }
    out_.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

}  // namespace pp
