// pipeproof plan [--config FILE] [--preset NAME] [--gpus N ...]: recommends a PP degree, a schedule
// family and M for a cluster and a model, from simulated schedules and stated estimates (planner/).
// Every setting is a flag and a `key = value` line of the config file; flags win over the file.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "planner/plan_text.hpp"
#include "planner/planner.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace pp::cli {
namespace {

struct PlanCommand {
    std::optional<std::string> config;
    std::vector<std::pair<std::string, std::string>> flags;  // in command-line order

    int run() {
        std::vector<std::pair<std::string, std::string>> settings;
        try {
            if (config) {
                std::ifstream in(*config, std::ios::binary);
                if (!in) throw UsageError("cannot read config file '" + *config + "'");
                std::ostringstream text;
                text << in.rdbuf();
                settings = plan::parse_plan_config(text.str());
            }
            settings.insert(settings.end(), flags.begin(), flags.end());
            plan::PlanRequest request;
            plan::apply_settings(request, settings);
            const plan::PlanResult result = plan::make_plan(request);
            std::cout << plan::plan_text(result);
            if (result.nothing_fits) return kViolations;  // no recommendation: nothing fits in GPU memory
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
