// Re-cut periodic words (proofs/word_rotation.hpp, proofs/method.md §3): the identity a re-cut rests on, checked
// instance by instance on the generators' own words and random cuts, and the re-cut that gives Megatron's G > P
// residues their super-step potentials.
#include "proofs/maxplus.hpp"
#include "proofs/word_rotation.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace pp;

namespace {

struct Family {
    std::string name;
    int P, m0, step;
    std::optional<int> V, G;
};

Schedule instance(const Family& f, int t) {
    GenerateParams params{f.P, f.m0 + f.step * t, f.V};
    params.group_size = f.G;
    return find_family(f.name)->generate(params);
}

PeriodicWord word_of(const Family& f) {
    const Schedule s2 = instance(f, 2);
    const WordFit fit = fit_word(instance(f, 0), instance(f, 1), &s2);
    REQUIRE(fit.word);
    return *fit.word;
}

}  // namespace

TEST_CASE("re-cut words: the instance at t is the original's at t + 1, for every cut", "[prove][word]") {
    std::mt19937 random(20261208);
    const std::vector<Family> families{{"1f1b", 4, 4, 1, {}, {}},
                                       {"zbv", 3, 6, 1, {}, {}},
                                       {"dualpipev", 3, 6, 1, {}, {}},
                                       {"interleaved-1f1b", 4, 9, 5, 2, 5},
                                       {"interleaved-1f1b", 4, 8, 4, 3, 4}};
    for (const Family& f : families) {
        INFO(f.name << " P=" << f.P);
        const PeriodicWord word = word_of(f);
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<size_t> cuts;
            for (int r = 0; r < word.ranks(); ++r)
                cuts.push_back(word.block[r].empty() ? 0 : random() % word.block[r].size());
            const PeriodicWord recut = recut_word(word, cuts);
            for (int t = 0; t <= 5; ++t) {
                INFO("t = " << t);
                CHECK(schedule_mismatch(word.instantiate(t + 1), recut.instantiate(t)) == "");
                CHECK(schedule_mismatch(instance(f, t + 1), recut.instantiate(t)) == "");  // and the generator's
            }
        }
    }
}

TEST_CASE("re-cut words: Megatron's P = 4, G = 5, M mod G = 4 has super-steps only after the re-cut", "[prove][word]") {
    const Family f{"interleaved-1f1b", 4, 9, 5, 2, 5};
    const PeriodicWord word = word_of(f);
    const PeriodicStructure plain = analyse_structure(word, 4);
    CHECK_FALSE(plain.feasible);
    const auto recut = rotate_blocks_for_super_steps(word, 4);
    REQUIRE(recut);
    // Rank 0's block began two slots before its neighbours' (its F of micro-batch 9 and B of 3): those move to the
    // prefix, and to the block's end one group later.
    CHECK(recut->prefix[0].size() == word.prefix[0].size() + 2);
    for (int r = 1; r < 4; ++r) CHECK(recut->prefix[r].size() == word.prefix[r].size());
    CHECK(analyse_structure(*recut, 4).feasible);
    // A word that has its potentials already is not re-cut.
    CHECK_FALSE(rotate_blocks_for_super_steps(word_of({"1f1b", 4, 4, 1, {}, {}}), 4));
}
