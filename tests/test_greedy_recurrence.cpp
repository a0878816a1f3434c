// The structure for every M by a finite check of a greedy generator's state (V-ZB's rounds, schedules/v_zb.hpp;
// 1F1B-V's compaction sweep, schedules/v1f1b.hpp), and what rests on it: prove answers PROVED, the certificate
// records the check, pipeproof-check re-runs it and rejects a certificate whose record is changed. The check's
// conclusion is cross-checked here on the generator's output alone: from the M it names, one more period inserts
// one segment of the same length per rank and shifts what follows.
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "schedules/v1f1b.hpp"
#include "schedules/v_zb.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

pp::GenerateParams params_at(int P, const std::string& costs) {
    pp::GenerateParams params{P, 1, std::nullopt};
    if (!costs.empty()) params.costs = pp::parse_costs(costs);
    return params;
}

pp::Schedule generate(pp::GenerateParams params, int M, const char* family = "v-zb") {
    params.microbatches = M;
    return pp::find_family(family)->generate(params);
}

pp::Slot raised(pp::Slot slot, int by) {
    for (int i = 0; i < slot.count; ++i) slot.ops[i].microbatch += by;
    return slot;
}

bool same_slot(const pp::Slot& a, const pp::Slot& b) {
    if (a.count != b.count) return false;
    for (int i = 0; i < a.count; ++i)
        if (!(a.ops[i] == b.ops[i])) return false;
    return true;
}

// Whether `longer` is `shorter` with `length` slots inserted at some position p, the slots after it raised by e.
bool one_segment_inserted(const std::vector<pp::Slot>& shorter, const std::vector<pp::Slot>& longer, size_t length, int e) {
    if (longer.size() != shorter.size() + length) return false;
    for (size_t p = 0; p <= shorter.size(); ++p) {
        if (p > 0 && !same_slot(shorter[p - 1], longer[p - 1])) return false;  // the common prefix ended before p
        bool rest = true;
        for (size_t k = p; rest && k < shorter.size(); ++k) rest = same_slot(raised(shorter[k], e), longer[k + length]);
        if (rest) return true;
    }
    return false;
}

// From rec.from_m on, every step of e micro-batches inserts one segment per rank, of a length that never changes.
void grows_by_one_segment(const pp::GenerateParams& params, const pp::GreedyRecurrence& rec, const char* family) {
    const int e = rec.period_m;
    std::vector<size_t> length;
    for (int M = rec.from_m; M <= rec.from_m + 24; ++M) {
        const pp::Schedule a = generate(params, M, family), b = generate(params, M + e, family);
        for (int r = 0; r < params.ranks; ++r) {
            const size_t L = b.ranks[r].size() - a.ranks[r].size();
            if (length.size() <= static_cast<size_t>(r)) length.push_back(L);
            INFO(family << " M=" << M << " rank " << r);
            CHECK(L == length[r]);
            CHECK(one_segment_inserted(a.ranks[r], b.ranks[r], L, e));
        }
    }
}

// A copy of the certificate in `good` with its JSON changed by `mutate`: pipeproof-check must stop at the step
// structure, saying `reason`.
using Mutation = std::function<void(nlohmann::json&)>;
void structure_record_rejected(const fs::path& good, const nlohmann::json& original, const std::string& name,
                               const Mutation& mutate, const std::string& reason) {
    const fs::path dir = pp::test::scratch_dir() / name;
    fs::remove_all(dir);
    fs::copy(good, dir, fs::copy_options::recursive);
    nlohmann::json j = original;
    mutate(j);
    std::ofstream(dir / "certificate.json", std::ios::binary) << j.dump(2);
    const auto r = pp::test::run_check(dir.string());
    INFO(name << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("NOT CHECKED: structure") && Catch::Contains(reason));
}

}  // namespace

TEST_CASE("v-zb recurrence: the greedy's state repeats, and the generator's orders grow by one period from there",
          "[v-zb][structure]") {
    struct Case {
        int P;
        const char* costs;
    };
    for (const Case c : {Case{4, ""}, Case{4, "F=1,I=1,W=1"}, Case{8, "F=1,I=1,W=1"}, Case{8, "F=2,I=2,W=1"},
                         Case{8, "F=3,I=4,W=2"}, Case{6, "F=2,I=3,W=7,comm=1"}}) {
        INFO("P=" << c.P << " costs " << c.costs);
        const pp::GenerateParams params = params_at(c.P, c.costs);
        const pp::GreedyRecurrence rec = pp::check_v_zb_recurrence(params, 1, 16 * c.P + 16);
        INFO(rec.failure);
        REQUIRE(rec.holds);
        CHECK(rec.runs_checked >= 4);  // four variants at least
        CHECK(rec.from_m >= 1);
        grows_by_one_segment(params, rec, "v-zb");
    }
}

TEST_CASE("v-zb recurrence: an M too small for the state to repeat is no proof, and says why", "[v-zb][structure]") {
    const pp::GreedyRecurrence rec = pp::check_v_zb_recurrence(params_at(4, ""), 2, 2);
    CHECK_FALSE(rec.holds);
    CHECK_THAT(rec.failure, Catch::Contains("M = 2") && Catch::Contains("never repeats"));
}

TEST_CASE("v-zb recurrence: prove is PROVED at exact costs, its certificate CHECKED, a changed record rejected",
          "[v-zb][structure][certificate]") {
    using pp::test::run_check;
    using pp::test::run_cli;
    // The three cost points of the proof table: P = 4 at unit costs, P = 8 at two others.
    for (const char* args : {"-P 4 --costs F=1,I=1,W=1", "-P 8 --costs F=2,I=2,W=1", "-P 8 --costs F=3,I=4,W=2"}) {
        const auto proof = run_cli(std::string("prove v-zb ") + args);
        INFO(args << "\n" << proof.out << proof.err);
        CHECK(proof.exit_code == 0);
        CHECK_THAT(proof.out, Catch::Contains("verdict: PROVED") && Catch::Contains("greedy state recurrence"));
    }
    const fs::path good = pp::test::scratch_dir() / "vzb-cert";
    fs::remove_all(good);
    REQUIRE(run_cli("prove v-zb -P 4 --costs F=2,I=1,W=1 --certificate " + good.string()).exit_code == 0);
    const auto check = run_check(good.string());
    INFO(check.out << check.err);
    REQUIRE(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("ok     structure") && Catch::Contains("structure: machine-checked"));

    const nlohmann::json original = nlohmann::json::parse(pp::test::slurp(good / "certificate.json"));
    REQUIRE(original["claim"]["structure_check"]["method"] == "greedy-state-recurrence");
    auto rejected = [&](const std::string& name, const Mutation& mutate, const std::string& reason) {
        structure_record_rejected(good, original, "vzb-cert-" + name, mutate, reason);
    };
    rejected("too-early", [](auto& j) { j["claim"]["structure_check"]["from_m"] = 2; }, "does not repeat at M = 2");
    rejected("period", [](auto& j) { j["claim"]["structure_check"]["period_m"] = 2; }, "the certificate says 2");
    rejected("method", [](auto& j) { j["claim"]["structure_check"]["method"] = "argued"; }, "unknown structure check");
}

TEST_CASE("1f1b-v recurrence: the compaction sweep's state repeats, and the generator's orders grow by one period "
          "from there", "[1f1b-v][structure]") {
    for (int P : {1, 2, 3, 4, 5, 6, 7, 8, 12}) {
        INFO("P=" << P);
        const pp::GreedyRecurrence rec = pp::check_1f1b_v_recurrence(P, 1, 16 * P + 16);
        INFO(rec.failure);
        REQUIRE(rec.holds);
        CHECK(rec.from_m > 1);  // the warm-up and cool-down overlap below it
        grows_by_one_segment(pp::GenerateParams{P, 1, 2}, rec, "1f1b-v");
    }
}

TEST_CASE("1f1b-v recurrence: an M too small for the sweep to repeat is no proof, and says why", "[1f1b-v][structure]") {
    const pp::GreedyRecurrence rec = pp::check_1f1b_v_recurrence(4, 2, 2);
    CHECK_FALSE(rec.holds);
    CHECK_THAT(rec.failure, Catch::Contains("at M = 2") && Catch::Contains("(M = 2..2 tried)"));
    // Period 1 fails on the sweep itself: at M = 9, one below where it repeats at P = 4.
    const pp::GreedyRecurrence early = pp::check_1f1b_v_recurrence(4, 9, 9);
    CHECK_FALSE(early.holds);
    CHECK(pp::check_1f1b_v_recurrence(4, 10, 10).holds);
}

TEST_CASE("1f1b-v recurrence: prove is PROVED without an argued lemma, its certificate CHECKED, a changed record "
          "rejected", "[1f1b-v][structure][certificate]") {
    using pp::test::run_check;
    using pp::test::run_cli;
    const auto proof = run_cli("prove 1f1b-v -P 2");
    INFO(proof.out << proof.err);
    CHECK(proof.exit_code == 0);
    CHECK_THAT(proof.out, Catch::Contains("verdict: PROVED") && Catch::Contains("sweep state recurrence"));
    CHECK_THAT(proof.out, !Catch::Contains("Argued"));
    const fs::path good = pp::test::scratch_dir() / "v1f1b-cert";
    fs::remove_all(good);
    REQUIRE(run_cli("prove 1f1b-v -P 4 --costs F=1,I=1,W=1 --certificate " + good.string()).exit_code == 0);
    const auto check = run_check(good.string());
    INFO(check.out << check.err);
    REQUIRE(check.exit_code == 0);
    CHECK_THAT(check.out, Catch::Contains("ok     structure") && Catch::Contains("compaction sweep's state"));

    const nlohmann::json original = nlohmann::json::parse(pp::test::slurp(good / "certificate.json"));
    REQUIRE(original["claim"]["structure_check"]["method"] == "sweep-state-recurrence");
    auto rejected = [&](const std::string& name, const Mutation& mutate, const std::string& reason) {
        structure_record_rejected(good, original, "v1f1b-cert-" + name, mutate, reason);
    };
    rejected("too-early", [](auto& j) { j["claim"]["structure_check"]["from_m"] = 3; }, "does not repeat at M = 3");
    rejected("period", [](auto& j) { j["claim"]["structure_check"]["period_m"] = 2; }, "the certificate says 2");
    rejected("far", [](auto& j) { j["claim"]["structure_check"]["from_m"] = 2147483647; }, "where the prover stops looking");
    rejected("other-method", [](auto& j) { j["claim"]["structure_check"]["method"] = "greedy-state-recurrence"; },
             "unknown structure check");
}
