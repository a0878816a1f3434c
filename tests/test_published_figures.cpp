// Published figures reproduced from the same inputs: DeepSeek's DualPipe README table (bubble, parameter
// and activation columns), the cut-in-half identity of DualPipeV, and the Zero Bubble paper's ICLR
// bubble-rate table. Expected values are the references' (/work/shared/reference/dualpipe.md section a and
// "Bubble sanity check", landscape.md section 1.7) or closed forms evaluated here by hand -- never output
// of the code under test. Rows go through compare_schedule, the function `pipeproof compare` prints.
#include "schedules/families.hpp"
#include "verifier/batched.hpp"
#include "verifier/compare.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace {

using pp::CommModel;
using pp::CompareRow;
using pp::Rational;
using pp::Schedule;

pp::GenerateParams params(int P, int M, std::optional<int> V = {}) { return {P, M, V}; }

pp::Costs costs(Rational F, Rational I, Rational W, std::optional<Rational> FB = {}, Rational comm = 0) {
    pp::Costs c;
    c.base.F = F;
    c.base.I = I;
    c.base.W = W;
    c.base.FB = FB;
    c.comm = comm;
    return c;
}

CompareRow row(const Schedule& s, const pp::Costs& c, CommModel model = CommModel::Dataflow) {
    pp::CompareOptions o;
    o.comm_model = model;
    return pp::compare_schedule(s, c, o);
}

Rational max_of(const std::vector<Rational>& v) { return *std::max_element(v.begin(), v.end()); }

// The README's DualPipe bubble, (PP/2 - 1)(F&B + B - 3W), with B the full backward = I + W.
Rational readme_dualpipe_bubble(int PP, Rational F, Rational I, Rational W, Rational FB) {
    (void)F;
    return Rational(PP / 2 - 1) * (FB + (I + W) - Rational(3) * W);
}

// A non-negative rate in units of 1e-4, rounded half up, as efficiency.py's "%6.4f" prints it.
std::int64_t four_digits(const Rational& rate) {
    return ((20000 * rate.numerator() + rate.denominator()) / (2 * rate.denominator())).to_int64();
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// DualPipe README, "Pipeline Bubbles and Memory Usage Comparison (based on the same number of PP stages)"

TEST_CASE("README bubble column: DualPipe measured against (PP/2-1)(F&B+B-3W), side by side", "[figures]") {
    // Measured = the worst rank's idle (makespan - busy), under both timing models, zero latency.
    // Where it is exact and where not: dualpipe.md "Bubble sanity check" and issue 6 (blocking = batched).
    struct Case {
        const char* what;
        int M;
        Rational F, I, W, FB;
        Rational dataflow, batched;  // measured worst idle, from the references
    };
    const Case cases[] = {
        // B - W = F and FB >= 2F: the formula holds.
        {"F=1 B=2 W=1 FB=3 (the README figure)", 20, 1, 1, 1, 3, 6, 6},
        {"F=1 B=2 W=1 FB=2.5", 20, 1, 1, 1, Rational(5, 2), Rational(9, 2), Rational(9, 2)},
        {"F=1 B=2 W=1 FB=2", 20, 1, 1, 1, 2, 3, 3},
        // B - W != F: the formula overestimates.
        {"F=1 I=1.5 W=0.5 (B=2) FB=2", 16, 1, Rational(3, 2), Rational(1, 2), 2, Rational(13, 2), Rational(13, 2)},
        // Strong overlap: the formula underestimates, and the two timing models differ.
        {"F=I=W=1 FB=1.5", 20, 1, 1, 1, Rational(3, 2), Rational(9, 2), Rational(11, 2)},
        {"F=I=W=1 FB=1.75", 20, 1, 1, 1, Rational(7, 4), Rational(15, 4), Rational(17, 4)},
    };
    const int PP = 8;
    for (const Case& k : cases) {
        const Rational formula = readme_dualpipe_bubble(PP, k.F, k.I, k.W, k.FB);
        const pp::Costs c = costs(k.F, k.I, k.W, k.FB);
        // DualPipe: PP = P ranks; DualPipeV: PP = 2P stages on P ranks, the same figures (dualpipe.md).
        for (const Schedule& s : {pp::generate_dualpipe(params(PP, k.M)), pp::generate_dualpipev(params(PP / 2, k.M / 2))}) {
            const CompareRow flow = row(s, c, CommModel::Dataflow), blocking = row(s, c, CommModel::Batched);
            INFO(s.source << ", " << k.what << ": formula " << pp::format_rational(formula) << ", measured dataflow "
                          << pp::format_rational(flow.worst_idle) << ", batched " << pp::format_rational(blocking.worst_idle));
            CHECK(flow.worst_idle == k.dataflow);
            CHECK(blocking.worst_idle == k.batched);
            CHECK(blocking.attached_comm_program);
        }
    }
    // The exact and inexact cases, stated against the formula itself.
    CHECK(readme_dualpipe_bubble(PP, 1, 1, 1, 3) == Rational(6));
    CHECK(readme_dualpipe_bubble(PP, 1, 1, 1, Rational(5, 2)) == Rational(9, 2));
    CHECK(readme_dualpipe_bubble(PP, 1, 1, 1, 2) == Rational(3));
    CHECK(readme_dualpipe_bubble(PP, 1, Rational(3, 2), Rational(1, 2), 2) == Rational(15, 2));  // measured 6.5
    CHECK(readme_dualpipe_bubble(PP, 1, 1, 1, Rational(3, 2)) == Rational(3, 2));              // measured 4.5 / 5.5
}

TEST_CASE("README bubble column: 1F1B (PP-1)(F+B) and ZB1P (PP-1)(F+B-2W) on every rank", "[figures]") {
    // B = full backward = I + W. 1F1B runs B unsplit; ZB1P is the Zero Bubble paper's 1p schedule (ZB-H1;
    // PyTorch's zb1p with one stage per rank is the same order). Every rank is busy M(F+B), so every rank
    // idles the same.
    struct Cost { Rational F, I, W; };
    for (const Cost& k : {Cost{1, 1, 1}, Cost{2, 3, 1}, Cost{1, Rational(3, 2), Rational(1, 2)}})
        for (int PP : {2, 4, 8})
            for (int M : {PP, 2 * PP, 3 * PP}) {
                pp::Costs unsplit;
                unsplit.base.F = k.F;
                unsplit.base.B = k.I + k.W;
                const Rational B = k.I + k.W;
                const CompareRow one = row(pp::generate_1f1b(params(PP, M)), unsplit);
                const CompareRow zb = row(pp::generate_zb_h1(params(PP, M)), costs(k.F, k.I, k.W));
                const CompareRow zb1p = row(pp::generate_zb1p(params(PP, M, 1)), costs(k.F, k.I, k.W));
                INFO("PP=" << PP << " M=" << M << " F=" << k.F << " I=" << k.I << " W=" << k.W);
                for (int r = 0; r < PP; ++r) {
                    CHECK(one.idle_per_rank[r] == Rational(PP - 1) * (k.F + B));
                    CHECK(zb.idle_per_rank[r] == Rational(PP - 1) * (k.F + B - Rational(2) * k.W));
                    CHECK(zb1p.idle_per_rank[r] == zb.idle_per_rank[r]);
                }
            }
}

TEST_CASE("README parameter and activation columns, and #devices", "[figures]") {
    // | Method    | Parameter Per Device | Activation Per Device | #Devices |
    // | 1F1B      | 1x                   | PP                    | PP       |
    // | ZB1P      | 1x                   | PP                    | PP       |
    // | DualPipe  | 2x                   | PP+1                  | PP       |
    // | DualPipeV | 2x                   | PP+1                  | PP/2     |
    // "1x" is one PP stage's weights (the model cut into PP blocks); "2x" is two of them, relative to 1F1B
    // at the same PP. Activations in units of one stage's stash for one micro-batch; for 1F1B and ZB1P the
    // column is the fullest device (rank 0), DualPipe reaches PP+1 on every rank (dualpipe.md section e).
    const pp::Costs c = costs(1, 1, 1);
    for (int PP : {2, 4, 6, 8, 12, 16})
        for (int M : {2 * PP, 3 * PP, 4 * PP}) {
            INFO("PP=" << PP << " M=" << M);
            const CompareRow one = row(pp::generate_1f1b(params(PP, M)), c);
            const CompareRow zb = row(pp::generate_zb_h1(params(PP, M)), c);
            const CompareRow dual = row(pp::generate_dualpipe(params(PP, M)), c);
            const CompareRow v = row(pp::generate_dualpipev(params(PP / 2, M)), c);
            // #Devices
            CHECK(one.ranks == PP);
            CHECK(zb.ranks == PP);
            CHECK(dual.ranks == PP);
            CHECK(v.ranks == PP / 2);
            // Parameters: PP blocks in every layout; blocks per device.
            for (const CompareRow* r : {&one, &zb, &dual, &v}) CHECK(r->blocks == PP);
            for (int b : one.blocks_per_rank) CHECK(b == 1);
            for (int b : zb.blocks_per_rank) CHECK(b == 1);
            for (int b : dual.blocks_per_rank) CHECK(b == 2);
            for (int b : v.blocks_per_rank) CHECK(b == 2);
            // DualPipe holds every block twice (ranks s and PP-1-s); DualPipeV once, on half the devices.
            for (int copies : dual.copies_per_block) CHECK(copies == 2);
            for (int copies : v.copies_per_block) CHECK(copies == 1);
            for (int copies : one.copies_per_block) CHECK(copies == 1);
            // Activations.
            CHECK(max_of(one.peak_activations) == Rational(PP));
            CHECK(max_of(zb.peak_activations) == Rational(PP));
            for (const Rational& a : dual.peak_activations) CHECK(a == Rational(PP + 1));
            for (const Rational& a : v.peak_activations) CHECK(a == Rational(PP + 1));
        }
}

TEST_CASE("DualPipeV(P, M) times like the first half of DualPipe(2P, 2M) under batched comm too", "[figures]") {
    // dualpipe.md: "DualPipeV P=4 gives the same numbers as DualPipe P=8" (blocking model). The order and
    // the dataflow timing identities are in test_schedules_dualpipe.cpp, the batches in test_batched.cpp.
    // With zero latency the transfers across DualPipe's middle are posted by mirror-image ranks at the
    // same moment, so they never delay anything; in V they are local.
    for (const pp::Costs& c : {costs(1, 1, 1, Rational(3)), costs(1, 1, 1, Rational(3, 2)), costs(1, 1, 1, Rational(7, 4)),
                               costs(1, Rational(3, 2), Rational(1, 2), Rational(2))})
        for (int P = 1; P <= 5; ++P)
            for (int M : {2 * P, 2 * P + 1, 3 * P + 2}) {
                const CompareRow v = row(pp::generate_dualpipev(params(P, M)), c, CommModel::Batched);
                const CompareRow d = row(pp::generate_dualpipe(params(2 * P, 2 * M)), c, CommModel::Batched);
                INFO("P=" << P << " M=" << M << " costs " << pp::format_costs(c));
                CHECK(v.makespan == d.makespan);
                for (int r = 0; r < P; ++r) CHECK(v.idle_per_rank[r] == d.idle_per_rank[r]);
            }
}

// ------------------------------------------------------------------------------------------------
// Zero Bubble (ICLR 2024), Sec. 5.3 bubble rates, as efficiency.py computes them (landscape.md section 1.7)

TEST_CASE("ICLR bubble-rate table: 1F1B, ZB-H1 and ZB-H2, all 12 rows to 4 digits", "[figures]") {
    // Definition used (efficiency.py, the authors' scheduler; "theoretical" rates per issue #25): bubble rate
    // = (T - M(F+B+W)) / T, T = the largest per-stage span (end of a stage's last op - start of its first),
    // the P2P latency c paid on every dependency between stages. The paper's B is our I; 1F1B runs the
    // backward unsplit (B = I + W). compare_schedule's zb_bubble_rate is this with W = M(F+I+W).
    struct Row {
        const char* model;
        int p, m;
        long F, I, W, c;
        std::int64_t one_f_one_b, h1, h2;  // x 1e-4
    };
    const Row rows[] = {
        {"1.5B", 8, 24, 18522, 18086, 9337, 601, 2431, 1585, 1083},
        {"1.5B", 8, 32, 18513, 18086, 9331, 626, 1985, 1242, 837},
        {"1.5B", 8, 64, 18546, 18097, 9321, 762, 1240, 674, 444},
        {"6.2B", 8, 24, 29718, 29444, 19927, 527, 2347, 1323, 698},
        {"6.2B", 8, 32, 29802, 29428, 19530, 577, 1898, 1045, 559},
        {"6.2B", 8, 64, 29935, 29621, 19388, 535, 1091, 554, 294},
        {"14.6B", 16, 48, 11347, 11248, 8132, 377, 2552, 1397, 672},
        {"14.6B", 16, 64, 11307, 11254, 8101, 379, 2082, 1088, 516},
        {"14.6B", 16, 128, 11325, 11308, 8109, 378, 1251, 576, 266},
        {"28.3B", 32, 96, 10419, 10207, 7715, 408, 2646, 1421, 641},
        {"28.3B", 32, 128, 10408, 10204, 7703, 408, 2168, 1106, 490},
        {"28.3B", 32, 256, 10402, 10248, 7698, 460, 1352, 594, 257},
    };
    for (const Row& x : rows) {
        INFO(x.model << " p=" << x.p << " m=" << x.m);
        pp::Costs unsplit;
        unsplit.base.F = x.F;
        unsplit.base.B = x.I + x.W;
        unsplit.comm = x.c;
        const pp::Costs split = costs(x.F, x.I, x.W, std::nullopt, x.c);
        const CompareRow one = row(pp::generate_1f1b(params(x.p, x.m)), unsplit);
        const CompareRow h1 = row(pp::generate_zb_h1(params(x.p, x.m)), split);
        const CompareRow h2 = row(pp::generate_zb_h2(params(x.p, x.m)), split);
        const Rational work = Rational(x.m * (x.F + x.I + x.W));
        for (const CompareRow* r : {&one, &h1, &h2}) {
            CHECK(r->zb_work == work);
            CHECK(r->zb_bubble_rate == (r->zb_span - work) / r->zb_span);
        }
        CHECK(four_digits(one.zb_bubble_rate) == x.one_f_one_b);
        CHECK(four_digits(h1.zb_bubble_rate) == x.h1);
        CHECK(four_digits(h2.zb_bubble_rate) == x.h2);
    }
}
