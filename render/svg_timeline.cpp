#include "render/svg_timeline.hpp"

#include "render/chunks.hpp"
#include "render/markup.hpp"
#include "verifier/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

namespace pp {
namespace {

// ---- geometry -------------------------------------------------------------------------------------

constexpr double kLeft = 64;       // rank labels
constexpr double kRight = 118;     // idle and peak figures per lane
constexpr double kHeader = 62;     // title, summary line, subtitle line
constexpr double kAxis = 26;       // time axis labels above the lanes
constexpr double kBoxH = 22;       // a lane's slot row
constexpr double kMemH = 18;       // its memory curve
constexpr double kLinkH = 12;      // its host-link row
constexpr double kLaneGap = 9;
constexpr double kLegendRow = 22;  // one row of the legend
constexpr double kFooter = 10;
constexpr double kMinSlotPx = 18;    // adaptive width: the shortest slot gets about this much room,
constexpr double kMaxPlotPx = 9600;  // and at least its label's room at 7 px, up to this width
constexpr double kCharW = 0.6;     // average glyph width of the sans font, in font sizes
constexpr const char* kFont = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

struct Layout {
    double plot_w = 0;  // px for the whole makespan
    double width = 0, height = 0;
    double lanes_top = 0, lanes_bottom = 0, pitch = 0, mem_h = 0, link_h = 0;
    double px_per_tick = 0;
    double x(Ticks t) const { return kLeft + static_cast<double>(t) * px_per_tick; }
    double lane_y(size_t rank) const { return lanes_top + static_cast<double>(rank) * pitch; }
};

std::string pair_label(const Slot& slot);
double label_px(size_t chars);

Ticks shortest_slot(const Simulation& sim) {
    Ticks shortest = sim.makespan;
    for (size_t s = 0; s < sim.start.size(); ++s)
        if (sim.end[s] > sim.start[s]) shortest = std::min(shortest, sim.end[s] - sim.start[s]);
    return std::max<Ticks>(shortest, 1);
}

// Wide enough that the shortest slot can carry a two-digit label, within what a browser still scrolls
// comfortably; an explicit width wins.
// The plot width at which every slot has room for its label at the smallest font (a pair: "f+b" over the
// whole unit, which is what a pair too narrow for two numbers shows).
double width_for_labels(const Schedule& schedule, const Simulation& sim) {
    double px_per_tick = 0;
    size_t global = 0;
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) {
            const Ticks d = sim.end[global] - sim.start[global];
            ++global;
            if (d <= 0) continue;
            const size_t chars = slot.is_pair() ? pair_label(slot).size() : std::to_string(slot.ops[0].microbatch).size();
            px_per_tick = std::max(px_per_tick, label_px(chars) / static_cast<double>(d));
        }
    return px_per_tick * static_cast<double>(sim.makespan);
}

Layout make_layout(const Schedule& schedule, const Simulation& sim, const SvgOptions& options) {
    Layout l;
    if (options.width > 0) {
        l.plot_w = std::max(200.0, options.width - kLeft - kRight);
    } else {
        const double ratio = static_cast<double>(sim.makespan) / static_cast<double>(shortest_slot(sim));
        l.plot_w = std::clamp(ratio * kMinSlotPx, 760.0, 4400.0);
        // Past 4400 px, grow only as far as every slot still fits its label at 7 px.
        l.plot_w = std::max(l.plot_w, std::min(width_for_labels(schedule, sim), kMaxPlotPx));
    }
    l.width = kLeft + l.plot_w + kRight;
    l.mem_h = options.memory_curves ? kMemH : 0;
    l.link_h = options.links ? kLinkH : 0;
    l.pitch = kBoxH + l.link_h + l.mem_h + kLaneGap;
    l.lanes_top = kHeader + kAxis;
    l.lanes_bottom = l.lanes_top + l.pitch * static_cast<double>(schedule.ranks.size());
    l.px_per_tick = sim.makespan > 0 ? l.plot_w / static_cast<double>(sim.makespan) : 0;
    return l;
}

// ---- colours and chunk conventions ----------------------------------------------------------------

// Per kind, shades for the rank's 1st, 2nd, 3rd, 4th chunk (darker first), all light enough for black text.
std::string fill_of(OpKind kind, int chunk) {
    static const std::array<std::array<const char*, 4>, kOpKinds> shades = {{
        {"#f39c3d", "#fbd29c", "#d97f1c", "#fde8cc"},  // F orange
        {"#5b9fd6", "#b3d3ef", "#3a7fb8", "#dcebf8"},  // I blue
        {"#a387d8", "#d6c8f0", "#8566c2", "#ece5f8"},  // W purple
        {"#5fb86a", "#b1dfb6", "#3f9a4b", "#d9f0dc"},  // B green
    }};
    return shades[static_cast<size_t>(kind)][static_cast<size_t>(chunk % 4)];
}

// +1 when the chunk's pipeline flows toward higher ranks here, -1 toward lower, 0 when it never moves.
// The hop that arrives at the stage decides; at a pipeline's first stage, or after a turn on the same
// rank (a V's bottom), the hop that leaves it.
int chunk_direction(const Placement& placement, int pipeline, int stage) {
    const auto& ranks = placement.pipelines[pipeline].stage_rank;
    if (stage > 0 && ranks[stage] != ranks[stage - 1]) return ranks[stage] > ranks[stage - 1] ? 1 : -1;
    if (stage + 1 < static_cast<int>(ranks.size()) && ranks[stage + 1] != ranks[stage])
        return ranks[stage + 1] > ranks[stage] ? 1 : -1;
    return 0;
}

// Where an op's output goes: an F sends its activation on in the pipeline's direction, an I or B sends the
// input gradient back the other way, a W sends nothing. The triangles show this, so a backward box points the
// way its gradient travels.
int output_direction(const Placement& placement, const Op& op) {
    const int flow = chunk_direction(placement, op.pipeline, op.stage);
    switch (op.kind) {
        case OpKind::F: return flow;
        case OpKind::I:
        case OpKind::B: return -flow;
        case OpKind::W: return 0;
    }
    return 0;
}

// Direction marks only help when both directions occur; in a one-way pipeline they are noise.
bool has_both_directions(const Placement& placement) {
    bool down = false, up = false;
    for (int p = 0; p < placement.pipeline_count(); ++p)
        for (int s = 0; s < placement.pipelines[p].stages(); ++s) {
            const int d = chunk_direction(placement, p, s);
            down |= d > 0;
            up |= d < 0;
        }
    return down && up;
}

// ---- primitives -----------------------------------------------------------------------------------

void triangle(std::string& out, double x, double yc, int direction) {
    const double top = yc - 2.6, bottom = yc + 2.6;
    if (direction > 0)
        out += fmt::format("<polygon class=\"dir\" points=\"{},{} {},{} {},{}\" fill=\"#222\"/>", px(x), px(top),
                           px(x + 6), px(top), px(x + 3), px(bottom));
    else
        out += fmt::format("<polygon class=\"dir\" points=\"{},{} {},{} {},{}\" fill=\"#222\"/>", px(x), px(bottom),
                           px(x + 6), px(bottom), px(x + 3), px(top));
}

void text(std::string& out, double x, double y, double size, std::string_view anchor, std::string_view content,
          std::string_view extra = "") {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\"{}>{}</text>", px(x), px(y), px(size),
                       anchor, extra, xml_escape(content));
}

constexpr double kMinFont = 7;  // px: below this a label is not drawn (make_layout leaves room for one)

// px a label of `chars` characters needs at the smallest font.
double label_px(size_t chars) { return static_cast<double>(chars) * kCharW * kMinFont + 3.5; }  // 0.5 px against rounding

// The label of one op box: the micro-batch number, with a direction triangle in front when there is
// room. The font shrinks to 7 px before the label is dropped; returns whether it was drawn.
bool op_label(std::string& out, double x, double y, double w, const Op& op, int direction) {
    const std::string label = std::to_string(op.microbatch);
    const double chars = static_cast<double>(label.size());
    double size = std::min(11.0, (w - 3) / (chars * kCharW));
    if (size < kMinFont) return false;
    const double text_w = chars * kCharW * size;
    const double yc = y + kBoxH / 2;
    const bool with_mark = direction != 0 && w >= text_w + 12;
    if (with_mark) {
        const double group_x = x + (w - (text_w + 8)) / 2;
        triangle(out, group_x, yc, direction);
        text(out, group_x + 8 + text_w / 2, yc + size * 0.36, size, "middle", label);
    } else {
        text(out, x + w / 2, yc + size * 0.36, size, "middle", label);
    }
    return true;
}

// A pair too narrow for one number per half gets one label over the whole unit: "forward+backward".
std::string pair_label(const Slot& slot) {
    return fmt::format("{}+{}", slot.ops[0].microbatch, slot.ops[1].microbatch);
}

void pair_label_whole(std::string& out, double x, double y, double w, const Slot& slot) {
    const std::string label = pair_label(slot);
    const double size = std::clamp((w - 3) / (static_cast<double>(label.size()) * kCharW), kMinFont, 11.0);
    text(out, x + w / 2, y + kBoxH / 2 + size * 0.36, size, "middle", label, " class=\"pair-label\"");
}

void op_rect(std::string& out, size_t rank, double x, double y, double w, const Op& op, int chunk, bool in_pair) {
    out += fmt::format(
        "<rect class=\"op\" data-rank=\"{}\" data-kind=\"{}\" data-op=\"{}\" data-mb=\"{}\" x=\"{}\" y=\"{}\" "
        "width=\"{}\" height=\"{}\" fill=\"{}\"{}/>",
        rank, kind_letter(op.kind), format_op(op), op.microbatch, px(x), px(y), px(std::max(w, 0.4)), px(kBoxH),
        fill_of(op.kind, chunk), in_pair ? "" : " stroke=\"#ffffff\" stroke-width=\"0.6\"");
}

// ---- one lane -------------------------------------------------------------------------------------

struct LaneContext {
    const Schedule& schedule;
    const Simulation& sim;
    const SvgOptions& options;
    const Layout& layout;
    bool marks = false;  // draw direction triangles
};

// How much of a pair's box the forward gets: its share of F + backward under the costs, else half.
double forward_share(const Slot& slot, const LaneContext& c) {
    if (!c.options.costs) return 0.5;
    const Placement& pl = c.schedule.placement;
    const Rational f = c.options.costs->duration(slot.ops[0].kind, pl.block_of(slot.ops[0].pipeline, slot.ops[0].stage));
    const Rational b = c.options.costs->duration(slot.ops[1].kind, pl.block_of(slot.ops[1].pipeline, slot.ops[1].stage));
    const Rational sum = f + b;
    if (sum == Rational(0)) return 0.5;
    const Rational share = f / sum;
    return static_cast<double>(share.numerator()) / static_cast<double>(share.denominator());
}

void draw_slot(std::string& out, const LaneContext& c, size_t rank, size_t position, size_t global,
               const ChunkNumbers& chunks, double y) {
    const Slot& slot = c.schedule.ranks[rank][position];
    const double x0 = c.layout.x(c.sim.start[global]), x1 = c.layout.x(c.sim.end[global]);
    const auto& pl = c.schedule.placement;
    auto chunk_of = [&](const Op& op) { return chunks.at({op.pipeline, op.stage}); };
    auto direction_of = [&](const Op& op) { return c.marks ? output_direction(pl, op) : 0; };

    out += fmt::format("<g class=\"slot{}\" data-rank=\"{}\" data-slot=\"{}\"><title>rank {}: {}  [{}, {}]</title>",
                       slot.is_pair() ? " pair" : "", rank, position, rank, format_slot(slot),
                       c.sim.scale.format(c.sim.start[global]), c.sim.scale.format(c.sim.end[global]));
    if (!slot.is_pair()) {
        op_rect(out, rank, x0, y, x1 - x0, slot.ops[0], chunk_of(slot.ops[0]), false);
        op_label(out, x0, y, x1 - x0, slot.ops[0], direction_of(slot.ops[0]));
    } else {
        const double split = x0 + (x1 - x0) * forward_share(slot, c);
        op_rect(out, rank, x0, y, split - x0, slot.ops[0], chunk_of(slot.ops[0]), true);
        op_rect(out, rank, split, y, x1 - split, slot.ops[1], chunk_of(slot.ops[1]), true);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555\" stroke-width=\"0.5\"/>", px(split),
                           px(y), px(split), px(y + kBoxH));
        std::string halves;
        if (op_label(halves, x0, y, split - x0, slot.ops[0], direction_of(slot.ops[0])) &&
            op_label(halves, split, y, x1 - split, slot.ops[1], direction_of(slot.ops[1])))
            out += halves;
        else
            pair_label_whole(out, x0, y, x1 - x0, slot);
        out += fmt::format("<rect class=\"pair-border\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                           "stroke=\"#000\" stroke-width=\"1.6\"/>",
                           px(x0 + 0.8), px(y + 0.8), px(std::max(x1 - x0 - 1.6, 0.4)), px(kBoxH - 1.6));
    }
    out += "</g>";
}

// What a slot releases at its end, by verifier/memory.hpp's rules: I frees input_grad_free, W the rest of a
// forward's allocation, B all of it.
Rational released_by(const Slot& slot, const ActivationModel& model) {
    Rational total{0};
    for (const Op& op : slot) {
        const Rational s = model.scale_of(op.pipeline, op.stage);
        if (op.kind == OpKind::I) total += s * model.input_grad_free;
        if (op.kind == OpKind::W) total += s * (model.forward_alloc - model.input_grad_free);
        if (op.kind == OpKind::B) total += s * model.forward_alloc;
    }
    return total;
}


// Live activations as a step curve: up to the profile's value when a slot starts (its allocations),
// down by the slot's releases when it ends. All lanes share one vertical scale, the largest peak.
void draw_memory(std::string& out, const LaneContext& c, size_t rank, size_t first_global, double y, double peak_all) {
    const auto& slots = c.schedule.ranks[rank];
    const auto profile = activation_profile(c.schedule, static_cast<int>(rank), c.options.activations);
    const ActivationModel sizes = sizes_per_unit(c.schedule, c.options.activations);
    const double base = y + c.layout.mem_h - 1;
    const double scale = peak_all > 0 ? (c.layout.mem_h - 3) / peak_all : 0;
    auto level = [&](const Rational& v) { return base - to_double(v) * scale; };

    out += fmt::format("<rect class=\"memory-bg\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfbfb\"/>",
                       px(kLeft), px(y), px(c.layout.plot_w), px(c.layout.mem_h));
    std::string d = fmt::format("M{},{}", px(kLeft), px(base));
    for (size_t k = 0; k < slots.size(); ++k) {
        const size_t g = first_global + k;
        d += fmt::format("H{}V{}H{}V{}", px(c.layout.x(c.sim.start[g])), px(level(profile[k])), px(c.layout.x(c.sim.end[g])),
                         px(level(profile[k] - released_by(slots[k], sizes))));
    }
    d += fmt::format("H{}V{}Z", px(c.layout.x(c.sim.makespan)), px(base));
    out += fmt::format("<path class=\"memory\" data-rank=\"{}\" d=\"{}\" fill=\"#7b8a97\" fill-opacity=\"0.35\" "
                       "stroke=\"#4a5866\" stroke-width=\"0.8\"/>",
                       rank, d);
    text(out, kLeft + c.layout.plot_w + 6, y + c.layout.mem_h - 4, 10, "start",
         "peak " + format_rational(c.sim.ranks[rank].peak_activations), " fill=\"#4a5866\"");
}

// The rank's host link under its slots: each transfer a box, offloads teal and reloads amber.
void draw_link(std::string& out, const LaneContext& c, size_t rank, double y) {
    out += fmt::format("<g class=\"link\" data-rank=\"{}\"><rect class=\"link-bg\" x=\"{}\" y=\"{}\" width=\"{}\" "
                       "height=\"{}\" fill=\"#fbfbfb\"/>",
                       rank, px(kLeft), px(y), px(c.layout.plot_w), px(c.layout.link_h - 1));
    if (rank < c.options.links->size())
        for (const LinkBox& box : (*c.options.links)[rank]) {
            const double x0 = c.layout.x(box.start), x1 = c.layout.x(box.end);
            out += fmt::format("<rect class=\"transfer\" data-rank=\"{}\" data-direction=\"{}\" data-stash=\"{}\" x=\"{}\" "
                               "y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#555\" stroke-width=\"0.4\">"
                               "<title>rank {}: {} of {}'s stash  [{}, {}]</title></rect>",
                               rank, box.to_host ? "offload" : "reload", box.stash, px(x0), px(y), px(std::max(x1 - x0, 0.4)),
                               px(c.layout.link_h - 1), box.to_host ? "#6cc3b9" : "#e8b04a", rank,
                               box.to_host ? "offload" : "reload", box.stash, c.sim.scale.format(box.start),
                               c.sim.scale.format(box.end));
        }
    out += "</g>";
}

void draw_lane(std::string& out, const LaneContext& c, size_t rank, size_t first_global, double peak_all) {
    const double y = c.layout.lane_y(rank);
    const auto chunks = chunk_numbers(c.schedule.ranks[rank]);
    out += fmt::format("<g class=\"lane\" data-rank=\"{}\">", rank);
    text(out, kLeft - 8, y + kBoxH / 2 + 4.5, 12, "end", fmt::format("rank {}", rank), " font-weight=\"bold\"");
    out += fmt::format("<rect class=\"idle\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#{}-idle)\"/>", px(kLeft),
                       px(y), px(c.layout.plot_w), px(kBoxH), c.options.id_prefix);
    for (size_t k = 0; k < c.schedule.ranks[rank].size(); ++k) draw_slot(out, c, rank, k, first_global + k, chunks, y);
    const auto& timing = c.sim.ranks[rank];
    const double idle_share = c.sim.makespan > 0 ? 100.0 * static_cast<double>(timing.idle) / static_cast<double>(c.sim.makespan) : 0;
    text(out, kLeft + c.layout.plot_w + 6, y + kBoxH / 2 + 4, 11, "start",
         fmt::format("idle {} ({:.0f}%)", c.sim.scale.format(timing.idle), idle_share));
    if (c.options.links) draw_link(out, c, rank, y + kBoxH);
    if (c.options.memory_curves) draw_memory(out, c, rank, first_global, y + kBoxH + c.layout.link_h, peak_all);
    out += "</g>";
}

// ---- frame: header, axis, legend ------------------------------------------------------------------

// 1, 2 or 5 times a power of ten, so that ticks are about 90 px apart.
double tick_step(double units, double plot_w) {
    const double target = std::max(units * 90.0 / std::max(plot_w, 1.0), 1e-9);
    const double power = std::pow(10.0, std::floor(std::log10(target)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= target) return m * power;
    return 10 * power;
}

void draw_axis(std::string& out, const Simulation& sim, const Layout& l) {
    const double units = to_double(sim.scale.to_units(sim.makespan));
    if (units <= 0) return;
    const double step = tick_step(units, l.plot_w);
    const double bottom = l.lanes_bottom - kLaneGap;
    out += "<g class=\"axis\">";
    for (double t = 0; t <= units + step * 1e-6; t += step) {
        const double x = kLeft + t / units * l.plot_w;
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e2e2e2\" stroke-width=\"1\"/>", px(x),
                           px(l.lanes_top - 6), px(x), px(bottom));
        text(out, x, l.lanes_top - 10, 10, "middle", short_number(t), " fill=\"#555\"");
    }
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>", px(kLeft), px(l.lanes_top - 6),
                       px(kLeft + l.plot_w), px(l.lanes_top - 6));
    text(out, kLeft - 8, l.lanes_top - 10, 10, "end", "time", " fill=\"#555\"");
    out += "</g>";
}

std::string percent(const Rational& r) { return fmt::format("{:.1f}%", 100.0 * to_double(r)); }

void draw_header(std::string& out, const Schedule& schedule, const Simulation& sim, const SvgOptions& options) {
    const std::string title = options.title.empty() ? schedule.source : options.title;
    Rational peak{0};
    for (const auto& r : sim.ranks) peak = std::max(peak, r.peak_activations);
    std::string summary = fmt::format("{} ranks, {} slots · makespan {} · bubble (largest idle) {} · bubble fraction {} · peak activations {}",
                                      schedule.ranks.size(), schedule.slot_count(), sim.scale.format(sim.makespan),
                                      sim.scale.format(sim.bubble), percent(sim.bubble_fraction), format_rational(peak));
    text(out, kLeft - 56, 20, 15, "start", title, " font-weight=\"bold\"");
    text(out, kLeft - 56, 37, 11.5, "start", summary, " fill=\"#333\"");
    if (!options.subtitle.empty()) text(out, kLeft - 56, 52, 11.5, "start", options.subtitle, " fill=\"#333\"");
}

// A legend entry: a small drawing (swatch, pair, triangle, curve) and its words; entries wrap into rows.
struct LegendItem {
    double mark_w = 0;
    std::function<void(std::string&, double x, double y)> mark;
    std::string words;
    double width() const { return mark_w + 4 + static_cast<double>(words.size()) * kCharW * 11 + 18; }
};

LegendItem swatch_item(std::string fill, std::string words) {
    return {16, [fill](std::string& out, double x, double y) {
                out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"14\" fill=\"{}\"/>", px(x), px(y), fill);
            }, std::move(words)};
}

std::vector<LegendItem> legend_items(const Schedule& schedule, const SvgOptions& options, bool marks) {
    bool present[kOpKinds] = {};
    bool pairs = false, second_chunk = false;
    for (const auto& slots : schedule.ranks) {
        for (const Slot& slot : slots) {
            pairs |= slot.is_pair();
            for (const Op& op : slot) present[static_cast<size_t>(op.kind)] = true;
        }
        second_chunk |= chunk_numbers(slots).size() > 1;
    }
    std::vector<LegendItem> items;
    static const char* names[kOpKinds] = {"F forward", "I input-grad backward", "W weight-grad backward", "B full backward"};
    for (int k = 0; k < kOpKinds; ++k)
        if (present[k]) items.push_back(swatch_item(fill_of(static_cast<OpKind>(k), 0), names[k]));
    if (second_chunk)
        items.push_back({32, [](std::string& out, double x, double y) {
                             out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"14\" fill=\"{}\"/><rect x=\"{}\" "
                                                "y=\"{}\" width=\"16\" height=\"14\" fill=\"{}\"/>",
                                                px(x), px(y), fill_of(OpKind::F, 0), px(x + 16), px(y), fill_of(OpKind::F, 1));
                         }, chunks_are_pipelines(schedule.placement)
                                ? "lighter shade: pipeline 1" + [&] {
                                      const std::string d = pipeline_direction_text(schedule.placement, 1);
                                      return d.empty() ? std::string() : " (" + d + ")";
                                  }()
                                : std::string("lighter shade: the rank's 2nd (4th, ...) stage")});
    if (pairs)
        items.push_back({28, [](std::string& out, double x, double y) {
                             out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/><rect x=\"{}\" "
                                                "y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/><rect x=\"{}\" y=\"{}\" "
                                                "width=\"28\" height=\"14\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.6\"/>",
                                                px(x), px(y), fill_of(OpKind::F, 0), px(x + 14), px(y), fill_of(OpKind::B, 1), px(x),
                                                px(y));
                         }, "F&B overlapped pair (one unit)"});
    items.push_back(swatch_item(fmt::format("url(#{}-idle)", options.id_prefix), "idle"));
    const std::string axis = "time axis in " + (options.time_unit.empty() ? std::string("cost units") : options.time_unit);
    items.push_back({0, nullptr, pairs ? "numbers: micro-batch (within its pipeline); a narrow pair shows forward+backward; " + axis
                                       : "numbers: micro-batch (within its pipeline); " + axis});
    if (marks) {
        items.push_back({7, [](std::string& out, double x, double y) { triangle(out, x, y + 7, 1); },
                         "its output goes toward higher ranks (F: activation; I, B: input gradient)"});
        items.push_back({7, [](std::string& out, double x, double y) { triangle(out, x, y + 7, -1); }, "toward lower ranks"});
    }
    if (options.links) {
        items.push_back(swatch_item("#6cc3b9", "offload to host (the row under each lane: its host link)"));
        items.push_back(swatch_item("#e8b04a", "reload to device"));
    }
    if (options.memory_curves)
        items.push_back({22, [](std::string& out, double x, double y) {
                             out += fmt::format("<path d=\"M{},{}H{}V{}H{}V{}H{}Z\" fill=\"#7b8a97\" fill-opacity=\"0.35\" "
                                                "stroke=\"#4a5866\" stroke-width=\"0.8\"/>",
                                                px(x), px(y + 14), px(x + 5), px(y + 6), px(x + 14), px(y + 2), px(x + 22), px(y + 14));
                         }, "live activations under each lane (stage stashes; one scale for all lanes)"});
    return items;
}

// Rows of legend items that fit the picture's width.
std::vector<std::vector<const LegendItem*>> legend_rows(const std::vector<LegendItem>& items, double width) {
    std::vector<std::vector<const LegendItem*>> rows(1);
    double x = kLeft;
    for (const LegendItem& item : items) {
        if (x + item.width() > width - 8 && !rows.back().empty()) rows.emplace_back(), x = kLeft;
        rows.back().push_back(&item);
        x += item.width();
    }
    return rows;
}

void draw_legend(std::string& out, const std::vector<std::vector<const LegendItem*>>& rows, double top) {
    out += "<g class=\"legend\">";
    double y = top;
    for (const auto& row : rows) {
        double x = kLeft;
        for (const LegendItem* item : row) {
            if (item->mark) item->mark(out, x, y);
            text(out, x + item->mark_w + (item->mark_w > 0 ? 4 : 0), y + 11.5, 11, "start", item->words);
            x += item->width();
        }
        y += kLegendRow;
    }
    out += "</g>";
}

void draw_defs(std::string& out, const std::string& prefix) {
    out += fmt::format("<defs><pattern id=\"{}-idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f3f3f3\"/>"
                       "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d2d2d2\" stroke-width=\"2.2\"/></pattern></defs>",
                       prefix);
}

}  // namespace

std::string svg_timeline(const Schedule& schedule, const Simulation& sim, const SvgOptions& options) {
    Layout layout = make_layout(schedule, sim, options);
    const bool marks = has_both_directions(schedule.placement);
    const auto items = legend_items(schedule, options, marks);
    const auto rows = legend_rows(items, layout.width);
    layout.height = layout.lanes_bottom + 6 + kLegendRow * static_cast<double>(rows.size()) + kFooter;

    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pp-timeline\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "font-family=\"{}\" data-ranks=\"{}\" data-slots=\"{}\">",
        px(layout.width), px(layout.height), px(layout.width), px(layout.height), kFont, schedule.ranks.size(),
        schedule.slot_count());
    draw_defs(out, options.id_prefix);
    out += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>", px(layout.width), px(layout.height));
    draw_header(out, schedule, sim, options);
    draw_axis(out, sim, layout);

    const LaneContext context{schedule, sim, options, layout, marks};
    double peak_all = 0;
    for (const auto& r : sim.ranks) peak_all = std::max(peak_all, to_double(r.peak_activations));
    size_t first_global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        draw_lane(out, context, r, first_global, peak_all);
        first_global += schedule.ranks[r].size();
    }
    draw_legend(out, rows, layout.lanes_bottom + 6);
    out += "</svg>\n";
    return out;
}

std::string svg_size_problem(const Schedule& schedule, std::size_t link_boxes) {
    std::size_t slots = 0;
    for (const auto& rank : schedule.ranks) slots += rank.size();
    if (slots + link_boxes <= kMaxSvgSlots) return {};
    return fmt::format("{} slots{}, about {} MB of SVG: over the picture limit of {} slots; draw fewer micro-batches, or "
                       "write a --trace (Perfetto opens any size)",
                       slots, link_boxes ? fmt::format(" and {} host-link transfers", link_boxes) : std::string(),
                       ((slots + link_boxes) * kSvgBytesPerSlot) >> 20, kMaxSvgSlots);
}

}  // namespace pp
