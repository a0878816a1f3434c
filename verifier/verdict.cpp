#include "verifier/verdict.hpp"

#include "verifier/comms.hpp"

#include <algorithm>
#include <numeric>

namespace pp {

VerifyReport complete_verdict(const Schedule& schedule, VerifyReport report, const VerdictOptions& options) {
    if (schedule.actions)
        for (auto& v : check_comms(schedule)) report.violations.push_back(std::move(v));
    if (options.model == CommModel::Batched && report.ok())
        for (auto& v : check_comm_program(schedule, batched_program(schedule, options.batched)))
            report.violations.push_back(std::move(v));
    return report;
}

VerifyReport verdict(const Schedule& schedule, const VerdictOptions& options) {
    return complete_verdict(schedule, verify(schedule, options.verify), options);
}

VerifyReport verdict(const Schedule& schedule, const ScheduleGraph& graph, const VerdictOptions& options) {
    return complete_verdict(schedule, verify(schedule, graph, options.verify), options);
}

std::size_t violation_count(const VerifyReport& report) {
    return std::accumulate(report.suppressed.begin(), report.suppressed.end(), report.violations.size());
}

bool only_memory_violations(const VerifyReport& report) {
    const auto kind_index = static_cast<std::size_t>(ViolationKind::MemoryLimit);
    for (std::size_t k = 0; k < report.suppressed.size(); ++k)
        if (k != kind_index && report.suppressed[k] > 0) return false;
    return std::all_of(report.violations.begin(), report.violations.end(),
                       [](const Violation& v) { return v.kind == ViolationKind::MemoryLimit; });
}

}  // namespace pp
