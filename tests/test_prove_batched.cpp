// `prove --model batched`: the batched timing graph (proofs/batched_graph.hpp) and the prover run on it, checked
// against the rendezvous simulation of verifier/batched.cpp (simulate_batched), an independent path: it settles
// batches one by one from the posted counterparts and never builds the graph. Every expected value below is a
// simulate_batched result at a concrete M.
#include "cost_points.hpp"
#include "model/dag.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "proofs/batched_graph.hpp"
#include "proofs/claim.hpp"
#include "proofs/prove.hpp"
#include "verifier/simulate.hpp"
#include "proofs/symbolic.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pp;

namespace {

Schedule generate(const std::string& family, int P, int M) {
    const ScheduleFamily* f = find_family(family);
    REQUIRE(f != nullptr);
    return f->generate({P, M, std::nullopt});
}

using test::cost_point;

Rational batched_bubble(const std::string& family, int P, int M, const Costs& c) {
    const Simulation sim = simulate_batched(generate(family, P, M), c);
    return sim.scale.to_units(sim.bubble);
}

ProofResult prove_batched(const std::string& family, int P, std::optional<Costs> c) {
    std::string why;
    auto spec = family_spec(family, P, &why);
    INFO(why);
    REQUIRE(spec);
    ProveOptions options;
    options.model = TimingModel::Batched;
    options.costs = c;
    return prove(*spec, options);
}

struct Instance {
    std::string family;
    int P;
    std::vector<int> Ms;
};

std::vector<Instance> cross_check_instances() {
    std::vector<Instance> out;
    for (int P = 2; P <= 8; P += 2) out.push_back({"dualpipe", P, {2 * P, 2 * P + 2, 2 * P + 6}});
    for (int P = 1; P <= 8; ++P) out.push_back({"dualpipev", P, {2 * P, 2 * P + 1, 2 * P + 5}});
    for (int P = 1; P <= 8; ++P) out.push_back({"1f1b", P, {P, P + 1, P + 4}});
    return out;
}

}  // namespace

TEST_CASE("batched timing graph: its longest paths are simulate_batched's times", "[prove]") {
    const std::vector<Costs> points = {cost_point(1, 1, 1, Rational(3, 2)), cost_point(2, 1, 3, Rational(5, 2)),
                                       cost_point(1, 2, 1, Rational(7, 4), Rational(1, 2)), cost_point(3, 1, 1, 5, 2)};
    int compared = 0, compared_comm = 0;
    for (const Instance& inst : cross_check_instances())
        for (int M : inst.Ms) {
            const Schedule s = generate(inst.family, inst.P, M);
            const BatchedGraph bg = build_batched_graph(s, batched_program(s));
            INFO(inst.family << " P=" << inst.P << " M=" << M << ": " << bg.failure);
            REQUIRE(bg.graph);
            for (const Costs& c : points) {
                // A first batch that waits without a predecessor starts at comm; the graph models comm = 0 there.
                if (!bg.first_batch_waits.empty() && c.comm != Rational(0)) continue;
                const Simulation via_graph = simulate(s, *bg.graph, c);
                const Simulation direct = simulate_batched(s, c);
                REQUIRE(via_graph.start == direct.start);
                REQUIRE(via_graph.end == direct.end);
                REQUIRE(via_graph.bubble == direct.bubble);
                ++compared;
                if (c.comm != Rational(0)) ++compared_comm;
            }
        }
    CHECK(compared > 200);
    CHECK(compared_comm > 50);
}

TEST_CASE("batched timing graph: a rendezvous deadlock is a failure, not a graph", "[prove]") {
    // DualPipe with the generic rule deadlocks at P = 4 (verifier/batched.hpp).
    const Schedule s = generate("dualpipe", 4, 8);
    const BatchedGraph bg = build_batched_graph(s, generic_comm_program(s));
    CHECK_FALSE(bg.graph);
    CHECK_FALSE(bg.failure.empty());
}

TEST_CASE("prove --model batched: DualPipe P=8 known values, exact costs", "[prove]") {
    struct Known {
        Rational FB, batched, dataflow;
    };
    for (const Known& k : {Known{Rational(3, 2), Rational(11, 2), Rational(9, 2)},
                           Known{Rational(7, 4), Rational(17, 4), Rational(15, 4)}}) {
        const Costs c = cost_point(1, 1, 1, k.FB);
        // The independent path first: the known values at M = 16.
        REQUIRE(batched_bubble("dualpipe", 8, 16, c) == k.batched);
        const Simulation df = simulate(generate("dualpipe", 8, 16), c);
        REQUIRE(df.scale.to_units(df.bubble) == k.dataflow);
        const ProofResult r = prove_batched("dualpipe", 8, c);
        INFO(format_proof(r));
        REQUIRE(r.verdict == Verdict::Proved);
        REQUIRE(r.bubble_exact);
        CHECK(*r.bubble_exact == k.batched);
        for (int M : {18, 20, 30, 48}) CHECK(batched_bubble("dualpipe", 8, M, c) == k.batched);
    }
}

TEST_CASE("prove --model batched, exact costs: verdicts agree with simulate_batched", "[prove]") {
    struct Case {
        std::string family;
        int P;
        Costs c;
    };
    const std::vector<Case> cases = {
        {"dualpipe", 4, cost_point(1, 1, 1, Rational(3, 2))},  {"dualpipe", 6, cost_point(2, 1, 3, Rational(5, 2))},
        {"dualpipev", 3, cost_point(1, 1, 1, Rational(3, 2))}, {"dualpipev", 4, cost_point(1, 2, 1, 2)},
        {"1f1b", 4, cost_point(1, 1, 1, 2)},                   {"1f1b", 5, cost_point(2, 1, 1, 3)},
        {"dualpipe", 4, cost_point(1, 1, 1, Rational(3, 2), Rational(1, 2))},
        {"1f1b", 4, cost_point(1, 1, 1, 2, 1)},
    };
    for (const Case& k : cases) {
        const ProofResult r = prove_batched(k.family, k.P, k.c);
        INFO(k.family << " P=" << k.P << " comm=" << format_rational(k.c.comm) << "\n" << format_proof(r));
        REQUIRE(r.verdict != Verdict::Unknown);
        const int m0 = r.m_origin, step = r.step;
        if (r.verdict == Verdict::Proved) {
            REQUIRE(r.bubble_exact);
            for (int t : {0, 1, 2, 5, 11, 20}) CHECK(batched_bubble(k.family, k.P, m0 + step * t, k.c) == *r.bubble_exact);
        } else {
            // A refutation names two M whose batched bubbles differ; re-check them.
            REQUIRE(r.counterexample);
            REQUIRE(r.counterexample->other_microbatches);
            CHECK(batched_bubble(k.family, k.P, r.counterexample->microbatches, k.c) !=
                  batched_bubble(k.family, k.P, *r.counterexample->other_microbatches, k.c));
        }
    }
}

TEST_CASE("prove --model batched, symbolic costs: the bubble polynomial is simulate_batched's at sample points", "[prove]") {
    CostRegion region = CostRegion::standard(false);
    region.finish();
    for (const auto& [family, P] : std::vector<std::pair<std::string, int>>{{"dualpipe", 4}, {"dualpipev", 4}, {"1f1b", 4}}) {
        const ProofResult r = prove_batched(family, P, std::nullopt);
        INFO(family << " P=" << P << "\n" << format_proof(r));
        REQUIRE(r.verdict == Verdict::Proved);
        REQUIRE(r.bubble_symbolic);
        for (const std::vector<std::int64_t>& weights :
             {std::vector<std::int64_t>{}, std::vector<std::int64_t>{3, 1, 2, 1, 5, 1, 1, 2}, std::vector<std::int64_t>{1, 4, 1, 1, 1, 3, 2, 1}}) {
            std::vector<std::int64_t> w = weights;
            w.resize(region.rays.size(), 1);
            const CostPoint p = region.interior_point(w);
            if (!region.contains(p)) continue;
            const Rational expected = r.bubble_symbolic->eval(p);
            for (int t : {0, 1, 3, 9}) CHECK(batched_bubble(family, P, r.m_origin + r.step * t, costs_at(p)) == expected);
        }
    }
}

TEST_CASE("prove --model batched: the program word and its edge classes", "[prove]") {
    const ProofResult r = prove_batched("dualpipe", 6, cost_point(1, 1, 1, 2));
    INFO(format_proof(r));
    REQUIRE(r.verdict == Verdict::Proved);
    bool program = false, classes = false;
    for (const auto& o : r.obligations) {
        program = program || (o.name == "comm-program-structure" && o.holds);
        classes = classes || (o.name == "batched-edge-classes" && o.holds);
    }
    CHECK(program);
    CHECK(classes);
    // Other properties are timing-free: the batched option leaves them as they were.
    std::string why;
    auto spec = family_spec("dualpipe", 4, &why);
    REQUIRE(spec);
    ProveOptions options;
    options.model = TimingModel::Batched;
    options.property = Property::DeadlockFree;
    CHECK(prove(*spec, options).verdict == Verdict::Proved);
}

TEST_CASE("refute --model batched, symbolic costs: the README formula on item 1's region, and a counterexample", "[prove]") {
    // Symbolic costs at P = 4 under the stated assumptions, batched timing.
    auto batched_at_p4 = [](const std::string& assumptions) {
        RefuteOptions options;
        options.p_lo = 4, options.p_hi = 4;
        options.model = TimingModel::Batched;
        for (auto& c : parse_constraints(assumptions)) options.region.add(std::move(c));
        return options;
    };
    const RefuteResult holds = refute("dualpipe", "bubble == (P/2-1)*(FB+B-3*W)", batched_at_p4("I == F && W <= F && FB >= B"));
    CHECK(holds.status == RefuteResult::Holds);
    // The claim holds at a few points of the region by the rendezvous simulation too.
    for (const Costs& c : {cost_point(1, 1, Rational(1, 2), 2), cost_point(2, 2, 1, Rational(7, 2))})
        for (int M : {8, 12, 30}) CHECK(batched_bubble("dualpipe", 4, M, c) == *c.base.FB + c.base.I + c.base.W - Rational(3) * c.base.W);

    const RefuteResult refuted = refute("dualpipe", "bubble == (P/2-1)*(FB+B-3*W)", batched_at_p4("I == F && FB >= B"));
    REQUIRE(refuted.status == RefuteResult::Refuted);
    REQUIRE(refuted.costs);
    const Costs at = costs_at(*refuted.costs);
    CHECK(batched_bubble("dualpipe", 4, refuted.M, at) != *at.base.FB + at.base.I + at.base.W - Rational(3) * at.base.W);
}
