// The batched communication model (verifier/batched.hpp): DeepSeek's blocking batches of sends and receives
// before every compute, with rendezvous semantics. Expected programs and numbers come from
// /work/shared/reference/dualpipe.md (section d, "Bubble sanity check"), issue 6, or hand derivations
// written out next to the checks -- never from running the code under test.
#include "schedules/families.hpp"
#include "verifier/batched.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using pp::CommProgram;
using pp::CommStep;
using pp::Op;
using pp::OpKind;
using pp::P2POp;
using pp::Rational;
using pp::Schedule;
using pp::Slot;

Schedule dualpipe(int P, int M) { return pp::generate_dualpipe({P, M, std::nullopt}); }
Schedule dualpipev(int P, int M) { return pp::generate_dualpipev({P, M, std::nullopt}); }

pp::Costs costs(Rational F, Rational I, Rational W, std::optional<Rational> FB = {}, Rational comm = 0) {
    pp::Costs c;
    c.base.F = F;
    c.base.I = I;
    c.base.W = W;
    c.base.FB = FB;
    c.comm = comm;
    return c;
}

// ---- dualpipe.md notation, rendered here independently of verifier/batched.cpp's format_p2p:
// slots F1.0, B (= our I), W, BW (= our B), "(F+BW)" pairs, "r" for the reverse pipeline; batches
// "{sA1.0>2,rG3r.0<0}" (s/r send/receive, A/G activation/gradient, producer stage.micro-batch, peer).
std::string md_op(const Op& op) {
    const char* kind = op.kind == OpKind::F ? "F" : op.kind == OpKind::I ? "B" : op.kind == OpKind::W ? "W" : "BW";
    return kind + std::to_string(op.stage) + (op.pipeline == 1 ? "r" : "") + "." + std::to_string(op.microbatch);
}
std::string md_slot(const Slot& s) {
    return s.is_pair() ? fmt::format("({}+{})", md_op(s.ops[0]), md_op(s.ops[1])) : md_op(s.ops[0]);
}
std::string md_p2p(const P2POp& op) {
    return std::string(op.is_send ? "s" : "r") + (op.activation ? "A" : "G") + std::to_string(op.stage) +
           (op.pipeline == 1 ? "r" : "") + "." + std::to_string(op.microbatch) + (op.is_send ? ">" : "<") +
           std::to_string(op.peer);
}
// One token per non-empty batch and per slot, in program order.
std::vector<std::string> md_program(const Schedule& s, int rank) {
    std::vector<std::string> out;
    for (const CommStep& step : s.comm_program->at(rank)) {
        if (!step.batch.empty()) {
            std::string b = "{";
            for (size_t i = 0; i < step.batch.size(); ++i) {
                if (i) b += ',';
                b += md_p2p(step.batch[i]);
            }
            out.push_back(b + "}");
        }
        if (step.slot >= 0) out.push_back(md_slot(s.ranks[rank][step.slot]));
    }
    return out;
}
std::vector<std::string> tokens(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string t; in >> t;)
        if (t != "...") out.push_back(t);
    return out;
}

Rational units(const pp::Simulation& sim, pp::Ticks t) { return sim.scale.to_units(t); }
Rational worst_idle(const pp::Simulation& sim) { return units(sim, sim.bubble); }
Rational makespan(const pp::Simulation& sim) { return units(sim, sim.makespan); }

pp::Simulation batched(const Schedule& s, const pp::Costs& c) { return pp::simulate_batched(s, c); }
pp::Simulation dataflow(const Schedule& s, const pp::Costs& c) { return pp::simulate(s, c); }

bool has_kind(const std::vector<pp::Violation>& vs, pp::ViolationKind kind) {
    return std::any_of(vs.begin(), vs.end(), [&](const pp::Violation& v) { return v.kind == kind; });
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// DualPipe's own communication order

TEST_CASE("batched: DualPipe P=4 rank 1 batches are dualpipe.md section d's example", "[batched]") {
    // Verbatim from dualpipe.md section d ("Example, DualPipe P=4 rank 1"); an empty batch is not written.
    const std::string example =
        "{rA0.0<0} F1.0 {sA1.0>2,rA0.1<0,rA1r.0<2} F2r.0 {sA2r.0>0} F1.1 {sA1.1>2,rA0.2<0,rA1r.1<2} F2r.1 F1.2 "
        "{sA2r.1>0,rG3r.0<0} BW2r.0 {sA1.2>2,sG2r.0>2,rA1r.2<2,rG2.0<2} (F2r.2+BW1.0) ...";
    const auto expected = tokens(example);
    const Schedule s = dualpipe(4, 8);
    REQUIRE(s.comm_program.has_value());
    auto got = md_program(s, 1);
    REQUIRE(got.size() >= expected.size());
    got.resize(expected.size());
    CHECK(got == expected);
}

TEST_CASE("batched: DualPipe P=4 M=8 ranks 0 and 1, whole programs derived by hand from the reference", "[batched]") {
    // Walking dualpipe.py's step() (queue receives, commit, compute, queue sends; the deviations of
    // section d) over the hand traces of section c. Rank 0 (h=0, far=1, n4=1, not a turn rank): its F p0 are
    // stage 0 (no input to receive) and its p1 is the reverse stage 3 (the last: no gradient to receive).
    //   step 1: F0.0, F0.1, each sending its activation to rank 1 in the next batch;
    //   step 2: F0.2 (send held until after F3r.0), F3r.0 receives from rank 1, then F0.2's send is queued;
    //   step 3: B3r.0 (split) sends its gradient, the receive for F3r.1 is queued, so W3r.0 waits for both;
    //   step 4: (F0.3+BW3r.1) with nothing to receive, (F3r.2+BW0.0) receives an activation and a gradient;
    //   step 5: BW3r.2, (F3r.3+BW0.1); step 6: BW3r.3, B0.2; step 7: W0.2, B0.3; step 8: W0.3.
    const Schedule s = dualpipe(4, 8);
    CHECK(md_program(s, 0) ==
          tokens("F0.0 {sA0.0>1} F0.1 {sA0.1>1} F0.2 {rA2r.0<1} F3r.0 {sA0.2>1} B3r.0 {sG3r.0>1,rA2r.1<1} W3r.0 F3r.1 "
                 "(F0.3+BW3r.1) {sA0.3>1,sG3r.1>1,rA2r.2<1,rG1.0<1} (F3r.2+BW0.0) BW3r.2 "
                 "{sG3r.2>1,rA2r.3<1,rG1.1<1} (F3r.3+BW0.1) BW3r.3 {sG3r.3>1,rG1.2<1} B0.2 W0.2 {rG1.3<1} B0.3 W0.3"));
    // Rank 1 (turn rank, h=1, far=0, n4=2): the example above, then step 4 round 1 and step 6 (its split
    // starts at round 1's B(p1), h odd), step 8 drains the W queue; the last gradient send rides with W2r.3.
    CHECK(md_program(s, 1) ==
          tokens("{rA0.0<0} F1.0 {sA1.0>2,rA0.1<0,rA1r.0<2} F2r.0 {sA2r.0>0} F1.1 {sA1.1>2,rA0.2<0,rA1r.1<2} F2r.1 F1.2 "
                 "{sA2r.1>0,rG3r.0<0} BW2r.0 {sA1.2>2,sG2r.0>2,rA1r.2<2,rG2.0<2} (F2r.2+BW1.0) "
                 "{sA2r.2>0,sG1.0>0,rA0.3<0,rG3r.1<0} (F1.3+BW2r.1) {sA1.3>2,sG2r.1>2,rA1r.3<2,rG2.1<2} (F2r.3+BW1.1) "
                 "{sA2r.3>0,sG1.1>0,rG3r.2<0} BW2r.2 {sG2r.2>2,rG2.2<2} BW1.2 {sG1.2>0,rG3r.3<0} B2r.3 "
                 "{sG2r.3>2,rG2.3<2} B1.3 {sG1.3>0} W2r.3 W1.3"));
}

TEST_CASE("batched: DualPipe ranks r and P-1-r post mirrored batches", "[batched]") {
    // dualpipe.md section b: ranks r and P-1-r run the same program with the directions exchanged, so the
    // batches match op for op with the pipeline swapped and the peer mirrored.
    for (int P = 2; P <= 10; P += 2)
        for (int M = 2 * P; M <= 3 * P; M += 2) {
            const Schedule s = dualpipe(P, M);
            for (int r = 0; r < P; ++r) {
                const auto& mine = s.comm_program->at(r);
                const auto& mirror = s.comm_program->at(P - 1 - r);
                INFO("P=" << P << " M=" << M << " rank " << r);
                REQUIRE(mine.size() == mirror.size());
                for (size_t k = 0; k < mine.size(); ++k) {
                    REQUIRE(mine[k].slot == mirror[k].slot);
                    REQUIRE(mine[k].batch.size() == mirror[k].batch.size());
                    for (size_t i = 0; i < mine[k].batch.size(); ++i) {
                        P2POp m = mirror[k].batch[i];
                        m.pipeline = 1 - m.pipeline;
                        m.peer = P - 1 - m.peer;
                        REQUIRE(mine[k].batch[i] == m);
                    }
                }
            }
        }
}

TEST_CASE("batched: DualPipeV's batches are the first half of DualPipe(2P, 2M)'s, the turn made local", "[batched]") {
    // dualpipe.md section b: DualPipeV(P, M) rank r is DualPipe(2P, 2M) rank r with the pipeline tag dropped
    // (the reverse stage numbers coincide); the transfers across the middle of DualPipe are local in V.
    for (int P = 1; P <= 6; ++P)
        for (int M : {2 * P, 2 * P + 1, 3 * P + 2}) {
            const Schedule v = dualpipev(P, M), d = dualpipe(2 * P, 2 * M);
            for (int r = 0; r < P; ++r) {
                auto strip = [&](std::vector<CommStep> steps, bool drop_middle) {
                    for (auto& step : steps) {
                        if (drop_middle)
                            step.batch.erase(std::remove_if(step.batch.begin(), step.batch.end(),
                                                            [&](const P2POp& op) { return op.peer >= P; }),
                                             step.batch.end());
                        for (auto& op : step.batch) op.pipeline = 0;
                    }
                    while (!steps.empty() && steps.back().slot < 0 && steps.back().batch.empty()) steps.pop_back();
                    return steps;
                };
                const auto a = strip(v.comm_program->at(r), false), b = strip(d.comm_program->at(r), true);
                INFO("P=" << P << " M=" << M << " rank " << r);
                REQUIRE(a.size() == b.size());
                for (size_t k = 0; k < a.size(); ++k) {
                    REQUIRE(a[k].slot == b[k].slot);
                    REQUIRE(a[k].batch == b[k].batch);
                }
            }
        }
}

TEST_CASE("batched: DualPipe and DualPipeV programs pass dualpipe.md's three checks", "[batched]") {
    // Section d, "Checks on every generated combo": channel order, no rendezvous deadlock, every compute has
    // its input and every send an already computed tensor.
    for (int P = 2; P <= 16; P += 2)
        for (int M = 2 * P; M <= 4 * P + 2; M += 2) {
            const Schedule s = dualpipe(P, M);
            const auto violations = pp::check_comm_program(s, *s.comm_program);
            INFO("dualpipe P=" << P << " M=" << M << ": " << (violations.empty() ? "" : violations.front().message));
            REQUIRE(violations.empty());
        }
    for (int P = 1; P <= 16; ++P)
        for (int M = 2 * P; M <= 4 * P + 1; ++M) {
            const Schedule s = dualpipev(P, M);
            const auto violations = pp::check_comm_program(s, *s.comm_program);
            INFO("dualpipev P=" << P << " M=" << M << ": " << (violations.empty() ? "" : violations.front().message));
            REQUIRE(violations.empty());
        }
}

// ------------------------------------------------------------------------------------------------
// Timing: the reference's numbers

TEST_CASE("batched vs dataflow: issue 6's DualPipe P=8, F=I=W=1, FB=1.75", "[batched]") {
    // Issue 6: worst-rank idle 3.75 under dataflow, 4.25 under batched (no latency).
    const pp::Costs c = costs(1, 1, 1, Rational(7, 4));
    for (int M : {16, 20}) {
        INFO("M=" << M);
        const Schedule s = dualpipe(8, M);
        CHECK(worst_idle(dataflow(s, c)) == Rational(15, 4));
        CHECK(worst_idle(batched(s, c)) == Rational(17, 4));
    }
}

TEST_CASE("batched: dualpipe.md's blocking numbers for DualPipe P=8 and DualPipeV P=4", "[batched]") {
    // "Bubble sanity check": the reference's blocking comm with zero latency; B = I + W. DualPipeV P=4
    // gives the same numbers as DualPipe P=8 (with half the micro-batches).
    for (bool v : {false, true}) {
        auto gen = [&](int M) { return v ? dualpipev(4, M / 2) : dualpipe(8, M); };
        INFO((v ? "dualpipev P=4" : "dualpipe P=8"));
        SECTION("F=1 B=2 W=1 FB=3, M=20: 6 on every rank") {
            const pp::Simulation sim = batched(gen(20), costs(1, 1, 1, Rational(3)));
            for (const auto& t : sim.ranks) CHECK(units(sim, t.idle) == Rational(6));
        }
        SECTION("FB=2.5 matches the README formula 3 x (2.5 + 2 - 3) = 4.5") {
            CHECK(worst_idle(batched(gen(20), costs(1, 1, 1, Rational(5, 2)))) == Rational(9, 2));
        }
        SECTION("FB=2: idle [1, 2, 3, 3, 3, 3, 2, 1]") {
            const pp::Simulation sim = batched(gen(20), costs(1, 1, 1, Rational(2)));
            const std::vector<int> expected = {1, 2, 3, 3, 3, 3, 2, 1};
            for (size_t r = 0; r < sim.ranks.size(); ++r) CHECK(units(sim, sim.ranks[r].idle) == Rational(expected[r]));
        }
        SECTION("FB=1.5: 5.5 blocking against 4.5 dataflow") {
            const Schedule s = gen(20);
            const pp::Costs c = costs(1, 1, 1, Rational(3, 2));
            CHECK(worst_idle(batched(s, c)) == Rational(11, 2));
            CHECK(worst_idle(dataflow(s, c)) == Rational(9, 2));
        }
        SECTION("M=16, F=1 I=1.5 W=0.5 FB=2: worst 6.5") {
            CHECK(worst_idle(batched(gen(16), costs(1, Rational(3, 2), Rational(1, 2), Rational(2)))) == Rational(13, 2));
        }
    }
}

// ------------------------------------------------------------------------------------------------
// The generic rule, by hand

TEST_CASE("batched: generic program of 1F1B P=2 M=2, derived by hand", "[batched]") {
    // Sends of the previous compute, then receives of this one (empty batches not written):
    //   rank 0: F0.0 {sA0.0>1} F0.1 {sA0.1>1,rG1.0<1} BW0.0 {rG1.1<1} BW0.1
    //   rank 1: {rA0.0<0} F1.0 BW1.0 {sG1.0>0,rA0.1<0} F1.1 BW1.1 {sG1.1>0}  (the last is the final commit)
    const Schedule s = pp::generate_1f1b({2, 2, std::nullopt});
    const CommProgram program = pp::generic_comm_program(s);
    auto render = [&](int r) {
        std::vector<std::string> out;
        for (const CommStep& step : program[r]) {
            if (!step.batch.empty()) {
                std::string b = "{";
                for (size_t i = 0; i < step.batch.size(); ++i) {
                    if (i) b += ',';
                    b += md_p2p(step.batch[i]);
                }
                out.push_back(b + "}");
            }
            if (step.slot >= 0) out.push_back(md_slot(s.ranks[r][step.slot]));
        }
        return out;
    };
    CHECK(render(0) == tokens("F0.0 {sA0.0>1} F0.1 {sA0.1>1,rG1.0<1} BW0.0 {rG1.1<1} BW0.1"));
    CHECK(render(1) == tokens("{rA0.0<0} F1.0 BW1.0 {sG1.0>0,rA0.1<0} F1.1 BW1.1 {sG1.1>0}"));
    CHECK(pp::check_comm_program(s, program).empty());
    CHECK(pp::format_batch(program[0][2].batch) == "{sA0.1>1,rG1.0<1}");

    SECTION("F=1, B=2, no latency: 9, the same as dataflow") {
        // rank 0: F0.0 0-1; {sA0.0} meets rank 1's first batch (posted at 0) -> 1; F0.1 1-2; its next batch
        // (posted 2) meets rank 1's batch after BW1.0 (posted 4) -> BW0.0 4-6; {rG1.1} meets rank 1's final
        // commit (posted 7) -> BW0.1 7-9. rank 1: F1.0 1-2, BW1.0 2-4, F1.1 4-5, BW1.1 5-7.
        const pp::Simulation sim = batched(s, costs(1, 1, 1));
        CHECK(makespan(sim) == Rational(9));
        CHECK(makespan(dataflow(s, costs(1, 1, 1))) == Rational(9));
    }
    SECTION("latency 1: batched 12 against dataflow 11") {
        // Each non-empty batch completes 1 after both sides have posted.
        //   rank 0: F0.0 0-1; batch posted 1, peer posted 0 -> 2; F0.1 2-3; posted 3, peer posts 5 -> 6;
        //           BW0.0 6-8; posted 8, peer's final commit posted 9 -> 10; BW0.1 10-12.
        //   rank 1: batch posted 0, peer posted 1 -> 2; F1.0 2-3, BW1.0 3-5; posted 5, peer posted 3 -> 6;
        //           F1.1 6-7, BW1.1 7-9.
        // Dataflow: rank 1 F1.0 2-3, BW1.0 3-5, F1.1 5-6, BW1.1 6-8; rank 0 BW0.0 6-8, BW0.1 9-11.
        const pp::Costs c = costs(1, 1, 1, std::nullopt, 1);
        const pp::Simulation sim = batched(s, c);
        CHECK(makespan(sim) == Rational(12));
        CHECK(units(sim, sim.ranks[0].idle) == Rational(6));
        CHECK(units(sim, sim.ranks[1].idle) == Rational(6));
        CHECK(makespan(dataflow(s, c)) == Rational(11));
        // The critical path ends with rank 0's last backward, which waited for rank 1's last backward.
        REQUIRE(sim.critical_path.size() >= 2);
        const auto graph = pp::build_schedule_graph(s);
        CHECK(pp::format_slot(graph.slot(s, sim.critical_path.back())) == "0B1");
        CHECK(pp::format_slot(graph.slot(s, sim.critical_path[sim.critical_path.size() - 2])) == "1B1");
    }
}

TEST_CASE("batched: a schedule carrying no program is timed by the generic rule", "[batched]") {
    // The attached program when there is one and the options allow it, else the generic rule; the same
    // timing either way when the two coincide (Chimera with its generic program attached).
    auto same = [](const CommProgram& a, const CommProgram& b) {
        if (a.size() != b.size()) return false;
        for (size_t r = 0; r < a.size(); ++r) {
            if (a[r].size() != b[r].size()) return false;
            for (size_t k = 0; k < a[r].size(); ++k)
                if (a[r][k].slot != b[r][k].slot || !(a[r][k].batch == b[r][k].batch)) return false;
        }
        return true;
    };
    Schedule d = dualpipe(4, 8);
    CHECK(pp::uses_attached_program(d));
    CHECK_FALSE(pp::uses_attached_program(d, pp::BatchedOptions{false}));
    CHECK(same(pp::batched_program(d), *d.comm_program));
    CHECK(same(pp::batched_program(d, pp::BatchedOptions{false}), pp::generic_comm_program(d)));
    CHECK_FALSE(same(pp::generic_comm_program(d), *d.comm_program));
    d.comm_program.reset();
    CHECK(same(pp::batched_program(d), pp::generic_comm_program(d)));

    Schedule c = pp::generate_chimera({4, 8, std::nullopt});
    CHECK_FALSE(c.comm_program.has_value());
    const pp::Costs cost = costs(1, 1, 1, std::nullopt, Rational(1, 2));
    const pp::Simulation plain = batched(c, cost);
    c.comm_program = pp::generic_comm_program(c);
    const pp::Simulation attached = batched(c, cost);
    CHECK(plain.start == attached.start);
    CHECK(plain.makespan == attached.makespan);
}

TEST_CASE("batched: the generic rule deadlocks DualPipe P=4, which the reference's step-3 receive avoids", "[batched]") {
    // Generic rule on dualpipe(4, 8), by hand from the trace of dualpipe.md section c:
    //   rank 0: ... B3r.0 {sG3r.0>1} W3r.0 {rA2r.1<1} F3r.1 ...   (the W's batch only sends B3r.0's gradient)
    //   rank 1: ... F2r.1 {sA2r.1>0,rA0.2<0} F1.2 {sA1.2>2,rG3r.0<0} BW2r.0 ...
    // Rank 0's send of G3r.0 meets its receive only in rank 1's batch before BW2r.0; rank 1 first has to
    // finish the batch before F1.2, whose send of A2r.1 meets its receive only in rank 0's batch before
    // F3r.1, after the W. Both ranks wait on a send: deadlock (ranks 2 and 3 mirror it). The reference
    // queues that receive right after the split B (section d, "Step 3"), so it rides in the W's batch.
    const Schedule s = dualpipe(4, 8);
    const auto violations = pp::check_comm_program(s, pp::generic_comm_program(s));
    REQUIRE(violations.size() == 1);
    CHECK(violations[0].kind == pp::ViolationKind::CommDeadlock);
    REQUIRE(violations[0].witness.size() == 4);
    CHECK(violations[0].witness[0].find("rank 0 cannot start 3W0@1: the batch before it sends the gradient of 3I0@1 to "
                                        "rank 1") == 0);
    CHECK(violations[0].witness[0].find("[sG3r.0>1]") != std::string::npos);
    CHECK(violations[0].witness[1].find("rank 1 cannot start 1F2: the batch before it sends the activation of 2F1@1 to "
                                        "rank 0") == 0);
    CHECK(pp::check_comm_program(s, *s.comm_program).empty());
    CHECK_THROWS_AS(pp::simulate_batched(s, costs(1, 1, 1), {}, pp::BatchedOptions{false}), pp::SimulationError);
}

TEST_CASE("batched: the generic rule deadlocks ZB-H2 P=2 M=4", "[batched]") {
    // Orders (test_schedules_pytorch.cpp): rank 0 F0 F1 F2 I0 W0 F3 I1 W1 I2 W2 I3 W3,
    // rank 1 F0 I0 F1 I1 F2 I2 W0 F3 I3 W1 W2 W3. Generic batches, by hand:
    //   rank 0: ... W0.0 F0.3 {sA0.3>1,rG1.1<1} I0.1 W0.1 {rG1.2<1} I0.2 ...
    //   rank 1: ... F1.2 I1.2 {sG1.2>0} W1.0 {rA0.3<0} F1.3 ...
    // Rank 0 sends A0.3 before I0.1 and rank 1 receives it only before F1.3; rank 1 sends G1.2 before W1.0
    // and rank 0 receives it only before I0.2. Each waits on its send: deadlock.
    const Schedule s = pp::generate_zb_h2({2, 4, std::nullopt});
    const auto violations = pp::check_comm_program(s, pp::generic_comm_program(s));
    REQUIRE(violations.size() == 1);
    CHECK(violations[0].kind == pp::ViolationKind::CommDeadlock);
    REQUIRE(violations[0].witness.size() == 2);
    CHECK(violations[0].witness[0] ==
          "rank 0 cannot start 0I1: the batch before it sends the activation of 0F3 to rank 1, which rank 1 receives "
          "only in its batch before 1F3 -- but rank 1 is stuck before 1W0 [sA0.3>1]");
    CHECK(violations[0].witness[1] ==
          "rank 1 cannot start 1W0: the batch before it sends the gradient of 1I2 to rank 0, which rank 0 receives only "
          "in its batch before 0I2 -- but rank 0 is stuck before 0I1 [sG1.2>0]");
}

TEST_CASE("batched: no slot starts before its dataflow time", "[batched]") {
    // Every batched start is a dataflow-feasible start (inputs were sent after their producers ended, plus
    // the latency), so it is at least the dataflow (earliest) start.
    std::vector<Schedule> schedules = {dualpipe(8, 16), dualpipev(4, 9), pp::generate_1f1b({4, 8, std::nullopt}),
                                       pp::generate_gpipe({3, 5, std::nullopt}), pp::generate_zb_h1({4, 8, std::nullopt}),
                                       pp::generate_chimera({4, 8, std::nullopt})};
    const std::vector<pp::Costs> cost_sets = {costs(1, 1, 1), costs(1, 1, 1, Rational(7, 4), Rational(1, 2)),
                                              costs(2, 3, 1, std::nullopt, 1), costs(1, Rational(3, 2), Rational(1, 2), Rational(2))};
    for (const Schedule& s : schedules)
        for (const pp::Costs& c : cost_sets) {
            INFO(s.source << " costs " << pp::format_costs(c));
            const pp::Simulation b = batched(s, c), d = dataflow(s, c);
            REQUIRE(b.scale.ticks_per_unit == d.scale.ticks_per_unit);
            for (size_t k = 0; k < b.start.size(); ++k) REQUIRE(b.start[k] >= d.start[k]);
            CHECK(b.makespan >= d.makespan);
            for (size_t r = 0; r < b.ranks.size(); ++r) CHECK(b.ranks[r].busy == d.ranks[r].busy);
        }
}

// ------------------------------------------------------------------------------------------------
// Violations

TEST_CASE("batched: a receive posted too early deadlocks the rendezvous", "[batched]") {
    // GPipe P=2 M=1 (rank 0: F0.0 BW0.0, rank 1: F1.0 BW1.0). Rank 0 receives the gradient in the batch
    // before its forward: that batch waits until rank 1 posts the gradient send, after its backward, which
    // needs rank 0's activation -- sent only in rank 0's next batch. A cycle of waits, though the dataflow
    // order is fine.
    const Schedule s = pp::generate_gpipe({2, 1, std::nullopt});
    CommProgram program(2);
    program[0] = {CommStep{{P2POp{false, false, 0, 1, 0, 1}}, 0}, CommStep{{P2POp{true, true, 0, 0, 0, 1}}, 1}};
    program[1] = {CommStep{{P2POp{false, true, 0, 0, 0, 0}}, 0}, CommStep{{}, 1}, CommStep{{P2POp{true, false, 0, 1, 0, 0}}, -1}};
    const auto violations = pp::check_comm_program(s, program);
    REQUIRE(violations.size() == 1);
    CHECK(violations[0].kind == pp::ViolationKind::CommDeadlock);
    CHECK(violations[0].witness.size() == 2);
    CHECK_THROWS_AS(pp::simulate_batched(s, pp::build_schedule_graph(s), program, costs(1, 1, 1)), pp::SimulationError);
    CHECK(pp::verify(s).ok());  // the order itself is fine
}

TEST_CASE("batched: channel order, missing receives, wrong peers and early sends are reported", "[batched]") {
    // GPipe P=2 M=2: rank 0 sends A0.0 then A0.1; rank 1 receives them in one batch before F1.0.
    const Schedule s = pp::generate_gpipe({2, 2, std::nullopt});
    const P2POp recv0{false, true, 0, 0, 0, 0}, recv1{false, true, 0, 0, 1, 0};
    const P2POp send0{true, true, 0, 0, 0, 1}, send1{true, true, 0, 0, 1, 1};
    auto program_with = [&](std::vector<P2POp> receives, std::vector<CommStep> rank0) {
        CommProgram p(2);
        p[0] = std::move(rank0);
        // rank 1: F1.0 F1.1 B1.0 B1.1 -- gradients of stage 1 go back to rank 0.
        p[1] = {CommStep{std::move(receives), 0}, CommStep{{}, 1}, CommStep{{}, 2},
                CommStep{{P2POp{true, false, 0, 1, 0, 0}}, 3}, CommStep{{P2POp{true, false, 0, 1, 1, 0}}, -1}};
        return p;
    };
    // rank 0: F0.0 F0.1 B0.0 B0.1 with the generic sends and gradient receives.
    const std::vector<CommStep> rank0 = {CommStep{{}, 0}, CommStep{{send0}, 1},
                                         CommStep{{send1, P2POp{false, false, 0, 1, 0, 1}}, 2},
                                         CommStep{{P2POp{false, false, 0, 1, 1, 1}}, 3}};
    SECTION("consistent") { CHECK(pp::check_comm_program(s, program_with({recv0, recv1}, rank0)).empty()); }
    SECTION("receives in the other order: message 1 would carry the wrong tensor") {
        const auto v = pp::check_comm_program(s, program_with({recv1, recv0}, rank0));
        REQUIRE(v.size() == 1);
        CHECK(v[0].kind == pp::ViolationKind::CommMismatch);
        CHECK(v[0].message.find("message 1 from rank 0 to rank 1") != std::string::npos);
    }
    SECTION("a missing receive") {
        const auto v = pp::check_comm_program(s, program_with({recv0}, rank0));
        CHECK(has_kind(v, pp::ViolationKind::CommMissing));  // F1.1 has no input
        CHECK(has_kind(v, pp::ViolationKind::CommMismatch));  // A0.1 is sent but never received
    }
    SECTION("a receive from the wrong rank") {
        P2POp wrong = recv1;
        wrong.peer = 1;
        CHECK(has_kind(pp::check_comm_program(s, program_with({recv0, wrong}, rank0)), pp::ViolationKind::CommMismatch));
    }
    SECTION("a send before the tensor exists") {
        std::vector<CommStep> early = rank0;
        early[0].batch = {send0};
        early[1].batch = {};
        const auto v = pp::check_comm_program(s, program_with({recv0, recv1}, early));
        REQUIRE(!v.empty());
        CHECK(v[0].kind == pp::ViolationKind::CommMismatch);
        CHECK(v[0].message.find("not been computed") != std::string::npos);
    }
    SECTION("steps that skip a slot") {
        std::vector<CommStep> skipping = rank0;
        skipping.erase(skipping.begin() + 1);
        CHECK(has_kind(pp::check_comm_program(s, program_with({recv0, recv1}, skipping)), pp::ViolationKind::CommMismatch));
    }
}

// ------------------------------------------------------------------------------------------------
// CLI

#include "cli_runner.hpp"

TEST_CASE("simulate and show take --comm-model and name the model they used", "[batched]") {
    // Issue 6's numbers again, through the CLI: worst idle 3.75 under dataflow, 4.25 under batched.
    const std::string args = "dualpipe -P 8 -M 20 --costs F=1,I=1,W=1,FB=1.75";
    const auto flow = pp::test::run_cli("simulate " + args);
    REQUIRE(flow.exit_code == 0);
    CHECK(flow.out.find("timing model: dataflow") != std::string::npos);
    CHECK(flow.out.find("bubble (largest idle) 3.75 ") != std::string::npos);
    const auto blocking = pp::test::run_cli("simulate " + args + " --comm-model batched");
    INFO(blocking.err);
    REQUIRE(blocking.exit_code == 0);
    CHECK(blocking.out.find("timing model: batched (reference comm order)") != std::string::npos);
    CHECK(blocking.out.find("bubble (largest idle) 4.25 ") != std::string::npos);
    const auto json = pp::test::run_cli("simulate " + args + " --comm-model batched --json");
    REQUIRE(json.exit_code == 0);
    CHECK(json.out.find("\"timing_model\": \"batched\"") != std::string::npos);
    // --ops lists each slot with the batch committed before it: dualpipe.md's example, rank 1 of P=4. Its
    // first batch {rA0.0<0} completes at 1, when rank 0 posts the send after F0.0 (0-1).
    const auto ops = pp::test::run_cli("simulate dualpipe -P 4 -M 8 --comm-model batched --ops");
    REQUIRE(ops.exit_code == 0);
    CHECK(ops.out.find("rank 1 1F0 1 2 after {rA0.0<0}\n") != std::string::npos);
    CHECK(ops.out.find("rank 1 2F0@1 2 3 after {sA1.0>2,rA0.1<0,rA1r.0<2}\n") != std::string::npos);
    const auto shown = pp::test::run_cli("show " + args + " --comm-model batched");
    REQUIRE(shown.exit_code == 0);
    CHECK(shown.out.find("timing model: batched (reference comm order)") != std::string::npos);
    // A schedule without a reference program is timed by the generic rule, and says so.
    const auto generic = pp::test::run_cli("simulate 1f1b -P 4 -M 8 --comm-model batched");
    REQUIRE(generic.exit_code == 0);
    CHECK(generic.out.find("timing model: batched (generic rule)") != std::string::npos);
    CHECK(pp::test::run_cli("simulate 1f1b -P 4 -M 8 --comm-model nccl").exit_code == 2);
}
