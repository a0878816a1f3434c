// pipeproof plan [--config FILE] [--preset NAME] [--gpus N ...]: recommends a PP degree, a schedule
// family and M for a cluster and a model, from simulated schedules and stated estimates (planner/).
// Every setting is a flag and a `key = value` line of the config file; flags win over the file.
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "formats/json_text.hpp"
#include "planner/chunk_plan.hpp"
#include "formats/input_error.hpp"
#include "formats/load.hpp"
#include "planner/plan_text.hpp"
#include "planner/planner.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

namespace pp::cli {
namespace {

// Estimated costs of one micro-batch through one block (or layer), in ms.
nlohmann::json op_costs_json(const plan::ChunkCosts& c) {
    nlohmann::json j = {{"F", 1e3 * c.F}, {"I", 1e3 * c.I}, {"W", 1e3 * c.W}, {"all_to_all", 1e3 * c.all_to_all},
                        {"p2p", 1e3 * c.p2p}};
    j["FB"] = c.measured_pair ? nlohmann::json(1e3 * *c.measured_pair) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json option_json(const plan::PlanOption& o) {
    return {{"label", o.label()},
            {"family", o.family},
            {"ranks", o.pp},  // the pipeline-parallel degree: ranks of one pipeline
            {"dp", o.dp},
            {"stages_per_rank", o.stages_per_rank ? nlohmann::json(*o.stages_per_rank) : nlohmann::json(nullptr)},
            {"segments", o.segments},
            {"microbatches", o.microbatches},
            {"requested_microbatches", o.requested_microbatches ? nlohmann::json(*o.requested_microbatches) : nlohmann::json(nullptr)},
            {"copies", o.copies},
            {"bubble_fraction", to_double(o.bubble_fraction)},
            {"makespan_seconds", o.makespan_seconds},
            {"dp_allreduce_seconds", o.gradient_reduce.seconds},
            {"dp_allreduce_exposed_seconds", o.gradient_reduce.exposed()},
            {"step_seconds", o.step_seconds},
            {"gpu_hours_per_million_tokens", o.gpu_hours_per_million_tokens},
            {"memory_gb", {{"weights", o.weights_gb}, {"gradients", o.grads_gb}, {"optimizer", o.optimizer_gb},
                           {"activations", o.activations_gb}, {"total", o.total_gb}}},
            {"fits", o.fits},
            {"op_costs_ms", op_costs_json(o.chunk)},
            {"peak_stashes", number_json(o.peak_stashes)},
            {"exact", {{"bubble_fraction", format_rational(o.bubble_fraction)}, {"peak_stashes", format_rational(o.peak_stashes)}}}};
}

// The whole plan as one document: every option (best first), the recommendation or, when nothing fits,
// what would; every number is an estimate except where `exact` says otherwise.
nlohmann::json plan_json(const plan::PlanResult& result) {
    // unknown: no option could be evaluated; infeasible: none fits in GPU memory (no recommendation, exit 1).
    nlohmann::json j = {{"status", result.options.empty() ? kStatusUnknown : result.nothing_fits ? "infeasible" : kStatusOk},
                        {"step_time_model", plan::uses_chunk_model(result.request) ? "chunk" : "op"},
                        {"step_time_model_detail", plan::step_time_model(result.request)},
                        {"op_costs_source", result.request.training.components ? "measured chunk components"
                                            : result.request.training.chunk    ? "measured op costs"
                                                                               : "estimated from FLOPs"},
                        {"op_costs_per_layer_ms", op_costs_json(plan::per_layer_costs(result.request))},
                        {"families", plan::candidate_families(result.request)},
                        {"gpus", result.request.cluster.gpus}, {"gpu_memory_gb", result.request.cluster.gpu_memory_gb},
                        {"options", nlohmann::json::array()}, {"skipped", result.skipped}};
    for (const auto& o : result.options) j["options"].push_back(option_json(o));
    j["recommendation"] = result.any_fits() ? option_json(result.options.front()) : nlohmann::json(nullptr);
    // Issue 11: how much EP all-to-all each family exposes at the recommended PP (the text's "EP all-to-all" section).
    const plan::PlanRequest& request = result.request;
    if (result.any_fits() && result.options.front().pp > 1 && request.model.expert_share > 0 && request.training.ep > 1 &&
        request.model.moe_layer_count() > 0) {
        const auto& best = result.options.front();
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& e : plan::ep_exposure(request, best.pp, best.microbatches, {"1f1b", "zb1p", "dualpipe", "dualpipev", "combined-1f1b"})) {
            if (!e.error.empty()) {
                rows.push_back({{"family", e.family}, {"error", e.error}});
                continue;
            }
            nlohmann::json row = {{"family", e.family}, {"microbatches", e.microbatches}, {"blocks", e.blocks}, {"chunk_costs_us", e.chunk_text}};
            put_number(row, "makespan_us", e.makespan);
            put_number(row, "bubble_fraction", e.bubble_fraction);
            put_number(row, "exposed_comm_worst_rank_us", e.exposed_max);
            put_number(row, "network_comm_worst_rank_us", e.network_max);
            put_number(row, "exposed_comm_total_us", e.exposed_total);
            put_number(row, "network_comm_total_us", e.network_total);
            rows.push_back(std::move(row));
        }
        j["ep_all_to_all"] = {{"ranks", best.pp}, {"ep", request.training.ep}, {"pattern", "deepseek"}, {"rows", rows},
                              {"assumptions", plan::chunk_assumptions(request)}};
    }
    if (result.nothing_fits) {
        const auto& why = *result.nothing_fits;
        j["nothing_fits"] = {{"least_memory", result.options[why.least].label()},
                             {"with_recompute_gb", why.with_recompute_gb},
                             {"with_zero2_gb", why.with_zero2_gb},
                             {"with_zero3_gb", why.with_zero3_gb},
                             {"gpus_that_fit", why.gpus_that_fit ? nlohmann::json(*why.gpus_that_fit) : nlohmann::json(nullptr)},
                             {"option_that_fits", why.option_that_fits}};
    }
    return j;
}

struct PlanCommand {
    bool json = false;
    std::optional<std::string> config;
    std::vector<std::pair<std::string, std::string>> flags;  // in command-line order

    // The config file's settings, each checked on its own so that a bad value is reported at its line
    // (`file:line:column: error: ...`, exit 2) like any other input file.
    std::vector<std::pair<std::string, std::string>> read_config(const std::string& path) const {
        const std::string text = read_file_text(path);  // bounded; NUL bytes and directories refused
        std::vector<std::pair<std::string, std::string>> settings;
        try {
            settings = plan::parse_plan_config(text);
        } catch (const plan::PlanSpecError& e) {
            int line = 0;
            const std::string what = e.what();
            if (std::sscanf(what.c_str(), "line %d:", &line) == 1) throw InputError(path, line, 1, what.substr(what.find(':') + 2));
            throw InputError(path, 0, 0, what);
        }
        // Where each setting is: the k-th line that is not blank once its comment is cut (parse_plan_config's rule).
        std::vector<int> lines;
        int number = 0;
        for (size_t pos = 0; pos <= text.size();) {
            const size_t end = std::min(text.find('\n', pos), text.size());
            const std::string_view line = std::string_view(text).substr(pos, end - pos);
            ++number;
            const std::string_view content = line.substr(0, line.find('#'));
            if (content.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back(number);
            pos = end + 1;
        }
        for (size_t k = 0; k < settings.size(); ++k) {
            plan::PlanRequest scratch;
            try {
                plan::apply_setting(scratch, settings[k].first, settings[k].second);
            } catch (const plan::PlanSpecError& e) {
                throw InputError(path, k < lines.size() ? lines[k] : 0, 1, e.what());
            }
        }
        return settings;
    }

    int run() {
        std::vector<std::pair<std::string, std::string>> settings;
        if (config) settings = read_config(*config);
        try {
            settings.insert(settings.end(), flags.begin(), flags.end());
            plan::PlanRequest request;
            plan::apply_settings(request, settings);
            const plan::PlanResult result = plan::make_plan(request);
            std::cout << (json ? json_text(plan_json(result), 2) + "\n" : plan::plan_text(result));
            if (result.nothing_fits) return kViolations;  // no recommendation: nothing fits in GPU memory
            if (result.options.empty()) return kViolations;  // nothing could be evaluated: the reasons are listed
        } catch (const plan::PlanSpecError& e) {
            throw UsageError((config ? *config + ": " : std::string()) + e.what());
        }
        return kOk;
    }
};

}  // namespace

Runner add_plan(CLI::App& app) {
    auto cmd = std::make_shared<PlanCommand>();
    auto* sub = app.add_subcommand("plan", "recommend a pipeline strategy (PP degree, schedule family, M) for a cluster and a model");
    refuse_layout_options(*sub, "its estimates split the model evenly");
    sub->add_flag("--json", cmd->json, "the whole plan as one JSON document");
    sub->add_option("--config", cmd->config, "file of `key = value` lines with the settings below (flags win)");
    for (const auto& [key, help] : plan::setting_keys()) {
        const std::string name = key;
        if (name == "duplicate-experts")
            sub->add_flag_function("--" + name, [cmd, name](std::int64_t) { cmd->flags.emplace_back(name, "true"); }, help);
        else
            sub->add_option_function<std::string>("--" + name, [cmd, name](const std::string& v) { cmd->flags.emplace_back(name, v); }, help)
                ->type_name("VALUE");
    }
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
