// pipeproof chunk --chunk-costs ... [--pattern P] [--op F|I|W|B|pair|pair-fi] [--json] [--svg OUT] [--trace OUT]
// [--emit-proof DIR] [FILE]: the two-stream timeline of one slot (issue 11) -- compute lane over network lane,
// as DeepSeek-V3's Figure 4 -- with its exact duration and exposed communication. `best` prints how the
// order was found and whether it is proved optimal; --emit-proof writes the SMT-LIB2 query "no order
// finishes one tick earlier" (unsat for a stock z3). Exit 0, or 3 when `best` could not be proved optimal.
#include "cli/chunk_cli.hpp"
#include "cli/commands.hpp"
#include "cli/json_status.hpp"
#include "cli/common.hpp"
#include "formats/json_text.hpp"
#include "render/chunk_timeline.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

void write_text(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw UsageError("cannot write '" + path + "'");
    out << content;
    if (!out) throw UsageError("error while writing '" + path + "'");
}

struct ChunkCommand {
    std::optional<std::string> file;
    ChunkInput chunks;
    std::string op = "pair";
    bool json = false;
    int width = 160;
    std::optional<std::string> svg_path, trace_path, proof_dir;
    std::optional<std::string> seconds_per_unit;
    std::optional<double> us_per_unit;  // the old spelling

    int run() {
        const double trace_us = trace_microseconds_per_unit(seconds_per_unit, us_per_unit);
        const auto kind = slot_kind_from_name(op);
        if (!kind) throw UsageError("--op expects F, I, W, B, pair (F&B) or pair-fi (F&I), got '" + op + "'");
        Schedule schedule;
        if (file) {
            ScheduleInput input;
            input.source = *file;
            schedule = input.load();
        }
        if (!chunks.chunk_costs && !schedule.chunks)
            throw UsageError("chunk needs --chunk-costs (or a schedule file with a 'chunks' section)");
        const ChunkTable table = *chunks.resolve(schedule, false);
        const SlotKindTiming& t = table.of(*kind);
        const auto& tl = t.timeline;
        const std::string title = fmt::format("{} slot, pattern {}", slot_kind_name(*kind), format_pattern(table.pattern));
        if (svg_path) write_text(*svg_path, chunk_svg(t, title));
        if (trace_path) write_text(*trace_path, chunk_trace(t, trace_us));
        if (proof_dir) emit_proof(t);
        if (json) {
            nlohmann::json j = slot_timing_json(t);
            j["status"] = t.optimal ? kStatusOk : kStatusUnknown;  // `best` not proved optimal: exit 3
            j["op"] = op;
            j["slot_kind"] = slot_kind_name(*kind);
            j["pattern"] = format_pattern(table.pattern);
            j["chunk_costs"] = format_chunk_costs(table.chunk);
            nlohmann::json exposed = nlohmann::json::array(), exposed_exact = nlohmann::json::array();
            for (const auto& [a, b] : exposed_intervals(t)) {
                exposed.push_back({number_json(a), number_json(b)});
                exposed_exact.push_back({format_rational(a), format_rational(b)});
            }
            j["exposed_intervals"] = exposed;
            j["exact"]["exposed_intervals"] = exposed_exact;
            if (!t.certificate_smt2.empty()) j["certificate"] = "SMT-LIB2 query 'every component finishes one tick earlier' (unsat): --emit-proof DIR";
            std::cout << json_text(j, 2) << "\n";
        } else {
            std::cout << title << "; chunk costs " << format_chunk_costs(table.chunk) << "\n";
            std::cout << fmt::format("duration {}   exposed_comm {}   network {}   compute {}{}\n", format_rational(tl.duration),
                                     format_rational(tl.exposed_comm), format_rational(tl.network_time), format_rational(tl.compute_time),
                                     tl.network_time > Rational(0)
                                         ? fmt::format("   hidden {}", percent_text(Rational(1) - tl.exposed_comm / tl.network_time))
                                         : "");
            std::cout << chunk_ascii(t, width);
            std::cout << "components (start, end):\n";
            for (int s = 0; s < kStreams; ++s) {
                std::cout << fmt::format("  {:<8}", stream_name(static_cast<Stream>(s)));
                for (int v : t.order.lists[static_cast<size_t>(s)])
                    std::cout << fmt::format(" {}[{},{}]", t.dag.nodes[static_cast<size_t>(v)].name(),
                                             format_rational(tl.times[static_cast<size_t>(v)].start),
                                             format_rational(tl.times[static_cast<size_t>(v)].end));
                std::cout << "\n";
            }
            std::cout << "how: " << t.method << "\n";
            if (t.lower_bound)
                std::cout << fmt::format("{}: lower bound {}{}\n", t.optimal ? "OPTIMAL" : "FEASIBLE", format_rational(*t.lower_bound),
                                         t.certificate_smt2.empty() ? "" : " (re-check: --emit-proof DIR, then z3 DIR/certificate.smt2 -> unsat)");
            if (svg_path) std::cout << "wrote " << *svg_path << "\n";
            if (trace_path) std::cout << "wrote " << *trace_path << " (1 cost unit = " << trace_us << " us)\n";
        }
        return t.optimal ? kOk : kUndecided;
    }

    void emit_proof(const SlotKindTiming& t) const {
        if (!t.lower_bound) throw UsageError("--emit-proof is for --pattern best (a fixed pattern has nothing to prove)");
        std::filesystem::create_directories(*proof_dir);
        if (!t.certificate_smt2.empty()) write_text(*proof_dir + "/certificate.smt2", t.certificate_smt2);
        nlohmann::json j = slot_timing_json(t);
        j["certificate_file"] = t.certificate_smt2.empty() ? nlohmann::json(nullptr) : nlohmann::json("certificate.smt2");
        j["claim"] = t.certificate_smt2.empty()
                         ? "no certificate: the duration is 0, or contention makes start times non-linear (enumeration decided)"
                         : "the order in `order` finishes by `duration` (re-time it: pipeproof chunk --pattern with that order); "
                           "certificate.smt2 asks whether any order finishes one tick earlier: unsat";
        write_text(*proof_dir + "/best.json", json_text(j, 2) + "\n");
    }
};

}  // namespace

Runner add_chunk(CLI::App& app) {
    auto cmd = std::make_shared<ChunkCommand>();
    auto* sub = app.add_subcommand("chunk", "the two-stream timeline of one slot from MoE chunk costs: duration and exposed communication");
    sub->add_option("schedule", cmd->file, "optional schedule file whose 'chunks' section gives the costs");
    cmd->chunks.add_options(*sub);
    sub->add_option("--op", cmd->op, "F, I, W, B, pair (F&B, default) or pair-fi (F&I)");
    sub->add_flag("--json", cmd->json, "machine-readable output (duration, exposed_comm, components)");
    sub->add_option("--width", cmd->width, "characters for the time axis")->check(CLI::Range(20, 2000));
    sub->add_option("--svg", cmd->svg_path, "also write the timeline as an SVG picture");
    sub->add_option("--trace", cmd->trace_path, "also write a Chrome/Perfetto trace-event JSON");
    sub->add_option("--seconds-per-unit", cmd->seconds_per_unit,
                    "seconds per cost unit in the trace (default 0.001: one unit = 1 ms), as in show, compare and report");
    sub->add_option("--trace-unit-us", cmd->us_per_unit, "old spelling: microseconds per cost unit in the trace")->check(CLI::PositiveNumber);
    sub->add_option("--emit-proof", cmd->proof_dir, "pattern best: write best.json and certificate.smt2 here");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
