// The PyTorch-family and Zero Bubble handcrafted generators: order identity with the reference files and
// notes, clean verification over a parameter grid, timing against published closed forms and bubble
// rates, and the references' precondition messages. Every expected order or number below is taken from
// shared/reference (pytorch-schedules.md, landscape.md), shared/conformance, or derived by hand from the
// rules quoted there -- never from running the generators.
#include "formats/torch_csv.hpp"
#include "schedules/families.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace pp;

namespace {

using Row = std::vector<std::string>;

Row split_cells(const std::string& line) {
    Row cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");  // getline drops a trailing empty cell
    return cells;
}

// A rank's cells as PyTorch writes them: idle cells (Schedule::gaps) as empty strings.
Row cells_of(const Schedule& s, int rank) {
    Row cells;
    const auto& slots = s.ranks[rank];
    const bool gaps = !s.gaps.empty();
    for (size_t k = 0; k < slots.size(); ++k) {
        if (gaps) cells.insert(cells.end(), s.gaps[rank][k], "");
        cells.push_back(format_slot(slots[k]));
    }
    if (gaps) cells.insert(cells.end(), s.gaps[rank].back(), "");
    return cells;
}

// The 2024 letters (B = input-grad) to ours (I); F and W keep their letters.
std::string token_from_2024(std::string token) {
    size_t letter = token.find_first_not_of("0123456789");
    if (letter != std::string::npos && token[letter] == 'B') token[letter] = 'I';
    return token;
}

std::vector<Row> read_csv_2024(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::vector<Row> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        Row row = split_cells(line);
        for (auto& cell : row) cell = token_from_2024(cell);
        rows.push_back(row);
    }
    return rows;
}

GenerateParams params(int P, int M, std::optional<int> V = {}) { return GenerateParams{P, M, V}; }

void require_rows(const Schedule& s, const std::vector<std::string>& expected) {
    REQUIRE(static_cast<int>(s.ranks.size()) == static_cast<int>(expected.size()));
    for (size_t r = 0; r < expected.size(); ++r) {
        INFO("rank " << r);
        CHECK(cells_of(s, static_cast<int>(r)) == split_cells(expected[r]));
    }
}

// Zero Bubble's per-stage span: max over ranks of (end of the last op - start of the first op).
Rational max_span(const Simulation& sim) {
    Ticks span = 0;
    for (const auto& t : sim.ranks) span = std::max(span, t.last_end - t.first_start);
    return sim.scale.to_units(span);
}

Costs costs_of(Rational F, Rational I, Rational W, Rational comm = 0) {
    Costs c;
    c.base.F = F;
    c.base.I = I;
    c.base.W = W;
    c.comm = comm;
    return c;
}

Costs unsplit_costs(Rational F, Rational B) {
    Costs c;
    c.base.F = F;
    c.base.B = B;
    return c;
}

Rational makespan(const Schedule& s, const Costs& costs) {
    const Simulation sim = simulate(s, costs);
    return sim.scale.to_units(sim.makespan);
}

// A non-negative rate in units of 1e-4, rounded half up as efficiency.py's "%6.4f" prints it.
std::int64_t rate_4_digits(const Rational& rate) {
    return ((20000 * rate.numerator() + rate.denominator()) / (2 * rate.denominator())).to_int64();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Order identity

TEST_CASE("zb1p P=2 V=2 M=8 equals PyTorch's artifact cell for cell", "[schedules]") {
    // conformance/pytorch/zb1p_2rank_2stagep_compute.csv: ScheduleInterleavedZeroBubble(P=2, v=2, M=8),
    // compute_only, 2024 letters (B = our I). Empty cells are the schedule's None bubbles.
    const auto expected = read_csv_2024(std::string(PP_SHARED_DIR) + "/conformance/pytorch/zb1p_2rank_2stagep_compute.csv");
    const Schedule s = generate_zb1p(params(2, 8, 2));
    REQUIRE(s.source == "zb1p(P=2,V=2,M=8)");
    REQUIRE(expected.size() == 2);
    REQUIRE(!s.gaps.empty());
    for (int r = 0; r < 2; ++r) {
        INFO("rank " << r);
        CHECK(cells_of(s, r) == expected[r]);
    }
}

TEST_CASE("zb1p P=2 V=2 M=8 written as a 2024-letter CSV is PyTorch's artifact byte for byte", "[schedules]") {
    // Same artifact through formats/torch_csv's writer (CRLF, as Python's csv module writes; the stored
    // copy has LF line ends, which §1.3 says to accept).
    std::ifstream in(std::string(PP_SHARED_DIR) + "/conformance/pytorch/zb1p_2rank_2stagep_compute.csv",
                     std::ios::binary);
    std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string written = write_torch_csv(generate_zb1p(params(2, 8, 2)), TorchCsvFormat::ComputeOnly, TorchEra::Y2024);
    std::string lf;
    for (char ch : written)
        if (ch != '\r') lf += ch;
    CHECK(lf == expected);
}

TEST_CASE("1f1b P=4 M=8 is the executed order of pytorch-schedules.md §1.4", "[schedules]") {
    // Ranks 0..2: the main-branch IR rows of §1.4 without the REDUCE_GRAD token. Rank 3: the IR row has the
    // upstream numbering slip 3F1..3F8; the runtime executes 3F0 3B0 3F1 3B1 ... 3F7 3B7 (§2.2).
    require_rows(generate_1f1b(params(4, 8)),
                 {"0F0,0F1,0F2,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,0B5,0B6,0B7",
                  "1F0,1F1,1F2,1B0,1F3,1B1,1F4,1B2,1F5,1B3,1F6,1B4,1F7,1B5,1B6,1B7",
                  "2F0,2F1,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,2F6,2B5,2F7,2B6,2B7",
                  "3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5,3F6,3B6,3F7,3B7"});
}

TEST_CASE("zbv P=2 M=4 equals the compute_only rows of pytorch-schedules.md §1.4", "[schedules]") {
    const Schedule s = generate_zbv(params(2, 4));
    CHECK(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 1, 0});
    require_rows(s, {"0F0,0F1,0F2,3F0,3I0,3W0,3F1,3I1,3W1,0F3,0I0,0W0,3F2,3I2,3W2,0I1,0W1,3F3,3I3,3W3,0I2,0W2,0I3,0W3",
                     ",1F0,2F0,1F1,2F1,2I0,2W0,1F2,1I0,1W0,2F2,2I1,2W1,1F3,1I1,1W1,2F3,2I2,2W2,1I2,2I3,1I3,1W2,2W3,1W3"});
}

TEST_CASE("zbv with M < 2P-1 leaves holes where upstream blanks micro-batches >= M", "[schedules]") {
    // Hand-derived from §2.2 for P=2, M=1: upstream walks n = max(3, 1) = 3 micro-batches, then blanks
    // every op with micro-batch >= 1, which leaves holes and trailing empty cells.
    require_rows(generate_zbv(params(2, 1)), {"0F0,,,3F0,3I0,3W0,,,,0I0,0W0,,,,,,,",
                                              ",1F0,2F0,,,2I0,2W0,,1I0,1W0,,,,,,,,,"});
}

TEST_CASE("gpipe: all forwards, then all backwards", "[schedules]") {
    require_rows(generate_gpipe(params(3, 2)), {"0F0,0F1,0B0,0B1", "1F0,1F1,1B0,1B1", "2F0,2F1,2B0,2B1"});
    // No M >= P guard for GPipe in current main (§2.2).
    require_rows(generate_gpipe(params(3, 1)), {"0F0,0B0", "1F0,1B0", "2F0,2B0"});
}

TEST_CASE("interleaved 1f1b orders hand-derived from the §2.2 rules", "[schedules]") {
    // P=2, V=2, M=4: R=2, m=2. Rank 0: warm-up min(2+2, 8)=4, padding max(0, 4+2-4-0)=2, cool-down cells
    // "None, B". Rank 1: one leading None, warm-up 2, padding max(0, 4+0-2-1)=1.
    require_rows(generate_interleaved_1f1b(params(2, 4, 2)),
                 {"0F0,0F1,2F0,2F1,,,0F2,2B0,0F3,2B1,2F2,0B0,2F3,0B1,,2B2,,2B3,,0B2,,0B3",
                  ",1F0,1F1,,3F0,3B0,3F1,3B1,1F2,1B0,1F3,1B1,3F2,3B2,3F3,3B3,,1B2,,1B3"});
    // V=1, P=2, M=2: the last rank has no warm-up op, and upstream emits the post-warm-up padding while
    // issuing the last warm-up op -- so rank 1 gets none although the formula gives 1.
    require_rows(generate_interleaved_1f1b(params(2, 2, 1)), {"0F0,0F1,,,,0B0,,0B1", ",1F0,1B0,1F1,1B1"});
}

TEST_CASE("zb1p bubble pass: forwards wait one lock-step behind their producer, backwards never", "[schedules]") {
    // Hand-derived from §2.2 for P=2, V=2, M=1 (R=1, m=1). Before the pass: rank 0 "0F0 2F0 _ 2I0 2W0 0I0
    // 0W0" (warm-up 2, padding P-1-r = 1), rank 1 "_ 1F0 3F0 3I0 1I0 3W0 1W0" (W lag r = 1). Lock-step:
    // 2F0 waits a step for 1F0, 3F0 a step for 2F0; 2I0 goes in the same step as 3I0 (upstream only tests
    // FULL_BACKWARD, which ZB never emits).
    require_rows(generate_zb1p(params(2, 1, 2)), {"0F0,,2F0,,2I0,2W0,0I0,0W0", ",1F0,,3F0,3I0,1I0,3W0,1W0"});
}

TEST_CASE("looped bfs: forwards by ascending stage, backwards by descending stage and micro-batch", "[schedules]") {
    require_rows(generate_looped_bfs(params(2, 2, 2)),
                 {"0F0,0F1,2F0,2F1,,,2B1,2B0,0B1,0B0", ",1F0,1F1,3F0,3F1,3B1,3B0,1B1,1B0"});
}

TEST_CASE("zb-h1 and zb-h2 follow the authors' hand schedule", "[schedules]") {
    // get_hand_schedule (efficiency.py): c(P-1-r) warm-up F; per micro-batch F (while left), I, and W once
    // i >= c·r; the c·r owed W's at the end. c = 1 (H1) and c = 2 (H2).
    require_rows(generate_zb_h1(params(3, 4)),
                 {"0F0,0F1,0F2,0I0,0W0,0F3,0I1,0W1,0I2,0W2,0I3,0W3",
                  "1F0,1F1,1I0,1F2,1I1,1W0,1F3,1I2,1W1,1I3,1W2,1W3",
                  "2F0,2I0,2F1,2I1,2F2,2I2,2W0,2F3,2I3,2W1,2W2,2W3"});
    require_rows(generate_zb_h2(params(2, 4)),
                 {"0F0,0F1,0F2,0I0,0W0,0F3,0I1,0W1,0I2,0W2,0I3,0W3",
                  "1F0,1I0,1F1,1I1,1F2,1I2,1W0,1F3,1I3,1W1,1W2,1W3"});
    CHECK(generate_zb_h2(params(2, 4)).source == "zb-h2(P=2,M=4)");
}

TEST_CASE("zb1p with V=1 runs the ZB-H1 order (two references, one schedule)", "[schedules]") {
    // PyTorch's ZB1P with one stage per rank: warm-up P-1-r, F I W with a W lag of r -- ZB-H1.
    for (int P = 1; P <= 6; ++P)
        for (int M = P; M <= 3 * P; ++M) {
            if (M % std::max(1, M / P) != 0) continue;
            INFO("P=" << P << " M=" << M);
            const Schedule zb = generate_zb1p(params(P, M, 1));
            const Schedule h1 = generate_zb_h1(params(P, M));
            for (int r = 0; r < P; ++r) {
                std::vector<std::string> a, b;
                for (const auto& slot : zb.ranks[r]) a.push_back(format_slot(slot));
                for (const auto& slot : h1.ranks[r]) b.push_back(format_slot(slot));
                CHECK(a == b);
            }
        }
}

TEST_CASE("the 1F1B IR's last-rank numbering slip is what verify rejects", "[schedules]") {
    // pytorch-schedules.md §1.4: _get_pipeline_order writes 3F1 3B0 3F2 ... 3F8 3B7 for the last rank
    // (P=4, M=8). Our generator keeps the executed order; the IR row itself must not verify.
    Schedule ir = generate_1f1b(params(4, 8));
    for (Slot& slot : ir.ranks[3])
        if (slot.ops[0].kind == OpKind::F) ++slot.ops[0].microbatch;
    CHECK(format_slot(ir.ranks[3][0]) == "3F1");
    CHECK(format_slot(ir.ranks[3].back()) == "3B7");
    CHECK_FALSE(verify(ir).ok());
}

// ---------------------------------------------------------------------------------------------------------
// Every generated schedule verifies clean

namespace {

void require_clean(const Schedule& s) {
    const VerifyReport report = verify(s);
    if (!report.ok()) {
        INFO(s.source << ": " << report.violations.front().message);
        REQUIRE(report.ok());
    }
}

// M from the family's minimum to 4P + 1: every value up to P = 8, beyond that the values where the
// generators change phase (around P, 2P, 4P), to keep the grid near a second.
std::vector<int> microbatch_grid(int P, int min_m) {
    std::vector<int> ms;
    if (P <= 8) {
        for (int M = min_m; M <= 4 * P + 1; ++M) ms.push_back(M);
        return ms;
    }
    for (int M : {1, 2, P - 1, P, P + 1, 2 * P - 1, 2 * P, 2 * P + 1, 3 * P, 4 * P - 1, 4 * P, 4 * P + 1})
        if (M >= min_m && (ms.empty() || M > ms.back())) ms.push_back(M);
    if (ms.empty() || ms.front() != min_m) ms.insert(ms.begin(), min_m);
    return ms;
}

}  // namespace

TEST_CASE("single-stage generators verify clean for P 1..16", "[schedules]") {
    int count = 0;
    for (int P = 1; P <= 16; ++P) {
        for (int M : microbatch_grid(P, 1)) require_clean(generate_gpipe(params(P, M))), ++count;
        for (int M : microbatch_grid(P, P)) require_clean(generate_1f1b(params(P, M))), ++count;
        for (int M : microbatch_grid(P, P)) require_clean(generate_zb_h1(params(P, M))), ++count;
        for (int M : microbatch_grid(P, 2 * P)) require_clean(generate_zb_h2(params(P, M))), ++count;
    }
    CHECK(count > 500);
}

TEST_CASE("multi-stage generators verify clean for P 1..16, V 1..4", "[schedules]") {
    int count = 0;
    for (int P = 1; P <= 16; ++P)
        for (int M : microbatch_grid(P, 1)) {
            require_clean(generate_zbv(params(P, M))), ++count;
            const bool rounds_ok = M % std::max(1, M / P) == 0;
            for (int V = 1; V <= 4; ++V) {
                require_clean(generate_looped_bfs(params(P, M, V))), ++count;
                if (!rounds_ok) continue;
                require_clean(generate_interleaved_1f1b(params(P, M, V))), ++count;
                require_clean(generate_zb1p(params(P, M, V))), ++count;
            }
        }
    CHECK(count > 1000);
}

// ---------------------------------------------------------------------------------------------------------
// Timing against closed forms (uniform costs per op kind; no comm unless stated)

TEST_CASE("1f1b and gpipe: makespan (M+P-1)(F+B)", "[schedules]") {
    const Costs costs = unsplit_costs(2, 3);
    for (int P : {1, 2, 3, 4, 8})
        for (int M : {P, P + 1, 2 * P, 4 * P}) {
            INFO("P=" << P << " M=" << M);
            CHECK(makespan(generate_1f1b(params(P, M)), costs) == Rational((M + P - 1) * 5));
            CHECK(makespan(generate_gpipe(params(P, M)), costs) == Rational((M + P - 1) * 5));
        }
    // GPipe also below M = P.
    CHECK(makespan(generate_gpipe(params(4, 2)), costs) == Rational((2 + 4 - 1) * 5));
}

TEST_CASE("interleaved 1f1b and looped bfs: M(F+B) + (P-1)(F+B)/V with per-chunk costs", "[schedules]") {
    // Per-chunk costs f = 1, b = 2 (a stage's F = V·f). Interleaved: the Zero Bubble authors assert
    // extra time (p-1)(f+b+w) for Megatron's interleaved order, M a multiple of P (landscape.md §1.7).
    // Looped BFS: hand derivation -- for M >= P no forward or backward wave ever waits.
    const Costs costs = unsplit_costs(1, 2);
    for (int P : {2, 3, 4})
        for (int V : {2, 3})
            for (int M : {P, 2 * P, 4 * P}) {
                INFO("P=" << P << " V=" << V << " M=" << M);
                CHECK(makespan(generate_interleaved_1f1b(params(P, M, V)), costs) == Rational(V * M * 3 + (P - 1) * 3));
                CHECK(makespan(generate_looped_bfs(params(P, M + 1, V)), costs) ==
                      Rational(V * (M + 1) * 3 + (P - 1) * 3));
            }
}

TEST_CASE("zb-h1 and zb-h2 closed forms asserted by the authors' efficiency.py", "[schedules]") {
    // span - M(F+I+W):  ZB-H1, c = 0: (P-1)(F+I-W);  ZB-H2 with comm c: (P-1)(F+I+2c-2W);
    // 1F1B (B unsplit = I+W), c = 0: (P-1)(F+I+W). Span = max over ranks of last end - first start.
    struct Row { int P, M; long F, I, W, c; };
    const Row rows[] = {{8, 24, 18522, 18086, 9337, 601}, {8, 32, 18513, 18086, 9331, 626},
                        {8, 64, 18546, 18097, 9321, 762}, {4, 8, 1, 1, 1, 0}, {4, 12, 3, 4, 2, 1}};
    for (const Row& x : rows) {
        INFO("P=" << x.P << " M=" << x.M << " F=" << x.F << " I=" << x.I << " W=" << x.W << " c=" << x.c);
        const Rational work = Rational(x.M * (x.F + x.I + x.W));
        const Rational h1 = max_span(simulate(generate_zb_h1(params(x.P, x.M)), costs_of(x.F, x.I, x.W)));
        CHECK(h1 - work == Rational((x.P - 1) * (x.F + x.I - x.W)));
        const Rational h2 = max_span(simulate(generate_zb_h2(params(x.P, x.M)), costs_of(x.F, x.I, x.W, x.c)));
        CHECK(h2 - work == Rational((x.P - 1) * (x.F + x.I + 2 * x.c - 2 * x.W)));
        const Rational one = max_span(simulate(generate_1f1b(params(x.P, x.M)), unsplit_costs(x.F, x.I + x.W)));
        CHECK(one - work == Rational((x.P - 1) * (x.F + x.I + x.W)));
    }
}

TEST_CASE("ICLR bubble-rate table, 1.5B model rows, reproduced to 4 digits", "[schedules]") {
    // landscape.md §1.7 (efficiency.py, iclr_bubble_rates): P = 8; F, B (= our I), W, c as profiled.
    // Bubble rate = (T - M(F+I+W)) / T with T = the largest per-stage span (last end - first start of a
    // rank); the p2p latency c is paid on every dependency between ranks. 1F1B runs with B unsplit = I+W.
    struct Row { int M; long F, I, W, c; std::int64_t one_f_one_b, h1, h2; };
    const Row rows[] = {{24, 18522, 18086, 9337, 601, 2431, 1585, 1083},
                        {32, 18513, 18086, 9331, 626, 1985, 1242, 837},
                        {64, 18546, 18097, 9321, 762, 1240, 674, 444}};
    const int P = 8;
    for (const Row& x : rows) {
        INFO("M=" << x.M);
        const Rational work = Rational(x.M * (x.F + x.I + x.W));
        auto rate = [&](const Schedule& s, const Costs& costs) {
            const Rational T = max_span(simulate(s, costs));
            return rate_4_digits((T - work) / T);
        };
        Costs one = unsplit_costs(x.F, x.I + x.W);
        one.comm = x.c;
        CHECK(rate(generate_1f1b(params(P, x.M)), one) == x.one_f_one_b);
        CHECK(rate(generate_zb_h1(params(P, x.M)), costs_of(x.F, x.I, x.W, x.c)) == x.h1);
        CHECK(rate(generate_zb_h2(params(P, x.M)), costs_of(x.F, x.I, x.W, x.c)) == x.h2);
    }
}

TEST_CASE("zbv: zero bubble per rank when F = I = W (the paper's claim, M >= 2P-1)", "[schedules]") {
    // Zero Bubble arXiv v2 §6 / PyTorch's docstring: ZB-V has no bubble when F = I = W. Per-rank span =
    // the rank's own work, 2 stages x M x (F+I+W) = 6M; ranks start r forward-times apart.
    const Costs unit = costs_of(1, 1, 1);
    for (int P : {1, 2, 3, 4, 8})
        for (int M : {2 * P - 1, 2 * P, 3 * P + 1}) {
            INFO("P=" << P << " M=" << M);
            CHECK(max_span(simulate(generate_zbv(params(P, M)), unit)) == Rational(6 * M));
        }
}

TEST_CASE("activation peaks follow the memory formulas in the generators' comments", "[schedules]") {
    // One unit per (stage, micro-batch) stash, allocated at F, freed at W (or B). Hand derivations:
    // GPipe M; 1F1B min(M, P-r); ZB-H1 P and ZB-H2 2P-1 on every rank (the W lag keeps stashes alive);
    // ZB-V 2P chunk stashes on every rank; interleaved 1F1B min((V-1)m + 2(P-1-r) + 1, MV);
    // ZB1P min((V-1)m + P, MV); looped BFS MV. Here m = M / max(1, floor(M/P)).
    const int P = 4;
    for (int M : {4, 6, 8, 12}) {
        const int m = M / std::max(1, M / P);
        for (int r = 0; r < P; ++r) {
            INFO("M=" << M << " r=" << r);
            auto peak = [&](const Schedule& s) { return peak_activations(s, {})[r]; };
            CHECK(peak(generate_gpipe(params(P, M))) == M);
            CHECK(peak(generate_1f1b(params(P, M))) == std::min(M, P - r));
            CHECK(peak(generate_zb_h1(params(P, M))) == P);
            if (M >= 2 * P) CHECK(peak(generate_zb_h2(params(P, M))) == 2 * P - 1);
            if (M >= 2 * P - 1) CHECK(peak(generate_zbv(params(P, M))) == 2 * P);
            for (int V : {2, 3}) {
                CHECK(peak(generate_interleaved_1f1b(params(P, M, V))) == std::min((V - 1) * m + 2 * (P - 1 - r) + 1, M * V));
                CHECK(peak(generate_zb1p(params(P, M, V))) == std::min((V - 1) * m + P, M * V));
                CHECK(peak(generate_looped_bfs(params(P, M, V))) == M * V);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Preconditions: the references' reasons, word for word

TEST_CASE("preconditions throw GenerateError with the reference's message", "[schedules]") {
    using Catch::Message;
    REQUIRE_THROWS_MATCHES(generate_1f1b(params(4, 3)), GenerateError,
                           Message("Number of microbatches (3) must be greater than or equal to the number of stages (4)."));
    REQUIRE_THROWS_MATCHES(
        generate_interleaved_1f1b(params(4, 9, 2)), GenerateError,
        Message("Interleaved 1F1B requires the number of microbatches to be a multiple of the number of rounds (2), "
                "but got 9."));
    REQUIRE_THROWS_MATCHES(
        generate_zb1p(params(4, 14, 2)), GenerateError,
        Message("Zero bubble requires the number of microbatches to be a multiple of the number of rounds (3), "
                "but got 14."));
    REQUIRE_THROWS_MATCHES(generate_zbv(params(4, 8, 3)), GenerateError,
                           Message("ZBV requires exactly 2 stages per rank, but got 3."));
    REQUIRE_THROWS_MATCHES(generate_zbv(params(4, 8, 1)), GenerateError,
                           Message("ZBV requires exactly 2 stages per rank, but got 1."));
    REQUIRE_THROWS_AS(generate_zb_h1(params(4, 3)), GenerateError);
    REQUIRE_THROWS_AS(generate_zb_h2(params(4, 7)), GenerateError);
    REQUIRE_NOTHROW(generate_zb_h2(params(4, 8)));
    REQUIRE_THROWS_AS(generate_gpipe(params(0, 4)), GenerateError);
    REQUIRE_THROWS_AS(generate_looped_bfs(params(2, 0, 2)), GenerateError);
    REQUIRE_THROWS_AS(generate_gpipe(params(2, 4, 2)), GenerateError);  // single stage per rank
}

TEST_CASE("interleaved rounds rule: P=4, V=2 rejects exactly M = 9, 11, 13, 14 up to 16", "[schedules]") {
    // pytorch-schedules.md §2.2: every M < 2P and every multiple of P is accepted.
    for (int M = 1; M <= 16; ++M) {
        INFO("M=" << M);
        const bool rejected = M == 9 || M == 11 || M == 13 || M == 14;
        if (rejected) {
            CHECK_THROWS_AS(generate_interleaved_1f1b(params(4, M, 2)), GenerateError);
            CHECK_THROWS_AS(generate_zb1p(params(4, M, 2)), GenerateError);
        } else {
            CHECK_NOTHROW(generate_interleaved_1f1b(params(4, M, 2)));
            CHECK_NOTHROW(generate_zb1p(params(4, M, 2)));
        }
    }
}
