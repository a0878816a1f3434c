#include "cli/common.hpp"

#include "formats/input_error.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace pp::cli {

void ScheduleInput::add_options(CLI::App& app, bool positional_required) {
    auto* opt = app.add_option("schedule", source, "schedule file (.txt native, .csv PyTorch, .json) or a family name (see `pipeproof list`)");
    if (positional_required) opt->required();
    app.add_option("-P,--ranks", ranks, "ranks (generator), or the rank count a CSV must have");
    app.add_option("-M,--microbatches", microbatches, "micro-batches (generator), or override the count a CSV implies");
    app.add_option("-V,--stages-per-rank", stages_per_rank, "stages per rank (generator)");
    app.add_option("--stages", stages, "PyTorch CSV: number of stages, if not inferred from the file");
    app.add_option("--format", format, "input format: native, torch-csv or json (default: from the extension)");
    app.add_option("--torch-era", torch_era, "letters of a PyTorch CSV: current (I/W/B) or 2024 (B = input-grad, BW = full)")
        ->check(CLI::IsMember({"current", "2024"}));
}

TorchEra parse_era(const std::string& name) { return name == "2024" ? TorchEra::Y2024 : TorchEra::Current; }

std::optional<FileFormat> parse_optional_format(const std::optional<std::string>& name) {
    if (!name) return std::nullopt;
    try {
        return parse_format_name(*name);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

Schedule ScheduleInput::load() const {
    if (!std::filesystem::exists(source) && source != "-") {
        if (const ScheduleFamily* family = find_family(source)) {
            if (!ranks || !microbatches)
                throw UsageError(fmt::format("generating '{}' needs -P (ranks) and -M (micro-batches)", source));
            return family->generate({*ranks, *microbatches, stages_per_rank});
        }
        throw InputError(source, 0, 0, "no such file, and not a schedule family: " + unknown_family_message(source));
    }
    TorchCsvOptions csv;
    csv.era = parse_era(torch_era);
    csv.ranks = ranks;
    csv.microbatches = microbatches;
    csv.stages = stages;
    return load_schedule(source, parse_optional_format(format), csv);
}

void CostInput::add_options(CLI::App& app) {
    app.add_option("--costs", costs, "durations, e.g. F=1,I=1,W=1,B=2,FB=3,comm=0 (exact: 1.75 or 7/4)");
    app.add_option("--stage-costs", stage_costs, "per-block override BLOCK:F=..,I=..,W=.. (repeatable)");
    app.add_option("--activation-sizes", activation, "activation sizes F=..,I=..: allocated by F, released by I (rest at W)");
    chunks.add_options(app);
}

Costs CostInput::resolve(const Schedule& schedule) const {
    chunk_table = chunks.resolve(schedule, costs.has_value() || !stage_costs.empty());
    if (chunk_table) return chunk_table->costs();
    Costs result = schedule.costs.value_or(Costs{});
    try {
        if (costs) {
            Costs parsed = parse_costs(*costs);
            result.base = parsed.base;
            result.comm = parsed.comm;
        }
        for (const auto& item : stage_costs) {
            auto colon = item.find(':');
            auto block = colon == std::string::npos ? std::nullopt : parse_rational(item.substr(0, colon));
            if (!block || block->denominator() != 1)
                throw UsageError("--stage-costs expects BLOCK:F=..,I=..,W=.., got '" + item + "'");
            OpCosts c = result.base;
            apply_cost_items(item.substr(colon + 1), c, nullptr);
            result.per_block[static_cast<int>(block->numerator())] = c;
        }
    } catch (const CostSyntaxError& e) {
        throw UsageError("--costs: " + e.message);
    }
    return result;
}

ActivationModel CostInput::activations() const {
    ActivationModel model;
    if (!activation) return model;
    try {
        OpCosts sizes;
        sizes.F = model.forward_alloc;
        sizes.I = model.input_grad_free;
        apply_cost_items(*activation, sizes, nullptr);
        if (sizes.I > sizes.F) throw UsageError("--activation-sizes: I cannot release more than F allocated");
        model.forward_alloc = sizes.F;
        model.input_grad_free = sizes.I;
    } catch (const CostSyntaxError& e) {
        throw UsageError("--activation-sizes: " + e.message);
    }
    return model;
}

nlohmann::json exact_json(const Rational& value) {
    const std::string text = format_rational(value);
    if (text.find('/') != std::string::npos) return text;
    if (value.denominator() == 1) return value.numerator();
    return std::stod(text);  // a short terminating decimal prints back exactly
}

}  // namespace pp::cli
