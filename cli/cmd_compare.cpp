// pipeproof compare NAME... -P -M [-V]: one row per schedule (verifier/compare.hpp) -- makespan, bubble,
// idle per rank, the Zero Bubble paper's bubble rate, peak activations, parameter copies and, given
// --tokens-per-microbatch and --seconds-per-unit, GPU utilisation and GPU-hours per million tokens.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/vocabulary.hpp"
#include "cli/common.hpp"
#include "cli/offload_options.hpp"
#include "cli/report.hpp"
#include "formats/json_text.hpp"
#include "schedules/registry.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

std::string percent(const Rational& fraction) { return fmt::format("{:.2f}%", 100.0 * to_double(fraction)); }

// Exact text, with a decimal next to a fraction that does not terminate: "575/24576 (~0.0233968)".
std::string exact(const Rational& value) {
    const std::string text = format_rational(value);
    if (text.find('/') == std::string::npos) return text;
    return fmt::format("{} (~{:.6g})", text, to_double(value));
}

std::string joined(const std::vector<Rational>& values) {
    std::vector<std::string> parts;
    for (const auto& v : values) parts.push_back(format_rational(v));
    return fmt::format("{}", fmt::join(parts, " "));
}

template <typename T>
std::string range_text(const std::vector<T>& values) {
    if (values.empty()) return "-";
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    if (*lo == *hi) return fmt::format("{}", *lo);
    return fmt::format("{}..{}", *lo, *hi);
}

std::string range_text(const std::vector<Rational>& values) {
    if (values.empty()) return "-";
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    if (*lo == *hi) return format_rational(*lo);
    return format_rational(*lo) + ".." + format_rational(*hi);
}

struct CompareCommand {
    std::vector<std::string> names;
    std::optional<int> ranks, microbatches, stages_per_rank, segments;
    GroupSizeInput group_size;
    CostInput costs;
    std::string comm_model = "dataflow";
    std::optional<std::int64_t> tokens_per_microbatch;
    std::optional<std::string> seconds_per_unit;
    bool per_stage_costs = false;  // the old spelling of --units stage
    std::string units = "rank";
    const CLI::Option* units_flag = nullptr;
    bool json = false;
    std::vector<std::optional<ChunkExposure>> exposures;  // per row, with chunk costs (issue 11)
    std::vector<nlohmann::json> instances;                // per row: its family (or null) and shape (cli/vocabulary.hpp)
    std::vector<std::string> patterns;
    OffloadInput offload;                                 // --offload: each row timed with its stashes moved too
    std::vector<std::optional<OffloadReport>> offloads;   // per row, with --offload

    // A family name with -P -M (and -V for the families that take it, 2 by default), or a schedule file.
    ScheduleInput input_for(const std::string& name) const {
        ScheduleInput input;
        input.source = name;
        input.ranks = ranks;
        input.microbatches = microbatches;
        if (!std::filesystem::exists(name)) {
            if (const ScheduleFamily* family = find_family(name)) {
                if (!ranks || !microbatches)
                    throw UsageError(fmt::format("comparing '{}' needs -P (ranks) and -M (micro-batches)", name));
                const bool takes_v = family->parameters.find('V') != std::string::npos;
                if (takes_v) input.stages_per_rank = stages_per_rank.value_or(2);
                if (family_takes_group_size(family->name)) input.group_size = group_size.for_family(family->name);
                if (family_takes_segments(family->name)) input.segments = segments;
            }
        }
        return input;
    }

    CompareOptions options(const ActivationModel& activations) const {
        CompareOptions o;
        o.comm_model = comm_model_from(comm_model);
        o.model_share_costs = model_share_costs(costs, units, per_stage_costs, units_flag);
        o.activations = activations;
        // GPU-hours need the tokens and the seconds per unit (--seconds-per-unit, or --time-unit's); a time unit
        // alone only names the unit. A number after --time-unit is the old spelling of --seconds-per-unit.
        const auto seconds = costs.time_unit.seconds_with(seconds_per_unit);
        const bool seconds_given = seconds_per_unit || (costs.time_unit.text && !costs.time_unit.name());
        if (tokens_per_microbatch && !seconds)
            throw UsageError("--tokens-per-microbatch and --seconds-per-unit go together (GPU-hours need both; --time-unit "
                             "us|ms|s gives the seconds per unit too)");
        if (seconds_given && !tokens_per_microbatch)
            throw UsageError("--tokens-per-microbatch and --seconds-per-unit go together (GPU-hours need both)");
        if (tokens_per_microbatch) {
            if (*tokens_per_microbatch <= 0) throw UsageError("--tokens-per-microbatch must be positive");
            o.tokens_per_microbatch = tokens_per_microbatch;
            o.seconds_per_unit = seconds;
        }
        return o;
    }

    // Only valid schedules get a row: the verdict of `verify` (the file's memory limit, send/recv of a
    // compute_comms file, under `batched` the P2P program) with the same violations and count.
    static void require_valid(const Schedule& schedule, const CompareOptions& o) {
        VerdictOptions options = verdict_options(schedule, o.activations, o.comm_model);
        options.batched = o.batched;
        const VerifyReport report = verdict(schedule, options);
        if (report.ok()) return;
        std::string text = violations_text(schedule, report);
        for (const auto& v : report.violations)
            if (v.kind == ViolationKind::CommDeadlock || v.kind == ViolationKind::CommMismatch)
                for (const auto& step : v.witness) text += "  " + step + "\n";
        throw SimulationError(schedule.source + " is not valid, so it gets no row (run `pipeproof verify`; timing model " +
                              std::string(comm_model_name(o.comm_model)) + "):\n" + text);
    }

    int run() {
        group_size.validate(names, "compared");
        check_table_offload_flags(offload, comm_model);
        if (segments && !names_a_family_that(names, family_takes_segments))
            throw UsageError("--segments applies to seq1f1b, and it is not compared");
        std::vector<ScheduleInput> inputs;
        std::vector<Schedule> schedules;
        for (const auto& name : names) {
            inputs.push_back(input_for(name));
            try {
                schedules.push_back(inputs.back().load());
            } catch (const GenerateError& e) {  // e.g. a G this family refuses: say which row
                throw GenerateError(name + ": " + e.what());
            }
            if (const ScheduleFamily* family = inputs.back().generated_family(); family && !stages_per_rank)
                note_default_stages_per_rank(*family, schedules.back());
        }
        costs.check_stage_blocks(schedules);  // a --stage-costs block must exist in at least one of them
        const CompareOptions o = options(costs.activations());
        std::vector<CompareRow> rows;
        std::vector<Costs> row_costs;
        for (size_t k = 0; k < schedules.size(); ++k) {
            // v-zb: ordered for what its stages run at in this row
            schedules[k] = ordered_for_row(inputs[k], std::move(schedules[k]), costs, o.model_share_costs);
            const Schedule& schedule = schedules[k];
            CompareOptions row_options = o;  // with --layout, each stage's stash is its block's layers
            row_options.activations = costs.activations(&schedule);
            require_valid(schedule, row_options);
            row_costs.push_back(costs.resolve(schedule, false));
            if (costs.chunk_table) {  // issue 11: a stage's chunk holds its share of the layers
                StageChunks stage = chunks_at_share(schedule, *costs.chunk_table, o.model_share_costs);
                row_costs.back() = stage.given;
                exposures.push_back(std::move(stage.exposure));
                patterns.push_back(stage.pattern + (stage.exact ? fmt::format(", {} layer{} per stage", stage.stage_layers,
                                                                              stage.stage_layers == 1 ? "" : "s")
                                                                : ", costs scaled to the stage's share (layers x share is not whole)"));
            } else {
                exposures.push_back(std::nullopt);
                patterns.push_back("");
            }
            rows.push_back(compare_schedule(schedule, row_costs.back(), row_options));
            offloads.push_back(offload_for_row(offload, schedule, rows.back(), row_options.activations));
            nlohmann::json instance = instance_json(schedule);
            const ScheduleFamily* family = inputs[k].generated_family();
            instance["family"] = family ? nlohmann::json(family->name) : nlohmann::json(nullptr);
            instances.push_back(std::move(instance));
        }
        if (json)
            print_json(rows, row_costs, o);
        else
            print_text(rows, row_costs, o);
        return kOk;
    }

    void print_offload_text(const std::vector<CompareRow>& rows, size_t width) const {
        if (!offload.active()) return;
        const OffloadPolicy& p = offloads.front()->policy;
        std::cout << fmt::format("\nwith activation offload: {} of each stash moved to host memory and back (reload "
                                 "released {} slot(s) ahead), host link {} (offload) and {} (reload) per unit of "
                                 "activation memory as the peaks count it, {}:\n",
                                 format_rational(p.fraction), p.lookahead, format_rational(p.offload_time),
                                 format_rational(p.reload_time), p.duplex ? "one stream per direction" : "one shared stream");
        std::cout << fmt::format("{:<{}}  {:>10}  {:>10}  {:>12}  {:>12}  {:>10}  {:>10}\n", "schedule", width, "makespan",
                                 "overhead", "device peak", "without", "host peak", "link busy");
        for (size_t i = 0; i < rows.size(); ++i) {
            const OffloadReport& r = *offloads[i];
            const Rational makespan = r.timing.scale.to_units(r.timing.makespan);
            std::vector<Rational> device, host;
            Rational busy{0};
            for (const RankOffload& rank : r.timing.ranks) {
                device.push_back(rank.device_peak);
                host.push_back(rank.host_peak);
                busy = std::max(busy, r.timing.scale.to_units(rank.link_busy));
            }
            std::cout << fmt::format("{:<{}}  {:>10}  {:>10}  {:>12}  {:>12}  {:>10}  {:>10}\n", rows[i].name, width,
                                     format_rational(makespan), percent((makespan - rows[i].makespan) / rows[i].makespan),
                                     range_text(device), range_text(rows[i].peak_activations), range_text(host),
                                     format_rational(busy));
        }
    }

    static std::string cost_basis_text(const CompareOptions& o) {
        return o.model_share_costs ? "costs per 1/P of the model, each stage at its share (like for like)"
                                   : "costs per stage as given";
    }

    static std::string model_label(const CompareRow& row) {
        return TimingModel{row.comm_model, row.attached_comm_program}.label();
    }

    void print_text(const std::vector<CompareRow>& rows, const std::vector<Costs>& row_costs, const CompareOptions& o) const {
        std::cout << fmt::format("timing model: {}; {}{}\n", comm_model_name(o.comm_model), cost_basis_text(o),
                                 costs.time_unit.name() ? "; times in " + *costs.time_unit.name() : "");
        size_t width = 8;
        for (const auto& row : rows) width = std::max(width, row.name.size());
        const bool money = o.tokens_per_microbatch.has_value();
        const bool chunked = std::any_of(exposures.begin(), exposures.end(), [](const auto& e) { return e.has_value(); });
        std::cout << fmt::format("{:<{}}  {:>10}  {:>10}  {:>12}  {:>8}  {:>9}  {:>11}  {:>12}  {:>8}{}{}\n", "schedule", width,
                                 "makespan", "worst idle", "bubble frac", "ZB rate", "peak act", "blocks/rank",
                                 "copies/block", "util", chunked ? "  exposed comm/rank" : "",
                                 money ? "  GPU-h per 1M tokens" : "");
        for (const auto& row : rows) {
            std::cout << fmt::format("{:<{}}  {:>10}  {:>10}  {:>12}  {:>8.4f}  {:>9}  {:>11}  {:>12}  {:>8}", row.name, width,
                                     format_rational(row.makespan), format_rational(row.worst_idle),
                                     percent(row.bubble_fraction), to_double(row.zb_bubble_rate),
                                     range_text(row.peak_activations), range_text(row.blocks_per_rank),
                                     range_text(row.copies_per_block), percent(row.utilisation));
            if (chunked) std::cout << fmt::format("  {:>17}", exposures[&row - rows.data()] ? range_text(exposures[&row - rows.data()]->exposed) : "-");
            if (row.gpu_hours_per_million_tokens) std::cout << "  " << exact(*row.gpu_hours_per_million_tokens);
            std::cout << "\n";
        }
        print_offload_text(rows, width);
        std::cout << "\nper schedule:\n";
        for (size_t i = 0; i < rows.size(); ++i) {
            const auto& row = rows[i];
            std::cout << fmt::format("{}: P={} M={}; costs per stage {}{}; timing model: {}\n", row.name, row.ranks,
                                     row.microbatches, format_costs(row.stage_costs),
                                     row.stage_share == Rational(1) ? std::string()
                                                                    : fmt::format(" ({} of the given)", format_rational(row.stage_share)),
                                     model_label(row));
            std::cout << fmt::format("  makespan {}; bubble fraction {} ({}); GPU utilisation {}\n", format_rational(row.makespan),
                                     format_rational(row.bubble_fraction), percent(row.bubble_fraction),
                                     format_rational(row.utilisation));
            std::cout << fmt::format("  idle per rank:              {}\n", joined(row.idle_per_rank));
            std::cout << fmt::format("  ZB bubble rate (T-W)/T:     {} with T = {} (largest per-rank span), W = {}\n",
                                     exact(row.zb_bubble_rate), format_rational(row.zb_span), format_rational(row.zb_work));
            std::cout << fmt::format("  peak activations per rank:  {}\n", joined(row.peak_activations));
            if (const auto& e = exposures[i])
                std::cout << fmt::format("  EP all-to-all per rank:     exposed {} of {} (hidden {} overall; pattern {})\n",
                                         joined(e->exposed), joined(e->network),
                                         e->total_network() > Rational(0) ? percent(Rational(1) - e->total_exposed() / e->total_network()) : "-",
                                         patterns[i]);
            std::vector<std::string> blocks;
            for (int b : row.blocks_per_rank) blocks.push_back(std::to_string(b));
            std::cout << fmt::format("  parameter blocks per rank:  {} of {} blocks ({} of the model on the fullest rank); "
                                     "copies per block {}\n",
                                     fmt::join(blocks, " "), row.blocks, range_text(row.model_fraction_per_rank),
                                     range_text(row.copies_per_block));
            if (row.gpu_hours_per_million_tokens)
                std::cout << fmt::format("  {} tokens per step; {} tokens/s; {} GPU-hours per million tokens\n",
                                         row.microbatches * *o.tokens_per_microbatch, exact(*row.tokens_per_second),
                                         exact(*row.gpu_hours_per_million_tokens));
            if (i > 0 && row.gpu_hours_per_million_tokens && rows[0].gpu_hours_per_million_tokens)
                std::cout << fmt::format("  against {}: GPU utilisation {:+.2f} points; GPU-hours per million tokens x{}\n",
                                         rows[0].name, 100.0 * to_double(row.utilisation - rows[0].utilisation),
                                         exact(*row.gpu_hours_per_million_tokens / *rows[0].gpu_hours_per_million_tokens));
        }
        std::cout << "\nZB bubble rate: the Zero Bubble paper's (T - W)/T; T = the largest per-rank span (last end - first "
                     "start, P2P latency included), W = the largest busy time of a rank (the paper's M(F+I+W) without "
                     "overlapped pairs; a pair counts at its pair cost). Bubble fraction = total idle / (P x makespan); "
                     "utilisation = 1 - bubble fraction. "
                  << (o.model_share_costs
                          ? "Costs are per 1/P of the model (one 1F1B stage): a schedule that cuts the model into S blocks "
                            "runs each stage at P/S of them (V stages per rank: 1/V), so every row trains the same model; "
                            "peak activations are in the same 1/P units. --units stage times every stage at the costs as "
                            "given.\n"
                          : costs.layout ? "Costs are one decoder layer's; each block runs at the sum of its layers' "
                                           "costs under --layout '" + *costs.layout + "', and peaks count decoder-layer stashes.\n"
                          : "Costs are per stage as given (--units stage): a schedule with V stages per rank then runs a "
                            "model V times as large.\n");
    }

    void print_json(const std::vector<CompareRow>& rows, const std::vector<Costs>& row_costs, const CompareOptions& o) const {
        nlohmann::json j;
        j["status"] = kStatusOk;
        j["timing_model"] = comm_model_name(o.comm_model);
        j["cost_basis"] = o.model_share_costs ? "model-share" : "per-stage";
        j["time_unit"] = costs.time_unit.json();
        put_units(j, o.model_share_costs ? "rank (costs per 1/P of the model; each stage at stage_share of them)"
                     : costs.layout      ? costs.units_text(Schedule{})
                                         : "stage (costs per stage, as given)");
        j["definitions"] = {
            {"bubble_fraction", "total idle / (ranks x makespan)"},
            {"utilisation", "1 - bubble_fraction"},
            {"zb_bubble_rate", "(T - W) / T, T = largest per-rank span (last end - first start, comm included), W = largest "
                               "per-rank busy time (M(F+I+W) for one stage per rank without pairs; a pair at its cost)"},
            {"cost_basis", "model-share: costs are per 1/P of the model and each stage runs at stage_share = P / blocks of "
                           "them; per-stage: every stage at the costs as given"},
            {"blocks_per_rank", "model blocks (stage weights) held per rank"},
            {"gpu_hours_per_million_tokens", "ranks x makespan x seconds_per_unit / 3600 x 1e6 / (microbatches x tokens_per_microbatch)"}};
        // A list of exact values is numbers, with its exact texts under "exact"; a list of counts is just numbers.
        auto list = [](nlohmann::json& r, const std::string& key, const auto& values) {
            using Value = typename std::decay_t<decltype(values)>::value_type;
            if constexpr (std::is_same_v<Value, Rational>) {
                put_numbers(r, key, std::vector<Rational>(values.begin(), values.end()));
            } else {
                nlohmann::json a = nlohmann::json::array();
                for (const auto& v : values) a.push_back(v);
                r[key] = a;
            }
        };
        j["rows"] = nlohmann::json::array();
        for (size_t i = 0; i < rows.size(); ++i) {
            const auto& row = rows[i];
            nlohmann::json r = instances[i];
            r.update({{"schedule", row.name},
                                {"costs", format_costs(row_costs[i])},
                                {"stage_costs", format_costs(row.stage_costs)},
                                {"timing_model", comm_model_name(row.comm_model)},
                                {"timing_model_detail", model_label(row)},
                                {"blocks", row.blocks}});
            put_number(r, "stage_share", row.stage_share);
            put_number(r, "makespan", row.makespan);
            put_number(r, "worst_idle", row.worst_idle);
            put_number(r, "bubble_fraction", row.bubble_fraction);
            put_number(r, "utilisation", row.utilisation);
            list(r, "idle_per_rank", row.idle_per_rank);
            list(r, "busy_per_rank", row.busy_per_rank);
            list(r, "span_per_rank", row.span_per_rank);
            put_number(r, "zb_bubble_rate", row.zb_bubble_rate);
            put_number(r, "zb_span", row.zb_span);
            put_number(r, "zb_work", row.zb_work);
            list(r, "peak_activations", row.peak_activations);
            list(r, "blocks_per_rank", row.blocks_per_rank);
            list(r, "model_fraction_per_rank", row.model_fraction_per_rank);
            list(r, "copies_per_block", row.copies_per_block);
            if (const auto& e = exposures[i]) {
                r["pattern"] = patterns[i];
                list(r, "exposed_comm_per_rank", e->exposed);
                list(r, "network_comm_per_rank", e->network);
                nlohmann::json shares = nlohmann::json::array(), shares_exact = nlohmann::json::array();
                for (size_t k = 0; k < e->exposed.size(); ++k) {
                    const auto share = e->hidden_share(k);
                    shares.push_back(share ? number_json(*share) : nlohmann::json(nullptr));  // null: no network time
                    shares_exact.push_back(share ? nlohmann::json(format_rational(*share)) : nlohmann::json(nullptr));
                }
                r["hidden_share_per_rank"] = shares;
                r["exact"]["hidden_share_per_rank"] = shares_exact;
                put_number(r, "exposed_comm_total", e->total_exposed());
                put_number(r, "network_comm_total", e->total_network());
            }
            if (row.gpu_hours_per_million_tokens) {
                r["tokens_per_microbatch"] = *o.tokens_per_microbatch;
                put_number(r, "seconds_per_unit", *o.seconds_per_unit);
                put_number(r, "tokens_per_second", *row.tokens_per_second);
                put_number(r, "gpu_hours_per_million_tokens", *row.gpu_hours_per_million_tokens);
            }
            if (offloads[i]) r["offload"] = offload_json(Schedule{}, *offloads[i], false);
            j["rows"].push_back(r);
        }
        std::cout << json_text(j, 2) << "\n";
    }
};

}  // namespace

Runner add_compare(CLI::App& app) {
    auto cmd = std::make_shared<CompareCommand>();
    auto* sub = app.add_subcommand("compare", "compare schedules: makespan, bubble, idle per rank, ZB bubble rate, memory, "
                                              "parameter copies, GPU-hours");
    sub->add_option("schedules", cmd->names, "family names (see `pipeproof list`) or schedule files")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks (generators)")->check(CLI::Range(1, kMaxRanks));
    sub->add_option("-M,--microbatches", cmd->microbatches, "micro-batches, total (generators)")->check(CLI::Range(1, kMaxMicrobatches));
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank,
                    "stages per rank for the families that take V (default 2)")
        ->check(CLI::Range(1, kMaxStagesPerRank));
    cmd->group_size.add_option(*sub);
    cmd->offload.add_options(*sub, false);
    sub->add_option("--segments", cmd->segments, "sequence segments per micro-batch k (seq1f1b, default 2)")
        ->check(CLI::Range(1, kMaxSegments));
    cmd->costs.add_options(*sub, false);
    cmd->units_flag = add_units_option(*sub, cmd->units);  // default rank: like for like across V
    add_comm_model_option(*sub, cmd->comm_model);
    sub->add_option("--tokens-per-microbatch", cmd->tokens_per_microbatch, "tokens in one micro-batch (for GPU-hours)");
    sub->add_option("--seconds-per-unit", cmd->seconds_per_unit,
                    "seconds per cost unit, e.g. 0.001 (for GPU-hours; --time-unit ms says the same)");
    sub->add_flag("--per-stage-costs", cmd->per_stage_costs, "old spelling of --units stage");
    sub->add_flag("--json", cmd->json, "machine-readable output");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
