#include "render/html_report.hpp"

#include "render/markup.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pp {
namespace {


// Exact value, with a decimal next to fractions that have no short decimal form.
std::string exact(const Rational& value) {
    const std::string text = format_rational(value);
    if (text.find('/') == std::string::npos) return text;
    return fmt::format("{} (≈{:.3f})", text, to_double(value));
}

std::string percent(const Rational& value) { return fmt::format("{:.2f}%", 100.0 * to_double(value)); }

template <typename T>
T max_of(const std::vector<T>& values, T fallback) {
    return values.empty() ? fallback : *std::max_element(values.begin(), values.end());
}

const char* kStyle = R"(
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; margin: 24px; color: #1d1d1d; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 28px 0 8px 0; border-bottom: 1px solid #ccc; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 18px 0 6px 0; }
p.params { color: #444; margin: 0 0 12px 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #cfcfcf; padding: 4px 8px; text-align: right; }
th { background: #eef1f5; text-align: center; }
td.name, td.text { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
td.agree { color: #1f7a32; font-weight: bold; }
td.differ { color: #a33; font-weight: bold; }
td.na { color: #888; }
div.picture { overflow-x: auto; border: 1px solid #ddd; padding: 4px; margin-bottom: 8px; }
ul.notes { font-size: 13px; color: #333; max-width: 1100px; }
code { background: #f3f3f3; padding: 0 3px; }
)";

std::string compare_table(const std::vector<ReportSchedule>& schedules) {
    bool gpu_hours = false;
    for (const auto& s : schedules) gpu_hours |= s.row.gpu_hours_per_million_tokens.has_value();
    std::string out = "<table class=\"compare\"><tr><th>schedule</th><th>ranks</th><th>micro-batches</th><th>makespan</th>"
                      "<th>bubble<br>(largest idle)</th><th>bubble fraction</th><th>utilisation</th><th>ZB bubble rate</th>"
                      "<th>peak activations<br>(worst rank)</th><th>weights per rank</th><th>copies per block</th>";
    if (gpu_hours) out += "<th>GPU-hours per<br>10<sup>6</sup> tokens</th>";
    bool exposure = false;
    for (const auto& s : schedules) exposure |= s.exposed_comm.has_value();
    if (exposure) out += "<th>exposed all-to-all<br>per rank (hidden)</th>";
    bool offload = false;
    for (const auto& s : schedules) offload |= s.offload.has_value();
    if (offload) out += "<th>with activation offload</th>";
    out += "</tr>\n";
    for (const auto& s : schedules) {
        const CompareRow& r = s.row;
        const int blocks = max_of(r.blocks_per_rank, 0);
        out += fmt::format("<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                           "<td>{}</td><td>{} of {} blocks ({})</td><td>{}</td>",
                           xml_escape(r.name), r.ranks, r.microbatches, exact(r.makespan), exact(r.worst_idle),
                           percent(r.bubble_fraction), percent(r.utilisation), percent(r.zb_bubble_rate),
                           exact(max_of(r.peak_activations, Rational(0))), blocks, r.blocks,
                           format_rational(max_of(r.model_fraction_per_rank, Rational(0))), max_of(r.copies_per_block, 0));
        if (gpu_hours)
            out += fmt::format("<td>{}</td>", r.gpu_hours_per_million_tokens ? fmt::format("{:.4g}", to_double(*r.gpu_hours_per_million_tokens)) : "—");
        if (exposure) out += fmt::format("<td>{}</td>", s.exposed_comm ? xml_escape(*s.exposed_comm) : "—");
        if (offload) out += fmt::format("<td class=\"text\">{}</td>", s.offload ? xml_escape(*s.offload) : "—");
        out += "</tr>\n";
    }
    return out + "</table>\n";
}

std::string formula_row(const ReportSchedule& s) {
    if (!s.formula)
        return fmt::format("<tr><td class=\"name\">{}</td><td class=\"na text\" colspan=\"7\">no bubble formula stated by the "
                           "family's sources (or not a generated family)</td></tr>\n",
                           xml_escape(s.family));
    const PublishedFormula& f = *s.formula;
    const Rational measured = measured_bubble(s.row, f.measure);
    std::string value = "—", verdict = "<td class=\"na\">not applicable: " + xml_escape(f.why_not) + "</td>";
    if (f.value) {
        value = exact(*f.value);
        verdict = *f.value == measured ? "<td class=\"agree\">= agrees</td>"
                                       : fmt::format("<td class=\"differ\">≠ differs by {}</td>", exact(measured - *f.value));
    }
    return fmt::format("<tr><td class=\"name\">{}</td><td class=\"text\"><code>{}</code></td><td class=\"text\">{}</td>"
                       "<td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td>{}</tr>\n",
                       xml_escape(s.family), xml_escape(f.text), xml_escape(f.source), xml_escape(f.condition),
                       measure_name(f.measure), value, exact(measured), verdict);
}

std::string formula_table(const std::vector<ReportSchedule>& schedules) {
    std::string out = "<table class=\"formulas\"><tr><th>family</th><th>published bubble formula</th><th>source</th>"
                      "<th>holds when</th><th>measures</th><th>formula</th><th>measured</th><th>verdict</th></tr>\n";
    for (const auto& s : schedules) out += formula_row(s);
    return out + "</table>\n";
}

std::string notes() {
    return R"(<ul class="notes">
<li><b>Letters</b> (PyTorch): F forward, I input-gradient backward, W weight-gradient backward, B full backward (= I + W; DeepSeek's B);
F&amp;B an overlapped forward/backward pair, drawn as one unit with a shared black border.</li>
<li><b>makespan</b>: end of the last compute. <b>idle</b> of a rank: makespan − its busy time; <b>bubble</b>: the largest idle;
<b>bubble fraction</b>: total idle / (ranks × makespan); <b>utilisation</b> = 1 − bubble fraction.</li>
<li><b>ZB bubble rate</b> (Zero Bubble paper): (T − W) / T with T the largest per-rank span (first start to last end) and W one rank's
compute with nothing overlapped; negative when overlapped pairs are cheaper than their parts.</li>
<li><b>peak activations</b>: stashes alive at once on the worst rank, in units of one stage's activations for one micro-batch
(allocated when an F starts, released when its W, or its unsplit B, ends).</li>
<li><b>weights per rank</b>: model blocks held by the rank; a block is one stage's weights, so DualPipe's 2 of P blocks is the
README's "2×" and DualPipeV's 2 of 2P blocks is 1× the weights of a P-stage 1F1B.</li>
<li><b>formula vs measured</b>: formulas are evaluated exactly under the page's costs; "measured" is the exact simulation of the
generated schedule under the same costs, using the quantity the formula describes.</li>
</ul>
)";
}

}  // namespace

Rational measured_bubble(const CompareRow& row, BubbleMeasure measure) {
    return measure == BubbleMeasure::LargestIdle ? row.worst_idle : row.zb_span - row.zb_work;
}

std::string html_report(const ReportPage& page) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
    out += "<title>" + xml_escape(page.title) + "</title><style>" + kStyle + "</style></head><body>\n";
    out += "<h1>" + xml_escape(page.title) + "</h1>\n<p class=\"params\">" + xml_escape(page.parameters) + "</p>\n";
    out += "<h2>Comparison</h2>\n" + compare_table(page.schedules);
    out += "<h2>Bubble formulas: published vs measured</h2>\n" + formula_table(page.schedules);
    out += "<h2>Timelines</h2>\n";
    for (size_t k = 0; k < page.schedules.size(); ++k) {
        const auto& s = page.schedules[k];
        out += fmt::format("<h3 id=\"schedule-{}\">{}</h3>\n<div class=\"picture\">{}</div>\n", k, xml_escape(s.row.name), s.svg);
    }
    out += "<h2>Definitions</h2>\n" + notes();
    out += "</body></html>\n";
    return out;
}

}  // namespace pp
