// The verifier against hand-made cases and against an independent brute-force executor: every mutation
// of a valid schedule (swap, move, drop, duplicate) is judged by both, and they must agree.
#include "formats/native.hpp"
#include "schedules/registry.hpp"
#include "verifier/verify.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace pp;

namespace {

Schedule parse(const std::string& body) { return read_native(body, "case.txt"); }

bool has(const VerifyReport& report, ViolationKind kind) {
    return std::any_of(report.violations.begin(), report.violations.end(), [&](const Violation& v) { return v.kind == kind; });
}

// --- An executor written from the rules alone, sharing no code with the verifier's graph. ---

bool done_any(const std::set<std::tuple<int, int, int, int>>& done, int p, int s, int m, std::initializer_list<OpKind> kinds) {
    for (auto k : kinds)
        if (done.count({p, s, m, static_cast<int>(k)})) return true;
    return false;
}

bool inputs_ready(const Schedule& sch, const Op& op, const std::set<std::tuple<int, int, int, int>>& done) {
    const int last = sch.placement.pipelines[op.pipeline].stages() - 1;
    switch (op.kind) {
        case OpKind::F: return op.stage == 0 || done_any(done, op.pipeline, op.stage - 1, op.microbatch, {OpKind::F});
        case OpKind::I:
        case OpKind::B:
            if (op.stage == last) return done_any(done, op.pipeline, op.stage, op.microbatch, {OpKind::F});
            return done_any(done, op.pipeline, op.stage + 1, op.microbatch, {OpKind::I, OpKind::B});
        case OpKind::W: return done_any(done, op.pipeline, op.stage, op.microbatch, {OpKind::I});
    }
    return false;
}

// Valid iff every required op occurs once on its rank and the ranks, each running its list in order,
// can all finish when a slot starts only after its inputs are done.
bool brute_force_valid(const Schedule& sch) {
    std::map<std::tuple<int, int, int, int>, int> count;
    for (size_t r = 0; r < sch.ranks.size(); ++r)
        for (const Slot& slot : sch.ranks[r]) {
            if (slot.is_pair() && (slot.ops[0].kind != OpKind::F || !is_backward(slot.ops[1].kind))) return false;
            for (const Op& op : slot) {
                const auto& pipe = sch.placement.pipelines[op.pipeline];
                if (op.stage >= pipe.stages() || op.microbatch >= pipe.microbatches) return false;
                if (pipe.stage_rank[op.stage] != static_cast<int>(r)) return false;
                if (++count[{op.pipeline, op.stage, op.microbatch, static_cast<int>(op.kind)}] > 1) return false;
            }
        }
    for (int p = 0; p < sch.placement.pipeline_count(); ++p)
        for (int s = 0; s < sch.placement.pipelines[p].stages(); ++s)
            for (int m = 0; m < sch.placement.pipelines[p].microbatches; ++m) {
                auto c = [&](OpKind k) { return count[{p, s, m, static_cast<int>(k)}]; };
                if (c(OpKind::F) != 1) return false;
                const bool full = c(OpKind::B) == 1 && c(OpKind::I) == 0 && c(OpKind::W) == 0;
                const bool split = c(OpKind::B) == 0 && c(OpKind::I) == 1 && c(OpKind::W) == 1;
                if (!full && !split) return false;
            }
    std::set<std::tuple<int, int, int, int>> done;
    std::vector<size_t> head(sch.ranks.size(), 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t r = 0; r < sch.ranks.size(); ++r) {
            if (head[r] == sch.ranks[r].size()) continue;
            const Slot& slot = sch.ranks[r][head[r]];
            bool ready = true;
            for (const Op& op : slot) ready = ready && inputs_ready(sch, op, done);
            if (!ready) continue;
            for (const Op& op : slot) done.insert({op.pipeline, op.stage, op.microbatch, static_cast<int>(op.kind)});
            ++head[r];
            progress = true;
        }
    }
    for (size_t r = 0; r < sch.ranks.size(); ++r)
        if (head[r] != sch.ranks[r].size()) return false;
    return true;
}

std::vector<Schedule> mutations(const Schedule& base) {
    std::vector<Schedule> out;
    for (size_t r = 0; r < base.ranks.size(); ++r) {
        const size_t n = base.ranks[r].size();
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = i + 1; j < n; ++j) {  // swap any two
                Schedule m = base;
                std::swap(m.ranks[r][i], m.ranks[r][j]);
                out.push_back(std::move(m));
            }
            {  // drop
                Schedule m = base;
                m.ranks[r].erase(m.ranks[r].begin() + static_cast<std::ptrdiff_t>(i));
                out.push_back(std::move(m));
            }
            {  // duplicate at the end
                Schedule m = base;
                m.ranks[r].push_back(base.ranks[r][i]);
                out.push_back(std::move(m));
            }
            if (i + 2 < n) {  // move forward by two
                Schedule m = base;
                std::rotate(m.ranks[r].begin() + static_cast<std::ptrdiff_t>(i), m.ranks[r].begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            m.ranks[r].begin() + static_cast<std::ptrdiff_t>(i) + 3);
                out.push_back(std::move(m));
            }
            if (r + 1 < base.ranks.size()) {  // move to the next rank
                Schedule m = base;
                m.ranks[r + 1].push_back(m.ranks[r][i]);
                m.ranks[r].erase(m.ranks[r].begin() + static_cast<std::ptrdiff_t>(i));
                out.push_back(std::move(m));
            }
        }
    }
    return out;
}

}  // namespace

TEST_CASE("verify: a correct 1F1B is clean", "[verify]") {
    const auto s = parse("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n");
    const auto report = verify(s);
    CHECK(report.ok());
    CHECK(report.peak_activations == std::vector<Rational>{2, 1});
}

TEST_CASE("verify: cross-rank deadlock is reported with its cycle", "[verify][deadlock]") {
    // Hand-derived: 0B0 needs 1B0, rank 1 runs 1B0 after 1F1, 1F1 needs 0F1, rank 0 runs 0F1 after 0B0.
    // Blocked: everything but 0F0 and 1F0 (6 of 8 slots).
    const auto s = parse("ranks 2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1\n");
    const auto report = verify(s);
    REQUIRE(report.violations.size() == 1);
    const auto& v = report.violations[0];
    CHECK(v.kind == ViolationKind::Deadlock);
    CHECK(v.message ==
          "deadlock (6 slots blocked, shortest cycle has 4): rank 1 waits at 1F1 for 0F1, which rank 0 runs after 0B0, "
          "which waits for 1B0, which rank 1 runs after 1F1 -- a cycle, so none of them can start");
    CHECK(v.rank == 1);
    CHECK(v.position == 1);
    CHECK(v.loc.line == 4);
    CHECK(v.loc.column == 13);
    CHECK(v.witness.size() == 4);
}

TEST_CASE("verify: same-rank order, W before I, W after B, wrong rank, missing and extra ops", "[verify]") {
    SECTION("backward before its forward on the last rank") {
        const auto r = verify(parse("ranks 2\nmicrobatches 1\nrank 0: 0F0 0B0\nrank 1: 1B0 1F0\n"));
        REQUIRE(r.violations.size() == 1);
        CHECK(r.violations[0].kind == ViolationKind::OrderContradicts);
        CHECK(r.violations[0].rank == 1);
        CHECK(r.violations[0].position == 0);
    }
    SECTION("W ahead of its I") {
        const auto r = verify(parse("ranks 1\nmicrobatches 1\nrank 0: 0F0 0W0 0I0\n"));
        REQUIRE(r.violations.size() == 1);
        CHECK(r.violations[0].kind == ViolationKind::WBeforeI);
        CHECK(r.violations[0].position == 1);
    }
    SECTION("W after a full B") {
        const auto r = verify(parse("ranks 1\nmicrobatches 1\nrank 0: 0F0 0B0 0W0\n"));
        CHECK(has(r, ViolationKind::BothBackwards));
    }
    SECTION("op on a rank that does not hold its stage") {
        const auto r = verify(parse("ranks 2\nmicrobatches 1\nrank 0: 0F0 1F0 1B0 0B0\nrank 1:\n"));
        CHECK(has(r, ViolationKind::WrongRank));
        CHECK_FALSE(has(r, ViolationKind::Deadlock));
    }
    SECTION("a missing W and a missing F") {
        const auto r = verify(parse("ranks 1\nmicrobatches 2\nrank 0: 0F0 0I0 0I1\n"));
        CHECK(has(r, ViolationKind::Missing));
        size_t missing = 0;
        for (const auto& v : r.violations) missing += v.kind == ViolationKind::Missing;
        CHECK(missing == 3);  // 0W0, 0F1 and 0W1
    }
    SECTION("a pair holding an op and its own dependency") {
        const auto r = verify(parse("ranks 1\nmicrobatches 1\nrank 0: (0F0;0B0)\n"));
        REQUIRE(r.violations.size() == 1);
        CHECK(r.violations[0].kind == ViolationKind::OrderContradicts);
    }
    SECTION("memory limit") {
        VerifyOptions options;
        options.memory_limit = Rational(1);
        const auto r = verify(parse("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n"), options);
        REQUIRE(r.violations.size() == 1);
        CHECK(r.violations[0].kind == ViolationKind::MemoryLimit);
        CHECK(r.violations[0].rank == 0);
        CHECK(r.violations[0].position == 1);  // 0F1 brings rank 0 to two live activations
    }
}

TEST_CASE("verify agrees with an independent brute-force executor on every mutation", "[verify][mutation]") {
    std::vector<Schedule> bases = {
        parse("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n"),
        parse("ranks 2\nmicrobatches 2\nrank 0: 0F0 0F1 0I0 0W0 0I1 0W1\nrank 1: 1F0 1I0 1F1 1I1 1W0 1W1\n"),
        parse("ranks 2\nmicrobatches 2\nplacement bidirectional\n"
              "rank 0: 1F0@1 (0F0;1B0@1)OVERLAP_F_B 0B0\nrank 1: 0F0@1 (1F0;0B0@1) 1B0\n"),
        parse("ranks 2\nmicrobatches 3\nstages 4\nplacement loop\n"
              "rank 0: 0F0 0F1 2F0 0F2 2F1 2I0 2W0 2F2 2I1 2W1 0I0 0W0 2I2 2W2 0I1 0W1 0I2 0W2\n"
              "rank 1: 1F0 1F1 3F0 3I0 3W0 1F2 3F1 3I1 3W1 3F2 3I2 3W2 1I0 1W0 1I1 1W1 1I2 1W2\n"),
    };
    size_t checked = 0, valid = 0;
    for (const auto& base : bases) {
        std::vector<Schedule> cases = mutations(base);
        cases.push_back(base);
        for (const auto& m : cases) {
            const bool expected = brute_force_valid(m);
            const auto report = verify(m);
            INFO(write_native(m));
            CHECK(report.ok() == expected);
            ++checked;
            valid += expected;
        }
    }
    CHECK(checked > 300);
    CHECK(valid > 10);            // some mutations keep the schedule valid (and must be accepted)
    CHECK(valid < checked / 2);   // most break it (and must be caught)
}

TEST_CASE("verify agrees with the brute-force executor on generated schedules and their mutations", "[verify][mutation]") {
    size_t checked = 0;
    for (const char* name : {"1f1b", "gpipe", "zb-h1", "dualpipe", "dualpipev", "zbv"}) {
        const ScheduleFamily* family = find_family(name);
        REQUIRE(family);
        Schedule base;
        try {
            base = family->generate({2, 4, std::nullopt});
        } catch (const GenerateError& e) {
            WARN(name << ": " << e.what());
            continue;
        }
        CHECK(brute_force_valid(base));
        for (const auto& m : mutations(base)) {
            INFO(name << "\n" << write_native(m));
            CHECK(verify(m).ok() == brute_force_valid(m));
            ++checked;
        }
    }
    CHECK(checked > 0);
}
