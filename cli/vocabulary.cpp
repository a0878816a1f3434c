#include "cli/vocabulary.hpp"

#include "cli/common.hpp"

#include <fmt/format.h>

#include <vector>

namespace pp::cli {
namespace {

std::vector<std::string> inferred_names(const InferredShape& inferred) {
    std::vector<std::string> names;
    if (inferred.ranks) names.push_back("ranks");
    if (inferred.stages) names.push_back("stages");
    if (inferred.microbatches) names.push_back("microbatches");
    if (inferred.placement) names.push_back("placement");
    return names;
}

int stages_of(const Schedule& schedule) {
    return schedule.placement.pipelines.empty() ? 0 : schedule.placement.pipelines[0].stages();
}

}  // namespace

nlohmann::json instance_json(const Schedule& schedule) {
    return {{"ranks", schedule.placement.ranks},
            {"microbatches", schedule.placement.total_microbatches() / schedule.segments},  // not segment units
            {"segments", schedule.segments},
            {"stages", stages_of(schedule)},
            {"pipelines", schedule.placement.pipeline_count()},
            {"placement", placement_name(schedule.placement)},
            {"inferred", inferred_names(schedule.inferred)}};
}

void put_instance(nlohmann::json& out, const Schedule& schedule) {
    const nlohmann::json members = instance_json(schedule);
    for (const auto& [key, value] : members.items()) out[key] = value;
}

void put_units(nlohmann::json& out, const std::string& detail) {
    out["units"] = detail.rfind("rank", 0) == 0 ? "rank" : "stage";
    out["units_detail"] = detail;
}

void put_memory_limit(nlohmann::json& out, const std::optional<Rational>& limit) {
    if (limit) return put_number(out, "memory_limit", *limit);
    out["memory_limit"] = nullptr;
    out["exact"]["memory_limit"] = nullptr;
}

std::string shape_text(const Schedule& schedule) {
    const Placement& p = schedule.placement;
    const std::string microbatches =
        schedule.segments > 1 ? fmt::format("{} micro-batches x {} sequence segments", p.total_microbatches() / schedule.segments,
                                            schedule.segments)
                              : fmt::format("{} micro-batches", p.total_microbatches());
    return fmt::format("{} ranks, {}, {} stages{}, placement {}", p.ranks, microbatches, stages_of(schedule), p.pipeline_count() > 1 ? fmt::format(" in each of {} pipelines", p.pipeline_count()) : "",
                       placement_name(p));
}

std::string inferred_text(const Schedule& schedule) {
    const InferredShape& inferred = schedule.inferred;
    if (!inferred.any()) return "";
    std::vector<std::string> parts, flags;
    if (inferred.ranks) parts.push_back(fmt::format("{} ranks (one per row)", schedule.placement.ranks)), flags.push_back("-P N");
    if (inferred.microbatches) {
        const int M = schedule.placement.total_microbatches();
        parts.push_back(fmt::format("{} micro-batches (0..{}: the largest micro-batch number + 1)", M, M - 1));
        flags.push_back("-M N");
    }
    if (inferred.stages) {
        const int S = stages_of(schedule);
        parts.push_back(fmt::format("{} stages (0..{}: the largest stage number + 1)", S, S - 1));
        flags.push_back("--stages N");
    }
    if (inferred.placement)
        parts.push_back(fmt::format("placement {} (each stage on the first row it appears in)", placement_name(schedule.placement)));
    std::string text = fmt::format("inferred from the file: {}", fmt::join(parts, ", "));
    if (!flags.empty()) text += fmt::format("; give {} to check it against the counts you intend", fmt::join(flags, ", "));
    return text;
}

}  // namespace pp::cli
