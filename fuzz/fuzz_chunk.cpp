// libFuzzer harness: the MoE chunk inputs of issue 11 -- chunk costs (`--chunk-costs`, a native `chunks` line:
// parse_chunk_costs), overlap patterns (`--pattern`, a `chunk-pattern` line: parse_pattern) and, when both
// parse, the slot timing they derive (derive_chunk_table, as every timing command does). Properties: each
// parse succeeds or throws its own error type; what format_chunk_costs / format_pattern print parses back
// to the same values; a derived slot never exposes more communication than it lasts, nor less than zero.
#include "fuzz/fuzz_common.hpp"
#include "model/chunk_costs.hpp"
#include "model/overlap_pattern.hpp"
#include "verifier/chunk_derive.hpp"

#include <stdexcept>

namespace {

using namespace pp;

void check_costs_round_trip(const ChunkCosts& costs) {
    const std::string text = format_chunk_costs(costs);
    try {
        if (!(parse_chunk_costs(text) == costs)) fuzz::bug("chunk costs changed in a round trip", text);
    } catch (const ChunkCostError& e) {
        fuzz::bug("format_chunk_costs wrote text parse_chunk_costs rejects", text + ": " + e.message);
    }
}

bool same_lists(const PatternSpec& a, const PatternSpec& b) {
    if (a.kind != b.kind) return false;
    for (size_t s = 0; s < a.lists.size(); ++s) {
        if (a.lists[s].size() != b.lists[s].size()) return false;
        for (size_t i = 0; i < a.lists[s].size(); ++i)
            if (a.lists[s][i].component != b.lists[s][i].component || a.lists[s][i].layer != b.lists[s][i].layer) return false;
    }
    return true;
}

void check_pattern_round_trip(const PatternSpec& spec) {
    const std::string text = format_pattern(spec);
    try {
        if (!same_lists(parse_pattern(text), spec)) fuzz::bug("pattern changed in a round trip", text);
    } catch (const PatternSyntaxError& e) {
        fuzz::bug("format_pattern wrote text parse_pattern rejects", text + ": " + e.message);
    }
}

// A fixed or custom pattern on parsed costs. `best` searches every order (verifier/chunk_best.hpp): skipped
// here, where one input must take milliseconds; it has its own tests against Z3.
void derive(const ChunkCosts& costs, const PatternSpec& spec) {
    if (spec.kind == PatternKind::Best || costs.layers > 2) return;
    ChunkTable table;
    try {
        table = derive_chunk_table(costs, spec);
    } catch (const PatternError&) {
        return;  // a custom pattern that does not fit these costs: a usage error in the CLI
    }
    for (const SlotKindTiming& k : table.kinds) {
        const SlotTimeline& t = k.timeline;
        if (t.exposed_comm < Rational(0) || t.duration < t.exposed_comm)
            fuzz::bug("slot exposes less than 0 or more than it lasts", format_chunk_costs(costs) + " | " + format_pattern(spec));
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

// First byte: 0 chunk costs, 1 pattern, 2 pattern line + newline + chunk costs, derived.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t which = data[0] % 3;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        switch (which) {
            case 0: check_costs_round_trip(parse_chunk_costs(text)); break;
            case 1: check_pattern_round_trip(parse_pattern(text)); break;
            case 2: {
                const size_t bar = text.find('\n');
                if (bar == std::string::npos) break;
                const PatternSpec spec = parse_pattern(text.substr(0, bar));
                const ChunkCosts costs = parse_chunk_costs(text.substr(bar + 1));
                derive(costs, spec);
                break;
            }
        }
    } catch (const ChunkCostError&) {
    } catch (const PatternSyntaxError&) {
    } catch (const std::overflow_error&) {
        // Exact arithmetic beyond 64 bits (model/rational.hpp): reported by the CLI with exit 2.
    }
    return 0;
}
