// libFuzzer harness: parse -> write -> parse equal, across formats (issue 30). The first byte picks the
// reader (native, JSON, PyTorch CSV in either letter era); an accepted schedule is written in each of the
// three formats that formats/faithful.hpp says keeps it, and must read back with the same meaning: the same
// placement, ops, gaps, costs, chunk costs, memory limit and activation sizes, the same verdict and the same
// exact timing. A written file its own reader refuses, or reads differently, is a bug.
#include "formats/faithful.hpp"
#include "formats/json_schedule.hpp"
#include "formats/native.hpp"
#include "fuzz/fuzz_common.hpp"

#include <stdexcept>

namespace {

using namespace pp;

Schedule read_as(FileFormat format, std::string_view text, TorchEra era) {
    TorchCsvOptions options;
    options.era = era;
    switch (format) {
        case FileFormat::Native: return read_native(text, "fuzz.txt");
        case FileFormat::Json: return read_json(text, "fuzz.json");
        case FileFormat::TorchCsv: return read_torch_csv(text, "fuzz.csv", options);
    }
    throw std::logic_error("unreachable");
}

bool same_slots(const Schedule& a, const Schedule& b) {
    if (a.ranks.size() != b.ranks.size()) return false;
    for (size_t r = 0; r < a.ranks.size(); ++r) {
        if (a.ranks[r].size() != b.ranks[r].size()) return false;
        for (size_t k = 0; k < a.ranks[r].size(); ++k)
            if (format_slot(a.ranks[r][k]) != format_slot(b.ranks[r][k])) return false;
    }
    return true;
}

// Gaps as counts that matter: a rank with none and a rank of zeros are the same.
bool same_gaps(const Schedule& a, const Schedule& b) {
    for (size_t r = 0; r < a.ranks.size(); ++r)
        for (size_t k = 0; k <= a.ranks[r].size(); ++k) {
            const auto gap = [&](const Schedule& s) { return r < s.gaps.size() && k < s.gaps[r].size() ? s.gaps[r][k] : 0; };
            if (gap(a) != gap(b)) return false;
        }
    return true;
}

std::string costs_text(const Schedule& s) {
    if (!s.costs) return "-";
    std::string text = format_costs(*s.costs);
    for (const auto& [block, c] : s.costs->per_block) {
        Costs one;
        one.base = c;
        text += " | " + std::to_string(block) + ":" + format_costs(one);
    }
    return text;
}

// What differs, or nullptr: the header first, then ops, then verdict and timing with the file's own costs.
const char* meaning_difference(const Schedule& a, const Schedule& b) {
    if (!same_placement(a.placement, b.placement)) return "the placement";
    if (!same_slots(a, b)) return "an op";
    if (!same_gaps(a, b)) return "the gaps";
    if (costs_text(a) != costs_text(b)) return "the costs";
    if (a.chunks.has_value() != b.chunks.has_value() || (a.chunks && !(a.chunks->costs == b.chunks->costs))) return "the chunk costs";
    if (a.memory_limit != b.memory_limit) return "the memory limit";
    if (a.activation_sizes != b.activation_sizes) return "the activation sizes";
    VerdictOptions options;
    options.verify.memory_limit = a.memory_limit;
    const VerifyReport va = verdict(a, options), vb = verdict(b, options);
    if (violation_count(va) != violation_count(vb) || va.peak_activations != vb.peak_activations) return "the verdict";
    if (!only_memory_violations(va) || !a.costs) return nullptr;
    const Simulation sa = simulate(a, *a.costs), sb = simulate(b, *b.costs);
    if (sa.makespan != sb.makespan || sa.start != sb.start || sa.end != sb.end) return "the timing";
    return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const FileFormat source = static_cast<FileFormat>(data[0] % 3);
    const TorchEra era = data[0] & 4 ? TorchEra::Y2024 : TorchEra::Current;
    Schedule schedule;
    try {
        schedule = read_as(source, fuzz::as_text(data + 1, size - 1), era);
    } catch (const InputError&) {
        return 0;
    }
    for (const FileFormat target : {FileFormat::Native, FileFormat::Json, FileFormat::TorchCsv}) {
        if (!format_losses(schedule, target, era).empty()) continue;  // convert would refuse
        std::string written;
        try {
            written = render_schedule(schedule, target, era);
        } catch (const std::invalid_argument&) {
            continue;  // a CSV of two pipelines: refused, with the reason
        }
        Schedule again;
        try {
            again = read_as(target, written, era);
        } catch (const InputError& e) {
            fuzz::bug("a written file its reader rejects", e.where() + ": " + e.what() + "\n" + written);
        }
        if (const char* what = meaning_difference(schedule, again))
            fuzz::bug("a written file reads back with another meaning", std::string(what) + "\n" + written);
    }
    return 0;
}
