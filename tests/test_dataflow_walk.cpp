// The dataflow walk (verifier/dataflow_walk.hpp) against the dependency graph it replaces on clean
// schedules: it calls a schedule clean exactly when verify() on the graph finds nothing (no memory limit),
// on every family and on randomly broken variants; and its timing equals the graph's longest path -- every
// start and end, the per-rank figures, the critical path -- under fractional costs with and without P2P
// latency, on the 64-bit path and on the exact one. The critical path is also checked edge by edge against
// the graph's own edges: each step's arrival sets the next slot's start, from the lowest-numbered such
// predecessor. The summary-only walk (what `simulate` runs without --ops) gives the same figures and path.
#include "broken_schedules.hpp"
#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "verifier/dataflow_walk.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace pp;

namespace {

std::vector<Schedule> family_schedules() {
    std::vector<Schedule> out;
    for (const ScheduleFamily& family : schedule_families())
        for (int P : {2, 3, 4})
            for (int M : {P, 2 * P + 2}) {
                try {
                    out.push_back(family.generate({P, M, std::nullopt}));
                    out.back().source = family.name + " P=" + std::to_string(P) + " M=" + std::to_string(M);
                } catch (const GenerateError&) {
                    // not admissible at this size
                }
            }
    return out;
}

bool graph_says_clean(const Schedule& s) { return verify(s, build_schedule_graph(s), {}).ok(); }

// Each step of the critical path is a graph edge whose arrival sets the next slot's start, and no lower-
// numbered predecessor of that slot arrives as late.
void check_critical_path(const Schedule& s, const ScheduleGraph& g, const Simulation& sim, const Costs& costs) {
    REQUIRE(!sim.critical_path.empty());
    CHECK(sim.end[sim.critical_path.back()] == sim.makespan);
    CHECK(sim.start[sim.critical_path.front()] == 0);
    const Ticks comm = sim.scale.to_ticks(costs.comm);
    for (size_t k = 1; k < sim.critical_path.size(); ++k) {
        const std::uint32_t v = sim.critical_path[k], u = sim.critical_path[k - 1];
        bool linked = false;
        for (std::uint32_t w = 0; w < g.slot_count(); ++w)
            for (auto e : out_edges_of(g.graph, w)) {
                if (target_of(g.graph, e) != v) continue;
                const Ticks arrival = sim.end[w] + (g.graph[e].cross_rank ? comm : Ticks(0));
                CHECK(arrival <= sim.start[v]);
                if (w < u) CHECK(arrival < sim.start[v]);
                if (w == u && arrival == sim.start[v]) linked = true;
            }
        CHECK(linked);
    }
}

// The summary-only walk (SlotTimes::SummaryOnly) keeps no per-slot times but must give every figure the
// full timing through the graph gives, and the critical path with the graph's start and end of each step.
void check_summary_timing(const Schedule& s, const Simulation& graphed, const Costs& costs) {
    const std::optional<Simulation> summary = time_if_clean(s, costs, SlotTimes::SummaryOnly);
    REQUIRE(summary.has_value());
    CHECK(summary->start.empty());
    CHECK(summary->end.empty());
    CHECK(summary->makespan == graphed.makespan);
    CHECK(summary->bubble == graphed.bubble);
    CHECK(summary->bubble_fraction == graphed.bubble_fraction);
    CHECK(summary->critical_path == graphed.critical_path);
    REQUIRE(summary->path_start.size() == graphed.critical_path.size());
    REQUIRE(summary->path_end.size() == graphed.critical_path.size());
    for (size_t k = 0; k < graphed.critical_path.size(); ++k) {
        CHECK(summary->path_start[k] == graphed.start[graphed.critical_path[k]]);
        CHECK(summary->path_end[k] == graphed.end[graphed.critical_path[k]]);
    }
    CHECK(graphed.path_start == summary->path_start);  // the graph's timing records the same path times
    REQUIRE(summary->ranks.size() == graphed.ranks.size());
    for (size_t r = 0; r < graphed.ranks.size(); ++r) {
        CHECK(summary->ranks[r].busy == graphed.ranks[r].busy);
        CHECK(summary->ranks[r].idle == graphed.ranks[r].idle);
        CHECK(summary->ranks[r].first_start == graphed.ranks[r].first_start);
        CHECK(summary->ranks[r].last_end == graphed.ranks[r].last_end);
    }
}

void check_same_timing(const Schedule& s, const Costs& costs) {
    const ScheduleGraph g = build_schedule_graph(s);
    const Simulation walked = simulate(s, costs);    // the walk, for a clean schedule
    const Simulation graphed = simulate(s, g, costs);
    CHECK(walked.makespan == graphed.makespan);
    CHECK(walked.start == graphed.start);
    CHECK(walked.end == graphed.end);
    CHECK(walked.bubble == graphed.bubble);
    CHECK(walked.bubble_fraction == graphed.bubble_fraction);
    CHECK(walked.critical_path == graphed.critical_path);
    REQUIRE(walked.ranks.size() == graphed.ranks.size());
    for (size_t r = 0; r < walked.ranks.size(); ++r) {
        CHECK(walked.ranks[r].busy == graphed.ranks[r].busy);
        CHECK(walked.ranks[r].idle == graphed.ranks[r].idle);
        CHECK(walked.ranks[r].first_start == graphed.ranks[r].first_start);
        CHECK(walked.ranks[r].last_end == graphed.ranks[r].last_end);
        CHECK(walked.ranks[r].peak_activations == graphed.ranks[r].peak_activations);
    }
    check_critical_path(s, g, walked, costs);
    check_summary_timing(s, graphed, costs);
}

const std::vector<std::string> kCosts = {
    "F=1,I=1,W=1,comm=0",
    "F=3/2,I=5/7,W=1/3,comm=1/5",
    "F=2,I=1,W=1,FB=5/2,comm=1",
    // Coprime denominators near 2^40: a tick is 2^-120 of a unit, so durations are past 2^62 ticks and the
    // exact (Integer) path runs.
    "F=1099511627775/1099511627773,I=3/1099511627775,W=1,comm=7/1099511627771",
};

}  // namespace

TEST_CASE("dataflow walk: every family's schedule is clean, as on the graph", "[walk]") {
    const auto schedules = family_schedules();
    REQUIRE(schedules.size() >= 25);
    for (const Schedule& s : schedules) {
        INFO(s.source);
        CHECK(graph_says_clean(s));
        CHECK(dataflow::structure_is_clean(s));
    }
}

TEST_CASE("dataflow walk: clean exactly when the graph finds no violation, on broken variants", "[walk]") {
    std::mt19937 rng(20261202);
    int clean = 0, broken = 0;
    for (const Schedule& base : family_schedules()) {
        Schedule s = base;
        for (int round = 0; round < 16; ++round) {
            s = test::mutated(round % 4 == 0 ? base : s, rng);
            INFO(base.source << " round " << round);
            const bool walk = dataflow::structure_is_clean(s);
            CHECK(walk == graph_says_clean(s));
            CHECK(verify(s).ok() == walk);  // the public entry takes the walk first
            CHECK(time_if_clean(s, parse_costs("F=1,I=1,W=1,comm=1")).has_value() == walk);
            ++(walk ? clean : broken);
        }
    }
    // Both answers occur often enough to mean something.
    CHECK(clean >= 10);
    CHECK(broken >= 200);
}

TEST_CASE("dataflow walk: the timing equals the graph's longest path, critical path included", "[walk][simulate]") {
    std::mt19937 rng(20261203);
    int timed = 0;
    for (const Schedule& base : family_schedules()) {
        for (const std::string& text : kCosts) {
            INFO(base.source << " costs " << text);
            check_same_timing(base, parse_costs(text));
            if (text == kCosts.back()) CHECK_FALSE(simulate(base, parse_costs(text)).makespan.is_inline());
            ++timed;
        }
        // Valid reorderings found by random edits, timed too.
        Schedule s = base;
        for (int round = 0; round < 8; ++round) {
            s = test::mutated(base, rng);
            if (!graph_says_clean(s)) continue;
            INFO(base.source << " edited, round " << round);
            check_same_timing(s, parse_costs(kCosts[static_cast<size_t>(round) % kCosts.size()]));
            ++timed;
        }
    }
    CHECK(timed >= 100);
}

TEST_CASE("dataflow walk: a rank waiting on its own later op, and a cross-rank cycle, are not clean", "[walk]") {
    // 1F1B P=2 M=2: rank 0 runs 0F0 0F1 0B0 0B1 (the generator's order), rank 1 1F0 1B0 1F1 1B1.
    Schedule s = find_family("1f1b")->generate({2, 2, std::nullopt});
    REQUIRE(dataflow::structure_is_clean(s));
    Schedule cross_rank_cycle = s;  // 0B0 first: it waits for 1B0, 1B0 for 1F0, 1F0 for the 0F0 after it
    std::swap(cross_rank_cycle.ranks[0][0], cross_rank_cycle.ranks[0][2]);
    CHECK_FALSE(dataflow::structure_is_clean(cross_rank_cycle));
    CHECK_FALSE(graph_says_clean(cross_rank_cycle));
    Schedule own_later_op = s;  // rank 1 runs 1B1 before the 1F1 it depends on
    std::swap(own_later_op.ranks[1][2], own_later_op.ranks[1][3]);
    CHECK_FALSE(dataflow::structure_is_clean(own_later_op));
    CHECK_FALSE(graph_says_clean(own_later_op));
}
