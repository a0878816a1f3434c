// Activation offload (verifier/offload.hpp): a hand-timed example, the plain timing when nothing moves or moving
// is free, and random instances of six families against a second timing written here from the model's rules
// alone (relaxation to a fixpoint in rationals, peaks by summing at every event time), plus the CLI's flags,
// verdicts and exit codes.
#include "cli_runner.hpp"
#include "schedules/registry.hpp"
#include "verifier/memory.hpp"
#include "verifier/offload.hpp"
#include "verifier/simulate.hpp"

#include "test_render_xml.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

using namespace pp;
using pp::test::run_cli;

namespace {

Schedule generate(const std::string& family, int P, int M, std::optional<int> V = std::nullopt,
                  std::optional<int> segments = std::nullopt) {
    GenerateParams params{P, M};
    params.stages_per_rank = V;
    params.segments = segments;
    return find_family(family)->generate(params);
}

Costs costs_of(const std::string& text) { return parse_costs(text); }

// ---- The second timing: the rules of verifier/offload.hpp's header, nothing of its code. ----

using OpKey = std::tuple<int, int, int, int>;  // kind, pipeline, stage, micro-batch
OpKey key(const Op& op) { return {static_cast<int>(op.kind), op.pipeline, op.stage, op.microbatch}; }

struct ReferenceTiming {
    Rational makespan{0};
    std::vector<Rational> device_peak, host_peak;
};

Rational peak_by_sums(const std::vector<std::pair<Rational, Rational>>& events) {  // (time, delta)
    Rational peak(0);
    for (const auto& [t, unused] : events) {
        Rational live(0);
        for (const auto& [u, delta] : events)
            if (u <= t) live += delta;
        peak = std::max(peak, live);
    }
    return peak;
}

ReferenceTiming reference_offload(const Schedule& s, const Costs& costs, const ActivationModel& given, const OffloadPolicy& p) {
    const ActivationModel sizes = sizes_per_unit(s, given);
    // Durations from the plain simulator (its own path); everything after is recomputed here.
    const Simulation plain = simulate(s, costs, given);
    std::vector<std::vector<Rational>> duration(s.ranks.size());
    std::map<OpKey, std::pair<int, int>> where;  // op -> (rank, position)
    size_t global = 0;
    for (size_t r = 0; r < s.ranks.size(); ++r)
        for (size_t q = 0; q < s.ranks[r].size(); ++q, ++global) {
            duration[r].push_back(plain.scale.to_units(plain.end[global] - plain.start[global]));
            for (const Op& op : s.ranks[r][q]) where[key(op)] = {static_cast<int>(r), static_cast<int>(q)};
        }
    auto find = [&](Op op, OpKind kind) -> std::optional<std::pair<int, int>> {
        op.kind = kind;
        const auto it = where.find(key(op));
        if (it == where.end()) return std::nullopt;
        return it->second;
    };
    auto dependencies = [&](const Op& op) {
        std::vector<std::pair<int, int>> deps;
        const int last = s.placement.pipelines[op.pipeline].stages() - 1;
        Op prev = op;
        if (op.kind == OpKind::F && op.stage > 0) {
            prev.stage = op.stage - 1;
            if (auto at = find(prev, OpKind::F)) deps.push_back(*at);
        } else if (op.kind == OpKind::I || op.kind == OpKind::B) {
            if (op.stage == last) {
                if (auto at = find(prev, OpKind::F)) deps.push_back(*at);
            } else {
                prev.stage = op.stage + 1;
                if (auto at = find(prev, OpKind::I)) deps.push_back(*at);
                else if (auto at2 = find(prev, OpKind::B)) deps.push_back(*at2);
            }
        } else if (op.kind == OpKind::W) {
            if (auto at = find(prev, OpKind::I)) deps.push_back(*at);
        }
        return deps;
    };
    struct Moved {
        int rank, forward, backward, trigger;
        Rational amount;
        Op op;
    };
    std::vector<Moved> moved;
    for (size_t r = 0; r < s.ranks.size(); ++r)
        for (size_t q = 0; q < s.ranks[r].size(); ++q)
            for (const Op& op : s.ranks[r][q]) {
                if (op.kind != OpKind::F || p.fraction == Rational(0)) continue;
                auto back = find(op, OpKind::I);
                if (!back) back = find(op, OpKind::B);
                if (!back || back->second - static_cast<int>(q) <= p.lookahead) continue;
                moved.push_back({static_cast<int>(r), static_cast<int>(q), back->second, back->second - p.lookahead,
                                 p.fraction * sizes.forward_alloc * sizes.scale_of(op.pipeline, op.stage), op});
            }
    // Stream order: at each slot, the reload its start releases, then its forward's offload.
    struct Transfer {
        int moved;
        bool to_host;
    };
    std::vector<std::vector<Transfer>> streams(s.ranks.size() * 2);
    for (size_t r = 0; r < s.ranks.size(); ++r)
        for (int q = 0; q < static_cast<int>(s.ranks[r].size()); ++q)
            for (int pass = 0; pass < 2; ++pass)
                for (size_t k = 0; k < moved.size(); ++k)
                    if (moved[k].rank == static_cast<int>(r)) {
                        if (pass == 0 && moved[k].trigger == q) streams[2 * r + (p.duplex ? 1 : 0)].push_back({static_cast<int>(k), false});
                        if (pass == 1 && moved[k].forward == q) streams[2 * r].push_back({static_cast<int>(k), true});
                    }
    std::vector<std::vector<Rational>> start(s.ranks.size()), end(s.ranks.size());
    for (size_t r = 0; r < s.ranks.size(); ++r) start[r].assign(s.ranks[r].size(), Rational(0)), end[r] = start[r];
    std::vector<Rational> off_start(moved.size(), Rational(0)), off_end = off_start, re_start = off_start, re_end = off_start;
    for (bool changed = true; changed;) {
        changed = false;
        auto raise = [&](Rational& value, const Rational& at_least) {
            if (at_least > value) value = at_least, changed = true;
        };
        for (size_t r = 0; r < s.ranks.size(); ++r)
            for (size_t q = 0; q < s.ranks[r].size(); ++q) {
                if (q > 0) raise(start[r][q], end[r][q - 1]);
                for (const Op& op : s.ranks[r][q])
                    for (const auto& [dr, dq] : dependencies(op))
                        raise(start[r][q], end[dr][dq] + (dr == static_cast<int>(r) ? Rational(0) : costs.comm));
                for (size_t k = 0; k < moved.size(); ++k)
                    if (moved[k].rank == static_cast<int>(r) && moved[k].backward == static_cast<int>(q))
                        raise(start[r][q], re_end[k]);
                raise(end[r][q], start[r][q] + duration[r][q]);
            }
        for (const auto& stream : streams)
            for (size_t i = 0; i < stream.size(); ++i) {
                const Moved& m = moved[stream[i].moved];
                const size_t k = static_cast<size_t>(stream[i].moved);
                Rational& st = stream[i].to_host ? off_start[k] : re_start[k];
                if (i > 0) {
                    const Transfer& before = stream[i - 1];
                    raise(st, before.to_host ? off_end[before.moved] : re_end[before.moved]);
                }
                if (stream[i].to_host) {
                    raise(st, end[m.rank][m.forward]);
                    raise(off_end[k], st + m.amount * p.offload_time);
                } else {
                    raise(st, off_end[k]);
                    raise(st, start[m.rank][m.trigger]);
                    raise(re_end[k], st + m.amount * p.reload_time);
                }
            }
    }
    ReferenceTiming out;
    std::vector<std::vector<std::pair<Rational, Rational>>> device(s.ranks.size()), host(s.ranks.size());
    for (size_t r = 0; r < s.ranks.size(); ++r)
        for (size_t q = 0; q < s.ranks[r].size(); ++q) {
            out.makespan = std::max(out.makespan, end[r][q]);
            for (const Op& op : s.ranks[r][q]) {
                const Rational scale = sizes.scale_of(op.pipeline, op.stage);
                const Rational size = sizes.forward_alloc * scale, at_i = sizes.input_grad_free * scale;
                if (op.kind == OpKind::F) device[r].push_back({start[r][q], size});
                if (op.kind == OpKind::I) device[r].push_back({end[r][q], -at_i});
                if (op.kind == OpKind::W) device[r].push_back({end[r][q], at_i - size});
                if (op.kind == OpKind::B) device[r].push_back({end[r][q], -size});
            }
        }
    for (size_t k = 0; k < moved.size(); ++k) {
        device[moved[k].rank].push_back({off_end[k], -moved[k].amount});
        device[moved[k].rank].push_back({re_start[k], moved[k].amount});
        host[moved[k].rank].push_back({off_start[k], moved[k].amount});
        host[moved[k].rank].push_back({re_end[k], -moved[k].amount});
    }
    for (size_t r = 0; r < s.ranks.size(); ++r) {
        out.device_peak.push_back(peak_by_sums(device[r]));
        out.host_peak.push_back(peak_by_sums(host[r]));
    }
    return out;
}

}  // namespace

TEST_CASE("offload: 1F1B P=2 M=3 timed by hand", "[offload]") {
    // Rank 0 runs F0 F1 B0 F2 B1 B2 (F = 1, B = 2, no latency; plain makespan 12). All three of its stashes move
    // (each backward is at least two slots after its forward); rank 1's backwards follow their forwards at once.
    const Schedule s = generate("1f1b", 2, 3);
    const Costs costs = costs_of("F=1,B=2");
    OffloadPolicy policy;
    policy.offload_time = policy.reload_time = Rational(1);
    OffloadTiming fast = time_with_offload(s, costs, {}, policy);
    // Link 1: off F0 [1,2], reload F0 [2,3] (released by F1's start at 1), off F1 [3,4], B0 [4,6], F2 [6,7],
    // reload F1 [6,7], off F2 [7,8], B1 [7,9], reload F2 [8,9], B2 [10,12]: nothing waits for the link.
    CHECK(fast.scale.to_units(fast.makespan) == Rational(12));
    CHECK(fast.ranks[0].offloaded == 3);
    CHECK(fast.ranks[0].kept == 0);
    CHECK(fast.ranks[1].offloaded == 0);
    CHECK(fast.ranks[1].kept == 3);
    CHECK(fast.ranks[0].device_peak == Rational(2));  // [1,2): F0 and F1; at 2 F0 leaves as it comes back
    CHECK(fast.ranks[0].host_peak == Rational(1));
    CHECK(fast.scale.to_units(fast.ranks[0].link_busy) == Rational(6));
    // Link 3: off F0 [1,4], reload F0 [4,7], off F1 [7,10], B0 [7,9], F2 [9,10], reload F1 [10,13], off F2
    // [13,16], B1 [13,15], reload F2 [16,19], B2 [19,21].
    policy.offload_time = policy.reload_time = Rational(3);
    const OffloadTiming slow = time_with_offload(s, costs, {}, policy);
    CHECK(slow.scale.to_units(slow.makespan) == Rational(21));
    REQUIRE(slow.transfers.size() == 6);
    CHECK(slow.scale.to_units(slow.transfers.back().start) == Rational(16));
    CHECK_FALSE(slow.transfers.back().to_host);
    // Two streams: the reloads no longer queue behind offloads. Offloads F0 [1,4], F1 [4,7], F2 [10,13];
    // reloads F0 [4,7], F1 [9,12] (released by F2's start at 9, after B0 [7,9]), F2 [13,16] (after its offload);
    // B1 [12,14], B2 [16,18].
    policy.duplex = true;
    const OffloadTiming duplex = time_with_offload(s, costs, {}, policy);
    CHECK(duplex.scale.to_units(duplex.makespan) == Rational(18));
}

TEST_CASE("offload: nothing moved, or moved for free, times as the plain simulator", "[offload]") {
    const std::vector<std::tuple<std::string, int, int, std::optional<int>, std::optional<int>>> cases = {
        {"1f1b", 4, 8, {}, {}}, {"zb-h1", 4, 8, {}, {}}, {"interleaved-1f1b", 4, 8, 2, {}},
        {"dualpipe", 4, 8, {}, {}}, {"dualpipev", 4, 8, {}, {}}, {"group-interleaved", 4, 8, 2, {}}};
    for (const auto& [family, P, M, V, k] : cases) {
        CAPTURE(family);
        const Schedule s = generate(family, P, M, V, k);
        const Costs costs = costs_of("F=2,I=3,W=1,comm=1/2");
        ActivationModel sizes;
        sizes.input_grad_free = Rational(1, 2);
        const Simulation plain = simulate(s, costs, sizes);
        const std::vector<Rational> peaks = peak_activations(s, sizes);

        OffloadPolicy none;
        none.fraction = Rational(0);
        none.offload_time = none.reload_time = Rational(5);
        const OffloadTiming still = time_with_offload(s, costs, sizes, none);
        CHECK(still.scale.to_units(still.makespan) == plain.scale.to_units(plain.makespan));
        CHECK(still.transfers.empty());
        for (size_t r = 0; r < peaks.size(); ++r) CHECK(still.ranks[r].device_peak == peaks[r]);

        OffloadPolicy free_link;  // everything eligible moves, at no cost: same makespan, no higher peak
        const OffloadTiming moved = time_with_offload(s, costs, sizes, free_link);
        CHECK(moved.scale.to_units(moved.makespan) == plain.scale.to_units(plain.makespan));
        for (size_t r = 0; r < peaks.size(); ++r) CHECK(moved.ranks[r].device_peak <= peaks[r]);
    }
}

TEST_CASE("offload: slots that take no time still hold their stashes", "[offload]") {
    // At equal times the slots keep their order on the rank: with zero costs the device peak is the order-based peak,
    // and a pair's forward allocates before its backward releases.
    for (const auto& [family, costs] : std::vector<std::pair<std::string, std::string>>{
             {"1f1b", "F=0,I=0,W=0"}, {"dualpipe", "F=0,I=1,W=1,FB=0"}, {"zb-h1", "F=0,I=0,W=1"}}) {
        CAPTURE(family, costs);
        const Schedule s = generate(family, 4, 8);
        OffloadPolicy none;
        none.fraction = Rational(0);
        const OffloadTiming t = time_with_offload(s, costs_of(costs), {}, none);
        const std::vector<Rational> peaks = peak_activations(s);
        for (size_t r = 0; r < peaks.size(); ++r) CHECK(t.ranks[r].device_peak == peaks[r]);
    }
}

TEST_CASE("offload: random instances against a second timing from the rules", "[offload]") {
    std::mt19937 rng(43);
    auto pick = [&](const std::vector<Rational>& values) { return values[rng() % values.size()]; };
    const std::vector<std::tuple<std::string, int, int, std::optional<int>, std::optional<int>>> cases = {
        {"1f1b", 3, 6, {}, {}}, {"zb-h1", 4, 6, {}, {}}, {"interleaved-1f1b", 2, 4, 2, {}},
        {"dualpipe", 4, 8, {}, {}}, {"chimera", 4, 8, {}, {}}, {"group-interleaved", 3, 6, 2, {}}, {"zbv", 3, 6, {}, {}}};
    int compared = 0;
    for (int round = 0; round < 12; ++round)
        for (const auto& [family, P, M, V, k] : cases) {
            const Schedule s = generate(family, P, M, V, k);
            Costs costs;
            costs.base.F = pick({Rational(1), Rational(2), Rational(3, 2)});
            costs.base.I = pick({Rational(1), Rational(2)});
            costs.base.W = pick({Rational(1, 2), Rational(1)});
            costs.comm = pick({Rational(0), Rational(1, 3)});
            ActivationModel sizes;
            sizes.input_grad_free = pick({Rational(0), Rational(1, 2)});
            OffloadPolicy policy;
            policy.fraction = pick({Rational(1, 4), Rational(1, 2), Rational(1)});
            policy.offload_time = pick({Rational(0), Rational(1, 2), Rational(2), Rational(5)});
            policy.reload_time = pick({Rational(1, 2), Rational(3)});
            policy.lookahead = 1 + static_cast<int>(rng() % 3);
            policy.duplex = rng() % 2 == 0;
            CAPTURE(family, round, format_costs(costs), format_rational(policy.fraction), format_rational(policy.offload_time),
                    format_rational(policy.reload_time), policy.lookahead, policy.duplex);
            const OffloadTiming ours = time_with_offload(s, costs, sizes, policy);
            const ReferenceTiming theirs = reference_offload(s, costs, sizes, policy);
            CHECK(ours.scale.to_units(ours.makespan) == theirs.makespan);
            const std::vector<Rational> order_peaks = peak_activations(s, sizes);
            for (size_t r = 0; r < s.ranks.size(); ++r) {
                CHECK(ours.ranks[r].device_peak == theirs.device_peak[r]);
                CHECK(ours.ranks[r].host_peak == theirs.host_peak[r]);
                CHECK(ours.ranks[r].device_peak <= order_peaks[r]);  // resident stashes are among the live ones
            }
            const Simulation plain = simulate(s, costs, sizes);  // offload only adds constraints
            CHECK(ours.scale.to_units(ours.makespan) >= plain.scale.to_units(plain.makespan));
            ++compared;
        }
    CHECK(compared == 84);
}

TEST_CASE("offload: bad policies are refused", "[offload]") {
    const Schedule s = generate("1f1b", 2, 2);
    OffloadPolicy p;
    p.fraction = Rational(3, 2);
    CHECK_THROWS_AS(time_with_offload(s, costs_of("F=1,B=2"), {}, p), OffloadError);
    p.fraction = Rational(1);
    p.reload_time = Rational(-1);
    CHECK_THROWS_AS(time_with_offload(s, costs_of("F=1,B=2"), {}, p), OffloadError);
    p.reload_time = Rational(1);
    p.lookahead = 0;
    CHECK_THROWS_AS(time_with_offload(s, costs_of("F=1,B=2"), {}, p), OffloadError);
}

TEST_CASE("offload: simulate's flags, verdicts and exit codes", "[offload][cli]") {
    const std::string base = "simulate 1f1b -P 2 -M 3 --costs F=1,B=2 ";
    const auto ok = run_cli(base + "--offload 1 --host-link 3");
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("makespan with offload: 21 (without: 12, +9") != std::string::npos);

    const auto json = run_cli(base + "--offload 1 --host-link 3 --host-link-duplex --json");
    REQUIRE(json.exit_code == 0);
    const auto doc = nlohmann::json::parse(json.out);
    CHECK(doc["offload"]["makespan"] == 18);
    CHECK(doc["offload"]["makespan_without"] == 12);
    CHECK(doc["offload"]["per_rank"][0]["offloaded"] == 3);

    // Host memory below the host peak of 1, and a device limit below the resident peak of 2: exit 1, both named.
    const auto over = run_cli(base + "--offload 1 --host-link 1 --host-memory 1/2 --memory-limit 1 --json");
    CHECK(over.exit_code == 1);
    const auto bad = nlohmann::json::parse(over.out);
    CHECK(bad["status"] == "invalid");
    std::vector<std::string> kinds;
    for (const auto& v : bad["violations"]) kinds.push_back(v["kind"]);
    CHECK(std::count(kinds.begin(), kinds.end(), "host-memory-limit") == 1);
    CHECK(std::count(kinds.begin(), kinds.end(), "memory-limit") == 1);
    // 1F1B P=4 M=8: rank 0 holds 4 stashes by the order; with each moved out in one F's time, at most 2 are
    // resident (F(m+1) runs while F(m) moves out), so a limit of 2 holds with offload and not without.
    const std::string four = "simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --memory-limit 2";
    CHECK(run_cli(four).exit_code == 1);
    const auto resident = run_cli(four + " --offload 1 --host-link 1 --json");
    CHECK(resident.exit_code == 0);
    CHECK(nlohmann::json::parse(resident.out)["offload"]["per_rank"][0]["device_peak"] == 2);
    // verify takes the same flags and gives the same verdicts.
    CHECK(run_cli("verify 1f1b -P 4 -M 8 --costs F=1,B=2 --memory-limit 2").exit_code == 1);
    CHECK(run_cli("verify 1f1b -P 4 -M 8 --costs F=1,B=2 --memory-limit 2 --offload 1 --host-link 1").exit_code == 0);
    const auto slow_link = run_cli("verify 1f1b -P 4 -M 8 --costs F=1,B=2 --memory-limit 2 --offload 1 --host-link 3 --json");
    CHECK(slow_link.exit_code == 1);  // the link cannot move stashes out fast enough: rank 0 keeps 4 resident
    CHECK(nlohmann::json::parse(slow_link.out)["offload"]["per_rank"][0]["device_peak"] == 4);

    CHECK(run_cli(base + "--host-link 1").exit_code == 2);             // needs --offload
    CHECK(run_cli(base + "--offload 1/2").exit_code == 2);             // needs --host-link
    CHECK(run_cli(base + "--offload 3/2 --host-link 1").exit_code == 2);
    CHECK(run_cli(base + "--offload 1 --host-link fast").exit_code == 2);
    CHECK(run_cli(base + "--offload 1 --host-link upload=1").exit_code == 2);
    CHECK(run_cli(base + "--offload 1 --host-link 1 --comm-model batched").exit_code == 2);
    // show draws the offload timing with a link row per rank (the hand-timed transfers above: O0 from 1 to 4, ...).
    const auto chart = run_cli("show 1f1b -P 2 -M 3 --costs F=1,B=2 --offload 1 --host-link 3");
    CHECK(chart.exit_code == 0);
    CHECK(chart.out.find("with offload (peak: resident stashes)") != std::string::npos);
    CHECK(chart.out.find("  link      |O0         |R0         |O1         |R1         |O2         |R2") != std::string::npos);
    CHECK(chart.out.find("makespan with offload: 21") != std::string::npos);
    CHECK(run_cli("show 1f1b -P 2 -M 3 --offload 1 --host-link 3 --chunks").exit_code == 2);
    CHECK(run_cli("show 1f1b -P 2 -M 3 --offload 1 --host-link 3 --comm-model batched").exit_code == 2);
    // The picture's size limit counts the link boxes: 48000 slots fit, with one offload and one reload per stash not.
    const auto big = run_cli("show 1f1b -P 2 -M 12000 --costs F=1,B=2 --offload 1 --host-link 3 --svg " +
                             (std::filesystem::temp_directory_path() / "pp-offload-too-big.svg").string());
    CHECK(big.exit_code == 2);
    CHECK(big.out.empty());
    CHECK(big.err.find("48000 slots and ") != std::string::npos);  // 2 ranks x 12000 x (F, B)
    CHECK(big.err.find(" host-link transfers") != std::string::npos);

    // Nothing guessed: both directions named once, no empty items, chunks once, every offload flag needs --offload.
    for (const std::string bad : {"--offload 1 --host-link offload=3", "--offload 1 --host-link offload=1,offload=2,reload=1",
                                  "--offload 1 --host-link offload=1,reload=1,", "--offload 1 --host-link 1 --offload-chunks 0,",
                                  "--offload 1 --host-link 1 --offload-chunks 0,0", "--reload-lookahead 1",
                                  "--offload 1 --host-link 1 --offload-chunks 2", "--offload 1 --host-link 1 --reload-lookahead 0"}) {
        CAPTURE(bad);
        CHECK(run_cli(base + bad).exit_code == 2);
    }
    // Sequence segments are refused: a segment's backward reads the earlier segments' stashes.
    const auto segments = run_cli("simulate seq1f1b -P 2 -M 2 --segments 2 --offload 1 --host-link 1");
    CHECK(segments.exit_code == 2);
    CHECK(segments.err.find("sequence segments") != std::string::npos);

    const auto split = run_cli(base + "--offload 1 --host-link offload=3,reload=1");
    CHECK(split.exit_code == 0);
    CHECK(split.out.find("host link 3 (offload) and 1 (reload)") != std::string::npos);
}

TEST_CASE("offload: compare's rows are simulate's offload timings, in the table's units", "[offload][cli]") {
    // An independent path per row: simulate each schedule alone with the same flags and units.
    const std::string flags = " --offload 1/2 --host-link offload=3,reload=2 --reload-lookahead 1";
    const std::vector<std::string> families = {"1f1b", "group-interleaved", "interleaved-1f1b", "zb-h1"};
    for (const std::string units : {"rank", "stage"}) {
        std::string names;
        for (const auto& f : families) names += f + " ";
        const auto compared = run_cli("compare " + names + "-P 4 -M 8 --costs F=1,I=1,W=1" + flags + " --units " + units + " --json");
        INFO(units << ": " << compared.err);
        REQUIRE(compared.exit_code == 0);
        const auto rows = nlohmann::json::parse(compared.out).at("rows");
        for (size_t k = 0; k < families.size(); ++k) {
            const auto alone = run_cli("simulate " + families[k] + " -P 4 -M 8 --costs F=1,I=1,W=1" + flags + " --units " +
                                       units + " --json");
            INFO(families[k] << ": " << alone.err);
            REQUIRE(alone.exit_code == 0);
            const auto expected = nlohmann::json::parse(alone.out).at("offload");
            const auto& got = rows.at(k).at("offload");
            CHECK(got.at("exact").at("makespan") == expected.at("exact").at("makespan"));
            CHECK(got.at("exact").at("makespan_without") == rows.at(k).at("exact").at("makespan"));
            for (size_t r = 0; r < 4; ++r) {
                CHECK(got.at("per_rank").at(r).at("exact").at("device_peak") == expected.at("per_rank").at(r).at("exact").at("device_peak"));
                CHECK(got.at("per_rank").at(r).at("exact").at("host_peak") == expected.at("per_rank").at(r).at("exact").at("host_peak"));
            }
        }
    }
    // A chunk one row does not have: the error names the row.
    const auto chunk = run_cli("compare interleaved-1f1b 1f1b -P 4 -M 8 --offload 1 --host-link 2 --offload-chunks 1");
    CHECK(chunk.exit_code == 2);
    CHECK_THAT(chunk.err, Catch::Contains("1f1b(P=4,M=8): "));
    // report: the same timing as a column of its table.
    const std::string page = (pp::test::scratch_dir() / "offload-report.html").string();
    REQUIRE(run_cli("report 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --offload 1/2 --host-link 3 -o " + page).exit_code == 0);
    const auto alone = run_cli("simulate 1f1b -P 4 -M 8 --costs F=1,I=1,W=1 --offload 1/2 --host-link 3 --units rank --json");
    REQUIRE(alone.exit_code == 0);
    const std::string makespan = nlohmann::json::parse(alone.out).at("offload").at("exact").at("makespan");
    const std::string html = pp::test::slurp(page);
    CHECK_THAT(html, Catch::Contains("with activation offload") && Catch::Contains("makespan " + makespan + " (+"));
    CHECK(run_cli("report 1f1b -P 4 -M 8 --offload 1 --host-link 2 --choose-offloads -o " + page).exit_code == 2);
    const auto text = run_cli("compare 1f1b zb-h1 -P 4 -M 8 --offload 1 --host-link 2");
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("with activation offload: 1 of each stash") && Catch::Contains("device peak"));
    // What compare leaves to simulate and verify, and a flag without --offload.
    for (const char* refused : {" --offload 1 --host-link 2 --choose-offloads", " --offload 1 --host-link 2 --host-memory 3",
                                " --offload 1 --host-link 2 --model batched", " --time-limit 5", " --host-link 2"}) {
        const auto r = run_cli(std::string("compare 1f1b zb-h1 -P 4 -M 8") + refused);
        INFO(refused << ": " << r.err);
        CHECK(r.exit_code == 2);
    }
}

TEST_CASE("offload: the catalogue's grid (PipeOffload's overhead claim)", "[offload][catalogue]") {
    // proofs/catalogue/pipeoffload-overhead-and-peak.md: half of every stash, F = I = W = 1, one stream.
    const Costs costs = costs_of("F=1,I=1,W=1");
    auto overhead = [&](const Schedule& s, const Rational& link, int lookahead) {
        OffloadPolicy policy;
        policy.fraction = Rational(1, 2);
        policy.offload_time = policy.reload_time = link;
        policy.lookahead = lookahead;
        const OffloadTiming t = time_with_offload(s, costs, {}, policy);
        for (const RankOffload& rank : t.ranks) CHECK(t.makespan >= rank.link_busy);  // one stream, inside the makespan
        const Simulation plain = simulate(s, costs);
        return t.scale.to_units(t.makespan) - plain.scale.to_units(plain.makespan);
    };
    int instances = 0;
    for (int P : {2, 4, 6, 8})
        for (int M : {P, 2 * P, 4 * P}) {
            CAPTURE(P, M);
            const Schedule group = generate("group-interleaved", P, M, 2);
            for (const Schedule& s : {generate("1f1b", P, M), generate("interleaved-1f1b", P, M, 2), group, generate("zb-h1", P, M)})
                CHECK(overhead(s, Rational(2), 1) == Rational(0));
            CHECK(overhead(group, Rational(3), 1) > Rational(0));
            CHECK(overhead(group, Rational(3), 2) == Rational(0));
            CHECK(overhead(generate("1f1b", P, M), Rational(3), 2) == Rational(0));
            ++instances;
        }
    CHECK(instances == 12);
}

TEST_CASE("offload: first-chunk offload at P=2, M=2 lowers group-interleaved's peak from 3 to 2 only", "[offload][catalogue]") {
    // By hand (the catalogue entry): rank 0 runs 0F0 [0,1], 2F0 [2,3], 0F1 [3,4], 2I0, 2W0 [6,7], 2F1 [7,8],
    // 0I0 [8,9], 0W0, 2I1, 2W1 [12,13], 0I1, 0W1. Without offload 0F0, 2F0 and 0F1 are live in [3,4). With
    // stage 0's stashes moved out at once, 2F1 (live from 7 to 13) and 0F0 (needed by 0I0 at 8) still meet.
    const Schedule s = generate("group-interleaved", 2, 2, 2);
    OffloadPolicy policy;
    policy.chunks = {0};
    const OffloadTiming t = time_with_offload(s, costs_of("F=1,I=1,W=1"), {}, policy);
    CHECK(peak_activations(s)[0] == Rational(3));
    CHECK(t.ranks[0].device_peak == Rational(2));
    CHECK(t.ranks[0].offloaded == 2);
    CHECK(t.ranks[0].kept == 2);
    CHECK(t.scale.to_units(t.makespan) == Rational(15));
}

// show --offload --json, --svg and --trace draw what simulate --offload times: the JSON carries simulate's offload
// object (every slot and transfer), the SVG a host-link row per rank with one box per transfer, the trace a "host
// link" thread per rank with one event per transfer, all at the transfers' times. The first one is the hand-timed
// O0 above: rank 0 moves F0's stash out from 1 to 4 (F = 1, host link 3).
TEST_CASE("offload: show's JSON, SVG and trace carry every transfer at simulate's times", "[offload][cli]") {
    const std::string flags = " 1f1b -P 2 -M 3 --costs F=1,B=2 --offload 1 --host-link 3";
    const auto timed = run_cli("simulate" + flags + " --json --ops");
    REQUIRE(timed.exit_code == 0);
    const auto simulated = nlohmann::json::parse(timed.out);
    const auto& transfers = simulated["offload"]["transfers"];
    REQUIRE(transfers.size() == 6);  // 3 micro-batches, out and back, on rank 0 (rank 1's backward follows its F)
    CHECK(transfers[0]["stash"] == "0F0");
    CHECK(transfers[0]["start"] == 1);
    CHECK(transfers[0]["end"] == 4);

    const auto shown = run_cli("show" + flags + " --json");
    REQUIRE(shown.exit_code == 0);
    const auto doc = nlohmann::json::parse(shown.out);
    CHECK(doc["offload"] == simulated["offload"]);
    CHECK(doc["makespan"] == simulated["makespan"]);  // the plain timing stays the document's own, as without --offload

    const std::string svg_path = (pp::test::scratch_dir() / "offload.svg").string();
    const std::string trace_path = (pp::test::scratch_dir() / "offload.trace.json").string();
    REQUIRE(run_cli("show" + flags + " --svg " + svg_path + " --trace " + trace_path).exit_code == 0);
    const auto svg = pp::test::XmlReader(pp::test::slurp(svg_path)).document();
    const auto boxes = svg->with_class("rect", "transfer");
    REQUIRE(boxes.size() == transfers.size());
    CHECK(svg->with_class("g", "link").size() == 2);  // one row per rank
    CHECK(svg->with_class("path", "memory").empty());  // the order's live stashes are not the device's
    for (size_t k = 0; k < boxes.size(); ++k) {
        CHECK(boxes[k]->attr("data-stash") == transfers[k]["stash"]);
        CHECK(boxes[k]->attr("data-direction") == transfers[k]["direction"]);
    }
    const auto trace = nlohmann::json::parse(pp::test::slurp(trace_path));
    std::vector<nlohmann::json> link_events;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == 1) link_events.push_back(e);
    REQUIRE(link_events.size() == transfers.size());
    for (size_t k = 0; k < link_events.size(); ++k) {  // 1 cost unit = 1000 us
        CHECK(link_events[k]["name"] == std::string(transfers[k]["direction"]) + " " + std::string(transfers[k]["stash"]));
        CHECK(link_events[k]["ts"].get<double>() == 1000.0 * transfers[k]["start"].get<double>());
        CHECK(link_events[k]["dur"].get<double>() ==
              1000.0 * (transfers[k]["end"].get<double>() - transfers[k]["start"].get<double>()));
    }
    // The compute events are the offload timing: the last one ends at the offload makespan (21 by hand, above).
    double last_end = 0;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == 0) last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
    CHECK(last_end == 1000.0 * simulated["offload"]["makespan"].get<double>());
}
