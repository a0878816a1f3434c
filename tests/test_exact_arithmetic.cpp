// Exact arithmetic that never wraps (issue 10). The oracles here share no code with what they check:
// Boost's cpp_int / cpp_rational computed directly in the test, a longest path over the dependency DAG
// written again below (its own dependency rules, all in cpp_rational), hand-derived values, and scaling
// laws (multiplying every cost by k multiplies every time by k and leaves every ratio alone).
#include "formats/native.hpp"
#include "model/integer.hpp"
#include "model/rational.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "verifier/compare.hpp"
#include "verifier/memory.hpp"
#include "verifier/simulate.hpp"

#include <boost/multiprecision/cpp_int.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <tuple>

using namespace pp;
using BigInt = boost::multiprecision::cpp_int;
using BigRational = boost::multiprecision::cpp_rational;

namespace {

BigInt big(const Integer& x) { return BigInt(x.to_string()); }
BigRational big(const Rational& x) { return BigRational(big(x.numerator()), big(x.denominator())); }
Rational rational(const BigInt& num, const BigInt& den) {
    return Rational(*Integer::parse(num.str()), *Integer::parse(den.str()));
}

// Values that straddle every boundary the fast paths test: 2^62 (inline), 2^63 (int64), 2^64 and beyond.
std::vector<BigInt> boundary_values() {
    std::vector<BigInt> values;
    for (int bits : {0, 1, 31, 32, 61, 62, 63, 64, 65, 100, 127, 128, 200}) {
        const BigInt p = BigInt(1) << bits;
        for (int d = -2; d <= 2; ++d) values.push_back(p + d), values.push_back(-(p + d));
    }
    values.push_back(0);
    values.push_back(1000003);
    values.push_back(BigInt("1000073001431003663"));  // 1000003 * 1000033 * 1000037
    return values;
}

}  // namespace

TEST_CASE("exact: Integer arithmetic equals cpp_int at every inline/64-bit boundary", "[exact]") {
    const auto values = boundary_values();
    for (const BigInt& a : values)
        for (const BigInt& b : values) {
            const Integer x = *Integer::parse(a.str()), y = *Integer::parse(b.str());
            INFO(a << " and " << b);
            CHECK(big(x + y) == a + b);
            CHECK(big(x - y) == a - b);
            CHECK(big(x * y) == a * b);
            CHECK((x < y) == (a < b));
            CHECK((x == y) == (a == b));
            if (b != 0) {
                CHECK(big(x / y) == a / b);  // both truncate toward zero
                CHECK(big(x % y) == a % b);
            }
            Integer acc = x;
            acc += y;
            CHECK(big(acc) == a + b);
            acc -= y;
            CHECK(acc == x);
            // Canonical form: a value that fits inline is stored inline, whatever produced it.
            const BigInt sum = a + b;
            CHECK((x + y).is_inline() == (sum >= Integer::kInlineMin && sum <= Integer::kInlineMax));
        }
    CHECK_THROWS_AS(Integer(5) / Integer(0), std::domain_error);
    CHECK(Integer(std::numeric_limits<std::int64_t>::min()).to_int64() == std::numeric_limits<std::int64_t>::min());
    CHECK_THROWS_AS((Integer(std::numeric_limits<std::int64_t>::max()) + 1).to_int64(), std::overflow_error);
    CHECK(Integer(std::numeric_limits<std::uint64_t>::max()).to_string() == "18446744073709551615");
    CHECK(gcd(Integer(-12), Integer(18)) == 6);
    CHECK(lcm(*Integer::parse("1000073001431003663"), Integer(1000039)) == *Integer::parse("1000112004278059472142857"));
}

TEST_CASE("exact: Rational arithmetic equals cpp_rational, also past 64 bits", "[exact]") {
    std::mt19937_64 rng(10);
    const std::vector<BigInt> parts = {1, 2, 3, 7, 1000003, 1000033, BigInt(1) << 40, (BigInt(1) << 62) - 1, BigInt(1) << 62,
                                       (BigInt(1) << 63) - 1, BigInt("99999999999999999999999")};
    auto pick = [&] {
        const BigInt n = parts[rng() % parts.size()] * ((rng() & 1) ? 1 : -1);
        const BigInt d = parts[rng() % parts.size()];
        return std::make_pair(rational(n, d), BigRational(n, d));
    };
    for (int k = 0; k < 2000; ++k) {
        auto [x, bx] = pick();
        auto [y, by] = pick();
        INFO(bx << " and " << by);
        CHECK(big(x + y) == bx + by);
        CHECK(big(x - y) == bx - by);
        CHECK(big(x * y) == bx * by);
        if (by != 0) CHECK(big(x / y) == bx / by);
        CHECK((x < y) == (bx < by));
        CHECK((x == y) == (bx == by));
        CHECK(big(-x) == -bx);
    }
}

TEST_CASE("exact: decimals of binary and decimal fractions, whatever their length", "[exact]") {
    // Hand-derived: 1/2^20 = 5^20 / 10^20 and 5^20 = 95367431640625.
    CHECK(format_rational(Rational(1, 1048576)) == "0.00000095367431640625");
    CHECK(format_rational(Rational(3, 65536)) == "0.0000457763671875");         // 3 * 5^16 = 457763671875
    CHECK(format_rational(Rational(68027925, 65536)) == "1038.0237579345703125");  // 1F1B P=8 M=512 F=3/65536
    CHECK(format_rational(Rational(-1, 1048576)) == "-0.00000095367431640625");
    // 1/2^k = 5^k / 10^k for k up to 120: "0." then 5^k padded to k digits (5^k computed by repeated * 5).
    BigInt five = 1;
    for (int k = 1; k <= 120; ++k) {
        five *= 5;
        const std::string digits = five.str();
        const std::string expected = "0." + std::string(static_cast<size_t>(k) - digits.size(), '0') + digits;
        CHECK(format_rational(rational(1, BigInt(1) << k)) == expected);
    }
    CHECK(format_rational(rational(BigInt("123456789012345678901234567890"), 1)) == "123456789012345678901234567890");
    CHECK(format_rational(rational(1, BigInt("1000073001431003663"))) == "1/1000073001431003663");
}

TEST_CASE("exact: every number format_rational writes within the input bounds reads back equal", "[exact][issue30]") {
    // The symptoms: 1/1024 and 1000000000001/4 were written as decimals the reader refused.
    CHECK(parse_rational("0.0009765625") == Rational(1, 1024));
    CHECK(parse_rational("250000000000.25") == Rational(1000000000001, 4));
    CHECK(parse_rational("0.00000000000000000000000000000000000000000000000000000000000001") == std::nullopt);  // 10^-62
    CHECK(parse_rational("0.25") == Rational(1, 4));  // leading zeros are decimal, not octal
    CHECK(parse_rational("010.5") == Rational(21, 2));
    CHECK(Integer::parse("025") == Integer(25));
    CHECK(Integer::parse("-0017") == Integer(-17));
    CHECK(parse_rational("1099511627776.5") == std::nullopt);  // 2199023255553/2: numerator past 2^40
    std::mt19937_64 rng(30);
    std::uniform_int_distribution<std::int64_t> component(1, std::int64_t{1} << 40);
    std::uniform_int_distribution<int> exponent(0, 40);
    for (int trial = 0; trial < 4000; ++trial) {
        // Half the denominators are 2^a 5^b (written as decimals), half arbitrary (written as fractions).
        std::int64_t den = component(rng);
        if (trial % 2 == 0) {
            den = 1;
            for (int a = exponent(rng); a > 0 && den <= (std::int64_t{1} << 39); --a) den *= 2;
            for (int b = exponent(rng) % 18; b > 0 && den <= (std::int64_t{1} << 40) / 5; --b) den *= 5;
        }
        const Rational value(component(rng), den);
        if (value.numerator() > Integer(std::int64_t{1} << 40) || value.denominator() > Integer(std::int64_t{1} << 40))
            continue;
        const std::string text = format_rational(value);
        INFO(text);
        CHECK(parse_rational(text) == value);
    }
}

TEST_CASE("exact: a tick scale whose common denominator passes 2^64", "[exact]") {
    // The "TimeScale does not include value": four primes near 65,500 have a product above 2^63.
    TimeScale scale;
    for (int d : {65521, 65519, 65497, 65479, 65449}) scale.include(Rational(1, d));
    const BigInt product = BigInt(65521) * 65519 * 65497 * 65479 * 65449;
    CHECK(big(scale.ticks_per_unit) == product);
    CHECK(big(scale.to_ticks(Rational(3, 65479))) == 3 * (product / 65479));
    CHECK(scale.to_units(scale.to_ticks(Rational(7, 65449))) == Rational(7, 65449));
}

namespace {

// ---- The reference: longest path over the dependency DAG, every number a cpp_rational. ----------------

struct RefCosts {
    struct Kind {
        BigRational F, I, W;
        std::optional<BigRational> B, FB;
    };
    Kind base;
    std::map<int, Kind> per_block;
    BigRational comm;
    const Kind& of(int block) const {
        auto it = per_block.find(block);
        return it == per_block.end() ? base : it->second;
    }
    BigRational op(OpKind kind, int block) const {
        const Kind& c = of(block);
        switch (kind) {
            case OpKind::F: return c.F;
            case OpKind::I: return c.I;
            case OpKind::W: return c.W;
            case OpKind::B: return c.B ? *c.B : c.I + c.W;
        }
        return 0;
    }
};

struct RefTiming {
    BigRational makespan, bubble, fraction;
    std::vector<BigRational> busy, idle, first_start, last_end;
    std::vector<std::vector<BigRational>> start, end;  // [rank][position]
};

RefTiming reference_timing(const Schedule& s, const RefCosts& costs) {
    const int P = static_cast<int>(s.ranks.size());
    std::map<std::tuple<int, int, int, int>, std::pair<int, int>> where;  // (kind, pipeline, stage, mb) -> (rank, k)
    for (int r = 0; r < P; ++r)
        for (int k = 0; k < static_cast<int>(s.ranks[r].size()); ++k)
            for (const Op& op : s.ranks[r][k]) where.emplace(std::make_tuple(int(op.kind), op.pipeline, op.stage, op.microbatch), std::make_pair(r, k));
    auto block = [&](const Op& op) { return s.placement.pipelines[op.pipeline].stage_block[op.stage]; };
    auto input_of = [&](const Op& op) -> std::optional<std::pair<int, int>> {
        const int last = static_cast<int>(s.placement.pipelines[op.pipeline].stage_rank.size()) - 1;
        auto find = [&](OpKind kind, int stage) -> std::optional<std::pair<int, int>> {
            auto it = where.find(std::make_tuple(int(kind), op.pipeline, stage, op.microbatch));
            if (it == where.end()) return std::nullopt;
            return it->second;
        };
        switch (op.kind) {
            case OpKind::F: return op.stage == 0 ? std::nullopt : find(OpKind::F, op.stage - 1);
            case OpKind::W: return find(OpKind::I, op.stage);
            case OpKind::I:
            case OpKind::B:
                if (op.stage == last) return find(OpKind::F, op.stage);
                if (auto b = find(OpKind::B, op.stage + 1)) return b;
                return find(OpKind::I, op.stage + 1);
        }
        return std::nullopt;
    };
    RefTiming t;
    t.start.resize(P), t.end.resize(P);
    std::vector<size_t> next(P, 0);  // each rank's first slot not yet timed
    for (int r = 0; r < P; ++r) t.start[r].resize(s.ranks[r].size()), t.end[r].resize(s.ranks[r].size());
    // Round robin: time a rank's next slot once every input of it is timed (a DAG: always progresses).
    for (bool progress = true; progress;) {
        progress = false;
        for (int r = 0; r < P; ++r) {
            while (next[r] < s.ranks[r].size()) {
                const size_t k = next[r];
                const Slot& slot = s.ranks[r][k];
                BigRational ready = k > 0 ? t.end[r][k - 1] : BigRational(0);
                bool inputs_known = true;
                for (const Op& op : slot)
                    if (auto in = input_of(op)) {
                        if (in->first == r && in->second == static_cast<int>(k)) continue;
                        if (static_cast<size_t>(in->second) >= next[in->first]) inputs_known = false;
                        else ready = std::max(ready, BigRational(t.end[in->first][in->second] + (in->first != r ? costs.comm : BigRational(0))));
                    }
                if (!inputs_known) break;
                BigRational duration = costs.op(slot.ops[0].kind, block(slot.ops[0]));
                if (slot.is_pair()) {
                    const auto& c = costs.of(block(slot.ops[0]));
                    duration = c.FB ? *c.FB : duration + costs.op(slot.ops[1].kind, block(slot.ops[1]));
                }
                t.start[r][k] = ready;
                t.end[r][k] = ready + duration;
                ++next[r];
                progress = true;
            }
        }
    }
    for (int r = 0; r < P; ++r) REQUIRE(next[r] == s.ranks[r].size());
    for (int r = 0; r < P; ++r)
        for (const auto& e : t.end[r]) t.makespan = std::max(t.makespan, e);
    BigRational total_idle = 0;
    for (int r = 0; r < P; ++r) {
        BigRational busy = 0;
        for (size_t k = 0; k < s.ranks[r].size(); ++k) busy += t.end[r][k] - t.start[r][k];
        t.busy.push_back(busy);
        t.idle.push_back(t.makespan - busy);
        t.bubble = std::max(t.bubble, BigRational(t.makespan - busy));
        total_idle += t.makespan - busy;
        t.first_start.push_back(s.ranks[r].empty() ? BigRational(0) : t.start[r].front());
        t.last_end.push_back(s.ranks[r].empty() ? BigRational(0) : t.end[r].back());
    }
    if (t.makespan > 0) t.fraction = total_idle / (t.makespan * P);
    return t;
}

// Random costs: numerators up to 2^40, denominators drawn from pairwise coprime primes and prime powers
// (so the tick scale is their product, far past 2^64), both as pipeproof Costs and as the reference's.
struct CostDraw {
    Costs costs;
    RefCosts ref;
};

const std::vector<std::int64_t> kLargeDenominators = {1, 1, 2, 1048576, 1099511627776, 390625, 4093, 4091, 4079, 4073,
                                                      65521, 65519, 65497, 65479, 999983, 1000003, 1000033,
                                                      1000037, 1000039, 2147483647, 999999000001, 1099511627689};
// Everyday costs: the simulator's unchecked 64-bit path (fits_machine_ticks) times these.
const std::vector<std::int64_t> kSmallDenominators = {1, 1, 2, 3, 4, 5, 8, 10};

CostDraw draw_costs(std::mt19937_64& rng, int blocks, const std::vector<std::int64_t>& denominators = kLargeDenominators,
                    int small_bits = 12, int large_bits = 40) {
    auto value = [&](bool allow_zero) {
        std::int64_t num = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (rng() % 2 ? large_bits : small_bits)));
        if (!allow_zero && num == 0) num = 1;
        const std::int64_t den = denominators[rng() % denominators.size()];
        return std::make_pair(*parse_rational(std::to_string(num) + "/" + std::to_string(den)), BigRational(num, den));
    };
    auto kind = [&](OpCosts& c, RefCosts::Kind& k) {
        std::tie(c.F, k.F) = value(false);
        std::tie(c.I, k.I) = value(false);
        std::tie(c.W, k.W) = value(false);
        if (rng() % 3 == 0) {
            auto [b, bb] = value(false);
            c.B = b, k.B = bb;
        }
        if (rng() % 3 == 0) {
            auto [fb, bfb] = value(false);
            c.FB = fb, k.FB = bfb;
        }
    };
    CostDraw d;
    kind(d.costs.base, d.ref.base);
    std::tie(d.costs.comm, d.ref.comm) = value(true);
    for (int b = 0; b < blocks; ++b)
        if (rng() % 4 == 0) kind(d.costs.per_block[b], d.ref.per_block[b]);
    return d;
}

void check_against_reference(const Schedule& s, const CostDraw& d) {
    const Simulation sim = simulate(s, d.costs);
    const RefTiming ref = reference_timing(s, d.ref);
    auto units = [&](const Ticks& t) { return big(sim.scale.to_units(t)); };
    CHECK(units(sim.makespan) == ref.makespan);
    CHECK(units(sim.bubble) == ref.bubble);
    CHECK(big(sim.bubble_fraction) == ref.fraction);
    const ScheduleGraph graph = build_schedule_graph(s);
    for (size_t r = 0; r < s.ranks.size(); ++r) {
        CHECK(units(sim.ranks[r].busy) == ref.busy[r]);
        CHECK(units(sim.ranks[r].idle) == ref.idle[r]);
        CHECK(units(sim.ranks[r].first_start) == ref.first_start[r]);
        CHECK(units(sim.ranks[r].last_end) == ref.last_end[r]);
        for (size_t k = 0; k < s.ranks[r].size(); ++k) {
            const std::uint32_t id = graph.rank_begin[r] + static_cast<std::uint32_t>(k);
            CHECK(units(sim.start[id]) == ref.start[r][k]);
            CHECK(units(sim.end[id]) == ref.end[r][k]);
        }
    }
}

}  // namespace

TEST_CASE("exact: random large coprime costs on generated schedules equal an all-bignum longest path", "[exact][property]") {
    std::mt19937_64 rng(20261130);
    const std::vector<std::tuple<const char*, int, int, std::optional<int>>> instances = {
        {"1f1b", 4, 8, {}},        {"1f1b", 8, 16, {}},     {"gpipe", 3, 5, {}},    {"zb-h1", 4, 8, {}},
        {"zb-h2", 4, 8, {}},       {"zbv", 4, 8, {}},       {"dualpipe", 4, 8, {}}, {"dualpipe", 8, 16, {}},
        {"dualpipev", 4, 8, {}},   {"chimera", 4, 8, {}},   {"interleaved-1f1b", 4, 8, 2}, {"zb1p", 2, 4, 2},
    };
    for (const auto& [name, P, M, V] : instances) {
        const Schedule s = find_family(name)->generate({P, M, V});
        for (int draw = 0; draw < 6; ++draw) {
            const CostDraw d = draw_costs(rng, s.placement.blocks());
            INFO(name << " P=" << P << " M=" << M << " costs " << format_costs(d.costs)
                      << (d.costs.per_block.empty() ? "" : " (+ per-block)"));
            check_against_reference(s, d);
        }
    }
}

namespace {

// Whether simulate() may take its unchecked 64-bit path for these costs (the predicate it uses, recomputed here
// so that each test below knows which of the two paths it covers).
bool takes_machine_path(const Schedule& s, const Costs& costs) {
    const TimeScale scale = time_scale_for(costs);
    const SlotDurations table(s.placement, costs, scale);
    std::vector<std::int64_t> durations;
    if (!table.machine_durations(s, durations)) return false;
    Ticks total = 0;
    for (std::int64_t d : durations) total += d;
    const Ticks comm = scale.to_ticks(costs.comm);
    return comm.is_inline() && fits_machine_ticks(total, comm, boost::num_edges(build_schedule_graph(s).graph));
}

}  // namespace

TEST_CASE("exact: random everyday costs (the 64-bit path) equal the all-bignum longest path", "[exact][property]") {
    std::mt19937_64 rng(20261201);
    for (const auto& [name, P, M, V] : std::vector<std::tuple<const char*, int, int, std::optional<int>>>{
             {"1f1b", 4, 8, {}}, {"zb-h2", 4, 8, {}}, {"zbv", 4, 8, {}}, {"dualpipev", 4, 8, {}},
             {"chimera", 4, 8, {}}, {"interleaved-1f1b", 4, 8, 2}}) {
        const Schedule s = find_family(name)->generate({P, M, V});
        for (int draw = 0; draw < 6; ++draw) {
            const CostDraw d = draw_costs(rng, s.placement.blocks(), kSmallDenominators, 4, 12);
            INFO(name << " P=" << P << " M=" << M << " costs " << format_costs(d.costs));
            REQUIRE(takes_machine_path(s, d.costs));
            check_against_reference(s, d);
        }
    }
}

TEST_CASE("exact: times just below and just above the 64-bit path's bound (2^62 ticks) are both exact", "[exact]") {
    // 1F1B, P=4, M=8: 32 forwards of x ticks, 32 full backwards of I + W = 2, latency 1 on each of E edges.
    // Every time is at most 32x + 64 + E; the largest x that keeps that within 2^62 - 1 takes the 64-bit
    // path, x + 1 the Integer path, and both must equal the bignum reference.
    const Schedule s = find_family("1f1b")->generate({4, 8, {}});
    const std::int64_t edges = static_cast<std::int64_t>(boost::num_edges(build_schedule_graph(s).graph));
    const std::int64_t x = (Integer::kInlineMax - 64 - edges) / 32;
    for (std::int64_t forward : {x, x + 1}) {
        CostDraw d;
        d.costs.base.F = Rational(forward), d.costs.base.I = Rational(1), d.costs.base.W = Rational(1);
        d.costs.comm = Rational(1);
        d.ref.base.F = BigRational(forward), d.ref.base.I = 1, d.ref.base.W = 1;
        d.ref.comm = 1;
        INFO("F = " << forward);
        CHECK(takes_machine_path(s, d.costs) == (forward == x));
        check_against_reference(s, d);
    }
}

TEST_CASE("exact: the issue's cases time exactly against the bignum reference", "[exact]") {
    auto costs_of = [](const std::string& text) {
        CostDraw d;
        d.costs = parse_costs(text);
        auto ref_kind = [](const OpCosts& c) {
            RefCosts::Kind k{big(c.F), big(c.I), big(c.W), std::nullopt, std::nullopt};
            if (c.B) k.B = big(*c.B);
            if (c.FB) k.FB = big(*c.FB);
            return k;
        };
        d.ref.base = ref_kind(d.costs.base);
        d.ref.comm = big(d.costs.comm);
        return d;
    };
    // One micro-batch on one rank: true makespan 10 + 1/1000003 + 1/1000033 (the issue printed 0).
    const Schedule one = read_native("ranks 1\nmicrobatches 1\nrank 0: 0F0 0I0 0W0\n", "one.txt");
    const CostDraw c1 = costs_of("F=10,I=1/1000003,W=1/1000033,comm=1/1000037");
    check_against_reference(one, c1);
    CHECK(simulate(one, c1.costs).scale.to_units(simulate(one, c1.costs).makespan) ==
          Rational(10) + Rational(1, 1000003) + Rational(1, 1000033));
    check_against_reference(find_family("1f1b")->generate({8, 64, {}}),
                            costs_of("F=1000000/4093,I=1000000/4091,W=1000000/4079,comm=1000000/4073"));
    check_against_reference(find_family("1f1b")->generate({8, 512, {}}), costs_of("F=3/65536"));
    check_against_reference(find_family("1f1b")->generate({4, 8, {}}), costs_of("F=1/1048576"));
    check_against_reference(find_family("1f1b")->generate({4, 8, {}}), costs_of("F=1/65521,I=1/65519,W=1/65497,comm=1/65479"));
    check_against_reference(find_family("1f1b")->generate({8, 512, {}}),
                            costs_of("F=1000000000000,I=1000000000000,W=1000000000000,comm=1/1000"));
}

TEST_CASE("exact: 1F1B makespan in closed form with costs far past 64-bit ticks", "[exact]") {
    // 1F1B with a fused backward B = I + W and no latency: micro-batch 0's forward crosses P - 1 ranks,
    // the last rank then has M (F + B) of work with no wait, and micro-batch M-1's backward crosses P - 1
    // ranks back: makespan = (P - 1)F + M(F + B) + (P - 1)B = (M + P - 1)(F + B), the standard formula
    // (also checked for these costs with tests/reference/exact_timing.py). Denominators near 10^6 make
    // the tick scale about 10^18 and the makespan about 10^26 ticks.
    for (const auto& [P, M] : {std::pair{4, 8}, std::pair{8, 64}, std::pair{8, 9}}) {
        const Rational F(1099511627776, 1000003), I(1099511627776, 1000033), W(1099511627776, 1000037);
        Costs costs;
        costs.base = OpCosts{F, I, W, std::nullopt, std::nullopt, std::nullopt};
        const Simulation sim = simulate(find_family("1f1b")->generate({P, M, {}}), costs);
        CHECK_FALSE(sim.makespan.fits_int64());
        CHECK(sim.scale.to_units(sim.makespan) == Rational(M + P - 1) * (F + I + W));
        CHECK(sim.scale.to_units(sim.bubble) == Rational(P - 1) * (F + I + W));
    }
}

TEST_CASE("exact: scaling every cost by a huge k scales batched and dataflow times by k, ratios unchanged", "[exact]") {
    // k has a 60-bit numerator and a denominator coprime to everything: the scaled run takes the big path,
    // the unscaled one the int64 path, so this checks the one against the other.
    const Rational k = Rational(*Integer::parse("1152921504606846883"), 1000003);
    for (const char* name : {"dualpipe", "1f1b", "dualpipev"}) {
        const Schedule s = find_family(name)->generate({4, 8, {}});
        Costs small = parse_costs("F=1,I=3/2,W=1/2,FB=5/2,comm=1/10");
        Costs scaled = small;
        for (Rational* v : {&scaled.base.F, &scaled.base.I, &scaled.base.W, &scaled.comm}) *v *= k;
        scaled.base.FB = *small.base.FB * k;
        for (CommModel model : {CommModel::Dataflow, CommModel::Batched}) {
            INFO(name << " " << comm_model_name(model));
            CompareOptions options;
            options.comm_model = model;
            options.tokens_per_microbatch = 4096;
            options.seconds_per_unit = Rational(1, 1000);
            const CompareRow a = compare_schedule(s, small, options);
            const CompareRow b = compare_schedule(s, scaled, options);
            CHECK(b.makespan == a.makespan * k);
            CHECK(b.worst_idle == a.worst_idle * k);
            CHECK(b.zb_span == a.zb_span * k);
            CHECK(b.bubble_fraction == a.bubble_fraction);
            CHECK(b.zb_bubble_rate == a.zb_bubble_rate);
            CHECK(*b.gpu_hours_per_million_tokens == *a.gpu_hours_per_million_tokens * k);
            for (size_t r = 0; r < a.idle_per_rank.size(); ++r) CHECK(b.idle_per_rank[r] == a.idle_per_rank[r] * k);
        }
    }
}

TEST_CASE("exact: activation peaks with sizes whose denominators pass 64 bits", "[exact]") {
    // live = alloc * (#F started) - free_i * (#I ended) - (alloc - free_i) * (#W ended) - alloc * (#B ended),
    // swept here directly in cpp_rational.
    const Schedule s = find_family("zb-h2")->generate({4, 8, {}});
    ActivationModel model;
    model.forward_alloc = rational(BigInt("1099511627689"), BigInt("1000073001431003663"));
    model.input_grad_free = rational(BigInt(1), BigInt("999999000001"));
    const BigRational a = big(model.forward_alloc), fi = big(model.input_grad_free);
    const auto peaks = peak_activations(s, model);
    for (size_t r = 0; r < s.ranks.size(); ++r) {
        BigRational live = 0, peak = 0;
        for (const Slot& slot : s.ranks[r]) {
            for (const Op& op : slot)
                if (op.kind == OpKind::F) live += a;
            peak = std::max(peak, BigRational(live));
            for (const Op& op : slot) {
                if (op.kind == OpKind::I) live -= fi;
                if (op.kind == OpKind::W) live -= a - fi;
                if (op.kind == OpKind::B) live -= a;
            }
        }
        CHECK(big(peaks[r]) == peak);
    }
}
