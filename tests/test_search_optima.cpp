// Certified optima of issue 13's open instances, kept as schedule files (tests/search_optima/): each is
// re-verified with its memory cap and re-timed by the simulator here, independently of the search, and
// equals the search's analytic lower bound, so it is optimal; the search given the file as a warm start
// reports OPTIMAL without a solver call (tag [search]).
#include "formats/native.hpp"
#include "model/costs.hpp"
#include "solver/lower_bound.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

using namespace pp;

namespace {

Schedule read_optimum(const std::string& name) {
    const std::string path = std::string(PP_SOURCE_DIR) + "/tests/search_optima/" + name;
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return read_native(buffer.str(), path);
}

}  // namespace

// V map P=5 M=10 cap 10, Zero Bubble ICLR 1.5B costs: the first size where the local search stopped at
// bound + (F - I + 2comm) = 1000146. A schedule at the bound exists (found by pinning rank 4 to a solution of
// the two-rank relaxation of ranks 3 and 4 and letting Z3 place the other ranks, 2026-12-02): the bound
// (rank 4: warm-up idle 3064, exact cool-down idle 52) is the optimum.
TEST_CASE("search optima: V map P=5 M=10 cap 10 (ZB 1.5B) has a schedule at its analytic bound", "[search]") {
    Schedule s = read_optimum("v_p5_m10_cap10_zb15.txt");
    const Costs costs = parse_costs("F=18522,I=18086,W=9337,comm=601");
    VerifyOptions vo;
    vo.memory_limit = Rational(10);
    const VerifyReport report = verify(s, vo);
    CHECK(report.ok());
    const Simulation sim = simulate(s, costs);
    CHECK(sim.scale.to_units(sim.makespan) == Rational(998508));

    SearchProblem p;
    p.placement = placement_from_name("v", 5, 10);
    p.costs = costs;
    p.memory_limit = Rational(10);
    const Instance inst = build_instance(p);
    const LowerBound lb = analytic_lower_bound(inst, compute_task_bounds(inst, true));
    CHECK(lb.value * inst.quantum == Ticks(998508));
    CHECK(lb.kind == "rank-load+memory");

    SearchOptions o;
    o.time_limit = 10;
    o.engine = SearchEngine::None;
    o.relaxations = false;
    o.warm_starts = {{"file:v_p5_m10_cap10_zb15.txt", s}};
    const SearchResult r = search(p, o);
    CHECK(r.status == SearchStatus::Optimal);
    CHECK(r.value == Ticks(998508));
    CHECK(r.lower_bound == Ticks(998508));
    CHECK(r.calls.empty());
}
