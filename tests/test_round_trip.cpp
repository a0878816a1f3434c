// Issue 30's property: every family's schedule, with random headers (fraction costs with large
// denominators, stage costs, memory limit, activation sizes, chunk costs), converted native -> B -> native for
// B in {native, PyTorch CSV, JSON}, reads back with the same meaning: the same native text, the same exact
// `simulate --json` and the same `verify` verdict -- or `convert` refuses (exit 2) naming what B would lose,
// and a refusal for the placement or the letters is a real loss (forcing it with --drop changes the file).
#include "cli_runner.hpp"

#include "formats/native.hpp"
#include "model/chunk_costs.hpp"
#include "model/costs.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <random>

using pp::test::run_cli;
using pp::test::write_temp;

namespace {

// A fraction whose denominator is large and of every kind the writers treat differently: 2^k (a long
// decimal), 10^k, 3^k and arbitrary (a fraction).
pp::Rational random_value(std::mt19937_64& rng) {
    std::uniform_int_distribution<std::int64_t> numerator(1, std::int64_t{1} << 20);
    std::uniform_int_distribution<int> kind(0, 3), power(1, 20);
    std::int64_t den = 1;
    switch (kind(rng)) {
        case 0: den = std::int64_t{1} << power(rng); break;
        case 1: for (int k = power(rng) % 9; k > 0; --k) den *= 10; break;
        case 2: for (int k = power(rng) % 12; k > 0; --k) den *= 3; break;
        default: den = numerator(rng); break;
    }
    return pp::Rational(numerator(rng), den);
}

enum class Headers { None, Costs, Chunks };

// Costs (sometimes B, FB, FI, comm), a stage-cost override, a memory limit and activation sizes; or chunk
// costs with a slowdown and a memory limit.
void add_headers(pp::Schedule& s, Headers headers, std::mt19937_64& rng) {
    if (headers == Headers::None) return;
    std::bernoulli_distribution coin(0.5);
    if (headers == Headers::Costs) {
        pp::Costs c;
        c.base.F = random_value(rng), c.base.I = random_value(rng), c.base.W = random_value(rng);
        if (coin(rng)) c.base.B = random_value(rng);
        if (coin(rng)) c.base.FB = random_value(rng);
        if (coin(rng)) c.base.FI = random_value(rng);
        if (coin(rng)) c.comm = random_value(rng);
        pp::OpCosts block = c.base;
        block.F = random_value(rng);
        c.per_block[std::uniform_int_distribution<int>(0, s.placement.blocks() - 1)(rng)] = block;
        s.costs = c;
        const pp::Rational sized = random_value(rng);
        s.activation_sizes = pp::ActivationModel{sized + 1, sized};
    } else {
        pp::ChunkCosts c = pp::parse_chunk_costs(
            "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1");
        for (int k = 0; k < pp::kRequiredComponents; ++k) c.set_all(static_cast<pp::Component>(k), random_value(rng));
        c.slowdown = pp::Rational(1, std::uniform_int_distribution<int>(2, 1000)(rng));
        s.chunks = pp::ChunkSpec{c, std::nullopt, {}};
    }
    // From tight (a verdict with memory violations) to loose.
    s.memory_limit = pp::Rational(std::uniform_int_distribution<int>(1, 4 * s.placement.ranks)(rng), 1) + random_value(rng) / 7;
}

// The first (P, M, V) the family accepts, smallest first.
std::optional<pp::Schedule> small_instance(const pp::ScheduleFamily& family) {
    for (const auto& [p, m] : std::vector<std::pair<int, int>>{{2, 4}, {4, 8}, {2, 8}, {4, 16}, {3, 6}, {4, 12}})
        for (const std::optional<int> v : {std::optional<int>{}, std::optional<int>{2}}) {
            try {
                return family.generate({p, m, v});
            } catch (const std::exception&) {
            }
        }
    return std::nullopt;
}

// The native text without its comment lines (the `# from FILE` line names the file it came from).
std::string without_comments(const std::string& text) {
    std::string out;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        if (text[at] != '#') out += text.substr(at, end - at + 1);
        at = end + 1;
    }
    return out;
}

// Where a finding is (file, line, column) differs between files of the same meaning; what it is does not.
void drop_positions(nlohmann::json& j) {
    if (j.is_object()) {
        for (const char* key : {"file", "line", "column"}) j.erase(key);
        for (auto& [key, value] : j.items()) drop_positions(value);
    } else if (j.is_array()) {
        for (auto& value : j) drop_positions(value);
    }
}

struct Reading {
    int verify_exit;
    nlohmann::json simulate;  // the --json document, without positions
    nlohmann::json inferred;  // what the reader inferred (the document's "inferred" list)
};

Reading read_as_tool(const std::string& file) {
    Reading r;
    r.verify_exit = run_cli("verify " + file).exit_code;
    const auto sim = run_cli("simulate --json " + file);
    INFO(sim.err);
    REQUIRE((sim.exit_code == 0 || sim.exit_code == 1));
    r.simulate = nlohmann::json::parse(sim.out);
    drop_positions(r.simulate);
    // What a file left to infer is a property of its format (a CSV names no ranks or micro-batches), not of the
    // schedule's meaning: kept apart so the meaning is compared alone.
    r.inferred = r.simulate["inferred"];
    r.simulate.erase("inferred");
    return r;
}

}  // namespace

TEST_CASE("round trip: every family x {native, CSV, JSON} x random headers reads back with the same meaning, or is refused",
          "[issue30][round-trip]") {
    std::mt19937_64 rng(3030);
    int kept = 0, refused = 0;
    for (const pp::ScheduleFamily& family : pp::schedule_families()) {
        auto generated = small_instance(family);
        REQUIRE(generated);
        for (const std::string ext : {"txt", "csv", "json"}) {
            const std::vector<Headers> variants = ext == "csv" ? std::vector<Headers>{Headers::None, Headers::Costs}
                                                               : std::vector<Headers>{Headers::Costs, Headers::Chunks};
            for (const Headers headers : variants) {
                pp::Schedule s = *generated;
                s.source.clear();
                add_headers(s, headers, rng);
                const std::string stem = fmt::format("rt_{}_{}_{}", family.name, ext, static_cast<int>(headers));
                const std::string original = write_temp(stem + "_a.txt", pp::write_native(s));
                const std::string middle = (pp::test::scratch_dir() / (stem + "_b." + ext)).string();
                const std::string back = (pp::test::scratch_dir() / (stem + "_c.txt")).string();
                INFO(family.name << " -> " << ext << ", headers " << static_cast<int>(headers) << "\n" << pp::write_native(s));
                const auto there = run_cli("convert " + original + " -o " + middle);
                if (there.exit_code != 0) {
                    // Refused: a usage error naming what would be lost, nothing written.
                    INFO(there.err);
                    CHECK(there.exit_code == 2);
                    // Two pipelines or sequence segments: the CSV cannot hold the schedule at all, the writer says why.
                    const bool two_pipelines = s.placement.pipeline_count() > 1, segments = s.segments > 1;
                    CHECK((two_pipelines ? there.err.find("pipeline")
                           : segments    ? there.err.find("no sequence segments")
                                         : there.err.find("--drop ")) != std::string::npos);
                    CHECK(ext == "csv");  // native and JSON keep everything a generated schedule has
                    for (const char* real : {"--drop placement", "--drop letters"})
                        if (there.err.find(real) != std::string::npos) {
                            const auto forced = run_cli("convert " + original + " -o " + middle + " --drop " + std::string(real + 7));
                            CHECK(forced.exit_code == 0);
                            const auto re = run_cli("convert " + middle + " -o " + back);
                            CHECK((re.exit_code != 0 || without_comments(pp::test::slurp(back)) != without_comments(pp::test::slurp(original))));
                        }
                    ++refused;
                    continue;
                }
                const auto home = run_cli("convert " + middle + " -o " + back);
                INFO(home.err);
                REQUIRE(home.exit_code == 0);
                CHECK(without_comments(pp::test::slurp(back)) == without_comments(pp::test::slurp(original)));
                const Reading a = read_as_tool(original), c = read_as_tool(back), b = read_as_tool(middle);
                CHECK(a.verify_exit == c.verify_exit);
                CHECK(a.verify_exit == b.verify_exit);
                CHECK(a.simulate == c.simulate);
                CHECK(a.simulate == b.simulate);
                // Native and JSON files from convert state everything; a CSV leaves at least the counts to infer.
                CHECK(a.inferred.empty());
                CHECK(c.inferred.empty());
                CHECK(b.inferred.empty() == (ext != "csv"));
                ++kept;
            }
        }
    }
    // Both outcomes happen: CSV refuses costs and DualPipe's two pipelines, and keeps a plain 1F1B.
    CHECK(kept >= 2 * static_cast<int>(pp::schedule_families().size()));
    CHECK(refused >= static_cast<int>(pp::schedule_families().size()));
}
