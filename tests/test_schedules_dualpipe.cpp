// DualPipe, DualPipeV and Chimera generators. Every expected value comes from the reference notes
// (/work/shared/reference/dualpipe.md, pytorch-schedules.md, the PyTorch conformance CSV) or from a hand
// derivation written out next to the check -- never from running the generators.
#include "formats/torch_csv.hpp"
#include "schedules/families.hpp"
#include "proofs/maxplus.hpp"
#include "verifier/memory.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using pp::Op;
using pp::OpKind;
using pp::Rational;
using pp::Schedule;
using pp::Slot;

Schedule dualpipe(int P, int M) { return pp::generate_dualpipe({P, M, std::nullopt}); }
Schedule dualpipev(int P, int M) { return pp::generate_dualpipev({P, M, std::nullopt}); }
Schedule chimera(int P, int M) { return pp::generate_chimera({P, M, std::nullopt}); }

// ---- dualpipe.md notation: F, B (= our I), W, BW (= our B); "r" marks the reverse pipeline; pairs
// are "(F+BW)"; "|k|" marks the start of step k and is not an op.
std::string dualpipe_md_op(const Op& op) {
    std::string kind;
    switch (op.kind) {
        case OpKind::F: kind = "F"; break;
        case OpKind::I: kind = "B"; break;
        case OpKind::W: kind = "W"; break;
        case OpKind::B: kind = "BW"; break;
    }
    return kind + std::to_string(op.stage) + (op.pipeline == 1 ? "r" : "") + "." + std::to_string(op.microbatch);
}

std::string dualpipe_md_slot(const Slot& slot) {
    if (!slot.is_pair()) return dualpipe_md_op(slot.ops[0]);
    return "(" + dualpipe_md_op(slot.ops[0]) + "+" + dualpipe_md_op(slot.ops[1]) + ")";
}

std::vector<std::string> rendered(const std::vector<Slot>& slots) {
    std::vector<std::string> out;
    for (const Slot& s : slots) out.push_back(dualpipe_md_slot(s));
    return out;
}

// Tokens of one trace line "rank 0: |1| F0.0 F0.1 |2| ...", step markers and the label dropped.
std::vector<std::string> trace_tokens(const std::string& line) {
    std::istringstream in(line.substr(line.find(':') + 1));
    std::vector<std::string> tokens;
    for (std::string t; in >> t;)
        if (t.front() != '|') tokens.push_back(t);
    return tokens;
}

// ---- PyTorch action text, parsed independently of formats/: "0F1", "(0F7;7B3)OVERLAP_F_B".
Op parse_torch_op(const std::string& text) {
    size_t k = 0;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    Op op;
    op.stage = std::stoi(text.substr(0, k));
    const std::map<char, OpKind> kinds{{'F', OpKind::F}, {'I', OpKind::I}, {'W', OpKind::W}, {'B', OpKind::B}};
    op.kind = kinds.at(text.at(k));
    op.microbatch = std::stoi(text.substr(k + 1));
    return op;
}

Slot parse_torch_cell(const std::string& cell) {
    if (cell.front() != '(') return Slot::single(parse_torch_op(cell));
    const size_t semi = cell.find(';'), close = cell.find(')');
    REQUIRE(cell.substr(close + 1) == "OVERLAP_F_B");
    return Slot::pair(parse_torch_op(cell.substr(1, semi - 1)), parse_torch_op(cell.substr(semi + 1, close - semi - 1)));
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::vector<Slot>> read_torch_rows(const std::string& path) {
    std::vector<std::vector<Slot>> rows;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        std::vector<Slot> row;
        std::istringstream cells(line);
        for (std::string cell; std::getline(cells, cell, ',');) row.push_back(parse_torch_cell(cell));
        rows.push_back(row);
    }
    return rows;
}

bool slot_equal(const Slot& a, const Slot& b) {
    if (a.count != b.count) return false;
    for (int k = 0; k < a.count; ++k)
        if (!(a.ops[k] == b.ops[k])) return false;
    return true;
}

// ---- per-rank shape of the 8 steps (dualpipe.md section c).
struct Shape {
    int n, h, H;
    int far() const { return n - h - 1; }
    int n4() const { return H - 2 * n + h + 1; }
    bool turn() const { return far() == 0; }
};
Shape dualpipe_shape(int P, int M, int r) { return {P / 2, std::min(r, P - 1 - r), M / 2}; }
Shape dualpipev_shape(int P, int M, int r) { return {P, r, M}; }

struct RankCounts {
    int pairs = 0, inputs = 0, weights = 0, forwards = 0, full = 0;
};
RankCounts count(const std::vector<Slot>& slots) {
    RankCounts c;
    for (const Slot& s : slots) {
        if (s.is_pair()) ++c.pairs;
        for (const Op& op : s) {
            if (op.kind == OpKind::I) ++c.inputs;
            if (op.kind == OpKind::W) ++c.weights;
            if (op.kind == OpKind::F) ++c.forwards;
            if (op.kind == OpKind::B) ++c.full;
        }
    }
    return c;
}

pp::Costs costs(Rational F, Rational I, Rational W, std::optional<Rational> FB, std::optional<Rational> B = {}) {
    pp::Costs c;
    c.base.F = F;
    c.base.I = I;
    c.base.W = W;
    c.base.B = B;
    c.base.FB = FB;
    return c;
}

Rational idle(const pp::Simulation& sim, int rank) { return sim.scale.to_units(sim.ranks[rank].idle); }
Rational makespan(const pp::Simulation& sim) { return sim.scale.to_units(sim.makespan); }
Rational worst_idle(const pp::Simulation& sim) { return sim.scale.to_units(sim.bubble); }

void require_clean(const Schedule& s, const std::string& what) {
    const pp::VerifyReport report = pp::verify(s);
    const std::string first = report.ok() ? "" : report.violations.front().message;
    INFO(what << ": " << first);
    REQUIRE(report.ok());
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Hand traces, P=4 M=8, copied from dualpipe.md section c (checked there against the real code).

TEST_CASE("dualpipe P=4 M=8 equals the hand trace of dualpipe.md", "[schedules]") {
    const std::vector<std::string> trace = {
        "rank 0: |1| F0.0 F0.1 |2| F0.2 F3r.0 |3| B3r.0 W3r.0 F3r.1 |4| (F0.3+BW3r.1) (F3r.2+BW0.0) |5| BW3r.2 "
        "(F3r.3+BW0.1) |6| BW3r.3 B0.2 |7| W0.2 B0.3 |8| W0.3",
        "rank 1: |1| |2| F1.0 F2r.0 F1.1 F2r.1 |3| |4| F1.2 BW2r.0 (F2r.2+BW1.0) (F1.3+BW2r.1) (F2r.3+BW1.1) |5| "
        "|6| BW2r.2 BW1.2 B2r.3 B1.3 |7| |8| W2r.3 W1.3",
        "rank 2: |1| |2| F1r.0 F2.0 F1r.1 F2.1 |3| |4| F1r.2 BW2.0 (F2.2+BW1r.0) (F1r.3+BW2.1) (F2.3+BW1r.1) |5| "
        "|6| BW2.2 BW1r.2 B2.3 B1r.3 |7| |8| W2.3 W1r.3",
        "rank 3: |1| F0r.0 F0r.1 |2| F0r.2 F3.0 |3| B3.0 W3.0 F3.1 |4| (F0r.3+BW3.1) (F3.2+BW0r.0) |5| BW3.2 "
        "(F3.3+BW0r.1) |6| BW3.3 B0r.2 |7| W0r.2 B0r.3 |8| W0r.3",
    };
    const Schedule s = dualpipe(4, 8);
    REQUIRE(s.placement.pipeline_count() == 2);
    REQUIRE(s.ranks.size() == 4);
    for (int r = 0; r < 4; ++r) {
        INFO("rank " << r);
        CHECK(rendered(s.ranks[r]) == trace_tokens(trace[r]));
    }
}

TEST_CASE("dualpipev P=4 M=8 equals the hand trace of dualpipe.md", "[schedules]") {
    const std::vector<std::string> trace = {
        "rank 0: |1| F0.0 F0.1 F0.2 F0.3 F0.4 F0.5 |2| F0.6 F7.0 |3| B7.0 W7.0 F7.1 B7.1 W7.1 F7.2 B7.2 W7.2 F7.3 "
        "|4| (F0.7+BW7.3) (F7.4+BW0.0) |5| BW7.4 (F7.5+BW0.1) BW7.5 (F7.6+BW0.2) BW7.6 (F7.7+BW0.3) |6| BW7.7 B0.4 "
        "|7| W0.4 B0.5 W0.5 B0.6 W0.6 B0.7 |8| W0.7",
        "rank 1: |1| F1.0 F1.1 F1.2 F1.3 |2| F1.4 F6.0 F1.5 F6.1 |3| B6.0 W6.0 F6.2 B6.1 W6.1 F6.3 |4| "
        "(F1.6+BW6.2) (F6.4+BW1.0) (F1.7+BW6.3) (F6.5+BW1.1) |5| BW6.4 (F6.6+BW1.2) BW6.5 (F6.7+BW1.3) |6| BW6.6 "
        "BW1.4 B6.7 B1.5 |7| W6.7 B1.6 W1.5 B1.7 |8| W1.6 W1.7",
        "rank 2: |1| F2.0 F2.1 |2| F2.2 F5.0 F2.3 F5.1 F2.4 F5.2 |3| B5.0 W5.0 F5.3 |4| (F2.5+BW5.1) (F5.4+BW2.0) "
        "(F2.6+BW5.2) (F5.5+BW2.1) (F2.7+BW5.3) (F5.6+BW2.2) |5| BW5.4 (F5.7+BW2.3) |6| BW5.5 BW2.4 BW5.6 B2.5 "
        "B5.7 B2.6 |7| W2.5 B2.7 |8| W5.7 W2.6 W2.7",
        "rank 3: |1| |2| F3.0 F4.0 F3.1 F4.1 F3.2 F4.2 F3.3 F4.3 |3| |4| F3.4 BW4.0 (F4.4+BW3.0) (F3.5+BW4.1) "
        "(F4.5+BW3.1) (F3.6+BW4.2) (F4.6+BW3.2) (F3.7+BW4.3) (F4.7+BW3.3) |5| |6| BW4.4 BW3.4 BW4.5 BW3.5 B4.6 "
        "B3.6 B4.7 B3.7 |7| |8| W4.6 W3.6 W4.7 W3.7",
    };
    const Schedule s = dualpipev(4, 8);
    REQUIRE(s.placement.pipeline_count() == 1);
    REQUIRE(s.placement.pipelines[0].stage_rank == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
    for (int r = 0; r < 4; ++r) {
        INFO("rank " << r);
        CHECK(rendered(s.ranks[r]) == trace_tokens(trace[r]));
    }
}

TEST_CASE("dualpipev P=4 M=10 equals PyTorch's dualpipev_4rank_10mb.csv", "[schedules]") {
    const auto rows = read_torch_rows(std::string(PP_SHARED_DIR) + "/conformance/pytorch/dualpipev_4rank_10mb.csv");
    const Schedule s = dualpipev(4, 10);
    REQUIRE(rows.size() == 4);
    for (int r = 0; r < 4; ++r) {
        INFO("rank " << r);
        REQUIRE(s.ranks[r].size() == rows[r].size());
        for (size_t k = 0; k < rows[r].size(); ++k) {
            INFO("slot " << k << ": expected " << pp::format_slot(rows[r][k]) << ", got "
                         << pp::format_slot(s.ranks[r][k]));
            CHECK(slot_equal(s.ranks[r][k], rows[r][k]));
        }
    }
}

TEST_CASE("dualpipev P=4 M=10 written as PyTorch CSV is the artifact byte for byte", "[schedules]") {
    // The stored artifact has LF line ends; PyTorch's csv writer (and ours) ends rows with CRLF.
    std::string expected;
    for (char ch : read_file(std::string(PP_SHARED_DIR) + "/conformance/pytorch/dualpipev_4rank_10mb.csv")) {
        if (ch == '\n' && (expected.empty() || expected.back() != '\r')) expected += '\r';
        expected += ch;
    }
    CHECK(pp::write_torch_csv(dualpipev(4, 10), pp::TorchCsvFormat::ComputeOnly) == expected);
}

// ------------------------------------------------------------------------------------------------
// Structure.

TEST_CASE("dualpipev(P, M) is the first half of dualpipe(2P, 2M)", "[schedules]") {
    for (int P = 1; P <= 8; ++P)
        for (int M = 2 * P; M <= 4 * P + 3; ++M) {
            const Schedule v = dualpipev(P, M), d = dualpipe(2 * P, 2 * M);
            for (int r = 0; r < P; ++r) {
                INFO("P=" << P << " M=" << M << " rank " << r);
                REQUIRE(v.ranks[r].size() == d.ranks[r].size());
                for (size_t k = 0; k < v.ranks[r].size(); ++k) {
                    Slot halved = d.ranks[r][k];
                    for (auto& op : halved.ops) op.pipeline = 0;  // drop the "r" suffix
                    REQUIRE(slot_equal(v.ranks[r][k], halved));
                }
            }
        }
}

TEST_CASE("dualpipev(P, M) and the first half of dualpipe(2P, 2M) are the same periodic word", "[schedules]") {
    // For every M, not only the sampled ones: both families are periodic words in t (M_V = 2P + t,
    // M_D = 4P + 2t; `pipeproof prove` ties each generator to its word for every t, proofs/method.md).
    // Two words with equal prefix, block, suffix and growth have equal instances for every t.
    for (int P = 1; P <= 8; ++P) {
        INFO("P=" << P);
        auto v = [&](int t) { return dualpipev(P, 2 * P + t); };
        auto half = [&](int t) {
            Schedule d = dualpipe(2 * P, 4 * P + 2 * t);
            Schedule h = v(t);  // its placement; the orders come from d
            for (int r = 0; r < P; ++r) {
                h.ranks[r] = d.ranks[r];
                for (Slot& slot : h.ranks[r])
                    for (auto& op : slot.ops) op.pipeline = 0;  // drop the "r" suffix
            }
            return h;
        };
        const Schedule v2 = v(2), h2 = half(2);
        const pp::WordFit fv = pp::fit_word(v(0), v(1), &v2), fh = pp::fit_word(half(0), half(1), &h2);
        REQUIRE(fv.word);
        REQUIRE(fh.word);
        CHECK(fv.word->delta == fh.word->delta);
        for (int r = 0; r < P; ++r) {
            INFO("rank " << r);
            for (auto part : {&pp::PeriodicWord::prefix, &pp::PeriodicWord::block, &pp::PeriodicWord::suffix}) {
                const auto& a = ((*fv.word).*part)[r];
                const auto& b = ((*fh.word).*part)[r];
                REQUIRE(a.size() == b.size());
                for (size_t k = 0; k < a.size(); ++k) CHECK(slot_equal(a[k], b[k]));
            }
        }
        // The fitted words really are the generators' orders far beyond the fitting points.
        for (int t : {3, 7, 20}) {
            CHECK(pp::word_mismatch(*fv.word, t, v(t)).empty());
            CHECK(pp::word_mismatch(*fh.word, t, half(t)).empty());
        }
    }
}

TEST_CASE("dualpipe ranks r and P-1-r run the same program with the pipelines exchanged", "[schedules]") {
    for (int P = 2; P <= 10; P += 2)
        for (int M = 2 * P; M <= 4 * P; M += 2) {
            const Schedule s = dualpipe(P, M);
            for (int r = 0; r < P; ++r) {
                INFO("P=" << P << " M=" << M << " rank " << r);
                const auto& mine = s.ranks[r];
                const auto& mirror = s.ranks[P - 1 - r];
                REQUIRE(mine.size() == mirror.size());
                for (size_t k = 0; k < mine.size(); ++k) {
                    Slot swapped = mirror[k];
                    for (auto& op : swapped.ops) op.pipeline = 1 - op.pipeline;
                    REQUIRE(slot_equal(mine[k], swapped));
                }
            }
        }
}

TEST_CASE("dualpipe and dualpipev per-rank totals match dualpipe.md", "[schedules]") {
    // Pairs: 2*n4 + far - [turn]; split backwards (= W): 2*far + h + 1; every rank runs H forwards and
    // H backwards of each of its two phases.
    auto check = [](const Schedule& s, auto shape_of, const std::string& name) {
        for (int r = 0; r < s.rank_count(); ++r) {
            const Shape sh = shape_of(r);
            const RankCounts c = count(s.ranks[r]);
            INFO(name << " rank " << r);
            CHECK(c.pairs == 2 * sh.n4() + sh.far() - (sh.turn() ? 1 : 0));
            CHECK(c.inputs == 2 * sh.far() + sh.h + 1);
            CHECK(c.weights == c.inputs);
            CHECK(c.forwards == 2 * sh.H);
            CHECK(c.full + c.inputs == 2 * sh.H);
        }
    };
    for (int P = 2; P <= 12; P += 2)
        for (int M = 2 * P; M <= 4 * P + 2; M += 2) {
            const std::string name = "dualpipe P=" + std::to_string(P) + " M=" + std::to_string(M);
            check(dualpipe(P, M), [&](int r) { return dualpipe_shape(P, M, r); }, name);
        }
    for (int P = 1; P <= 12; ++P)
        for (int M = 2 * P; M <= 4 * P + 1; ++M) {
            const std::string name = "dualpipev P=" + std::to_string(P) + " M=" + std::to_string(M);
            check(dualpipev(P, M), [&](int r) { return dualpipev_shape(P, M, r); }, name);
        }
}

TEST_CASE("dualpipe and dualpipev activation peak is PP+1 on every rank", "[schedules]") {
    // dualpipe.md section e: P+1 for DualPipe, 2P+1 for DualPipeV, on every rank, for every M >= 2P,
    // counting a pair's forward before its backward frees (verifier/memory.hpp does the same).
    for (int P = 2; P <= 12; P += 2)
        for (int M : {2 * P, 2 * P + 2, 3 * P, 4 * P, 6 * P}) {
            const auto peaks = pp::peak_activations(dualpipe(P, M), pp::ActivationModel{});
            for (int r = 0; r < P; ++r) {
                INFO("dualpipe P=" << P << " M=" << M << " rank " << r);
                CHECK(peaks[r] == Rational(P + 1));
            }
        }
    for (int P = 1; P <= 12; ++P)
        for (int M : {2 * P, 2 * P + 1, 3 * P, 4 * P, 6 * P + 1}) {
            const auto peaks = pp::peak_activations(dualpipev(P, M), pp::ActivationModel{});
            for (int r = 0; r < P; ++r) {
                INFO("dualpipev P=" << P << " M=" << M << " rank " << r);
                CHECK(peaks[r] == Rational(2 * P + 1));
            }
        }
}

TEST_CASE("dualpipe, dualpipev and chimera verify clean", "[schedules]") {
    for (int P = 2; P <= 16; P += 2)
        for (int M = 2 * P; M <= 4 * P + 2; M += 2)
            require_clean(dualpipe(P, M), "dualpipe P=" + std::to_string(P) + " M=" + std::to_string(M));
    for (int P = 1; P <= 16; ++P)
        for (int M = 2 * P; M <= 4 * P + 1; ++M)
            require_clean(dualpipev(P, M), "dualpipev P=" + std::to_string(P) + " M=" + std::to_string(M));
    for (int P = 2; P <= 16; P += 2)
        for (int K = 1; K <= 4; ++K)
            require_clean(chimera(P, K * P), "chimera P=" + std::to_string(P) + " M=" + std::to_string(K * P));
}

// ------------------------------------------------------------------------------------------------
// Timing under our dataflow model (every slot starts when its rank is free and its inputs exist).

TEST_CASE("dualpipe P=4 M=8 timing, derived by hand", "[schedules]") {
    // F=1, I=1, W=1 (B=2), FB=3, no comm. Walking the trace above (ranks 2, 3 mirror ranks 1, 0 in time):
    //   rank 0: F0.0 0-1, F0.1 1-2, F0.2 2-3, F3r.0 3-4 (after F2r.0 2-3 on rank 1), B3r.0 4-5, W3r.0 5-6,
    //           F3r.1 6-7 (F2r.1 ends 5), (F0.3+BW3r.1) 7-10, (F3r.2+BW0.0) 11-14 (waits for rank 1's
    //           (F2r.2+BW1.0) 8-11), BW3r.2 14-16, (F3r.3+BW0.1) 17-20 (waits for rank 1's pair 14-17),
    //           BW3r.3 20-22, B0.2 22-23 (BW1.2 ends 21), W0.2 23-24, B0.3 24-25 (B1.3 ends 24), W0.3 25-26
    //   rank 1: F1.0 1-2, F2r.0 2-3, F1.1 3-4, F2r.1 4-5, F1.2 5-6, BW2r.0 6-8, three pairs 8-11, 11-14,
    //           14-17, BW2r.2 17-19, BW1.2 19-21, B2r.3 22-23 (BW3r.3 ends 22), B1.3 23-24, W 24-25, W 25-26
    // Makespan 26, busy 8 F + 8 backwards x 2 = 24 on every rank, so idle 2 everywhere -- which is also
    // the README's (PP/2-1)(F&B+B-3W) = 1 x (3+2-3).
    const pp::Simulation sim = pp::simulate(dualpipe(4, 8), costs(1, 1, 1, Rational(3)));
    CHECK(makespan(sim) == Rational(26));
    for (int r = 0; r < 4; ++r) CHECK(idle(sim, r) == Rational(2));
}

namespace {

// A path through the schedule's DAG, each step checked here against the dependency rules of
// model/dag.hpp (F(s-1,m) -> F(s,m); F(last,m) -> I/B(last,m); I/B(s+1,m) -> I/B(s,m); I(s,m) -> W(s,m))
// or against the rank's own order. Any such path is a lower bound on the dataflow makespan.
bool depends_on(const Op& later, const Op& earlier, int last_stage) {
    if (later.pipeline != earlier.pipeline || later.microbatch != earlier.microbatch) return false;
    const bool later_bwd = pp::is_backward(later.kind), earlier_bwd = pp::is_backward(earlier.kind);
    if (later.kind == OpKind::F) return earlier.kind == OpKind::F && earlier.stage == later.stage - 1;
    if (later_bwd && earlier.kind == OpKind::F) return later.stage == last_stage && earlier.stage == last_stage;
    if (later_bwd && earlier_bwd) return earlier.stage == later.stage + 1;
    return later.kind == OpKind::W && earlier.kind == OpKind::I && earlier.stage == later.stage;
}

struct PathStep {
    int rank;
    std::string slot;  // pp::format_slot text
};

using SlotAt = std::pair<int, size_t>;  // (rank, position in the rank's list)

// Sum of the slot durations along the path, after checking that every step is an edge (or a chain of
// rank-order edges) of the DAG.
Rational checked_path_length(const Schedule& s, const std::vector<SlotAt>& path, const pp::Costs& c) {
    const Slot* last_slot = nullptr;
    SlotAt last{-1, 0};
    Rational total{0};
    for (const SlotAt& at : path) {
        const Slot& slot = s.ranks[at.first][at.second];
        INFO("path step " << at.first << ":" << pp::format_slot(slot));
        if (last_slot) {
            bool edge = at.first == last.first && at.second > last.second;
            for (const Op& later : slot)
                for (const Op& earlier : *last_slot)
                    edge = edge || depends_on(later, earlier, s.placement.pipelines[later.pipeline].stages() - 1);
            REQUIRE(edge);
        }
        const int block = 0;  // one cost table for every block here
        total += slot.is_pair() ? c.pair_duration(slot.ops[0], block, slot.ops[1], block)
                                : c.duration(slot.ops[0].kind, block);
        last = at, last_slot = &slot;
    }
    return total;
}

Rational checked_path_length(const Schedule& s, const std::vector<PathStep>& steps, const pp::Costs& c) {
    std::vector<SlotAt> path;
    for (const PathStep& step : steps) {
        const auto& slots = s.ranks[step.rank];
        size_t position = slots.size();
        for (size_t k = 0; k < slots.size(); ++k)
            if (pp::format_slot(slots[k]) == step.slot) position = k;
        INFO("path step " << step.rank << ":" << step.slot);
        REQUIRE(position < slots.size());
        path.emplace_back(step.rank, position);
    }
    return checked_path_length(s, path, c);
}

// Simulates and certifies the makespan from below: the simulator's critical path, re-checked here edge by
// edge, must be as long as the makespan it reports. With an upper bound from elsewhere (the blocking
// model's numbers, see below) this pins the makespan without trusting the simulator's arithmetic.
pp::Simulation certified_simulation(const Schedule& s, const pp::Costs& c) {
    const pp::ScheduleGraph graph = pp::build_schedule_graph(s);
    pp::Simulation sim = pp::simulate(s, graph, c);
    std::vector<SlotAt> path;
    for (std::uint32_t id : sim.critical_path) path.emplace_back(graph.slot_rank[id], graph.position(id));
    REQUIRE(checked_path_length(s, path, c) == sim.scale.to_units(sim.makespan));
    return sim;
}

}  // namespace

TEST_CASE("dualpipe P=8 timing: dualpipe.md's numbers hold under dataflow", "[schedules]") {
    // dualpipe.md gives these idle times (makespan minus each rank's busy time) under the reference's
    // blocking batches with zero latency. That model has every dataflow constraint (a compute waits for
    // its inputs and for its rank's previous compute) plus rendezvous waits, so under dataflow no slot
    // starts later: the blocking makespans are upper bounds. The lower bounds are paths through the DAG,
    // checked edge by edge here (certified_simulation), so equality below is derived, not observed.
    const Schedule s = dualpipe(8, 20);
    SECTION("F=1 B=2 W=1 FB=3: 6 idle on every rank") {
        // FB = F+B, so every rank is busy 20 F + 20 B x 2 = 60 and the blocking makespan is 66. This path
        // (micro-batch 0 down to the turn, the steady pairs across the ranks and back, the last
        // backwards to rank 0) has length 66:
        const pp::Costs c = costs(1, 1, 1, Rational(3));
        const std::vector<PathStep> path = {
            {0, "0F0"},          {1, "1F0"},           {2, "2F0"},           {3, "3F0"},
            {4, "4F0"},          {4, "3F1@1"},         {3, "4F1@1"},         {3, "3F2"},
            {4, "4F2"},          {4, "3F3@1"},         {3, "4F3@1"},         {3, "3F4"},
            {3, "4B0@1"},        {3, "(4F4@1;3B0)"},   {2, "(5F4@1;2B0)"},   {1, "(6F4@1;1B0)"},
            {0, "(7F4@1;0B0)"},  {0, "(0F8;7B4@1)"},   {0, "(7F5@1;0B1)"},   {0, "(0F9;7B5@1)"},
            {1, "(1F9;6B5@1)"},  {2, "(2F9;5B5@1)"},   {3, "(3F9;4B5@1)"},   {3, "(4F9@1;3B5)"},
            {2, "(5F9@1;2B5)"},  {1, "(6F9@1;1B5)"},   {0, "(7F9@1;0B5)"},   {0, "7B9@1"},
            {1, "6I9@1"},        {2, "5I9@1"},         {2, "2I8"},           {2, "2W7"},
            {2, "2I9"},          {1, "1I9"},           {0, "0I9"},           {0, "0W9"},
        };
        CHECK(checked_path_length(s, path, c) == Rational(66));
        const pp::Simulation sim = certified_simulation(s, c);
        CHECK(makespan(sim) == Rational(66));
        for (int r = 0; r < 8; ++r) CHECK(sim.ranks[r].busy == sim.scale.to_ticks(Rational(60)));
        for (int r = 0; r < 8; ++r) CHECK(idle(sim, r) == Rational(6));
    }
    SECTION("F=1 B=2 W=1 FB=2.5: worst rank 4.5 (blocking; = the README formula 3 x (2.5+2-3))") {
        CHECK(worst_idle(certified_simulation(s, costs(1, 1, 1, Rational(5, 2)))) == Rational(9, 2));
    }
    SECTION("F=1 B=2 W=1 FB=2: idle [1, 2, 3, 3, 3, 3, 2, 1] (blocking)") {
        const pp::Simulation sim = certified_simulation(s, costs(1, 1, 1, Rational(2)));
        const std::vector<int> blocking = {1, 2, 3, 3, 3, 3, 2, 1};
        for (int r = 0; r < 8; ++r) CHECK(idle(sim, r) == Rational(blocking[r]));
    }
    SECTION("F=1 B=2 W=1 FB=1.5: the worst rank idles 4.5 (dualpipe.md: pure dataflow; 5.5 blocking)") {
        CHECK(worst_idle(certified_simulation(s, costs(1, 1, 1, Rational(3, 2)))) == Rational(9, 2));
    }
    SECTION("M=16, F=1 I=1.5 W=0.5 FB=2: worst rank 6.5 (blocking; the README formula says 7.5)") {
        const pp::Costs c = costs(1, Rational(3, 2), Rational(1, 2), Rational(2));
        CHECK(worst_idle(certified_simulation(dualpipe(8, 16), c)) == Rational(13, 2));
    }
}

TEST_CASE("dualpipev(P, M) times exactly like the first half of dualpipe(2P, 2M)", "[schedules]") {
    // With zero comm, every dependency of DualPipe(2P, 2M) rank r < P that crosses the middle has a mirror
    // image that, by the r <-> 2P-1-r symmetry, happens at the same time on rank r's own side; in V that
    // image is the very op the dependency names (the turn is local). So the two timings coincide.
    for (const auto& c : {costs(1, 1, 1, Rational(3)), costs(1, 1, 1, Rational(3, 2)),
                          costs(1, Rational(3, 2), Rational(1, 2), Rational(2)), costs(2, 3, 1, std::nullopt)})
        for (int P = 1; P <= 5; ++P)
            for (int M : {2 * P, 2 * P + 1, 3 * P + 2}) {
                const pp::Simulation v = pp::simulate(dualpipev(P, M), c);
                const pp::Simulation d = pp::simulate(dualpipe(2 * P, 2 * M), c);
                INFO("P=" << P << " M=" << M << " costs " << pp::format_costs(c));
                CHECK(makespan(v) == makespan(d));
                for (int r = 0; r < P; ++r) CHECK(idle(v, r) == idle(d, r));
            }
}

// ------------------------------------------------------------------------------------------------
// Chimera.

TEST_CASE("chimera P=4 M=4 and M=8 follow the authors' SC'21 loop", "[schedules]") {
    // Hand-derived from the loop described in schedules/chimera.cpp: h = min(r, 3-r), a = 2-h, b = h.
    // Tokens are ours: stage, kind, micro-batch, "@1" for the up pipeline.
    auto tokens = [](const std::vector<Slot>& slots) {
        std::vector<std::string> out;
        for (const Slot& s : slots) out.push_back(pp::format_slot(s));
        return out;
    };
    auto split = [](const std::string& text) {
        std::istringstream in(text);
        std::vector<std::string> out;
        for (std::string t; in >> t;) out.push_back(t);
        return out;
    };
    SECTION("one basic unit (each pipeline in its own 1F1B order, merged)") {
        const Schedule s = chimera(4, 4);
        CHECK(tokens(s.ranks[0]) == split("0F0 0F1 3F0@1 3B0@1 3F1@1 3B1@1 0B0 0B1"));
        CHECK(tokens(s.ranks[1]) == split("1F0 2F0@1 1F1 2F1@1 2B0@1 1B0 2B1@1 1B1"));
        CHECK(tokens(s.ranks[2]) == split("1F0@1 2F0 1F1@1 2F1 2B0 1B0@1 2B1 1B1@1"));
        CHECK(tokens(s.ranks[3]) == split("0F0@1 0F1@1 3F0 3B0 3F1 3B1 0B0@1 0B1@1"));
    }
    SECTION("two units by direct concatenation") {
        const Schedule s = chimera(4, 8);
        CHECK(tokens(s.ranks[0]) ==
              split("0F0 0F1 3F0@1 3B0@1 3F1@1 3B1@1 0B0 0F2 0B1 0F3 3F2@1 3B2@1 3F3@1 3B3@1 0B2 0B3"));
        CHECK(tokens(s.ranks[1]) ==
              split("1F0 2F0@1 1F1 2F1@1 2B0@1 1B0 2B1@1 1B1 1F2 2F2@1 1F3 2F3@1 2B2@1 1B2 2B3@1 1B3"));
        CHECK(tokens(s.ranks[3]) ==
              split("0F0@1 0F1@1 3F0 3B0 3F1 3B1 0B0@1 0F2@1 0B1@1 0F3@1 3F2 3B2 3F3 3B3 0B2@1 0B3@1"));
    }
}

TEST_CASE("chimera P=4 M=4 timing, derived by hand", "[schedules]") {
    // Ranks 3, 2 mirror ranks 0, 1 in time.
    //   F=B=1: rank 0: F 0-1, 1-2, 3F0@1 3-4 (2F0@1 on rank 1 ends 3), 3B0@1 4-5, 3F1@1 5-6, 3B1@1 6-7,
    //          0B0 7-8 (1B0 6-7), 0B1 9-10 (1B1 8-9). Makespan 10, busy 8: idle 2 = D-2 on every rank.
    //   F=1 B=2: rank 1: 1F0 1-2, 2F0@1 2-3, 1F1 3-4, 2F1@1 4-5, 2B0@1 6-8, 1B0 8-10, 2B1@1 10-12, 1B1 12-14;
    //          rank 0 ends with 0B1 14-16. Makespan 16, busy 12: idle 4 on every rank.
    const Schedule s = chimera(4, 4);
    const pp::Simulation unit = pp::simulate(s, costs(1, 0, 0, std::nullopt, Rational(1)));
    CHECK(makespan(unit) == Rational(10));
    for (int r = 0; r < 4; ++r) CHECK(idle(unit, r) == Rational(2));
    const pp::Simulation heavy = pp::simulate(s, costs(1, 1, 1, std::nullopt));
    CHECK(makespan(heavy) == Rational(16));
    for (int r = 0; r < 4; ++r) CHECK(idle(heavy, r) == Rational(4));
}

TEST_CASE("chimera P=4 M=8 timing with F=B=1, derived by hand", "[schedules]") {
    // Unit 0 as above up to rank 0's 3B1@1 6-7 and rank 1's 1B1 8-9. Then rank 0: 0B0 7-8, 0F2 8-9,
    // 0B1 9-10 (1B1 ends 9), 0F3 10-11, 3F2@1 11-12 (2F2@1 10-11), 3B2@1 12-13, 3F3@1 13-14, 3B3@1 14-15,
    // 0B2 15-16, 0B3 17-18 (1B3 16-17). Rank 1: 1F2 9-10, 2F2@1 10-11, 1F3 11-12, 2F3@1 12-13,
    // 2B2@1 13-14, 1B2 14-15, 2B3@1 15-16, 1B3 16-17. Makespan 18, busy 16: the concatenation adds no
    // bubble when F = B, idle stays D-2 = 2.
    const pp::Simulation sim = pp::simulate(chimera(4, 8), costs(1, 0, 0, std::nullopt, Rational(1)));
    CHECK(makespan(sim) == Rational(18));
    for (int r = 0; r < 4; ++r) CHECK(idle(sim, r) == Rational(2));
}

TEST_CASE("chimera activation peak is P/2 + h + 1 on the rank at distance h", "[schedules]") {
    // By hand from the loop: before its first backward a rank runs a F(X), b x [F(Y), F(X)] and one more
    // F(Y): a + 2b + 1 = P/2 + h + 1 stashes. Afterwards [F(Y), B(Y)] keeps the level, [B(X), B(Y)] lowers
    // it, and a concatenated unit's head [B(X), F(X)] frees before it allocates, so later units peak at
    // the same level.
    for (int P = 2; P <= 12; P += 2)
        for (int K = 1; K <= 3; ++K) {
            const auto peaks = pp::peak_activations(chimera(P, K * P), pp::ActivationModel{});
            for (int r = 0; r < P; ++r) {
                INFO("P=" << P << " K=" << K << " rank " << r);
                CHECK(peaks[r] == Rational(P / 2 + std::min(r, P - 1 - r) + 1));
            }
        }
}

// ------------------------------------------------------------------------------------------------
// Preconditions: exactly the reference's asserts.

TEST_CASE("dualpipe, dualpipev and chimera reject what their references reject", "[schedules]") {
    using Catch::Matchers::Contains;
    // DualPipe: num_ranks % 2 == 0; num_chunks > 0 and num_chunks % 2 == 0 and num_chunks >= num_ranks * 2.
    CHECK_THROWS_WITH(dualpipe(3, 6), Contains("num_ranks % 2 == 0"));
    CHECK_THROWS_WITH(dualpipe(4, 7), Contains("num_chunks % 2 == 0"));
    CHECK_THROWS_WITH(dualpipe(4, 6), Contains("num_chunks >= num_ranks * 2"));
    CHECK_THROWS_WITH(dualpipe(2, 0), Contains("num_chunks > 0"));
    CHECK_THROWS_AS(dualpipe(0, 4), pp::GenerateError);
    CHECK_NOTHROW(dualpipe(4, 8));
    CHECK_NOTHROW(dualpipe(2, 4));
    // DualPipeV: num_chunks > 0 and num_chunks >= num_ranks * 2; odd P and odd M are fine.
    CHECK_THROWS_WITH(dualpipev(4, 7), Contains("num_chunks >= num_ranks * 2"));
    CHECK_THROWS_AS(dualpipev(0, 2), pp::GenerateError);
    CHECK_NOTHROW(dualpipev(3, 7));
    CHECK_NOTHROW(dualpipev(1, 2));
    // Chimera (authors' asserts): even number of stages; 2 x (micro-batches per direction) a multiple of it.
    CHECK_THROWS_WITH(chimera(3, 6), Contains("even"));
    CHECK_THROWS_WITH(chimera(4, 6), Contains("multiple"));
    CHECK_THROWS_AS(chimera(4, 0), pp::GenerateError);
    CHECK_NOTHROW(chimera(4, 12));
    // Each holds exactly two stages per rank.
    CHECK_THROWS_AS(pp::generate_dualpipev({4, 8, 3}), pp::GenerateError);
    CHECK_NOTHROW(pp::generate_dualpipev({4, 8, 2}));
}
