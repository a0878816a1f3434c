#pragma once
// What every harness shares: the readers' contract under arbitrary bytes. A reader either returns a
// schedule or throws InputError -- any other exception, a crash, a sanitizer report or a hang is a bug.
// An accepted schedule then goes through the one verdict of `verify` (verifier/verdict.hpp) and, when it is
// valid, the exact simulator with unit costs, so the fuzzers also reach everything downstream of a reader.
// (Unit costs keep the arithmetic of a huge cost out of these harnesses: exact arithmetic has its own tests.)
// The dataflow walk, which verifies and times a clean schedule without the graph (verifier/dataflow_walk.hpp),
// must agree with the graph on every accepted input: same verdict, same timing, same critical path.
#include "formats/input_error.hpp"
#include "formats/load.hpp"
#include "model/size_budget.hpp"
#include "verifier/dataflow_walk.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verdict.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace pp::fuzz {

// Small schedules only: the size budget is what makes large declared sizes cheap to reject, and a fuzzer
// should spend its time on many inputs, not on one large one.
inline void init_budget() { set_max_ops(1 << 14); }

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void bug(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz: %s: %s\n", what, detail.c_str());
    std::abort();
}

// The walk against the graph: verdict counts, and for a valid schedule every time and the critical path.
inline void compare_walk_with_graph(const Schedule& schedule, const ScheduleGraph& graph, const VerdictOptions& options,
                                    const VerifyReport& on_graph) {
    if (dataflow::structure_is_clean(schedule) != verify(schedule, graph, {}).ok())
        bug("the dataflow walk and the graph disagree on the structure", schedule.source);
    const VerifyReport walked = verdict(schedule, options);
    if (violation_count(walked) != violation_count(on_graph) || walked.peak_activations != on_graph.peak_activations)
        bug("the verdict with the walk differs from the verdict on the graph", schedule.source);
    if (!only_memory_violations(on_graph)) return;
    Costs costs;
    costs.comm = Rational(1, 2);
    const Simulation a = simulate(schedule, costs), b = simulate(schedule, graph, costs);
    if (a.makespan != b.makespan || a.start != b.start || a.end != b.end || a.critical_path != b.critical_path)
        bug("the walk's timing differs from the graph's", schedule.source);
}

// Verdict and, for a valid schedule, the timing; throws nothing on a schedule a reader accepted.
inline void exercise(const Schedule& schedule) {
    const ScheduleGraph graph = build_schedule_graph(schedule);
    VerdictOptions options;
    options.verify.memory_limit = schedule.memory_limit;
    const VerifyReport report = verdict(schedule, graph, options);
    compare_walk_with_graph(schedule, graph, options, report);
    if (!only_memory_violations(report)) return;
    const Simulation sim = simulate(schedule, graph, Costs{});
    if (sim.makespan < 0) bug("negative makespan", schedule.source);
}

// Runs `read` on the input; InputError is the expected way to say no.
template <typename Read>
void read_and_exercise(Read read) {
    Schedule schedule;
    try {
        schedule = read();
    } catch (const InputError&) {
        return;
    }
    exercise(schedule);
}

}  // namespace pp::fuzz
