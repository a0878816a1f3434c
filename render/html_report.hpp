#pragma once
// render/ — pictures of timed schedules: ASCII, SVG, Perfetto trace, HTML report. Uses verifier/, model/.
//
// One self-contained HTML page (inline CSS and SVG, no scripts, no external resources) for a set of
// schedules timed under the same costs: the compare table, the published bubble formulas next to the
// measured values, and one timeline picture per schedule. The page only lays out what it is given; the
// numbers come from verifier/compare.hpp, the formulas from render/published_formulas.hpp and the
// pictures from render/svg_timeline.hpp.
#include "render/published_formulas.hpp"
#include "verifier/compare.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pp {

struct ReportSchedule {
    std::string family;  // as named on the command line ("dualpipe"), or the file name
    CompareRow row;
    std::optional<PublishedFormula> formula;
    std::string svg;     // the timeline picture, an <svg> element
    // MoE chunk costs (issue 11): the exposed EP all-to-all per rank and the share hidden, as text; a table column
    // when any schedule has it.
    std::optional<std::string> exposed_comm;
    // Activation offload (report --offload): the row timed with its stashes moved, as text; a column when any has it.
    std::optional<std::string> offload;
};

struct ReportPage {
    std::string title = "pipeproof report";
    std::string parameters;  // one line: P, M, V, costs, timing model
    std::vector<ReportSchedule> schedules;
};

std::string html_report(const ReportPage& page);

// What a formula's measured counterpart is in a compare row (largest idle, or ZB span minus work).
Rational measured_bubble(const CompareRow& row, BubbleMeasure measure);

}  // namespace pp
