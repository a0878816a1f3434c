#include "model/cost_presets.hpp"

#include "model/spelling.hpp"

namespace pp {
namespace {

// Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024), Table 9: T_F, T_B (their B is our I), T_W, T_comm
// per model and micro-batch count, ms -> us. The name without -mN is the table's first row for that model.
CostPreset zb_row(const std::string& model, int p, int m, const char* costs, bool first) {
    const std::string name = "zb-" + model + (first ? "" : "-m" + std::to_string(m));
    return {name, costs,
            "Zero Bubble paper (Qi et al., ICLR 2024) Table 9, " + model + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
                ", microseconds; the paper's B is our I"};
}

std::vector<CostPreset> make_presets() {
    std::vector<CostPreset> presets;
    struct Row {
        const char* model;
        int p, m;
        const char* costs;
    };
    const Row rows[] = {
        {"1.5b", 8, 24, "F=18522,I=18086,W=9337,comm=601"},   {"1.5b", 8, 32, "F=18513,I=18086,W=9331,comm=626"},
        {"1.5b", 8, 64, "F=18546,I=18097,W=9321,comm=762"},   {"6.2b", 8, 24, "F=29718,I=29444,W=19927,comm=527"},
        {"6.2b", 8, 32, "F=29802,I=29428,W=19530,comm=577"},  {"6.2b", 8, 64, "F=29935,I=29621,W=19388,comm=535"},
        {"14.6b", 16, 48, "F=11347,I=11248,W=8132,comm=377"}, {"14.6b", 16, 64, "F=11307,I=11254,W=8101,comm=379"},
        {"14.6b", 16, 128, "F=11325,I=11308,W=8109,comm=378"}, {"28.3b", 32, 96, "F=10419,I=10207,W=7715,comm=408"},
        {"28.3b", 32, 128, "F=10408,I=10204,W=7703,comm=408"}, {"28.3b", 32, 256, "F=10402,I=10248,W=7698,comm=460"},
    };
    std::string previous;
    for (const Row& r : rows) {
        if (r.model != previous) presets.push_back(zb_row(r.model, r.p, r.m, r.costs, true));
        presets.push_back(zb_row(r.model, r.p, r.m, r.costs, false));
        previous = r.model;
    }
    // deepseek-ai/DualPipe README's figure (its B is the full backward, split I = B - W): F=1, B=2, W=1, F&B=3.
    presets.push_back({"deepseek-readme", "F=1,I=1,W=1,B=2,FB=3",
                       "deepseek-ai/DualPipe README figure: F=1, B=2 (full backward), W=1, F&B=3"});
    return presets;
}

}  // namespace

const std::vector<CostPreset>& cost_presets() {
    static const std::vector<CostPreset> presets = make_presets();
    return presets;
}

const CostPreset* find_cost_preset(std::string_view name) {
    const std::string wanted = to_lower(name);
    for (const CostPreset& p : cost_presets())
        if (p.name == wanted) return &p;
    return nullptr;
}

}  // namespace pp
