#include "render/markup.hpp"

#include <fmt/format.h>

#include <cmath>

namespace pp {

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {
std::string trim_zeros(std::string text) {
    if (text.find('.') == std::string::npos) return text;
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
    if (text == "-0") text = "0";
    return text;
}
}  // namespace

std::string px(double value) { return trim_zeros(fmt::format("{:.1f}", std::round(value * 10.0) / 10.0)); }

std::string short_number(double value) { return trim_zeros(fmt::format("{:.3f}", value)); }

}  // namespace pp
