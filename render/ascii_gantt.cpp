#include "render/ascii_gantt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace pp {
namespace {

// A rank's chunks (pipeline, stage) numbered in sorted order: even ones upper case, odd ones lower case,
// so DualPipe's reverse direction and the second leg of a V read differently.
std::map<std::pair<int, int>, int> chunk_numbers(const std::vector<Slot>& slots) {
    std::map<std::pair<int, int>, int> chunks;
    for (const Slot& slot : slots)
        for (const Op& op : slot) chunks.emplace(std::make_pair(op.pipeline, op.stage), 0);
    int next = 0;
    for (auto& [chunk, number] : chunks) number = next++;
    return chunks;
}

std::string op_label(const Op& op, const std::map<std::pair<int, int>, int>& chunks) {
    char letter = kind_letter(op.kind);
    if (chunks.at({op.pipeline, op.stage}) % 2 == 1) letter = static_cast<char>(std::tolower(letter));
    return fmt::format("{}{}", letter, op.microbatch);
}

// "|F3.." for an op, "{F3+b1}" for a pair; the label is cut to the room there is.
void draw_box(std::string& row, size_t from, size_t to, const std::string& label, bool pair) {
    if (to <= from) return;
    row[from] = pair ? '{' : '|';
    size_t stop = to;
    if (pair && to - from >= 2) row[--stop] = '}';
    for (size_t k = 0; from + 1 + k < stop; ++k) row[from + 1 + k] = k < label.size() ? label[k] : ' ';
}

}  // namespace

std::string ascii_gantt(const Schedule& schedule, const Simulation& sim, const GanttOptions& options) {
    if (sim.makespan == 0) return "(empty schedule)\n";
    Ticks shortest = sim.makespan;
    for (size_t s = 0; s < sim.start.size(); ++s)
        if (sim.end[s] > sim.start[s]) shortest = std::min(shortest, sim.end[s] - sim.start[s]);
    // Aim for 5 characters for the shortest slot, within the width budget.
    const Ticks wanted = (sim.makespan * 5 + shortest - 1) / shortest;
    const Ticks width = std::max<Ticks>(1, std::min<Ticks>(options.max_width, wanted));
    auto column = [&](Ticks t) { return static_cast<size_t>(t * width / sim.makespan); };

    std::string out;
    const std::string axis_pad(8, ' ');
    std::string axis(static_cast<size_t>(width) + 1, ' ');
    for (int mark = 0; mark <= 10; ++mark) {
        const Ticks t = sim.makespan * mark / 10;
        const std::string text = "|" + sim.scale.format(t);
        const size_t at = std::min(column(t), axis.size() - 1);
        for (size_t k = 0; k < text.size() && at + k < axis.size(); ++k) axis[at + k] = text[k];
    }
    out += axis_pad + axis + "\n";

    size_t slot_id = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const auto chunks = chunk_numbers(schedule.ranks[r]);
        std::string row(static_cast<size_t>(width), '.');
        for (const Slot& slot : schedule.ranks[r]) {
            std::string label = op_label(slot.ops[0], chunks);
            if (slot.is_pair()) label += "+" + op_label(slot.ops[1], chunks);
            draw_box(row, column(sim.start[slot_id]), column(sim.end[slot_id]), label, slot.is_pair());
            ++slot_id;
        }
        out += fmt::format("rank {:<3}{}  idle {} peak {}\n", r, row, sim.scale.format(sim.ranks[r].idle),
                           format_rational(sim.ranks[r].peak_activations));
    }
    out += fmt::format("{}|F3 forward of micro-batch 3, I/W split backward, B full backward, {{F3+b1}} overlapped pair; "
                       "lower case = the rank's 2nd (4th, ...) chunk; '.' idle; 1 column = {} time units\n",
                       axis_pad, format_rational(Rational(sim.makespan, width) / sim.scale.ticks_per_unit));
    return out;
}

}  // namespace pp
