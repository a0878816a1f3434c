// The Perfetto/Chrome trace, golden-free: it parses, has one process per rank named "rank r", one
// complete event per slot, and each rank's event durations add up to its busy time (in microseconds,
// 1 cost unit = us_per_unit).
#include "render/trace_json.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

using namespace pp;

namespace {

void check_trace(const Schedule& schedule, const Costs& costs, double us_per_unit) {
    const Simulation sim = simulate(schedule, costs);
    TraceOptions options;
    options.us_per_unit = us_per_unit;
    const auto trace = nlohmann::json::parse(trace_json(schedule, sim, options));
    REQUIRE(trace.contains("traceEvents"));
    std::map<int, double> busy_us;
    std::map<int, size_t> events;
    std::map<int, std::string> names;
    for (const auto& e : trace["traceEvents"]) {
        const int pid = e["pid"].get<int>();
        if (e["ph"] == "X") {
            CHECK(e["dur"].get<double>() > 0);
            CHECK(e["ts"].get<double>() >= 0);
            busy_us[pid] += e["dur"].get<double>();
            ++events[pid];
        } else if (e["ph"] == "M" && e["name"] == "process_name") {
            names[pid] = e["args"]["name"].get<std::string>();
        }
    }
    REQUIRE(names.size() == schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const int pid = static_cast<int>(r);
        CHECK(names[pid] == "rank " + std::to_string(r));
        CHECK(events[pid] == schedule.ranks[r].size());
        const Rational busy = sim.scale.to_units(sim.ranks[r].busy);
        const double expected = static_cast<double>(busy.numerator()) / static_cast<double>(busy.denominator()) * us_per_unit;
        CHECK(busy_us[pid] == Approx(expected).epsilon(1e-9));
    }
    CHECK(trace["otherData"]["us_per_cost_unit"].get<double>() == us_per_unit);
}

}  // namespace

TEST_CASE("trace: durations add up to each rank's busy time (DualPipe pairs are one event)", "[render]") {
    const Schedule schedule = find_family("dualpipe")->generate({4, 8, std::nullopt});
    check_trace(schedule, parse_costs("F=1,I=1,W=1,FB=2.5"), 1000);
}

TEST_CASE("trace: fractional costs and another unit mapping", "[render]") {
    const Schedule schedule = find_family("zb-h1")->generate({4, 8, std::nullopt});
    check_trace(schedule, parse_costs("F=1/3,I=0.5,W=7/4,comm=0.1"), 1);
    check_trace(find_family("interleaved-1f1b")->generate({4, 8, 2}), parse_costs("F=2,I=3,W=1"), 250);
}

TEST_CASE("trace: a pair event carries both ops", "[render]") {
    const Schedule schedule = find_family("dualpipe")->generate({4, 8, std::nullopt});
    const auto trace = nlohmann::json::parse(trace_json(schedule, simulate(schedule, Costs{})));
    size_t pairs = 0;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == "pair") {
            ++pairs;
            CHECK(e["args"]["forward"]["kind"] == "F");
            CHECK(e["args"]["backward"]["kind"] != "F");
        }
    size_t expected = 0;
    for (const auto& slots : schedule.ranks)
        for (const Slot& slot : slots) expected += slot.is_pair();
    CHECK(pairs == expected);
    CHECK(expected > 0);
}
