#include "render/ascii_gantt.hpp"

#include "render/chunks.hpp"
#include "render/round_scale.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace pp {
namespace {

std::string op_label(const Op& op, const ChunkNumbers& chunks) {
    char letter = kind_letter(op.kind);
    if (chunks.at({op.pipeline, op.stage}) % 2 == 1) letter = static_cast<char>(std::tolower(letter));
    return fmt::format("{}{}", letter, op.microbatch);
}

std::string slot_label(const Slot& slot, const ChunkNumbers& chunks) {
    std::string label = op_label(slot.ops[0], chunks);
    if (slot.is_pair()) label += "+" + op_label(slot.ops[1], chunks);
    return label;
}

// Columns a box needs to show its label whole: "|F3" for an op, "{F3+b1}" for a pair. A box of duration d
// spans floor((s + d) / u) - floor(s / u) >= floor(d / u) columns, so d / u >= this is enough.
Rational columns_needed(const Slot& slot, const std::string& label) {
    return Rational(static_cast<std::int64_t>(label.size()) + (slot.is_pair() ? 2 : 1));
}

// "{F3+b1}" or "|F3", cut to the letters when the box is too narrow for the whole label.
void draw_box(std::string& row, size_t from, size_t to, const Slot& slot, const std::string& label, bool& cut) {
    if (to <= from) return;
    const bool pair = slot.is_pair();
    const size_t room = to - from - (pair ? 2 : 1);
    std::string text = label;
    if (text.size() > room) {
        text = pair ? "" : std::string(1, label[0]);
        if (text.size() > room) text.clear();
        cut = true;
    }
    row[from] = pair ? '{' : '|';
    size_t stop = to;
    if (pair && to - from >= 2) row[--stop] = '}';
    for (size_t k = 0; from + 1 + k < stop; ++k) row[from + 1 + k] = k < text.size() ? text[k] : ' ';
}

std::string legend_of_case(const Schedule& schedule) {
    const Placement& pl = schedule.placement;
    if (chunks_are_pipelines(pl)) {
        const std::string direction = pipeline_direction_text(pl, 1);
        return "lower case = pipeline 1" + (direction.empty() ? "" : " (" + direction + ")");
    }
    for (const auto& slots : schedule.ranks)
        if (chunk_numbers(slots).size() > 1) return "lower case = the rank's 2nd (4th, ...) stage";
    return "";
}

}  // namespace

// The largest of 1, 2, 2.5, 5 times a power of ten that is <= limit (limit > 0); the smallest >= limit when up.
Rational round_scale(const Rational& limit, bool up) {
    Rational best{0};
    for (int exponent = -12; exponent <= 18; ++exponent) {
        Rational power{1};
        for (int k = 0; k < std::abs(exponent); ++k) power = exponent < 0 ? power / Rational(10) : power * Rational(10);
        for (const Rational& m : {Rational(1), Rational(2), Rational(5, 2), Rational(5)}) {
            const Rational v = power * m;
            if (!up && v <= limit) best = v;
            if (up && v >= limit) return v;
        }
    }
    return best == Rational(0) ? limit : best;
}

std::string ascii_gantt(const Schedule& schedule, const Simulation& sim, const GanttOptions& options) {
    std::string out;
    if (!options.title.empty()) out += options.title + "\n";
    if (sim.makespan == 0) return out + "(empty schedule)\n";
    const Rational ticks_per_unit(sim.scale.ticks_per_unit);
    const Rational makespan_units = Rational(sim.makespan) / ticks_per_unit;

    // Time units per column: every label whole if the width allows, else just what the width allows.
    std::vector<ChunkNumbers> chunks;
    for (const auto& slots : schedule.ranks) chunks.push_back(chunk_numbers(slots));
    Rational fits = makespan_units;
    size_t global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& slot : schedule.ranks[r]) {
            const Ticks d = sim.end[global] - sim.start[global];
            ++global;
            if (d > 0) fits = std::min(fits, Rational(d) / ticks_per_unit / columns_needed(slot, slot_label(slot, chunks[r])));
        }
    Rational per_column = round_scale(fits, false);
    const Rational budget = makespan_units / Rational(std::max(options.max_width, 1));
    if (per_column < budget) per_column = round_scale(budget, true);
    const Rational per_column_ticks = per_column * ticks_per_unit;
    auto column = [&](Ticks t) {
        const Rational c = Rational(t) / per_column_ticks;
        // 0 <= t <= makespan and a column is at least makespan / max_width: a small whole number.
        return static_cast<size_t>((c.numerator() / c.denominator()).to_int64());
    };
    const size_t width = column(sim.makespan) + 1;

    // Axis: a mark every 10 columns (a round time), labelled where the label fits.
    const std::string pad(8, ' ');
    std::string axis(width + 12, ' ');
    for (size_t c = 0; c <= width; c += 10) {
        const std::string text = "|" + format_rational(per_column * Rational(static_cast<std::int64_t>(c)));
        if (c + text.size() > axis.size()) break;
        for (size_t k = 0; k < text.size(); ++k) axis[c + k] = text[k];
    }
    while (!axis.empty() && axis.back() == ' ') axis.pop_back();
    out += pad + axis + "\n";

    bool cut = false;
    global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        std::string row(width, '.');
        for (const Slot& slot : schedule.ranks[r]) {
            draw_box(row, column(sim.start[global]), column(sim.end[global]), slot, slot_label(slot, chunks[r]), cut);
            ++global;
        }
        out += fmt::format("rank {:<3}{}  idle {} peak {}\n", r, row, sim.scale.format(sim.ranks[r].idle),
                           format_rational(sim.ranks[r].peak_activations));
        if (options.links && r < options.links->size()) {
            std::string link(width, ' ');
            for (const LinkBox& box : (*options.links)[r])
                draw_box(link, column(box.start), column(box.end), Slot{}, box.label, cut);
            while (!link.empty() && link.back() == ' ') link.pop_back();
            out += "  link  " + link + "\n";
        }
    }
    std::string legend = "F3 forward of micro-batch 3, I/W split backward, B full backward, {F3+b1} overlapped pair";
    if (const std::string cases = legend_of_case(schedule); !cases.empty()) legend += "; " + cases;
    legend += options.time_unit.empty() ? fmt::format("; '.' idle; 1 column = {} time unit{}", format_rational(per_column),
                                                      per_column == Rational(1) ? "" : "s")
                                        : fmt::format("; '.' idle; 1 column = {} {}", format_rational(per_column), options.time_unit);
    if (options.links) legend += "; link rows: O3 offload and R3 reload of micro-batch 3's stash (case as its forward's)";
    if (cut) legend += "; boxes too narrow for their label show only the op letter (pairs: {}): widen with --width";
    out += pad + legend + "\n";
    return out;
}

}  // namespace pp
