#include "render/chunk_timeline.hpp"

#include "render/markup.hpp"
#include "formats/json_text.hpp"
#include "render/round_scale.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace pp {
namespace {


// Paints [from, to) of a row with a box "[label  ]" (cut to the room there is; "|" when it is one column).
void paint(std::string& row, size_t from, size_t to, const std::string& label) {
    if (to <= from) to = from + 1;
    if (from >= row.size()) return;
    to = std::min(to, row.size());
    if (to - from < 3) {
        for (size_t c = from; c < to; ++c) row[c] = '|';
        return;
    }
    row[from] = '[';
    row[to - 1] = ']';
    for (size_t k = 0; from + 1 + k < to - 1; ++k) row[from + 1 + k] = k < label.size() ? label[k] : ' ';
}

// Columns of a round number of time units (render/round_scale.hpp) for a picture of `span` units in at most
// about `max_columns` columns, and the axis: a mark every 10 columns, labelled where the label fits.
struct RoundColumns {
    Rational per_column;
    size_t width = 0;
    // `fits`: the time per column that would show every label (finer is not needed); coarser when the width needs it.
    RoundColumns(const Rational& span, int max_columns, const std::optional<Rational>& fits = std::nullopt) {
        const Rational budget = span / Rational(std::max(max_columns, 1));
        per_column = fits ? round_scale(*fits, false) : Rational(0);
        if (per_column < budget) per_column = round_scale(budget, true);
        const Rational c = span / per_column;
        width = static_cast<size_t>(((c.numerator() + c.denominator() - Integer(1)) / c.denominator()).to_int64());  // ceil
    }
    size_t column(const Rational& at) const {
        const Rational c = at / per_column;
        return static_cast<size_t>((c.numerator() / c.denominator()).to_int64());
    }
    std::string axis() const {
        std::string axis(width + 12, ' ');
        size_t free_from = 0;
        for (size_t c = 0; c <= width; c += 10) {
            const std::string text = "|" + format_rational(per_column * Rational(static_cast<std::int64_t>(c)));
            if (c < free_from || c + text.size() > axis.size()) continue;
            for (size_t k = 0; k < text.size(); ++k) axis[c + k] = text[k];
            free_from = c + text.size() + 1;
        }
        while (!axis.empty() && axis.back() == ' ') axis.pop_back();
        return axis;
    }
};

// One letter per component for the whole-schedule lanes: forward upper case, backward lower case.
char letter(Component c) {
    switch (c) {
        case Component::AttnF: return 'A';
        case Component::MlpF: return 'M';
        case Component::SharedF: return 'S';
        case Component::DispatchF: return 'D';
        case Component::CombineF: return 'C';
        case Component::AttnI: return 'a';
        case Component::MlpI: return 'm';
        case Component::SharedI: return 's';
        case Component::DispatchB: return 'd';
        case Component::CombineB: return 'c';
        case Component::MlpW:
        case Component::AttnW:
        case Component::SharedW: return 'w';
    }
    return '?';
}

const char* colour(Component c) {
    if (stream_of(c) == Stream::Network) return part_of(c) == ChunkPart::Forward ? "#d9534f" : "#2a9d8f";
    switch (part_of(c)) {
        case ChunkPart::Forward: return "#f4a259";
        case ChunkPart::InputGrad: return "#5b8def";
        case ChunkPart::WeightGrad: return "#9b6dd6";
    }
    return "#999999";
}

}  // namespace

std::vector<std::pair<Rational, Rational>> exposed_intervals(const SlotKindTiming& t) {
    std::vector<Rational> points{Rational(0), t.timeline.duration};
    for (const auto& time : t.timeline.times) points.push_back(time.start), points.push_back(time.end);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<std::pair<Rational, Rational>> out;
    for (size_t k = 0; k + 1 < points.size(); ++k) {
        const Rational a = points[k], b = points[k + 1];
        bool network = false, compute = false;
        for (int v = 0; v < t.dag.node_count(); ++v) {
            const auto& time = t.timeline.times[static_cast<size_t>(v)];
            if (time.start <= a && b <= time.end)
                (t.dag.nodes[static_cast<size_t>(v)].stream() == Stream::Network ? network : compute) = true;
        }
        if (!network || compute) continue;
        if (!out.empty() && out.back().second == a) out.back().second = b;
        else out.emplace_back(a, b);
    }
    return out;
}

std::string chunk_ascii(const SlotKindTiming& t, int max_width) {
    const auto& tl = t.timeline;
    std::string text;
    if (tl.duration == Rational(0)) return "(empty slot: no component has a cost)\n";
    Rational shortest = tl.duration;
    for (const auto& node : t.dag.nodes) shortest = std::min(shortest, node.cost);
    // The shortest box gets 13 columns ("[dispatch_b0]") when the width allows.
    const RoundColumns grid(tl.duration, std::max(20, max_width), shortest / Rational(13));
    auto column = [&](const Rational& at) { return grid.column(at); };
    const size_t width = grid.width;
    const std::string axis = grid.axis();
    std::array<std::string, kStreams> rows{std::string(width, '.'), std::string(width, '.')};
    for (int v = 0; v < t.dag.node_count(); ++v) {
        const auto& node = t.dag.nodes[static_cast<size_t>(v)];
        const auto& time = tl.times[static_cast<size_t>(v)];
        paint(rows[static_cast<size_t>(node.stream())], column(time.start), column(time.end), node.name());
    }
    std::string exposed(width, ' ');
    for (const auto& [a, b] : exposed_intervals(t))
        for (size_t c = column(a); c < std::max(column(b), column(a) + 1) && c < exposed.size(); ++c) exposed[c] = '^';
    text += "          " + axis + "\n";
    text += "compute   " + rows[0] + "\n";
    text += "network   " + rows[1] + "\n";
    text += "exposed   " + exposed + "\n";
    return text;
}

std::string chunk_svg(const SlotKindTiming& t, const std::string& title) {
    const auto& tl = t.timeline;
    const double left = 90, lane = 44, gap = 14, top = 54;
    Rational shortest = tl.duration > Rational(0) ? tl.duration : Rational(1);
    for (const auto& node : t.dag.nodes) shortest = std::min(shortest, node.cost);
    const double total = std::max(1e-9, to_double(tl.duration));
    const double scale = std::clamp(70.0 / to_double(shortest), 900.0 / total, 3000.0 / total);
    const double width = left + total * scale + 30, height = top + 2 * lane + gap + 70;
    auto x = [&](const Rational& at) { return left + to_double(at) * scale; };
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"sans-serif\">\n",
        px(width), px(height), px(width), px(height));
    svg += "<defs><pattern id=\"exposed-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
           "<rect width=\"3\" height=\"6\" fill=\"#d9534f\"/></pattern></defs>\n";
    svg += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n", px(width), px(height));
    svg += fmt::format("<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", xml_escape(title));
    svg += fmt::format("<text x=\"10\" y=\"38\" font-size=\"12\">duration {}, network {}, exposed {} ({})</text>\n",
                       format_rational(tl.duration), format_rational(tl.network_time), format_rational(tl.exposed_comm),
                       xml_escape(t.method));
    for (int s = 0; s < kStreams; ++s) {
        const double y = top + s * (lane + gap);
        const auto stream = static_cast<Stream>(s);
        svg += fmt::format("<g class=\"lane\" data-stream=\"{}\">\n<text x=\"10\" y=\"{}\" font-size=\"13\">{}</text>\n", stream_name(stream),
                           px(y + lane / 2 + 4), stream_name(stream));
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f3f3\"/>\n", px(left), px(y), px(total * scale), px(lane));
        for (int v = 0; v < t.dag.node_count(); ++v) {
            const auto& node = t.dag.nodes[static_cast<size_t>(v)];
            if (node.stream() != stream) continue;
            const auto& time = tl.times[static_cast<size_t>(v)];
            const double x0 = x(time.start), w = std::max(1.0, x(time.end) - x0);
            svg += fmt::format("<rect class=\"component\" data-name=\"{}\" data-stream=\"{}\" data-start=\"{}\" data-end=\"{}\" x=\"{}\" "
                               "y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"black\" stroke-width=\"0.8\"><title>{} [{}, {}]</title></rect>\n",
                               node.name(), stream_name(stream), format_rational(time.start), format_rational(time.end), px(x0), px(y),
                               px(w), px(lane), colour(node.component), node.name(), format_rational(time.start), format_rational(time.end));
            if (w > 6.0 * static_cast<double>(node.name().size()))
                svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", px(x0 + w / 2),
                                   px(y + lane / 2 + 4), node.name());
        }
        svg += "</g>\n";
    }
    const double ey = top + 2 * lane + gap + 4;
    for (const auto& [a, b] : exposed_intervals(t))
        svg += fmt::format("<rect class=\"exposed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"url(#exposed-hatch)\"><title>exposed "
                           "[{}, {}]</title></rect>\n",
                           px(x(a)), px(ey), px(std::max(1.0, x(b) - x(a))), format_rational(a), format_rational(b));
    svg += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"11\">exposed</text>\n", px(ey + 9));
    for (int mark = 0; mark <= 4; ++mark) {
        const Rational at = tl.duration * Rational(mark, 4);
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", px(x(at)), px(ey + 30),
                           format_rational(at));
    }
    svg += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"11\">orange forward, blue input-gradient, purple weight-gradient compute; "
                       "red forward, teal backward all-to-all</text>\n",
                       px(height - 8));
    return svg + "</svg>\n";
}

std::string chunk_trace(const SlotKindTiming& t, double us_per_unit) {
    using nlohmann::json;
    json events = json::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}, {"args", {{"name", std::string("slot ") + slot_kind_name(t.kind)}}}});
    for (int s = 0; s < kStreams; ++s)
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", s}, {"args", {{"name", stream_name(static_cast<Stream>(s))}}}});
    for (int v = 0; v < t.dag.node_count(); ++v) {
        const auto& node = t.dag.nodes[static_cast<size_t>(v)];
        const auto& time = t.timeline.times[static_cast<size_t>(v)];
        events.push_back({{"name", node.name()}, {"cat", stream_name(node.stream())}, {"ph", "X"}, {"pid", 0},
                          {"tid", static_cast<int>(node.stream())}, {"ts", to_double(time.start) * us_per_unit},
                          {"dur", to_double(time.end - time.start) * us_per_unit},
                          {"args", {{"start", format_rational(time.start)}, {"end", format_rational(time.end)}}}});
    }
    json trace = {{"traceEvents", events},
                  {"displayTimeUnit", "ms"},
                  {"otherData", {{"us_per_cost_unit", us_per_unit}, {"duration", format_rational(t.timeline.duration)},
                                 {"exposed_comm", format_rational(t.timeline.exposed_comm)}}}};
    return json_text(trace, 1) + "\n";
}

std::string ascii_chunk_lanes(const Schedule& schedule, const Simulation& sim, const ChunkTable& table, const GanttOptions& options) {
    if (sim.makespan == 0) return "(empty schedule)\n";
    const Rational makespan = sim.scale.to_units(sim.makespan);
    const RoundColumns grid(makespan, std::max(20, options.max_width));
    auto column = [&](const Rational& at) { return grid.column(at); };
    const size_t width = grid.width;
    std::string out = fmt::format("two-stream lanes, pattern {}: compute row (A attn_f, M mlp_f, S shared_f, m mlp_i, a attn_i, "
                                  "s shared_i, w weight-gradient), network row (D dispatch_f, C combine_f, c combine_b, d "
                                  "dispatch_b); '.' idle; 1 column = {} time unit{}\n",
                                  format_pattern(table.pattern), format_rational(grid.per_column),
                                  grid.per_column == Rational(1) ? "" : "s");
    out += "           " + grid.axis() + "\n";
    size_t global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        std::array<std::string, kStreams> rows{std::string(width, '.'), std::string(width, '.')};
        for (const Slot& slot : schedule.ranks[r]) {
            const Rational start = sim.scale.to_units(sim.start[global++]);
            const SlotKindTiming& t = table.of(slot_kind_of(slot));
            for (int v = 0; v < t.dag.node_count(); ++v) {
                const auto& node = t.dag.nodes[static_cast<size_t>(v)];
                const auto& time = t.timeline.times[static_cast<size_t>(v)];
                const size_t from = column(start + time.start), to = std::max(from + 1, column(start + time.end));
                auto& row = rows[static_cast<size_t>(node.stream())];
                for (size_t c = from; c < to && c < row.size(); ++c) row[c] = letter(node.component);
            }
        }
        out += fmt::format("rank {:<3} C {}\n", r, rows[0]);
        out += fmt::format("         N {}\n", rows[1]);
    }
    return out;
}

}  // namespace pp
