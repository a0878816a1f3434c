#pragma once
// A tiny, strict XML reader for the render tests: enough of XML 1.0 for what our writers emit (elements,
// double- or single-quoted attributes, text, the five predefined entities and numeric character
// references, comments), and it rejects anything malformed -- unbalanced or mismatched tags, a bare '&'
// or '<' in text, duplicate attributes, junk after the root. It builds a small tree for counting.
#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::test {

struct XmlElement {
    std::string name;
    std::map<std::string, std::string> attributes;
    std::vector<std::unique_ptr<XmlElement>> children;
    std::string text;  // concatenated character data directly inside this element

    std::string attr(const std::string& key) const {
        auto it = attributes.find(key);
        return it == attributes.end() ? std::string() : it->second;
    }
    bool has_class(const std::string& word) const {
        const std::string classes = " " + attr("class") + " ";
        return classes.find(" " + word + " ") != std::string::npos;
    }
    // Every descendant (not this element) for which pred holds, in document order.
    template <typename Pred>
    void collect(Pred pred, std::vector<const XmlElement*>& out) const {
        for (const auto& child : children) {
            if (pred(*child)) out.push_back(child.get());
            child->collect(pred, out);
        }
    }
    std::vector<const XmlElement*> with_class(const std::string& tag, const std::string& word) const {
        std::vector<const XmlElement*> out;
        collect([&](const XmlElement& e) { return e.name == tag && e.has_class(word); }, out);
        return out;
    }
};

struct XmlError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class XmlReader {
public:
    explicit XmlReader(const std::string& text) : s_(text) {}

    std::unique_ptr<XmlElement> document() {
        skip_misc();
        if (!starts("<")) fail("expected the root element");
        auto root = element();
        skip_misc();
        if (pos_ != s_.size()) fail("content after the root element");
        return root;
    }

private:
    const std::string& s_;
    size_t pos_ = 0;

    [[noreturn]] void fail(const std::string& why) { throw XmlError(why + " at offset " + std::to_string(pos_)); }
    bool starts(const char* prefix) const { return s_.compare(pos_, std::char_traits<char>::length(prefix), prefix) == 0; }
    void skip_space() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    void skip_misc() {  // whitespace, comments and an XML declaration outside the root
        for (;;) {
            skip_space();
            if (starts("<!--")) {
                auto end = s_.find("-->", pos_);
                if (end == std::string::npos) fail("unterminated comment");
                pos_ = end + 3;
            } else if (starts("<?xml")) {
                auto end = s_.find("?>", pos_);
                if (end == std::string::npos) fail("unterminated declaration");
                pos_ = end + 2;
            } else {
                return;
            }
        }
    }
    static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.'; }
    std::string name() {
        const size_t begin = pos_;
        while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
        if (pos_ == begin || std::isdigit(static_cast<unsigned char>(s_[begin])) || s_[begin] == '-') fail("bad name");
        return s_.substr(begin, pos_ - begin);
    }
    // Decodes one entity or character reference starting at '&'.
    std::string reference() {
        const auto end = s_.find(';', pos_);
        if (end == std::string::npos || end - pos_ > 10) fail("bare '&'");
        const std::string body = s_.substr(pos_ + 1, end - pos_ - 1);
        pos_ = end + 1;
        static const std::map<std::string, std::string> named = {
            {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
        if (auto it = named.find(body); it != named.end()) return it->second;
        if (body.size() > 1 && body[0] == '#') {
            const bool hex = body[1] == 'x';
            const std::string digits = body.substr(hex ? 2 : 1);
            if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
                fail("bad character reference");
            return "?";
        }
        fail("unknown entity &" + body + ";");
    }
    std::string attribute_value() {
        if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) fail("attribute value must be quoted");
        const char quote = s_[pos_++];
        std::string value;
        while (pos_ < s_.size() && s_[pos_] != quote) {
            if (s_[pos_] == '<') fail("'<' in an attribute value");
            if (s_[pos_] == '&') value += reference();
            else value += s_[pos_++];
        }
        if (pos_ >= s_.size()) fail("unterminated attribute value");
        ++pos_;
        return value;
    }
    std::unique_ptr<XmlElement> element() {
        ++pos_;  // '<'
        auto e = std::make_unique<XmlElement>();
        e->name = name();
        for (;;) {
            const size_t before = pos_;
            skip_space();
            if (starts("/>")) {
                pos_ += 2;
                return e;
            }
            if (starts(">")) {
                ++pos_;
                break;
            }
            if (pos_ == before) fail("expected whitespace before an attribute");
            const std::string key = name();
            skip_space();
            if (!starts("=")) fail("expected '=' after attribute " + key);
            ++pos_;
            skip_space();
            if (!e->attributes.emplace(key, attribute_value()).second) fail("duplicate attribute " + key);
        }
        content(*e);
        return e;
    }
    void content(XmlElement& e) {
        for (;;) {
            if (pos_ >= s_.size()) fail("unclosed <" + e.name + ">");
            if (starts("</")) {
                pos_ += 2;
                if (name() != e.name) fail("mismatched end tag for <" + e.name + ">");
                skip_space();
                if (!starts(">")) fail("bad end tag");
                ++pos_;
                return;
            }
            if (starts("<!--")) {
                auto end = s_.find("-->", pos_);
                if (end == std::string::npos) fail("unterminated comment");
                pos_ = end + 3;
            } else if (starts("<")) {
                e.children.push_back(element());
            } else if (s_[pos_] == '&') {
                e.text += reference();
            } else {
                e.text += s_[pos_++];
            }
        }
    }
};

inline std::unique_ptr<XmlElement> parse_xml(const std::string& text) { return XmlReader(text).document(); }

}  // namespace pp::test
