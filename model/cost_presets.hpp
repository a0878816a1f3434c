#pragma once
// Published cost profiles by name, so that `--costs zb-1.5b` replaces copying numbers out of a caption.
// Values are exact as published; the Zero Bubble rows are in microseconds (the paper's Table 9 gives ms with
// three decimals), DeepSeek's README example in its own unit.
#include <string>
#include <string_view>
#include <vector>

namespace pp {

struct CostPreset {
    std::string name;    // as --costs takes it, any case
    std::string costs;   // cost items, e.g. "F=18522,I=18086,W=9337,comm=601"
    std::string source;  // where the numbers come from
};

const std::vector<CostPreset>& cost_presets();
// nullptr when no preset has that name.
const CostPreset* find_cost_preset(std::string_view name);

}  // namespace pp
