#include "cli/common.hpp"
#include "model/spelling.hpp"

#include "formats/faithful.hpp"
#include "formats/input_error.hpp"
#include "proofs/prove.hpp"
#include "schedules/registry.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <set>

#include <unistd.h>

namespace pp::cli {

void ScheduleInput::add_options(CLI::App& app, bool positional_required) {
    auto* opt = app.add_option("schedule", source, "schedule file (.txt native, .csv PyTorch, .json) or a family name (see `pipeproof list`)");
    if (positional_required) opt->required();
    // Counts are checked here, so that `-M -5` is a usage error naming the flag; sizes within these ranges
    // can still be too large together, which the size budget (model/size_budget.hpp) reports.
    app.add_option("-P,--ranks", ranks, "ranks (generator), or the rank count a CSV must have")->check(CLI::Range(1, kMaxRanks));
    app.add_option("-M,--microbatches", microbatches, "micro-batches (generator), or override the count a CSV implies")
        ->check(CLI::Range(1, kMaxMicrobatches));
    app.add_option("-V,--stages-per-rank", stages_per_rank, "stages per rank (generator)")->check(CLI::Range(1, kMaxStagesPerRank));
    app.add_option("--group-size", group_size, kGroupSizeHelp)->check(CLI::Range(1, kMaxMicrobatches));
    app.add_option("--segments", segments, "sequence segments per micro-batch k (generator: seq1f1b, default 2)")
        ->check(CLI::Range(1, kMaxSegments));
    app.add_option("--segment-costs", segment_costs,
                   "each sequence segment's share of a micro-batch's costs: 1/4,3/4 or attention=A (causal attention, share A "
                   "of the costs, grows along the sequence); default 1/k each");
    app.add_option("--stages", stages, "PyTorch CSV: number of stages, if not inferred from the file")
        ->check(CLI::Range(1, kMaxMicrobatches));
    app.add_option("--format", format, "input format: native, torch-csv or json (default: from the extension)");
    app.add_option("--torch-era", torch_era, "letters of a PyTorch CSV: current (I/W/B) or 2024 (B = input-grad, BW = full)")
        ->check(one_of({"current", "2024"}));
}

TorchEra parse_era(const std::string& name) { return name == "2024" ? TorchEra::Y2024 : TorchEra::Current; }

CLI::Validator one_of(std::vector<std::string> values) {
    const std::string names = fmt::format("{}", fmt::join(values, ", "));
    return CLI::Validator(
        [values, names](std::string& value) -> std::string {
            if (std::find(values.begin(), values.end(), value) != values.end()) return "";
            const auto nearest = nearest_spelling(to_lower(value), values);
            return fmt::format("'{}' is not one of {}{}", value, names, nearest ? "; did you mean '" + *nearest + "'?" : "");
        },
        "{" + names + "}");
}

double trace_microseconds_per_unit(const std::optional<std::string>& seconds_per_unit, const std::optional<double>& us_per_unit) {
    if (seconds_per_unit && us_per_unit) throw UsageError("give --seconds-per-unit or its old spelling --trace-unit-us, not both");
    if (us_per_unit) return *us_per_unit;
    if (!seconds_per_unit) return 1000;
    const auto seconds = parse_rational(*seconds_per_unit);
    if (!seconds || *seconds <= Rational(0))
        throw UsageError("--seconds-per-unit expects a positive number of seconds per cost unit, got '" + *seconds_per_unit + "'");
    return to_double(*seconds) * 1e6;
}

void require_writable(const std::string& path, const std::string& flag) {
    if (path == "-") return;
    std::error_code error;
    const std::filesystem::path file(path);
    if (std::filesystem::is_directory(file, error)) throw UsageError(fmt::format("{} {}: is a directory", flag, path));
    if (std::filesystem::exists(file, error)) {
        if (::access(path.c_str(), W_OK) != 0) throw UsageError(fmt::format("{} {}: the file is not writable", flag, path));
        return;
    }
    const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(dir, error))
        throw UsageError(fmt::format("{} {}: no such directory '{}'", flag, path, dir.string()));
    if (::access(dir.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("{} {}: the directory '{}' is not writable", flag, path, dir.string()));
}

void write_schedule_output(const Schedule& schedule, const std::string& path, std::optional<FileFormat> format,
                           TorchEra era, bool csv_crlf, const std::vector<std::string>* drop) {
    const FileFormat chosen = format.value_or(format_from_name(path));
    const std::string target = path == "-" ? "standard output" : path;
    const auto losses = format_losses(schedule, chosen, era);
    std::vector<std::string> refused, dropped;
    for (const FormatLoss& loss : losses) {
        const bool allowed = !drop || std::find(drop->begin(), drop->end(), loss.key) != drop->end();
        (allowed ? dropped : refused).push_back(fmt::format("{} (--drop {})", loss.detail, loss.key));
    }
    if (!refused.empty())
        throw UsageError(fmt::format("{}: the {} file would lose {}; nothing written (name them with --drop to write it "
                                     "anyway, or choose another format)",
                                     target, format_display_name(chosen), fmt::join(refused, "; ")));
    try {
        save_schedule(schedule, path, chosen, era, csv_crlf);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (!dropped.empty())
        fmt::print(stderr, "warning: {}: the {} file does not keep {}\n", target, format_display_name(chosen),
                   fmt::join(dropped, "; "));
}

std::optional<FileFormat> parse_optional_format(const std::optional<std::string>& name) {
    if (!name) return std::nullopt;
    try {
        return parse_format_name(*name);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

namespace {

void print_default_stages_per_rank(const std::string& family, int V) {
    fmt::print(stderr, "note: {}: V = {} stage{} per rank (its default; -V chooses)\n", family, V, V == 1 ? "" : "s");
}

}  // namespace

namespace {
std::string g_invocation, g_tool = "pipeproof";
}  // namespace

void set_invocation(int argc, char** argv, std::string tool) {
    g_invocation.clear();
    for (int k = 0; k < argc; ++k) {
        std::string arg = k == 0 ? std::string("pipeproof") : std::string(argv[k]);
        const bool plain = !arg.empty() && arg.find_first_of(" \t'\"\\$`*?;&|<>()") == std::string::npos;
        if (!plain) {  // shell quoting, so that the line can be run again
            std::string quoted = "'";
            for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
            arg = quoted + "'";
        }
        g_invocation += (k ? " " : "") + arg;
    }
    g_tool = std::move(tool);
}

const std::string& invocation() { return g_invocation; }
const std::string& tool_name() { return g_tool; }

void note_default_stages_per_rank(const ScheduleFamily& family, const Schedule& schedule) {
    if (family.parameters.find('V') == std::string::npos || schedule.placement.pipelines.empty()) return;
    print_default_stages_per_rank(family.name, schedule.placement.pipelines[0].stages() / schedule.placement.ranks);
}

void note_default_group_size(const ScheduleFamily& family, int ranks, std::optional<int> given) {
    if (!given && family.name == "group-interleaved")
        fmt::print(stderr, "note: group-interleaved: G = {} (its default, ceil(P/2); --group-size chooses)\n", (ranks + 1) / 2);
}

void note_default_group_size(const std::string& family, int ranks, std::optional<int> given) {
    if (const ScheduleFamily* known = find_family(family)) note_default_group_size(*known, ranks, given);
}

bool names_a_family_that(const std::vector<std::string>& names, bool (*takes)(std::string_view)) {
    return std::any_of(names.begin(), names.end(), [takes](const std::string& name) {
        const ScheduleFamily* family = std::filesystem::exists(name) ? nullptr : find_family(name);
        return family && takes(family->name);
    });
}

void GroupSizeInput::add_option(CLI::App& app) {
    // One value per occurrence (repeat the flag): the names after it are the command's schedules, not more G's.
    app.add_option("--group-size", items,
                   std::string(kGroupSizeHelp) + "; G for every family that takes one, or FAMILY=G for one of them "
                                                 "(repeatable)")
        ->allow_extra_args(false);
}

namespace {

// "G" or "FAMILY=G": the family's canonical name (empty for the plain G) and G.
std::pair<std::string, int> group_size_item(const std::string& item) {
    const auto equals = item.find('=');
    const std::string family = equals == std::string::npos ? "" : item.substr(0, equals);
    const std::string number = equals == std::string::npos ? item : item.substr(equals + 1);
    int value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || error != std::errc() || end != number.data() + number.size() || value < 1 || value > kMaxMicrobatches)
        throw UsageError(fmt::format("--group-size expects G (an integer in 1..{}) or FAMILY=G, got '{}'", kMaxMicrobatches, item));
    if (equals == 0) throw UsageError(fmt::format("--group-size '{}': no family before '='", item));
    if (family.empty()) return {"", value};
    const ScheduleFamily* known = find_family(family);
    if (!known) throw UsageError(fmt::format("--group-size '{}': {} names no family (see `pipeproof list`)", item, family));
    if (!family_takes_group_size(known->name))
        throw UsageError(fmt::format("--group-size '{}': {} takes no group size (interleaved-1f1b, combined-1f1b and "
                                     "group-interleaved do)", item, family));
    return {known->name, value};
}

}  // namespace

void GroupSizeInput::validate(const std::vector<std::string>& names, const std::string& where) const {
    std::set<std::string> seen;
    for (const std::string& item : items) {
        const std::string family = group_size_item(item).first;
        if (!seen.insert(family).second)
            throw UsageError(family.empty() ? "--group-size: the plain G is given twice"
                                            : "--group-size: " + family + "'s G is given twice");
        const bool named = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
            const ScheduleFamily* known = std::filesystem::exists(name) ? nullptr : find_family(name);
            return known && known->name == family;
        });
        if (!family.empty() && !named)
            throw UsageError(fmt::format("--group-size '{}': {} is not {}", item, family, where));
    }
    if (seen.count("") && !names_a_family_that(names, family_takes_group_size))
        throw UsageError("--group-size applies to interleaved-1f1b, combined-1f1b and group-interleaved, and none is " + where);
    // Nothing given and unused: the plain G must reach a family without a G of its own.
    if (seen.count("") && !std::any_of(names.begin(), names.end(), [&](const std::string& name) {
            const ScheduleFamily* known = std::filesystem::exists(name) ? nullptr : find_family(name);
            return known && family_takes_group_size(known->name) && !seen.count(known->name);
        }))
        throw UsageError("--group-size: the plain G applies to no row (every family that takes one has its own FAMILY=G)");
}

std::optional<int> GroupSizeInput::for_family(const std::string& family) const {
    std::optional<int> plain, own;
    for (const std::string& item : items) {
        const auto [name, value] = group_size_item(item);
        if (name.empty()) plain = value;
        if (name == family) own = value;
    }
    return own ? own : plain;
}

std::string segment_units_assumption(int k, const std::string& where) {
    return fmt::format("sequence segments: k = {} per micro-batch, each unit at 1/{} of the op costs and of the stash "
                       "(equal segments; comm unchanged): every cost and size {} is per unit",
                       k, k, where);
}

std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string region_flags(bool symbolic_comm, const std::vector<std::string>& assumptions) {
    std::string out = symbolic_comm ? " --symbolic-comm" : "";
    for (const std::string& text : assumptions) out += " --assume " + shell_quoted(text);
    return out;
}

std::optional<int> proof_segments(const std::string& family, std::optional<int> given) {
    if (!family_takes_segments(family)) {
        if (given) throw UsageError(family + " has no sequence segments: --segments applies to seq1f1b");
        return std::nullopt;
    }
    return given.value_or(kDefaultSegments);
}

void note_default_segments(const std::string& family, std::optional<int> given) {
    const ScheduleFamily* known = find_family(family);
    if (!given && known && family_takes_segments(known->name))
        fmt::print(stderr, "note: {}: k = {} segments per micro-batch (its default; --segments chooses)\n", known->name,
                   kDefaultSegments);
}

std::optional<int> resolved_group_size(const std::string& family, int ranks, std::optional<int> given) {
    const ScheduleFamily* known = find_family(family);
    if (given || !known || known->name != "group-interleaved") return given;
    return (ranks + 1) / 2;
}

void note_default_stages_per_rank(const std::string& family, int ranks, std::optional<int> given) {
    const ScheduleFamily* known = find_family(family);
    if (given || !known || known->parameters.find('V') == std::string::npos) return;
    if (const auto spec = family_spec(family, ranks); spec && spec->stages_per_rank)
        print_default_stages_per_rank(family, *spec->stages_per_rank);
}

std::optional<int> resolved_stages_per_rank(const std::string& family, int ranks, std::optional<int> given) {
    const ScheduleFamily* known = find_family(family);
    if (!known || known->parameters.find('V') == std::string::npos) return std::nullopt;
    if (given) return given;
    const auto spec = family_spec(family, ranks);
    return spec ? spec->stages_per_rank : std::nullopt;
}

Schedule ScheduleInput::load() const {
    Schedule schedule = load_as_given();
    if (segment_costs) {
        if (schedule.segments < 2)
            throw UsageError(fmt::format("--segment-costs needs a schedule with sequence segments (seq1f1b --segments k >= 2, "
                                         "or a file with 'segments k'); '{}' has none", source));
        try {
            schedule.segment_cost_shares = parse_segment_cost_shares(*segment_costs, schedule.segments);
        } catch (const CostSyntaxError& e) {
            throw UsageError("--segment-costs: " + e.message);
        }
    }
    return schedule;
}

Schedule ScheduleInput::load_as_given() const {
    if (!std::filesystem::exists(source) && source != "-") {
        if (const ScheduleFamily* family = find_family(source)) {
            if (!ranks || !microbatches)
                throw UsageError(fmt::format("generating '{}' needs -P (ranks) and -M (micro-batches)", source));
            GenerateParams params{*ranks, *microbatches, stages_per_rank};
            params.group_size = group_size;
            params.segments = segments;
            Schedule schedule = family->generate(params);
            if (!stages_per_rank) note_default_stages_per_rank(*family, schedule);
            note_default_group_size(*family, *ranks, group_size);
            note_default_segments(family->name, segments);
            return schedule;
        }
        throw InputError(source, 0, 0, "no such file, and not a schedule family: " + unknown_family_message(source));
    }
    if (group_size)
        throw UsageError(fmt::format("--group-size is a generator parameter (interleaved-1f1b, combined-1f1b, group-interleaved), but '{}' is a file",
                                     source));
    if (segments)
        throw UsageError(fmt::format("--segments is a generator parameter (seq1f1b), but '{}' is a file (a native or JSON "
                                     "file states its own segments)", source));
    TorchCsvOptions csv;
    csv.era = parse_era(torch_era);
    csv.ranks = ranks;
    csv.microbatches = microbatches;
    csv.stages = stages;
    return load_schedule(source, parse_optional_format(format), csv);
}

const ScheduleFamily* ScheduleInput::generated_family() const {
    if (source == "-" || std::filesystem::exists(source)) return nullptr;
    return find_family(source);
}

Schedule ScheduleInput::ordered_for(Schedule schedule, const Costs& stage_costs, const std::optional<ActivationModel>& sizes) const {
    const ScheduleFamily* family = generated_family();
    if (!family || !family->orders_for_costs || !ranks || !microbatches) return schedule;
    GenerateParams params{*ranks, *microbatches, stages_per_rank};
    params.group_size = group_size;
    params.segments = segments;
    params.costs = stage_costs;
    params.activation_sizes = sizes;
    return family->generate(params);
}

Schedule ScheduleInput::load(const CostInput& timing) const {
    Schedule schedule = load();
    const ScheduleFamily* family = generated_family();
    if (!family || !family->orders_for_costs) return schedule;
    const Costs stage_costs = timing.resolve(schedule);
    std::optional<ActivationModel> sizes;
    if (timing.activation) sizes = timing.activations(&schedule);
    return ordered_for(std::move(schedule), stage_costs, sizes);
}

Schedule ordered_for_row(const ScheduleInput& input, Schedule schedule, const CostInput& costs, bool model_share) {
    const ScheduleFamily* family = input.generated_family();
    if (!family || !family->orders_for_costs) return schedule;
    Costs given = costs.resolve(schedule, false);
    if (costs.chunk_table) given = chunks_at_share(schedule, *costs.chunk_table, model_share).given;
    const Costs stage = model_share ? scaled_costs(given, stage_share(schedule.placement)) : given;
    std::optional<ActivationModel> sizes;
    if (costs.activation) sizes = costs.activations();
    return input.ordered_for(std::move(schedule), stage, sizes);
}

CLI::Option* add_units_option(CLI::App& app, std::string& units) {
    return app.add_option("--units", units,
                   "stage: costs and activation sizes per stage, as given; rank: those of a 1/P share of the model, each "
                   "stage run at its share P/blocks (a V stage at half), peaks and limits in the same units")
        ->check(one_of({"stage", "rank"}))
        ->capture_default_str();
}

void add_layout_options(CLI::App& app, std::optional<std::string>& layout, std::vector<std::string>& layer_costs,
                        std::optional<std::string>& layer_sizes) {
    app.add_option("--layout", layout,
                   "uneven stages, Megatron's --pipeline-model-parallel-layout: blocks split by '|', E embedding, t decoder "
                   "layer, m MTP, L loss, x*N and (..)*N repeat, e.g. 'Et*3|(t*4|)*2,t*3L' (4 blocks); --costs are then one decoder "
                   "layer's, and a block's costs and stash the sum of its layers'");
    app.add_option("--layer-costs", layer_costs, "with --layout: one layer kind's costs, LAYER:F=..,I=..,W=.. (repeatable; "
                                                 "E and L cost nothing unless given, m as t)");
    app.add_option("--layer-sizes", layer_sizes, "with --layout: each layer kind's stash in decoder-layer units, e.g. "
                                                 "E=0,L=3 (default t=1, m=1, E=0, L=0)");
}

void refuse_layout_options(CLI::App& app, const std::string& reason) {
    const std::string command = app.get_name();
    for (const std::string name : {"--layout", "--layer-costs", "--layer-sizes"})
        app.add_option(
               name,
               [command, reason, name](const CLI::results_t&) -> bool {
                   throw UsageError(fmt::format("{}: {} does not take uneven stages (--layout) yet: {}; verify, simulate, "
                                                "show, compare, report and search take them", name, command, reason));
               },
               "")
            ->group("");
}

std::vector<std::vector<Rational>> layout_stage_stash(const Placement& placement, const CostInput::ResolvedLayout& resolved) {
    std::vector<std::vector<Rational>> stash;
    for (const Pipeline& pipeline : placement.pipelines) {
        stash.emplace_back();
        for (const int block : pipeline.stage_block)
            stash.back().push_back(block_stash(resolved.layout.blocks.at(static_cast<size_t>(block)), resolved.layers));
    }
    return stash;
}

bool model_share_costs(const CostInput& costs, const std::string& units, bool per_stage_costs, const CLI::Option* units_flag) {
    if (!costs.layout) return units == "rank" && !per_stage_costs;
    if (units == "rank" && units_flag && units_flag->count() > 0)
        throw UsageError("--layout gives each block its layers' own costs; --units rank (a 1/P share per stage) does not apply");
    return false;
}

void add_proof_units_option(CLI::App& app, std::string& units) {
    app.add_option("--units", units,
                   "stage: each stage's costs (as the published formulas); rank: a 1/P share of the model's, the same "
                   "where a stage is one (refused for V and interleaved families, whose stages are smaller)")
        ->check(one_of({"stage", "rank"}))
        ->capture_default_str();
}

ProofUnits proof_units(const std::string& units, const std::string& family, int ranks, std::optional<int> stages_per_rank,
                       bool converts) {
    if (units != "rank") return {"stage", Rational(1)};
    const auto spec = family_spec(family, ranks, nullptr, stages_per_rank);
    if (!spec) return {"rank", Rational(1)};  // the command reports the bad family or P itself
    const Rational share = stage_share(spec->generate(spec->m0).placement);
    if (share == Rational(1)) return {"rank (the same as stage: each stage is a 1/P share of the model)", share};
    const std::string s = format_rational(share);
    if (converts)
        return {fmt::format("rank, each stage at {} of the given costs and holding {} of a rank's stash (costs and peaks "
                            "read and reported in rank units)",
                            s, s),
                share};
    throw UsageError(fmt::format(
        "--units rank: a {} stage runs at {} of a rank's costs, and this result is a formula in a stage's costs (as the "
        "published formulas are); use --units stage and read each of F, I, W, B, FB as {} of the rank's cost (comm "
        "unchanged), or state it as a claim: refute --units rank, simulate/compare --units rank",
        spec->name, s, s));
}

Rational CostInput::share(const Schedule& schedule) const { return rank_units() ? stage_share(schedule.placement) : Rational(1); }

std::string CostInput::units_text(const Schedule& schedule) const {
    if (layout) return fmt::format("stage, each block its layers' sum under --layout '{}' (--costs per decoder layer)", *layout);
    if (!rank_units()) return "stage";
    return fmt::format("rank, each stage at {} of the given costs", format_rational(share(schedule)));
}

namespace {

// The keys of "F=1,I=2 W=3" (presets and malformed items are the parser's business).
std::vector<std::string> cost_keys(std::string_view text) {
    std::vector<std::string> keys;
    size_t at = 0;
    while (at < text.size()) {
        const size_t end = std::min(text.find_first_of(", \t", at), text.size());
        const std::string_view item = text.substr(at, end - at);
        if (const size_t eq = item.find('='); eq != std::string_view::npos) keys.emplace_back(item.substr(0, eq));
        at = end + 1;
    }
    return keys;
}

}  // namespace

void CostInput::warn_unused_letters(const Schedule& schedule) const {
    bool used[kOpKinds] = {}, fb_pair = false, fi_pair = false;
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) {
            for (int k = 0; k < slot.count; ++k) used[static_cast<int>(slot.ops[k].kind)] = true;
            if (slot.is_pair()) (slot.ops[1].kind == OpKind::I ? fi_pair : fb_pair) = true;
        }
    const bool split = used[static_cast<int>(OpKind::I)] || used[static_cast<int>(OpKind::W)];
    const bool full = used[static_cast<int>(OpKind::B)];
    std::vector<std::string> keys;
    if (costs) keys = cost_keys(*costs);
    for (const auto& item : stage_costs)
        for (auto& k : cost_keys(item.substr(std::min(item.find(':') + 1, item.size())))) keys.push_back(std::move(k));
    const auto has_key = [&](const char* k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
    std::set<std::string> said;
    for (const std::string& key : keys) {
        std::string why;
        if (key == "B" && !full)
            why = "no op is a full backward B (the backward is split into I and W, each timed at its own cost)";
        else if ((key == "I" || key == "W") && !split && full && has_key("B"))
            why = "every backward is a full B, timed at the B given";
        else if ((key == "FB" || key == "F&B") && !fb_pair && !(fi_pair && !has_key("FI") && !has_key("F&I")))
            why = "no slot pairs an F with a B (an F&I pair takes FB only when FI is not given)";
        else if ((key == "FI" || key == "F&I") && !fi_pair) why = "no slot pairs an F with an I";
        if (!why.empty() && said.insert(key).second)
            fmt::print(stderr, "warning: {}: the cost {} is not used: {}\n", schedule.source, key, why);
    }
}

std::optional<Rational> CostInput::memory_limit(const Schedule& schedule, const std::optional<Rational>& flag) const {
    if (flag) return flag;
    if (schedule.memory_limit && rank_units()) return *schedule.memory_limit * share(schedule);
    return std::nullopt;  // the file's own, in the stage units it is written in
}

void TimeUnitInput::add_option(CLI::App& app) {
    app.add_option("--time-unit", text, "the unit of the costs: us, ms or s (named in the output, the axes and the JSON)")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string {
                static const std::vector<std::string> names = {"us", "ms", "s"};
                if (std::find(names.begin(), names.end(), value) != names.end()) return "";
                if (const auto seconds = parse_rational(value); seconds && *seconds > Rational(0)) return "";
                const auto nearest = nearest_spelling(to_lower(value), names);
                return fmt::format("'{}' is not one of us, ms, s{}", value,
                                   nearest ? "; did you mean '" + *nearest + "'?" : "");
            },
            "{us, ms, s}"));
}

std::optional<std::string> TimeUnitInput::name() const {
    if (text && (*text == "us" || *text == "ms" || *text == "s")) return *text;
    return std::nullopt;
}

std::optional<Rational> TimeUnitInput::seconds_per_unit() const {
    if (!text) return std::nullopt;
    if (*text == "us") return Rational(1, 1000000);
    if (*text == "ms") return Rational(1, 1000);
    if (*text == "s") return Rational(1);
    return parse_rational(*text);
}

std::string TimeUnitInput::suffix() const { return name() ? " " + *name() : std::string(); }

nlohmann::json TimeUnitInput::json() const { return name() ? nlohmann::json(*name()) : nlohmann::json(nullptr); }

std::optional<Rational> TimeUnitInput::seconds_with(const std::optional<std::string>& seconds_flag) const {
    std::optional<Rational> flag;
    if (seconds_flag) {
        flag = parse_rational(*seconds_flag);
        if (!flag || *flag <= Rational(0))
            throw UsageError("--seconds-per-unit expects a positive number of seconds per cost unit, e.g. 0.001 or 1/1000, got '" +
                             *seconds_flag + "'");
    }
    const auto mine = seconds_per_unit();
    if (flag && mine && *flag != *mine)
        throw UsageError(fmt::format("--seconds-per-unit {} contradicts --time-unit {} ({} s per unit)", *seconds_flag, *text,
                                     format_rational(*mine)));
    return flag ? flag : mine;
}

void CostInput::add_options(CLI::App& app, bool with_units) {
    if (with_units) add_units_option(app, units);
    time_unit.add_option(app);
    app.add_option("--costs", costs, "durations, e.g. F=1,I=1,W=1,B=2,FB=3,comm=0 (exact: 1.75 or 7/4)");
    app.add_option("--stage-costs", stage_costs, "per-block override BLOCK:F=..,I=..,W=.. (repeatable)");
    app.add_option("--activation-sizes", activation, "activation sizes F=..,I=..: allocated by F, released by I (rest at W)");
    add_layout_options(app, layout, layer_costs, layer_sizes);
    chunks.add_options(app);
    // A bad value is refused before any schedule is read or generated (which can take seconds and gigabytes).
    app.parse_complete_callback([this] { check_syntax(); });
}

void CostInput::check_syntax() const {
    // Chunk flags by their syntax only: whether they apply depends on the file (a 'chunks' section).
    if (chunks.chunk_costs && *chunks.chunk_costs != "symbolic") (void)chunk_costs_from_flag(*chunks.chunk_costs);
    if (chunks.pattern) (void)pattern_from_flag(*chunks.pattern);
    CostInput opaque;
    opaque.costs = costs;
    opaque.stage_costs = stage_costs;
    (void)opaque.resolve(Schedule{}, false);
    (void)activations();
    (void)resolved_layout();
}

std::optional<CostInput::ResolvedLayout> CostInput::resolved_layout() const {
    if (!layout) {
        if (!layer_costs.empty() || layer_sizes) throw UsageError("--layer-costs and --layer-sizes apply to --layout, which is not given");
        return std::nullopt;
    }
    if (!costs) throw UsageError("--layout needs --costs: one decoder layer's costs (a block's are the sum of its layers')");
    if (!stage_costs.empty()) throw UsageError("--layout and --stage-costs both give per-block costs: use one of them");
    if (rank_units()) throw UsageError("--layout gives each block its own layers; --units rank (a 1/P share per stage) does not apply");
    if (chunks.given())
        throw UsageError("--layout takes op costs per layer (--costs, --layer-costs), not chunk costs (--chunk-costs, --pattern)");
    if (layout_cache) return layout_cache;
    const StageLayout parsed_layout = [&] {
        try {
            return parse_stage_layout(*layout);
        } catch (const CostSyntaxError& e) {
            throw UsageError(fmt::format("--layout: column {}: {}", e.offset + 1, e.message));
        }
    }();
    const Costs decoder = [&] {
        try {
            return parse_costs(*costs);
        } catch (const CostSyntaxError& e) {
            throw UsageError("--costs: " + e.message);
        }
    }();
    ResolvedLayout out{parsed_layout, LayerCosts(decoder.base), decoder.comm};
    for (const auto& item : layer_costs) try {
            out.layers.apply_costs(item);
        } catch (const CostSyntaxError& e) {
            throw UsageError(fmt::format("--layer-costs '{}': column {}: {}", item, e.offset + 1, e.message));
        }
    for (const OpCosts& c : out.layers.costs)
        if (c.FB || c.FI)
            throw UsageError("--layout: a pair's cost (FB, FI) would join two blocks' layers, so it is not given per layer; "
                             "pairs run at the sum of their two ops");
    try {
        if (layer_sizes) out.layers.apply_sizes(*layer_sizes);
    } catch (const CostSyntaxError& e) {
        throw UsageError(fmt::format("--layer-sizes: column {}: {}", e.offset + 1, e.message));
    }
    {  // nothing inferred silently: the defaults a layer kind of the layout runs at (once: the result is cached)
        std::vector<std::string> defaults;
        for (int k = 0; k < kLayerKinds; ++k) {
            bool used = false;
            for (const BlockLayers& b : out.layout.blocks) used = used || b.count[k] > 0;
            if (!used || k == static_cast<int>(LayerKind::Decoder)) continue;
            if (!out.layers.costs_given[k])
                defaults.push_back(fmt::format("{} costs {}", kLayerLetters[k], k == static_cast<int>(LayerKind::Mtp) ? "as t" : "nothing"));
            if (!out.layers.size_given[k])
                defaults.push_back(fmt::format("{} stashes {}", kLayerLetters[k], format_rational(out.layers.sizes[k])));
        }
        if (!defaults.empty())
            std::cerr << fmt::format("note: --layout: {} (defaults; --layer-costs and --layer-sizes give them)\n",
                                     fmt::join(defaults, ", "));
    }
    layout_cache = out;
    return out;
}

namespace {

[[noreturn]] void throw_missing_block(int block, int blocks) {  // a typo must not be ignored silently
    throw UsageError(fmt::format("--stage-costs: block {} does not exist: the placement has model blocks 0..{}", block, blocks - 1));
}

}  // namespace

void CostInput::check_stage_blocks(const std::vector<Schedule>& schedules) const {
    int blocks = 0;
    for (const Schedule& s : schedules) blocks = std::max(blocks, s.placement.blocks());
    for (const auto& item : stage_costs) {
        const auto colon = item.find(':');
        const auto block = colon == std::string::npos ? std::nullopt : parse_rational(item.substr(0, colon));
        if (block && block->denominator() == 1 && block->numerator() >= Integer(blocks) && block->numerator() <= kMaxBlock)
            throw_missing_block(static_cast<int>(block->numerator().to_int64()), blocks);
    }
}

namespace {

void require_layout_blocks(const Schedule& schedule, const StageLayout& layout) {
    const int blocks = schedule.placement.blocks();
    if (static_cast<int>(layout.blocks.size()) != blocks)
        throw UsageError(fmt::format("--layout '{}' has {} blocks, but {} has {} model blocks ({} ranks{})", layout.text,
                                     layout.blocks.size(), schedule.source.empty() ? "the schedule" : schedule.source,
                                     blocks, schedule.placement.ranks,
                                     blocks == schedule.placement.ranks ? "" : fmt::format(", {} per rank", blocks / std::max(1, schedule.placement.ranks))));
}

// Each block at the sum of its layers' costs; comm from --costs.
Costs layout_costs(const Schedule& schedule, const CostInput::ResolvedLayout& resolved) {
    if (schedule.placement.ranks > 0) require_layout_blocks(schedule, resolved.layout);
    if (schedule.costs && !schedule.costs->per_block.empty())
        throw UsageError(fmt::format("{} gives blocks their own costs (stage-costs); --layout gives every block's: use one of them",
                                     schedule.source.empty() ? "the schedule" : schedule.source));
    Costs result = schedule.costs.value_or(Costs{});
    result.per_block.clear();
    result.base = resolved.layers.costs[static_cast<int>(LayerKind::Decoder)];
    result.comm = resolved.comm;
    for (size_t b = 0; b < resolved.layout.blocks.size(); ++b)
        result.per_block[static_cast<int>(b)] = block_costs(resolved.layout.blocks[b], resolved.layers);
    return result;
}

}  // namespace

Costs CostInput::layout_costs_at(const Schedule& sample, const OpCosts& decoder, const Rational& comm) const {
    auto resolved = resolved_layout();
    if (!resolved) throw std::logic_error("layout_costs_at without --layout");
    resolved->layers.costs[static_cast<int>(LayerKind::Decoder)] = decoder;
    if (!resolved->layers.costs_given[static_cast<int>(LayerKind::Mtp)])
        resolved->layers.costs[static_cast<int>(LayerKind::Mtp)] = decoder;
    resolved->comm = comm;
    return layout_costs(sample, *resolved);
}

Costs CostInput::resolve(const Schedule& schedule, bool every_block_exists) const {
    if (rank_units()) {
        // Files hold stage costs (what was timed); rank units scale only what the command line gives.
        if (!costs && stage_costs.empty() && (schedule.costs || schedule.chunks))
            throw UsageError(fmt::format("--units rank scales the costs given by --costs/--stage-costs; {}'s costs are per "
                                         "stage (drop --units rank, or give --costs)", schedule.source));
        if (chunks.given() || schedule.chunks)
            throw UsageError("--units rank with chunk costs: compare and report time chunk costs at each stage's share; "
                             "here give the stage's own chunk costs (--units stage)");
    }
    chunk_table = chunks.resolve(schedule, costs.has_value() || !stage_costs.empty());
    if (chunk_table) return chunk_table->costs();
    if (const auto resolved = resolved_layout()) return layout_costs(schedule, *resolved);
    Costs result = scaled_costs(resolve_as_given(schedule, every_block_exists), share(schedule));
    if (rank_units() && schedule.costs)  // a file's own block costs are stage costs: kept as written
        for (const auto& [block, c] : schedule.costs->per_block)
            if (!flag_sets_block(block)) result.per_block[block] = c;
    return result;
}

bool CostInput::flag_sets_block(int block) const {
    for (const auto& item : stage_costs) {
        const auto colon = item.find(':');
        const auto given = colon == std::string::npos ? std::nullopt : parse_rational(item.substr(0, colon));
        if (given && *given == Rational(block)) return true;
    }
    return false;
}

Costs CostInput::resolve_as_given(const Schedule& schedule, bool every_block_exists) const {
    Costs result = schedule.costs.value_or(Costs{});
    try {
        if (costs) {
            Costs parsed = parse_costs(*costs);
            result.base = parsed.base;
            result.comm = parsed.comm;
        }
    } catch (const CostSyntaxError& e) {
        throw UsageError("--costs: " + e.message);
    }
    const int blocks = every_block_exists ? schedule.placement.blocks() : 0;  // 0: not known here, or not checked
    try {
        for (const auto& item : stage_costs) {
            auto colon = item.find(':');
            auto block = colon == std::string::npos ? std::nullopt : parse_rational(item.substr(0, colon));
            if (!block || block->denominator() != 1 || block->numerator() < Integer(0))
                throw UsageError("--stage-costs expects BLOCK:F=..,I=..,W=.., got '" + item + "'");
            if (block->numerator() > kMaxBlock)  // would not fit the int a block number is
                throw UsageError(fmt::format("--stage-costs: block {} is out of range (0..{})", block->numerator().to_string(), kMaxBlock));
            const int index = static_cast<int>(block->numerator().to_int64());
            if (blocks > 0 && index >= blocks) throw_missing_block(index, blocks);
            OpCosts c = result.base;
            apply_cost_items(item.substr(colon + 1), c, nullptr);
            result.per_block[index] = c;
        }
    } catch (const CostSyntaxError& e) {
        throw UsageError("--stage-costs: " + e.message);
    }
    return result;
}

ActivationModel CostInput::activations(const Schedule* schedule) const {
    ActivationModel sizes = schedule && schedule->activation_sizes ? *schedule->activation_sizes : ActivationModel{};
    try {
        if (activation) sizes = parse_activation_sizes(*activation);
    } catch (const CostSyntaxError& e) {
        throw UsageError("--activation-sizes: " + e.message);
    }
    if (schedule && schedule->placement.ranks > 0)
        if (const auto resolved = resolved_layout()) {  // a stage's stash: its block's layers
            require_layout_blocks(*schedule, resolved->layout);
            if (schedule->costs && !schedule->costs->per_block.empty())
                throw UsageError(fmt::format("{} gives blocks their own costs (stage-costs); --layout gives every block's: "
                                             "use one of them", schedule->source.empty() ? "the schedule" : schedule->source));
            if (schedule->memory_limit && !memory_limit_flag_given)
                throw UsageError(fmt::format("{}'s memory-limit counts stage stashes, and under --layout peaks count "
                                             "decoder-layer stashes: give the limit with verify --memory-limit",
                                             schedule->source.empty() ? "the schedule" : schedule->source));
            sizes.stage_scale = layout_stage_stash(schedule->placement, *resolved);
        }
    if (schedule && rank_units()) {  // a stage's stash is its share of a 1/P-of-the-model stash
        const Rational s = share(*schedule);
        sizes.forward_alloc *= s;
        sizes.input_grad_free *= s;
    }
    return sizes;
}

nlohmann::json number_json(const Rational& value) {
    if (value.denominator() == 1)
        if (const auto whole = value.numerator().try_int64()) return *whole;
    return to_double(value);
}

void put_number(nlohmann::json& object, const std::string& key, const Rational& value) {
    object[key] = number_json(value);
    object["exact"][key] = format_rational(value);
}

void put_numbers(nlohmann::json& object, const std::string& key, const std::vector<Rational>& values) {
    nlohmann::json numbers = nlohmann::json::array(), texts = nlohmann::json::array();
    for (const Rational& v : values) numbers.push_back(number_json(v)), texts.push_back(format_rational(v));
    object[key] = std::move(numbers);
    object["exact"][key] = std::move(texts);
}

nlohmann::json cost_point_json(const std::array<Rational, kCostVars>& point, Basis basis) {
    nlohmann::json j = nlohmann::json::object();
    for (int i = 0; i < kCostVars; ++i)
        if (basis != Basis::ZeroBubble || i != static_cast<int>(CostVar::B)) put_number(j, cost_var_name(i, basis), point[i]);
    return j;
}

int whole_activations(const Rational& value) {
    const Integer whole = value.numerator() / value.denominator();
    // A cap of 2^31 or more activations is no cap at all: no schedule holds that many at once.
    if (whole > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
    return static_cast<int>(whole.to_int64());
}

void add_budget_options(CLI::App& app, std::optional<double>& time_limit, std::optional<double>& memory_budget) {
    app.add_option("--time-limit", time_limit, "seconds; when they run out the answer is UNKNOWN (exit 3) with what was established")
        ->check(CLI::PositiveNumber);
    app.add_option("--memory-budget", memory_budget,
                   "MB of resident memory; when exceeded the answer is UNKNOWN (exit 3) with what was established")
        ->check(CLI::PositiveNumber);
}

void add_basis_option(CLI::App& app, std::string& basis) {
    // Checked by resolve_basis (its message lists the names), not by CLI11, so that the error says what each means.
    app.add_option("--basis", basis,
                   "letters of symbolic results, claims and assumptions: pytorch (default, as everywhere in pipeproof: "
                   "F, I = input-gradient backward, W, B = I + W, FB = F&B), paper (the family's own paper's: the Zero "
                   "Bubble paper's for zb-h1, zb-h2, zbv, zb1p, DeepSeek's otherwise), deepseek (F, B = I + W full "
                   "backward, W, FB = F&B) or zero-bubble (F, B = input-gradient backward = PyTorch's I, W)");
}

Basis resolve_basis(const std::string& name, const std::string& family) {
    if (name == "paper") return paper_basis_of(family);
    Basis basis = Basis::DeepSeek;
    if (parse_basis(name, basis)) return basis;
    throw UsageError("--basis: unknown letters '" + name +
                     "'; valid: paper (the family's own paper's), deepseek (B = full backward), zero-bubble (B = "
                     "input-gradient backward; also zb), pytorch (I = input gradient, B = I + W)");
}

}  // namespace pp::cli
