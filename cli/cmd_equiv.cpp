// pipeproof equiv A B: whether two schedules (files of any format, or families) order the same work on every
// rank (verifier/equivalence.hpp); the first difference, with its file positions, when they do not. Exit 0
// equivalent, 1 different, 2 bad input.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/json_status.hpp"
#include "formats/json_text.hpp"
#include "verifier/equivalence.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

std::string where(const Schedule& s, const SourceLoc& loc) {
    return loc.known() ? fmt::format(" ({}:{}:{})", s.source, loc.line, loc.column) : std::string();
}

nlohmann::json slot_json(const std::string& slot, const SourceLoc& loc) {
    if (slot.empty()) return nullptr;  // past the rank's end
    return {{"slot", slot},
            {"line", loc.known() ? nlohmann::json(loc.line) : nlohmann::json(nullptr)},
            {"column", loc.known() ? nlohmann::json(loc.column) : nlohmann::json(nullptr)}};
}

nlohmann::json schedule_json(const Schedule& s) {
    return {{"file", s.source},         {"ranks", s.placement.ranks}, {"microbatches", s.placement.total_microbatches() / s.segments},
            {"segments", s.segments}, {"ops", s.op_count()}};
}

struct EquivCommand {
    ScheduleInput first;
    std::string second_source;
    bool json = false;

    int run() {
        ScheduleInput second = first;
        second.source = second_source;
        const Schedule a = first.load(), b = second.load();
        const Equivalence e = compare_orders(a, b);
        if (json) {
            nlohmann::json out = {{"status", e.equivalent ? kStatusEquivalent : kStatusDifferent},
                                  {"schedules", {schedule_json(a), schedule_json(b)}},
                                  {"renaming", e.equivalent ? nlohmann::json(e.renaming) : nlohmann::json(nullptr)}};
            if (e.difference) {
                const EquivalenceDifference& d = *e.difference;
                if (d.slot_index < 0)
                    out["difference"] = {{"kind", "placement"}, {"what", d.what}};
                else
                    out["difference"] = {{"kind", "order"},
                                         {"what", d.what},
                                         {"rank", d.rank},
                                         {"slot_index", d.slot_index},
                                         {"first", slot_json(d.first_slot, d.first_loc)},
                                         {"second", slot_json(d.second_slot, d.second_loc)}};
            } else {
                out["difference"] = nullptr;
            }
            std::cout << json_text(out, 2) << "\n";
        } else if (e.equivalent) {
            std::cout << fmt::format("equivalent: {} and {} order the same {} ops in the same order on every rank "
                                     "({} ranks, {} micro-batches{}){}\n",
                                     a.source, b.source, e.ops, a.placement.ranks, a.placement.total_microbatches() / a.segments,
                                     a.segments > 1 ? fmt::format(" x {} sequence segments", a.segments) : std::string(),
                                     e.renaming == "none" ? std::string() : "; renaming: " + e.renaming + " in " + b.source);
        } else {
            const EquivalenceDifference& d = *e.difference;
            std::cout << fmt::format("different: {}\n", d.what);
            if (d.slot_index >= 0) {
                if (!d.first_slot.empty()) std::cout << fmt::format("  first:  {}{}\n", d.first_slot, where(a, d.first_loc));
                if (!d.second_slot.empty()) std::cout << fmt::format("  second: {}{}\n", d.second_slot, where(b, d.second_loc));
            }
            std::cout << fmt::format("(first: {}; second: {}; reversing the second's ranks and stages does not make them "
                                     "equal either)\n",
                                     a.source, b.source);
        }
        return e.equivalent ? kOk : kViolations;
    }
};

}  // namespace

Runner add_equiv(CLI::App& app) {
    auto cmd = std::make_shared<EquivCommand>();
    auto* sub = app.add_subcommand("equiv", "whether two schedules (files or families) order the same work on every rank");
    cmd->first.add_options(*sub);
    sub->add_option("other", cmd->second_source, "the schedule to compare with (file or family; the same -P/-M/-V apply)")
        ->required();
    sub->add_flag("--json", cmd->json, "machine-readable output");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
