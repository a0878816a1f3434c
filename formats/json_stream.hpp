#pragma once
// JSON written as it is produced, for documents with one entry per op (a schedule, a timeline, a trace): the
// text is what json_text(document, indent) would print for the whole document, but only one entry is held at
// a time, so memory stays proportional to the schedule, not to its text (a nlohmann document costs about
// 1.4 KB per op; `show --json` of 1M ops took 1.4 GB, a trace 5 GB).
//
// Containers are opened and closed explicitly; a value is any small nlohmann document, printed in place with
// the indentation of its depth.
#include "formats/json_text.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

class JsonStream {
public:
    // indent -1: compact, one line (as json_text).
    JsonStream(std::ostream& out, int indent) : out_(out), indent_(indent) {}

    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }
    // The key of the next value or container (inside an object).
    void key(std::string_view name);
    template <class Json>
    void value(const Json& v) {
        element();
        write_indented(json_text(v, indent_));
        pending_key_ = false;
    }
    // Every entry of a small object, in its own order (nlohmann::json: sorted), as keys and values of the
    // object being written.
    template <class Json>
    void members(const Json& object) {
        for (auto it = object.begin(); it != object.end(); ++it) {
            key(it.key());
            value(it.value());
        }
    }

private:
    void open(char bracket);
    void close(char bracket);
    void element();  // the separator and line break before a value or container
    void newline(size_t depth);
    void write_indented(const std::string& text);

    std::ostream& out_;
    int indent_;
    std::vector<bool> has_items_;  // per open container
    bool pending_key_ = false;
};

// Writes `document` with one more member, `key`, whose value is an array of `count` elements produced by
// element(i) one at a time, at the place the sorted keys of a nlohmann::json give it.
template <class Element>
void write_json_with_array(std::ostream& out, const nlohmann::json& document, const std::string& key, size_t count,
                           const Element& element, int indent) {
    JsonStream stream(out, indent);
    stream.begin_object();
    bool written = false;
    auto write_array = [&] {
        stream.key(key);
        stream.begin_array();
        for (size_t i = 0; i < count; ++i) stream.value(element(i));
        stream.end_array();
        written = true;
    };
    for (auto it = document.begin(); it != document.end(); ++it) {
        if (!written && key < it.key()) write_array();
        stream.key(it.key());
        stream.value(it.value());
    }
    if (!written) write_array();
    stream.end_object();
}

}  // namespace pp
