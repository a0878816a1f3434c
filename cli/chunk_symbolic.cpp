// `formula` and `refute` with --chunk-costs symbolic (issue 11): the slot formulas of proofs/chunk_formula.hpp
// and the counterexample search of proofs/chunk_refute.hpp, printed.
#include "cli/chunk_cli.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "formats/json_text.hpp"
#include "proofs/chunk_formula.hpp"
#include "proofs/chunk_refute.hpp"
#include "proofs/claim.hpp"
#include "render/ascii_gantt.hpp"
#include "render/chunk_timeline.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace pp::cli {
namespace {

std::optional<int> stages_per_rank(const std::string& family) {
    if (family == "interleaved-1f1b" || family == "zb1p" || family == "looped-bfs" || family == "combined-1f1b") return 2;
    return std::nullopt;
}

PatternSpec symbolic_pattern(const std::optional<std::string>& text) {
    PatternSpec p = text ? pattern_from_flag(*text) : PatternSpec{};
    if (p.kind == PatternKind::Best) throw UsageError("--pattern best depends on the costs: a symbolic formula needs a fixed pattern");
    return p;
}

}  // namespace

int run_chunk_formula(const std::string& family, int ranks, const std::optional<std::string>& pattern_text, int layers, bool shared,
                      const std::string& op, const std::string& emit_dir) {
    const auto kind = slot_kind_from_name(op);
    if (!kind) throw UsageError("--op expects F, I, W, B, pair or pair-fi, got '" + op + "'");
    if (layers < 1 || layers > 8) throw UsageError("--chunk-layers: symbolic formulas take 1..8 layers");
    const PatternSpec pattern = symbolic_pattern(pattern_text);
    ChunkFormula f;
    try {
        f = derive_chunk_formula(*kind, pattern, layers, shared);
    } catch (const PatternError& e) {
        throw UsageError("--pattern: " + e.message);
    }
    std::cout << format_chunk_formula(f);
    if (!emit_dir.empty()) {
        std::filesystem::create_directories(emit_dir);
        for (const auto& p : f.proofs) std::ofstream(emit_dir + "/chunk_" + p.name + ".smt2") << p.smt2;
        std::cout << "wrote the Z3 obligations to " << emit_dir << "/chunk_*.smt2 (each expected unsat)\n";
    }
    // The schedule level: exposed communication per rank = slot-kind counts x each kind's exposed time.
    const ScheduleFamily* generator = find_family(family);
    if (!generator) throw UsageError("not a schedule family: " + family);
    for (int M = 1; M <= 8 * ranks + 8; ++M) {
        Schedule s;
        try {
            s = generator->generate({ranks, M, stages_per_rank(family)});
        } catch (const std::exception&) {
            continue;
        }
        std::cout << fmt::format("\n{} (P={}, M={}, the smallest admissible M): exposed_comm of rank r = sum over slot kinds of "
                                 "(its slots of that kind) x exposed(kind):\n",
                                 family, ranks, M);
        std::map<SlotKind, bool> used;
        for (size_t r = 0; r < s.ranks.size(); ++r) {
            std::map<SlotKind, int> count;
            for (const Slot& slot : s.ranks[r]) ++count[slot_kind_of(slot)], used[slot_kind_of(slot)] = true;
            std::string line;
            for (const auto& [k, n] : count) line += fmt::format("{}{} x exposed({})", line.empty() ? "" : " + ", n, slot_kind_name(k));
            std::cout << fmt::format("  rank {}: {}\n", r, line);
        }
        for (const auto& [k, u] : used) {
            if (k == *kind) {
                std::cout << fmt::format("  exposed({}) as above\n", slot_kind_name(k));
                continue;
            }
            const ChunkFormula kf = derive_chunk_formula(k, pattern, layers, shared, false);
            std::string terms;
            for (const auto& form : kf.duration) terms += (terms.empty() ? "" : ", ") + form.str();
            std::cout << fmt::format("  exposed({}) = max({}) - ({}){}\n", slot_kind_name(k), terms, kf.compute.str(),
                                     kf.region_forms.empty() ? "  = 0 always" : "");
        }
        std::cout << "  (lone chunks in warm-up and cool-down expose their own all-to-all: only a slot with two chunks, or a "
                     "shared expert / weight gradient beside it, can hide it)\n";
        break;
    }
    return f.proved() ? kOk : kUndecided;
}

int run_chunk_refute(const std::string& claim, const std::string& family, int p_lo, int p_hi,
                     const std::optional<std::pair<int, int>>& m_range, const std::optional<std::string>& pattern_text, int layers,
                     bool shared, int width, bool json) {
    ChunkRefuteOptions o;
    o.p_lo = p_lo;
    o.p_hi = p_hi;
    o.m_range = m_range;
    o.pattern = symbolic_pattern(pattern_text);
    o.layers = layers;
    o.shared = shared;
    ChunkRefuteResult r;
    try {
        r = refute_chunk_claim(family, claim, o);
    } catch (const ClaimError& e) {
        throw UsageError("claim: " + e.message);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (json) {
        nlohmann::json j{{"status", r.refuted ? kStatusRefuted : kStatusUnknown}, {"claim", r.claim}, {"family", r.family}};
        if (r.refuted) {
            j["counterexample"] = {{"ranks", r.P}, {"microbatches", r.M}, {"chunk_costs", format_chunk_costs(*r.costs)}};
            for (const auto& [name, value] : r.values) j["counterexample"]["values"][name] = value;
        }
        j["searched"] = {{"instances", r.instances}, {"cost_points", r.points}};
        j["notes"] = r.notes;
        std::cout << json_text(j, 2) << "\n";
        return r.refuted ? kViolations : kUndecided;
    }
    std::cout << "claim: " << r.claim << "\nfamily: " << r.family << "\n";
    if (!r.refuted) {
        std::cout << "UNDECIDED: " << (r.notes.empty() ? "" : r.notes.front()) << "\n";
        return kUndecided;
    }
    std::cout << fmt::format("REFUTED: counterexample at P={}, M={}, chunk costs {} (pattern {})\n", r.P, r.M, format_chunk_costs(*r.costs),
                             format_pattern(o.pattern));
    for (const auto& [name, value] : r.values) std::cout << "  " << name << " = " << value << "\n";
    std::cout << "(exact: derived slot timelines and simulation)\n";
    const ChunkTable table = derive_chunk_table(*r.costs, o.pattern);
    const Simulation sim = simulate(*r.schedule, table.costs());
    GanttOptions g;
    g.max_width = width;
    std::cout << "\ntimeline:\n" << ascii_gantt(*r.schedule, sim, g) << ascii_chunk_lanes(*r.schedule, sim, table, g);
    return kViolations;
}

}  // namespace pp::cli
