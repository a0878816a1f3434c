#include "formats/faithful.hpp"

#include "formats/input_error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace pp {
namespace {

void add_header_losses(const Schedule& schedule, std::vector<FormatLoss>& losses) {
    if (schedule.costs) losses.push_back({"costs", schedule.costs->per_block.empty() ? "the costs" : "the costs and stage costs"});
    if (schedule.chunks) losses.push_back({"costs", "the chunk costs"});
    if (schedule.memory_limit) losses.push_back({"memory", "the memory limit " + format_rational(*schedule.memory_limit)});
    if (schedule.activation_sizes)
        losses.push_back({"memory", "the activation sizes " + format_activation_sizes(*schedule.activation_sizes)});
}

std::string placement_text(const Placement& placement) {
    const Pipeline& p = placement.pipelines.front();
    return fmt::format("{} ranks, {} micro-batches, stage -> rank [{}]", placement.ranks, p.microbatches,
                       fmt::join(p.stage_rank, ", "));
}

// The first slot whose text reads back as another op, e.g. a full backward written in an era whose B is I.
std::optional<std::string> first_changed_slot(const Schedule& written, const Schedule& back) {
    for (size_t r = 0; r < written.ranks.size(); ++r) {
        const auto& a = written.ranks[r];
        const auto* b = r < back.ranks.size() ? &back.ranks[r] : nullptr;
        for (size_t k = 0; k < a.size(); ++k) {
            const bool same = b && k < b->size() && (*b)[k].count == a[k].count && (*b)[k].ops[0] == a[k].ops[0] &&
                              (a[k].count == 1 || (*b)[k].ops[1] == a[k].ops[1]);
            if (!same)
                return fmt::format("rank {} slot {}: {} reads back as {}", r, k + 1, format_slot(a[k]),
                                   b && k < b->size() ? format_slot((*b)[k]) : "nothing");
        }
        if (b && b->size() > a.size()) return fmt::format("rank {} reads back with {} more slot(s)", r, b->size() - a.size());
    }
    return std::nullopt;
}

void add_csv_read_back_losses(const Schedule& schedule, TorchEra era, std::vector<FormatLoss>& losses) {
    std::string text;
    try {
        text = write_torch_csv(schedule, detect_torch_csv_format(schedule), era);
    } catch (const std::invalid_argument&) {
        return;  // not writable at all: the writer says why
    }
    TorchCsvOptions options;
    options.era = era;
    Schedule back;
    try {
        back = read_torch_csv(text, "the written CSV", options);
    } catch (const InputError& e) {
        losses.push_back({"letters", fmt::format("the letters (the written CSV would not read back: {})", e.what())});
        return;
    }
    if (!same_placement(back.placement, schedule.placement))
        losses.push_back({"placement", fmt::format("the placement: the CSV reader would infer {} where the schedule has {}",
                                                   placement_text(back.placement), placement_text(schedule.placement))});
    else if (const auto changed = first_changed_slot(schedule, back))
        losses.push_back({"letters", "the ops' meaning: " + *changed});
}

}  // namespace

const std::vector<std::string>& format_loss_keys() {
    static const std::vector<std::string> keys = {"comms", "placement", "letters", "costs", "memory"};
    return keys;
}

std::vector<FormatLoss> format_losses(const Schedule& schedule, FileFormat format, TorchEra era) {
    std::vector<FormatLoss> losses;
    if (format != FileFormat::TorchCsv) {
        if (schedule.actions)
            losses.push_back({"comms", "the SEND/RECV actions of the compute_comms file (their order and matching are "
                                       "part of what verify checks)"});
        return losses;
    }
    // Not writable at all (two pipelines, sequence segments): the writer says why.
    if (schedule.placement.pipeline_count() > 1 || schedule.segments > 1) return losses;
    add_header_losses(schedule, losses);
    add_csv_read_back_losses(schedule, era, losses);
    return losses;
}

}  // namespace pp
