// pipeproof search --placement any (or a list): every placement named, searched one after another in a rank's
// share of the model, and the best of them with what its OPTIMAL covers (solver/search_scope.hpp).
#include "cli/search_scope.hpp"

#include "cli/common.hpp"
#include "cli/json_status.hpp"
#include "cli/search_io.hpp"
#include "cli/vocabulary.hpp"
#include "cli/watchdog.hpp"
#include "formats/json_text.hpp"
#include "formats/load.hpp"
#include "model/size_budget.hpp"
#include "model/spelling.hpp"
#include "solver/search_generators.hpp"
#include "verifier/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace pp::cli {

std::optional<std::vector<std::string>> placement_list(const std::string& text) {
    if (to_lower(text) == "any") return every_placement_name();
    if (text.find(',') == std::string::npos || std::filesystem::exists(text)) return std::nullopt;
    std::vector<std::string> names;
    size_t begin = 0;
    while (begin <= text.size()) {
        const size_t end = std::min(text.find(',', begin), text.size());
        const std::string name = to_lower(text.substr(begin, end - begin));
        if (!is_placement_name(name))
            throw UsageError("--placement: '" + name + "' in the list is not 1f1b, v, interleaved:V or dualpipe (a list "
                             "names placements; 'any' names them all)");
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        begin = end + 1;
    }
    return names;
}

namespace {

// Each placement's problem in rank units; a placement the instance does not admit is skipped with the reason
// when `any` chose it, an error when the user named it.
std::vector<PlacementSearch> candidates(const ScopeRequest& q) {
    std::vector<PlacementSearch> out;
    for (const std::string& name : q.placements) {
        PlacementSearch p;
        p.placement = name;
        try {
            SearchProblem problem = search_problem_from(name, q.ranks, q.microbatches, q.costs, q.memory, std::nullopt,
                                                        q.objective, nullptr);
            scale_to_rank_units(problem);
            require_positive_durations(problem);
            problem.symmetry_breaking = q.symmetry_breaking;
            p.problem = std::move(problem);
        } catch (const UsageError& e) {
            if (!q.any) throw UsageError("--placement " + name + ": " + e.what());
            p.skipped = e.what();
        } catch (const SizeLimitError& e) {
            if (!q.any) throw;
            p.skipped = e.what();
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::string value_text(const std::optional<Rational>& v) { return v ? format_rational(*v) : "-"; }

nlohmann::json placement_json(const PlacementSearch& p) {
    nlohmann::json j;
    j["placement"] = p.placement;
    if (!p.searched()) {
        j["status"] = "skipped";
        j["reason"] = p.skipped;
        return j;
    }
    const SearchResult& r = p.result;
    j["status"] = json_status(r.status);
    j["blocks"] = p.problem->placement.blocks();
    const auto value = placement_value(r), bound = placement_lower_bound(r);
    if (value) put_number(j, "value", *value);
    else j["value"] = nullptr;
    if (bound) put_number(j, "lower_bound", *bound);
    else j["lower_bound"] = nullptr;
    j["lower_bound_kind"] = r.lower_bound_kind;
    j["seconds"] = std::round(r.seconds * 1000) / 1000;
    return j;
}

std::string status_line(const ScopeResult& s) {
    const std::string names = fmt::format("{}", fmt::join(s.searched_names(), ", "));
    switch (s.status) {
        case SearchStatus::Optimal: return "OPTIMAL over the placements " + names + " (and only over them)";
        case SearchStatus::Feasible: return "FEASIBLE (the best of the placements " + names + "; not shown optimal over them)";
        case SearchStatus::Infeasible: return "INFEASIBLE under the cap for every placement searched (" + names + ")";
        default: return "UNKNOWN (no schedule of " + names + " found in time)";
    }
}

void print_text(const ScopeRequest& q, const ScopeResult& s, const std::string& units_line) {
    std::cout << "status: " << status_line(s) << "\n";
    const char* what = q.objective == "span" ? "span" : "makespan";
    std::cout << fmt::format("instance: {} ranks, {} micro-batches; objective {}; memory limit {}\n", q.ranks, q.microbatches,
                             what, q.memory && *q.memory != "none" ? *q.memory + " per rank" : "none");
    std::cout << "units: " << units_line << "\n";
    if (s.stopped) std::cout << "stopped: on request (SIGINT/SIGTERM) before the time limit\n";
    if (s.best >= 0) {
        const PlacementSearch& b = s.placements[s.best];
        std::cout << fmt::format("best: placement {} ({} model blocks), {} {} (simulator), from {}\n", b.placement,
                                 b.problem->placement.blocks(), what, format_rational(*s.value), b.result.origin);
    }
    if (s.lower_bound)
        std::cout << "lower bound: " << format_rational(*s.lower_bound)
                  << " (the least of the placements' bounds: no schedule of any placement searched is faster)\n";
    if (s.value && s.lower_bound) {
        std::cout << "gap: " << format_rational(*s.value - *s.lower_bound);
        if (*s.lower_bound > Rational(0))
            std::cout << fmt::format("  ({:.3f} %)", 100.0 * to_double((*s.value - *s.lower_bound) / *s.lower_bound));
        std::cout << "\n";
    }
    std::cout << fmt::format("{:<16}{:<12}{:>14}{:>14}  {:<16}{:>9}\n", "placement", "status", what, "lower bound", "bound kind",
                             "time (s)");
    for (const PlacementSearch& p : s.placements) {
        if (!p.searched()) {
            std::cout << fmt::format("{:<16}skipped: {}\n", p.placement, p.skipped);
            continue;
        }
        const SearchResult& r = p.result;
        std::cout << fmt::format("{:<16}{:<12}{:>14}{:>14}  {:<16}{:>9.2f}\n", p.placement, search_status_name(r.status),
                                 value_text(placement_value(r)), value_text(placement_lower_bound(r)), r.lower_bound_kind,
                                 r.seconds);
    }
    std::cout << fmt::format("time: {:.2f} s\n", s.seconds);
    if (s.best >= 0 && !q.output)
        std::cout << "\n" << render_schedule(*s.placements[s.best].result.schedule, FileFormat::Native);
}

nlohmann::json scope_json(const ScopeRequest& q, const ScopeResult& s, const std::string& units_line) {
    nlohmann::json j;
    if (s.best >= 0) {
        const PlacementSearch& b = s.placements[s.best];
        j = search_result_json(b.result);
        put_search_instance(j, *b.problem);
        put_number(j, "stage_share", stage_share(b.problem->placement));
        if (!q.output) j["schedule"] = render_schedule(*b.result.schedule, FileFormat::Native);
        else j["schedule_file"] = *q.output;
    } else {
        // No schedule: the instance as asked, its placement the list searched.
        const auto& first = std::find_if(s.placements.begin(), s.placements.end(), [](const auto& p) { return p.searched(); });
        if (first != s.placements.end()) {
            j = search_result_json(first->result);
            put_search_instance(j, *first->problem);
            put_number(j, "stage_share", stage_share(first->problem->placement));
        }
        j["placement"] = fmt::format("{}", fmt::join(s.searched_names(), ","));
    }
    j["status"] = json_status(s.status);
    if (s.lower_bound) put_number(j, "lower_bound", *s.lower_bound);
    else j["lower_bound"] = nullptr;
    if (s.value && s.lower_bound) {
        put_number(j, "gap", *s.value - *s.lower_bound);
        j["gap_fraction"] = *s.lower_bound > Rational(0) ? to_double((*s.value - *s.lower_bound) / *s.lower_bound) : 0.0;
    }
    j["seconds"] = std::round(s.seconds * 1000) / 1000;
    j["stopped"] = s.stopped;
    nlohmann::json placements = nlohmann::json::array();
    for (const PlacementSearch& p : s.placements) placements.push_back(placement_json(p));
    j["placements"] = placements;
    j["scope"] = {{"searched", s.searched_names()},
                  {"optimal_over", s.status == SearchStatus::Optimal ? s.searched_names() : std::vector<std::string>{}}};
    put_units(j, units_line);
    j["time_unit"] = q.time_unit;
    return j;
}

}  // namespace

int run_search_scope(const ScopeRequest& q, SearchOptions options) {
    const std::string units_line =
        "rank (a rank's share of the model: each placement's stages run at their share of the given costs and hold that "
        "share of a rank's stash, so values compare across placements; what is printed and written is per stage)";
    ScopeResult s = search_placements(candidates(q), options, [&](const Placement& placement) {
        return q.no_generators ? std::vector<WarmStart>{} : generator_warm_starts(placement);
    });
    if (s.best >= 0 && q.output) write_schedule_output(*s.placements[s.best].result.schedule, *q.output, q.format);
    if (q.proof_dir)
        for (const PlacementSearch& p : s.placements)
            if (p.searched())
                write_search_proof(p.result, (std::filesystem::path(*q.proof_dir) / p.placement).string(), *p.problem);
    if (!claim_answer()) for (;;) pause();  // the watchdog is writing its answer and ends the process
    if (q.json) std::cout << json_text(scope_json(q, s, units_line), 2) << "\n";
    else print_text(q, s, units_line);
    if (s.status == SearchStatus::Infeasible) return kViolations;
    if (s.best < 0) return kUndecided;
    return kOk;
}

}  // namespace pp::cli
