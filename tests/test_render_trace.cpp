// The Perfetto/Chrome trace, golden-free: it parses, has one process per rank named "rank r", one
// complete event per slot, and each rank's event durations add up to its busy time (in microseconds,
// 1 cost unit = us_per_unit).
#include "render/trace_json.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cctype>
#include <map>
#include <set>

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

namespace {

// Perfetto's colour key: the name with every run of digits (and a space before it) removed.
std::string colour_key(std::string name) {
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(name[i]))) {
            if (!out.empty() && out.back() == ' ') out.pop_back();
            while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) ++i;
            continue;
        }
        out += name[i];
    }
    return out;
}

}  // namespace

TEST_CASE("trace: names are unique per rank, and the two directions are coloured apart", "[render]") {
    // DualPipe rank 0 runs 0F0 (pipeline 0) and 3F0@1 (pipeline 1): once both were named "F0".
    const Schedule schedule = find_family("dualpipe")->generate({4, 8, std::nullopt});
    const auto trace = nlohmann::json::parse(trace_json(schedule, simulate(schedule, Costs{})));
    std::map<int, std::set<std::string>> names;
    std::map<std::string, std::set<std::string>> cnames_of_key;
    size_t singles = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const std::string name = e["name"].get<std::string>();
        CHECK(names[e["pid"].get<int>()].insert(name).second);
        if (e["cat"] == "pair") continue;
        ++singles;
        cnames_of_key[colour_key(name)].insert(e["cname"].get<std::string>());
    }
    // Keys: F, I, W, B of pipeline 0 ("F") and of pipeline 1 ("F@"): distinct keys, one chrome colour each.
    CHECK(cnames_of_key.count("F") == 1);
    CHECK(cnames_of_key.count("F@") == 1);
    CHECK(cnames_of_key.at("F") != cnames_of_key.at("F@"));
    for (const auto& [key, cnames] : cnames_of_key) CHECK(cnames.size() == 1);
    CHECK(singles > 0);
}

TEST_CASE("trace: one flow arrow per cross-rank dependency, from producer to consumer", "[render]") {
    // 1F1B P=2 M=2: the cross-rank dependencies are 0F0->1F0, 0F1->1F1 (activations) and 1B0->0B0,
    // 1B1->0B1 (gradients): four arrows.
    const Schedule schedule = find_family("1f1b")->generate({2, 2, std::nullopt});
    const Simulation sim = simulate(schedule, Costs{});
    const auto trace = nlohmann::json::parse(trace_json(schedule, sim));
    std::map<std::uint64_t, nlohmann::json> starts, finishes;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "s") starts[e["id"].get<std::uint64_t>()] = e;
        if (e["ph"] == "f") finishes[e["id"].get<std::uint64_t>()] = e;
    }
    REQUIRE(starts.size() == 4);
    REQUIRE(finishes.size() == 4);
    std::set<std::string> arrows;
    for (const auto& [id, s] : starts) {
        const auto& f = finishes.at(id);
        CHECK(s["pid"] != f["pid"]);
        CHECK(f["bp"] == "e");
        CHECK(s["ts"].get<double>() < f["ts"].get<double>());
        arrows.insert(s["name"].get<std::string>());
    }
    CHECK(arrows == std::set<std::string>{"0F0 -> 1F0", "0F1 -> 1F1", "1B0 -> 0B0", "1B1 -> 0B1"});
}
