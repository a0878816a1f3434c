// Issue 42: the Zero Bubble paper's ILP solved by CBC (bench/peer_zb_ilp.hpp) against our search on tiny
// instances. Two independent paths to the same number: the search (Z3, bounds, greedy) and CBC on the paper's
// formulation; each schedule is verified and timed by the simulator. Skipped with a message without cbc.
#include "bench/peer_zb_ilp.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <optional>
#include <string>

namespace {

pp::SearchProblem tiny(int P, int M, const char* costs, std::optional<int> cap) {
    pp::SearchProblem problem;
    problem.placement = pp::placement_from_name("1f1b", P, M);
    problem.costs = pp::parse_costs(costs);
    if (cap) problem.memory_limit = pp::Rational(*cap);
    return problem;
}

pp::Rational search_optimum(const pp::SearchProblem& problem) {
    pp::SearchOptions options;
    options.time_limit = 30;
    options.warm_starts = pp::generator_warm_starts(problem.placement);
    const pp::SearchResult r = pp::search(problem, options);
    REQUIRE(r.status == pp::SearchStatus::Optimal);
    return r.units(r.makespan);
}

bool have_cbc() { return access("/usr/bin/cbc", X_OK) == 0; }

}  // namespace

TEST_CASE("zb ilp peer: the model has 3 m (m - 1) / 2 binaries per stage and the paper's rows") {
    const pp::SearchProblem problem = tiny(3, 3, "F=1,I=1,W=1,comm=1", 2);
    const pp::peer::ZbIlpModel model = pp::peer::build_zb_ilp(problem);
    CHECK(model.binaries == pp::peer::zb_ilp_binaries(problem));
    CHECK(model.binaries == 3 * 3 * 3 * 2 / 2);
    CHECK(model.ops.size() == 27);
    CHECK(model.lp.find("Minimize") != std::string::npos);
    CHECK(model.lp.find("Binaries") != std::string::npos);
    CHECK(model.lp.find(" m_F_0_2:") != std::string::npos);  // (5): a memory row at every pass
    // Only the paper's setting: one pipeline, one stage per rank.
    pp::SearchProblem v = problem;
    v.placement = pp::placement_from_name("v", 2, 4);
    CHECK(pp::peer::zb_ilp_not_applicable(v).has_value());
    CHECK_THROWS_AS(pp::peer::build_zb_ilp(v), std::invalid_argument);
}

TEST_CASE("zb ilp peer: CBC's optimum equals the search's on tiny instances") {
    if (!have_cbc()) {
        WARN("/usr/bin/cbc not found: skipped (Debian package coinor-cbc)");
        return;
    }
    struct Case {
        int P, M;
        const char* costs;
        std::optional<int> cap;
    };
    const Case cases[] = {
        {2, 2, "F=1,I=1,W=1", std::nullopt}, {2, 2, "F=1,I=1,W=1", 1},       {2, 2, "F=2,I=3,W=1,comm=1", 1},
        {3, 3, "F=1,I=1,W=1", std::nullopt}, {3, 3, "F=1,I=1,W=1", 2},       {3, 3, "F=2,I=3,W=1,comm=1", 2},
        {3, 3, "F=3,I=2,W=2,comm=1", 3},     {3, 3, "F=2,I=3,W=1", 1},
    };
    for (const Case& c : cases) {
        const pp::SearchProblem problem = tiny(c.P, c.M, c.costs, c.cap);
        INFO("P=" << c.P << " M=" << c.M << " costs " << c.costs << " cap " << (c.cap ? std::to_string(*c.cap) : "none"));
        pp::peer::ZbIlpOptions options;
        options.time_limit = 30;
        const pp::peer::ZbIlpResult peer = pp::peer::solve_zb_ilp(problem, options);
        INFO("cbc: " << peer.status << " (" << peer.note << ")");
        REQUIRE(peer.status == "optimal");
        REQUIRE(peer.schedule);  // verified by our verifier, memory cap included
        REQUIRE(peer.makespan);
        CHECK(*peer.makespan == search_optimum(problem));
        REQUIRE(peer.cbc_objective);
        CHECK(std::abs(*peer.cbc_objective - pp::to_double(*peer.makespan)) < 1e-6);
    }
}

TEST_CASE("zb ilp peer: a missing cbc is a skip with a note, not a crash") {
    pp::peer::ZbIlpOptions options;
    options.cbc = "/nonexistent/cbc";
    const pp::peer::ZbIlpResult r = pp::peer::solve_zb_ilp(tiny(2, 2, "F=1,I=1,W=1", 1), options);
    CHECK(r.status == "skipped");
    CHECK(r.note.find("coinor-cbc") != std::string::npos);
    CHECK_FALSE(r.schedule);
    options.cbc = "/usr/bin/cbc";
    options.max_binaries = 2;
    const pp::peer::ZbIlpResult big = pp::peer::solve_zb_ilp(tiny(3, 3, "F=1,I=1,W=1", 2), options);
    CHECK(big.status == "skipped");
    CHECK(big.note.find("too large") != std::string::npos);
}
