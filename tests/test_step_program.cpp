// Step programs (schedules/step_program.hpp): the families that run one meet Lemma 2's side conditions, the
// interpreter's output is the periodic word Lemma 2 promises (checked here on random programs against the
// decomposition read off its own runs at t = 0 and 1), a program that breaks a condition is named, and the
// checker's step `structure` re-derives the word from the program for a certificate that names it or not.
#include "cli_runner.hpp"
#include "schedules/interleaved_walk.hpp"
#include "schedules/registry.hpp"
#include "schedules/step_program.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using pp::StepToken;
using pp::StepTokenKind;

bool same_slot(const pp::Slot& a, const pp::Slot& b) {
    if (a.count != b.count) return false;
    for (int i = 0; i < a.count; ++i)
        if (!(a.ops[i] == b.ops[i])) return false;
    return true;
}

pp::Slot raised(pp::Slot slot, const std::vector<int>& delta, int k) {
    for (int i = 0; i < slot.count; ++i) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * k;
    return slot;
}

// Lemma 2's word from the runs at t = 0 and 1 alone: the block is the `length` slots after `prefix` slots at t = 1,
// the suffix is what follows the prefix at t = 0; at t the instance is prefix . block^t . suffix, block j and the
// suffix raised by j and t deltas.
std::vector<pp::Slot> word_instance(const std::vector<pp::Slot>& at0, const std::vector<pp::Slot>& at1, size_t prefix,
                                    const std::vector<int>& delta, int t) {
    const size_t length = at1.size() - at0.size();
    std::vector<pp::Slot> out(at0.begin(), at0.begin() + static_cast<long>(prefix));
    for (int j = 0; j < t; ++j)
        for (size_t k = 0; k < length; ++k) out.push_back(raised(at1[prefix + k], delta, j));
    for (size_t k = prefix; k < at0.size(); ++k) out.push_back(raised(at0[k], delta, t));
    return out;
}

// Slots the loops before the growing one, and its fixed iterations, emit.
size_t prefix_slots(const pp::RankStepProgram& program) {
    size_t n = 0;
    for (const pp::StepLoop& loop : program.loops) {
        size_t per_iteration = 0;
        for (const StepToken& token : loop.body) per_iteration += token.kind <= StepTokenKind::Pair ? 1 : 0;
        n += per_iteration * static_cast<size_t>(loop.base);
        if (loop.slope == 1) break;
    }
    return n;
}

// A random program of one or two phases (one or two pipelines) with one growing loop whose body uses every phase's
// forward and backward counters the same number of times; whether it also keeps the W queue raised is left to chance.
pp::RankStepProgram random_program(std::mt19937& rng, std::vector<int>& delta) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const int phases = 1 + pick(2);
    const bool two_pipelines = phases == 2 && pick(2) == 0;
    std::vector<pp::StepPhase> where{{0, 0}};
    if (phases == 2) where.push_back({two_pipelines ? 1 : 0, two_pipelines ? 0 : 1});
    delta.assign(two_pipelines ? 2 : 1, 0);
    auto token = [&](int phase) {
        switch (pick(7)) {
            case 0: return pp::forward(phase);
            case 1: return pp::full_backward(phase);
            case 2: return pp::input_backward(phase);
            case 3: return pp::weight();
            case 4: return pp::weight_of(phase);
            case 5: return pp::idle();
            default: return pp::overlapped(phase, pick(phases));
        }
    };
    pp::StepProgramBuilder builder(where);
    std::vector<StepToken> warmup;
    for (int k = 0, n = pick(4); k < n; ++k) warmup.push_back(k % 2 == 0 ? pp::forward(pick(phases)) : pp::input_backward(pick(phases)));
    builder.repeat(pick(3), warmup);
    // The growing body: per phase, d forwards and d backwards (B or I), and as many W's as I's, shuffled.
    const int d = 1 + pick(2);
    std::vector<StepToken> body;
    for (int phase = 0; phase < phases; ++phase)
        for (int k = 0; k < d; ++k) {
            body.push_back(pp::forward(phase));
            const bool split = pick(2) == 0;
            body.push_back(split ? pp::input_backward(phase) : pp::full_backward(phase));
            if (split) body.push_back(pick(2) == 0 ? pp::weight() : pp::weight_of(phase));
        }
    std::shuffle(body.begin(), body.end(), rng);
    for (int& x : delta) x = d;
    builder.repeat(pick(3), body, 1);
    std::vector<StepToken> tail;
    for (int k = 0, n = pick(5); k < n; ++k) tail.push_back(token(pick(phases)));
    builder.repeat(1 + pick(2), tail);
    return builder.take();
}

}  // namespace

TEST_CASE("step programs: every family that runs one meets Lemma 2's side conditions", "[step-program]") {
    int programs = 0;
    for (const pp::ScheduleFamily& family : pp::schedule_families()) {
        if (!family.step_program) continue;
        for (int P = 1; P <= 16; ++P) {
            if ((family.name == "dualpipe" || family.name == "chimera") && P % 2 != 0) continue;
            // The generator is the program on the program's M: at its origin and the next few. (M = 0: Megatron's order,
            // which reads M's residue modulo G, then takes the multiples of G.)
            const pp::FamilyStepProgram program = family.step_program(pp::GenerateParams{P, 0, std::nullopt});
            INFO(family.name << " P=" << P);
            CHECK(pp::step_program_lemma2_failure(program).empty());
            for (int t = 0; t <= 3; ++t) {
                const int M = program.m_origin + program.m_step * t;
                const pp::Schedule generated = family.generate(pp::GenerateParams{P, M, std::nullopt});
                REQUIRE(generated.ranks.size() == program.ranks.size());
                for (int r = 0; r < P; ++r) {
                    const std::vector<pp::Slot> run = pp::run_step_program(program.ranks[r], t);
                    REQUIRE(run.size() == generated.ranks[r].size());
                    for (size_t k = 0; k < run.size(); ++k) CHECK(same_slot(run[k], generated.ranks[r][k]));
                }
            }
            ++programs;
        }
    }
    // 1f1b, zb-h1, zb-h2, dualpipev, interleaved-1f1b, zb1p, zbv, combined-1f1b, seq1f1b, group-interleaved at
    // P = 1..16; dualpipe, chimera at even P
    CHECK(programs == 10 * 16 + 2 * 8);
}

TEST_CASE("step programs: PyTorch's interleaved walk and its step program give the same rows, idle cells included",
          "[step-program]") {
    // The walk (interleaved_rank_cells) still serves the M outside the program's progression; on the progression
    // the two are independent descriptions of one order.
    int rows = 0;
    for (const bool zero_bubble : {false, true})
        for (int P = 1; P <= 8; ++P)
            for (int V = 1; V <= 4; ++V) {
                const pp::FamilyStepProgram program = pp::interleaved_step_program({P, V, 0, zero_bubble});
                CHECK(program.m_step == P);
                CHECK(pp::step_program_lemma2_failure(program).empty());
                for (int M = program.m_origin; M <= 8 * P; M += P)
                    for (int r = 0; r < P; ++r) {
                        INFO("zb=" << zero_bubble << " P=" << P << " V=" << V << " M=" << M << " r=" << r);
                        const pp::RankCells walk = pp::interleaved_rank_cells({P, V, M, zero_bubble}, r),
                                            run = pp::step_program_cells(program.ranks[r], (M - program.m_origin) / P);
                        REQUIRE(walk.size() == run.size());
                        for (size_t k = 0; k < walk.size(); ++k) {
                            REQUIRE(walk[k].has_value() == run[k].has_value());
                            if (walk[k]) CHECK(*walk[k] == *run[k]);
                        }
                        ++rows;
                    }
            }
    CHECK(rows > 1000);
    // More local stages than a byte counts: phase 299 stays phase 299.
    const pp::FamilyStepProgram wide = pp::interleaved_step_program({2, 300, 0, false});
    for (int r = 0; r < 2; ++r) {
        const pp::RankCells walk = pp::interleaved_rank_cells({2, 300, wide.m_origin + 2, false}, r),
                            run = pp::step_program_cells(wide.ranks[r], 1);
        REQUIRE(walk.size() == run.size());
        for (size_t k = 0; k < walk.size(); ++k) REQUIRE(walk[k] == run[k]);
    }
}

TEST_CASE("step programs: the interpreter's order is Lemma 2's periodic word, on random programs", "[step-program]") {
    std::mt19937 rng(20261206);
    int held = 0, broken = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<int> delta;
        const pp::RankStepProgram rank = random_program(rng, delta);
        const pp::FamilyStepProgram program{1, 1, {rank}};
        std::vector<pp::Slot> at0, at1;
        try {
            at0 = pp::run_step_program(rank, 0);
            at1 = pp::run_step_program(rank, 1);
        } catch (const std::invalid_argument&) {
            continue;  // a W before any I: the program cannot run
        }
        if (!pp::step_program_lemma2_failure(program).empty()) {
            ++broken;
            continue;
        }
        ++held;
        const size_t prefix = prefix_slots(rank);
        for (int t = 0; t <= 6; ++t) {
            const std::vector<pp::Slot> run = pp::run_step_program(rank, t), word = word_instance(at0, at1, prefix, delta, t);
            INFO("trial " << trial << " t=" << t);
            REQUIRE(run.size() == word.size());
            for (size_t k = 0; k < run.size(); ++k) REQUIRE(same_slot(run[k], word[k]));
        }
    }
    // Both outcomes occur often enough for the test to mean something.
    CHECK(held >= 300);
    CHECK(broken >= 100);
}

TEST_CASE("step programs: a broken side condition is named", "[step-program]") {
    using pp::StepProgramBuilder;
    auto failure = [](pp::RankStepProgram rank) { return pp::step_program_lemma2_failure(pp::FamilyStepProgram{1, 1, {rank}}); };
    // Two forwards per backward: the counters drift apart.
    CHECK_THAT(failure(StepProgramBuilder({{0, 0}}).repeat(0, {pp::forward(0), pp::forward(0), pp::full_backward(0)}, 1).take()),
               Catch::Contains("advances phase 0's counters by 2 and 1"));
    // Two growing loops.
    CHECK_THAT(failure(StepProgramBuilder({{0, 0}})
                           .repeat(0, {pp::forward(0), pp::full_backward(0)}, 1)
                           .repeat(0, {pp::forward(0), pp::full_backward(0)}, 1)
                           .take()),
               Catch::Contains("has slope 1 (Lemma 2: one loop of slope 1"));
    // A slope of 2.
    CHECK_THAT(failure(StepProgramBuilder({{0, 0}}).repeat(0, {pp::forward(0), pp::full_backward(0)}, 2).take()),
               Catch::Contains("has slope 2"));
    // The growing loop queues W's it never runs.
    CHECK_THAT(failure(StepProgramBuilder({{0, 0}}).repeat(0, {pp::forward(0), pp::input_backward(0)}, 1).take()),
               Catch::Contains("changes the W queue's length"));
    // Nothing grows.
    CHECK_THAT(failure(StepProgramBuilder({{0, 0}}).repeat(3, {pp::forward(0), pp::full_backward(0)}).take()),
               Catch::Contains("no loop grows"));
    // A W with nothing queued cannot run.
    CHECK_THROWS_AS(pp::run_step_program(StepProgramBuilder({{0, 0}}).once({pp::weight()}).take(), 0), std::invalid_argument);
}

TEST_CASE("step programs: pipeproof-check derives the word from the program, named in the certificate or not",
          "[step-program][certificate]") {
    namespace fs = std::filesystem;
    const fs::path dir = pp::test::scratch_dir() / "step-program-dualpipev";
    fs::remove_all(dir);
    REQUIRE(pp::test::run_cli("prove dualpipev -P 4 --costs F=1,I=1,W=1 --certificate " + dir.string()).exit_code == 0);
    const auto good = pp::test::run_check(dir.string());
    INFO(good.out << good.err);
    REQUIRE(good.exit_code == 0);
    CHECK_THAT(good.out, Catch::Contains("ok     structure"));
    CHECK_THAT(good.out, Catch::Contains("one iteration of it raises every counter"));
    CHECK_THAT(good.out, Catch::Contains("Lemma 2 for the one step-program interpreter"));
    CHECK_THAT(good.out, !Catch::Contains("assuming: the generator's order"));
    auto rewrite = [&](const std::string& name, const std::function<void(nlohmann::json&)>& mutate) {
        const fs::path copy = pp::test::scratch_dir() / name;
        fs::remove_all(copy);
        fs::copy(dir, copy, fs::copy_options::recursive);
        nlohmann::json j = nlohmann::json::parse(pp::test::slurp(copy / "certificate.json"));
        mutate(j);
        std::ofstream(copy / "certificate.json", std::ios::binary) << j.dump(2);
        return pp::test::run_check(copy.string());
    };
    // A word that starts one block later than the program is the same word: CHECKED. (1F1B at P = 4: prefix gains
    // the block, block and suffix are raised by one micro-batch, one potential per new prefix slot.)
    const fs::path one_f_one_b = pp::test::scratch_dir() / "step-program-1f1b";
    fs::remove_all(one_f_one_b);
    REQUIRE(pp::test::run_cli("prove 1f1b -P 4 --costs F=1,I=1,W=1 --certificate " + one_f_one_b.string()).exit_code == 0);
    auto raise_ops = [](const std::string& slots) {  // "0F4 0B1" -> "0F5 0B2" (single ops of pipeline 0)
        std::string out;
        for (size_t at = 0; at < slots.size();) {
            const size_t end = std::min(slots.find(' ', at), slots.size());
            const std::string op = slots.substr(at, end - at);
            const size_t letter = op.find_first_of("FIBW");
            out += (out.empty() ? "" : " ") + op.substr(0, letter + 1) + std::to_string(std::stoi(op.substr(letter + 1)) + 1);
            at = end + 1;
        }
        return out;
    };
    {
        const fs::path copy = pp::test::scratch_dir() / "step-program-later-word";
        fs::remove_all(copy);
        fs::copy(one_f_one_b, copy, fs::copy_options::recursive);
        nlohmann::json j = nlohmann::json::parse(pp::test::slurp(copy / "certificate.json"));
        j["word"]["m_origin"] = 5;
        for (size_t r = 0; r < j["word"]["ranks"].size(); ++r) {
            auto& rank = j["word"]["ranks"][r];
            const std::string block = rank["block"];
            rank["prefix"] = rank["prefix"].get<std::string>() + " " + block;
            rank["block"] = raise_ops(block);
            if (!rank["suffix"].get<std::string>().empty()) rank["suffix"] = raise_ops(rank["suffix"]);
            for (int k = 0; k < 2; ++k) j["potentials"]["alpha"][r].push_back(0);
        }
        std::ofstream(copy / "certificate.json", std::ios::binary) << j.dump(2);
        const auto later = pp::test::run_check(copy.string());
        INFO(later.out);
        CHECK(later.exit_code == 0);
        CHECK_THAT(later.out, Catch::Contains("ok     structure"));
    }
    const nlohmann::json recorded = nlohmann::json::parse(pp::test::slurp(dir / "certificate.json"))["claim"]["structure_check"];
    CHECK(recorded["method"] == "step-program");
    CHECK(recorded["from_m"] == 8);
    CHECK(recorded["period_m"] == 1);
    // The record dropped: the checker still runs the program's check, and says so.
    const auto dropped = rewrite("step-program-dropped", [](auto& c) { c["claim"]["structure_check"] = nullptr; });
    CHECK(dropped.exit_code == 0);
    CHECK_THAT(dropped.out, Catch::Contains("ok     structure"));
    // A record that names another method or other numbers is rejected.
    for (const auto& [name, field, value] :
         std::vector<std::tuple<std::string, std::string, nlohmann::json>>{{"step-program-method", "method", "greedy-state-recurrence"},
                                                                           {"step-program-from", "from_m", 9},
                                                                           {"step-program-period", "period_m", 2}}) {
        const auto bad = rewrite(name, [&, f = field, v = value](auto& c) { c["claim"]["structure_check"][f] = v; });
        INFO(name << "\n" << bad.out);
        CHECK(bad.exit_code == 1);
        CHECK_THAT(bad.out, Catch::Contains("NOT CHECKED: structure: the family's generator runs a step program"));
    }
}
