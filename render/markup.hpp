#pragma once
// Small text helpers shared by the SVG, HTML and trace writers.
#include <string>
#include <string_view>

namespace pp {

// Escapes & < > " ' for XML/HTML text and attribute values.
std::string xml_escape(std::string_view text);

// A pixel coordinate with at most one decimal ("12", "12.5"), so SVGs stay small and diff-friendly.
std::string px(double value);

// A number in cost units for axis labels and tooltips: up to 3 decimals, trailing zeros trimmed.
std::string short_number(double value);

}  // namespace pp
