// Issue 6's generator grid, the part test_schedules_*.cpp samples: every family verifies clean for
// P in 1..16 (as allowed), EVERY M from the family's minimum to 4P, V in {1,2,3,4} where allowed (those
// files take all M only up to P = 8 and a phase-change sample beyond). And the batched model over the same
// grid: DualPipe's and DualPipeV's reference programs, and the generic rule on the families it can run.
//
// Where the generic rule cannot run (documented by hand-derived cases in test_batched.cpp): ZB-H2 and
// DualPipe/DualPipeV at small P deadlock, interleaved 1F1B / looped BFS / ZB1P with V >= 2 deadlock or
// mismatch (the loop map sends from rank P-1 back to rank 0, so blocking sends form a ring), and ZBV's
// V map mixes activations and gradients on one channel in an order the receiver does not expect.
#include "schedules/families.hpp"
#include "verifier/batched.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

namespace {

void require_clean(const pp::Schedule& s) {
    const pp::VerifyReport report = pp::verify(s);
    if (!report.ok()) {
        INFO(s.source << ": " << report.violations.front().message);
        REQUIRE(report.ok());
    }
}

void require_runs_batched(const pp::Schedule& s, const pp::CommProgram& program) {
    const auto violations = pp::check_comm_program(s, program);
    if (!violations.empty()) {
        INFO(s.source << ": " << violations.front().message);
        REQUIRE(violations.empty());
    }
}

bool interleaved_rounds_ok(int P, int M) { return M % std::max(1, M / P) == 0; }  // PyTorch's rounds rule

}  // namespace

// Split by family group so that ctest (one entry per test case) spreads the grid over the cores.
TEST_CASE("generator grid: single-stage families verify clean for P 9..16 and every M up to 4P", "[batched][grid]") {
    // P <= 8 with every M is in test_schedules_pytorch.cpp / test_schedules_dualpipe.cpp.
    int count = 0;
    for (int P = 9; P <= 16; ++P)
        for (int M = 1; M <= 4 * P; ++M) {
            require_clean(pp::generate_gpipe({P, M, std::nullopt})), ++count;
            if (M >= P) require_clean(pp::generate_1f1b({P, M, std::nullopt})), ++count;
            if (M >= P) require_clean(pp::generate_zb_h1({P, M, std::nullopt})), ++count;
            if (M >= 2 * P) require_clean(pp::generate_zb_h2({P, M, std::nullopt})), ++count;
        }
    CHECK(count > 1000);
}

// One V family over P 9..16, every M up to 4P, V 1..4 (M the reference rejects skipped).
static int v_family_grid(pp::Schedule (*generate)(const pp::GenerateParams&), bool rounds_rule) {
    int count = 0;
    for (int P = 9; P <= 16; ++P)
        for (int M = 1; M <= 4 * P; ++M) {
            if (rounds_rule && !interleaved_rounds_ok(P, M)) continue;
            for (int V = 1; V <= 4; ++V) require_clean(generate({P, M, V})), ++count;
        }
    return count;
}

TEST_CASE("generator grid: looped-bfs and zbv verify clean for P 9..16, every M up to 4P", "[batched][grid]") {
    CHECK(v_family_grid(pp::generate_looped_bfs, false) > 1000);
    int count = 0;
    for (int P = 9; P <= 16; ++P)
        for (int M = 1; M <= 4 * P; ++M) require_clean(pp::generate_zbv({P, M, std::nullopt})), ++count;  // V = 2 only
    CHECK(count > 300);
}

TEST_CASE("generator grid: interleaved-1f1b verifies clean for P 9..16, every M up to 4P, V 1..4", "[batched][grid]") {
    CHECK(v_family_grid(pp::generate_interleaved_1f1b, true) > 500);
}

TEST_CASE("generator grid: zb1p verifies clean for P 9..16, every M up to 4P, V 1..4", "[batched][grid]") {
    CHECK(v_family_grid(pp::generate_zb1p, true) > 500);
}

TEST_CASE("generator grid: two-stage-per-rank families verify clean for P 9..16, every M up to 4P", "[batched][grid]") {
    int count = 0;
    for (int P = 9; P <= 16; ++P) {
        for (int M = 2 * P; M <= 4 * P; ++M) require_clean(pp::generate_dualpipev({P, M, std::nullopt})), ++count;
        if (P % 2 != 0) continue;  // DualPipe and Chimera need P even
        for (int M = 2 * P; M <= 4 * P; M += 2) require_clean(pp::generate_dualpipe({P, M, std::nullopt})), ++count;
        for (int M = P; M <= 4 * P; M += P) require_clean(pp::generate_chimera({P, M, std::nullopt})), ++count;
    }
    CHECK(count > 150);
}

TEST_CASE("generator grid: the batched model runs DualPipe's and DualPipeV's reference programs", "[batched][grid]") {
    for (int P = 1; P <= 16; ++P) {
        for (int M = 2 * P; M <= 4 * P; ++M) {
            const pp::Schedule v = pp::generate_dualpipev({P, M, std::nullopt});
            require_runs_batched(v, *v.comm_program);
        }
        if (P % 2 == 0)
            for (int M = 2 * P; M <= 4 * P; M += 2) {
                const pp::Schedule d = pp::generate_dualpipe({P, M, std::nullopt});
                require_runs_batched(d, *d.comm_program);
            }
    }
}

TEST_CASE("generator grid: the generic rule runs GPipe, 1F1B, ZB-H1, Chimera and the V=1 interleaved families",
          "[batched][grid]") {
    // One stage per rank and adjacent ranks only: every channel carries one kind of message in the order
    // the receiver consumes it, and each blocking send meets its receive without a cycle of waits.
    // Every M up to P = 8; beyond, the values where the generators change phase (kept near a second).
    auto microbatches = [](int P) {
        std::vector<int> ms;
        if (P <= 8)
            for (int M = 1; M <= 4 * P; ++M) ms.push_back(M);
        else
            ms = {1, 2, P - 1, P, P + 1, 2 * P - 1, 2 * P, 2 * P + 1, 3 * P, 4 * P - 1, 4 * P};
        return ms;
    };
    for (int P = 1; P <= 16; ++P)
        for (int M : microbatches(P)) {
            auto run = [](const pp::Schedule& s) { require_runs_batched(s, pp::generic_comm_program(s)); };
            run(pp::generate_gpipe({P, M, std::nullopt}));
            if (M >= P) run(pp::generate_1f1b({P, M, std::nullopt}));
            if (M >= P) run(pp::generate_zb_h1({P, M, std::nullopt}));
            run(pp::generate_looped_bfs({P, M, 1}));
            if (interleaved_rounds_ok(P, M)) {
                run(pp::generate_interleaved_1f1b({P, M, 1}));
                run(pp::generate_zb1p({P, M, 1}));
            }
            if (P % 2 == 0 && M % P == 0) run(pp::generate_chimera({P, M, std::nullopt}));
        }
}
