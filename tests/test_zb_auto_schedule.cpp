// The Zero Bubble paper's automatic scheduling heuristic as a warm start (solver/zb_auto_schedule.hpp, issue 32).
#include "model/costs.hpp"
#include "model/placement.hpp"
#include "schedules/families.hpp"
#include "solver/greedy_improve.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "solver/zb_auto_schedule.hpp"
#include "bench/zb_table_cells.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace pp;


using zb_table::Cell;
using zb_table::cell_problem;
using zb_table::table9;
using zb_table::exact;

SearchProblem small_problem(int P, int M, std::optional<Rational> limit, const ActivationModel& sizes, std::array<int, 4> fiwc,
                            Objective objective = Objective::Span) {
    SearchProblem problem;
    problem.placement = placement_from_name("1f1b", P, M);
    problem.costs.base.F = fiwc[0];
    problem.costs.base.I = fiwc[1];
    problem.costs.base.W = fiwc[2];
    problem.costs.comm = fiwc[3];
    problem.activations = sizes;
    problem.memory_limit = limit;
    problem.objective = objective;
    return problem;
}

// (span - m(F+I+W)) / span, as the paper's bubble rate.
Rational bubble_rate(const Instance& inst, const Ticks& span) {
    const Costs& c = inst.problem.costs;
    const Rational work = Rational(inst.problem.placement.pipelines[0].microbatches) * (c.base.F + c.base.I + c.base.W);
    const Rational s = inst.to_units(span);
    return (s - work) / s;
}

bool verifies(const Instance& inst, const Schedule& schedule) {
    VerifyOptions vo;
    vo.memory_limit = inst.problem.memory_limit;
    vo.activations = inst.problem.activations;
    return verify(schedule, vo).ok();
}

}  // namespace

TEST_CASE("zb-auto: every variant verifies under the cap with the size model and times as its own clock says", "[search][issue32]") {
    const std::vector<ActivationModel> sizes = {
        {Rational(1), Rational(0)},                            // whole stashes: W frees everything
        {Rational(1), Rational(1) - Rational(48) / Rational(131)},  // 1.5B
        {Rational(1), Rational(1) - Rational(16) / Rational(37)},   // the other models
        {Rational(1), Rational(1)},                            // I frees everything: W's are free of memory
    };
    const std::vector<std::array<int, 4>> costs = {{1, 1, 1, 0}, {3, 4, 2, 1}, {5, 6, 4, 0}, {18522, 18086, 9337, 601}, {2, 1, 1, 3}};
    int runs = 0, fitted = 0;
    for (int P : {2, 3, 4, 5})
        for (int M : {1, P - 1, P, 2 * P, 3 * P + 1})
            for (int factor : {1, 2})
                for (const ActivationModel& s : sizes)
                    for (const auto& c : costs) {
                        if (M < 1) continue;
                        const Instance inst = build_instance(small_problem(P, M, Rational(factor * P), s, c));
                        INFO("P=" << P << " M=" << M << " cap " << factor * P << " I frees " << format_rational(s.input_grad_free)
                                  << " costs " << c[0] << "," << c[1] << "," << c[2] << "," << c[3]);
                        bool any = false;
                        for (const ZbAutoVariant& v : ZbAutoVariant::all()) {
                            INFO(v.name());
                            ++runs;
                            const auto orders = zb_auto_orders(inst, v);
                            if (!orders) continue;
                            any = true;
                            ++fitted;
                            const GreedySchedule g = time_orders(inst, orders->orders);
                            REQUIRE(g.ok);
                            // The heuristic times ops as soon as possible; so does the instance's timer.
                            CHECK(g.objective == orders->span);
                            for (size_t t = 0; t < inst.size(); ++t) CHECK(g.end[t] == orders->end[t]);
                            CHECK(verifies(inst, schedule_from_starts(inst, g.start, g.partner)));
                        }
                        // Cap p is 1F1B's memory: some variant always fits it.
                        CHECK(any);
                        const auto best = zb_auto_schedule(inst);
                        REQUIRE(best);
                        Schedule copy = best->schedule;
                        const Evaluation e = evaluate_schedule(inst, copy);
                        CHECK(e.ok);
                    }
    CHECK(fitted > 0);
    CHECK(runs >= fitted);
}

TEST_CASE("zb-auto: without a cap it runs, and it is not offered off the 1F1B placement or with pairs", "[search][issue32]") {
    const Instance free = build_instance(small_problem(4, 8, std::nullopt, {}, {3, 4, 2, 1}, Objective::Makespan));
    const auto s = zb_auto_schedule(free);
    REQUIRE(s);
    Schedule copy = s->schedule;
    CHECK(evaluate_schedule(free, copy).ok);

    SearchProblem v = small_problem(2, 4, Rational(4), {}, {1, 1, 1, 0});
    v.placement = placement_from_name("v", 2, 4);
    CHECK_FALSE(zb_auto_schedule(build_instance(v)));
    SearchProblem paired = small_problem(2, 4, Rational(4), {}, {2, 2, 1, 0});
    paired.overlap = Rational(3);
    CHECK_FALSE(zb_auto_schedule(build_instance(paired)));
}

// At cap p the paper's ZB-1p column equals ZB-H1 (Table 5: the same bubble rates as its handcrafted schedule).
TEST_CASE("zb-auto: at cap p on every cell of the paper's table it times exactly as ZB-H1", "[search][issue32]") {
    for (const Cell& c : table9()) {
        const Instance inst = build_instance(cell_problem(c, 1));
        INFO(c.model << " p" << c.p << " m" << c.m);
        const auto z = zb_auto_schedule(inst);
        REQUIRE(z);
        Schedule mine = z->schedule;
        const Evaluation e = evaluate_schedule(inst, mine);
        REQUIRE(e.ok);
        Schedule h1 = generate_zb_h1({c.p, c.m, std::nullopt});
        const Evaluation h = evaluate_schedule(inst, h1);
        REQUIRE(h.ok);
        CHECK(e.value == h.value);
    }
}

// Every cell of Table 5 (both limits): the port's best variant, re-timed by the simulator, rounds to the
// paper's rate (4 digits, as printed) -- the port reproduces the paper's heuristic column. The p = 32 cells
// run 25k ops per variant: still milliseconds.
TEST_CASE("zb-auto: on every cell of the paper's Table 5 the heuristic reproduces the paper's rate", "[search][issue32]") {
    const Rational half_digit = Rational(1) / Rational(20000);
    for (const Cell& c : table9())
        for (int factor : {1, 2}) {
            const Instance inst = build_instance(cell_problem(c, factor));
            INFO(c.model << " p" << c.p << " m" << c.m << " " << factor << "p");
            const auto z = zb_auto_schedule(inst);
            REQUIRE(z);
            Schedule mine = z->schedule;
            const Evaluation e = evaluate_schedule(inst, mine);
            REQUIRE(e.ok);
            const Rational rate = bubble_rate(inst, e.value);
            const Rational paper = exact(factor == 1 ? c.paper_1p : c.paper_2p);
            INFO("rate " << to_double(rate) << " paper " << format_rational(paper) << " from " << z->origin);
            CHECK(rate < paper + half_digit);
            CHECK(rate >= paper - half_digit);
        }
}

TEST_CASE("zb-auto: the search takes the heuristic as a warm start under a weighted cap", "[search][issue32]") {
    const Cell& c = table9()[0];  // 1.5B p8 m24
    const SearchProblem problem = cell_problem(c, 2);
    const Instance inst = build_instance(problem);
    const auto z = zb_auto_schedule(inst);
    REQUIRE(z);
    Schedule mine = z->schedule;
    const Evaluation e = evaluate_schedule(inst, mine);
    REQUIRE(e.ok);
    SearchOptions options;
    options.time_limit = 5;
    options.engine = SearchEngine::None;
    const SearchResult r = search(problem, options);
    REQUIRE(r.schedule);
    CHECK(r.value <= e.value);
    CHECK(r.warm_start_value >= 0);
    CHECK(r.warm_start_value <= e.value);
    CHECK(r.best_warm_start.rfind("zb-auto(", 0) == 0);  // better here than every library schedule
}
