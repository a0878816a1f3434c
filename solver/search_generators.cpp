// Depends on the schedule library (pp_schedules); the executables that use it link both.
#include "solver/search_generators.hpp"

#include "limits/deadline.hpp"
#include "model/spelling.hpp"
#include "schedules/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace pp {

namespace {

// A family that takes a group size runs at its default G here; the origin names it ("(G=2)"), read off the
// schedule's own name, so a result is traced to the order it came from.
std::string group_size_of(const ScheduleFamily& family, const Schedule& schedule) {
    if (!family_takes_group_size(family.name)) return "";
    const auto at = schedule.source.find("G=");
    if (at == std::string::npos) return "";
    const auto end = schedule.source.find_first_not_of("0123456789", at + 2);
    return "(" + schedule.source.substr(at, end == std::string::npos ? std::string::npos : end - at) + ")";
}

}  // namespace

std::vector<WarmStart> generator_warm_starts(const Placement& placement) {
    std::vector<WarmStart> starts;
    const int P = placement.ranks, M = placement.total_microbatches();
    std::vector<std::optional<int>> vs = {std::nullopt};
    if (placement.pipeline_count() == 1 && placement.pipelines[0].stages() % P == 0)
        vs.push_back(placement.pipelines[0].stages() / P);
    const bool v_map = placement.pipeline_count() == 1 &&
                       same_placement_shape(placement, Placement::single(P, v_stage_map(P, 2 * P), M));
    for (const ScheduleFamily& family : schedule_families()) {
        if (family.placement == "v" && !v_map) continue;  // always on the V map: not for this placement
        if (family_takes_segments(family.name)) continue;  // its ops are segment units, not this placement's micro-batches
        for (const auto& v : vs) {
            if (family.placement == "v" && v) continue;  // V = 2 is its only V: the same schedule again
            if (limits::expired()) return starts;  // the caller's limit (a ScopedDeadline): keep what there is
            try {
                Schedule s = family.generate({P, M, v});  // a long one (v-min, v-zb at large P) polls the limit
                const std::string origin = "generator:" + family.name + group_size_of(family, s);
                const bool repeat = !starts.empty() && starts.back().origin == origin &&
                                    starts.back().schedule.ranks.size() == s.ranks.size() &&
                                    std::equal(s.ranks.begin(), s.ranks.end(), starts.back().schedule.ranks.begin(),
                                               [](const auto& a, const auto& b) {
                                                   return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Slot& x, const Slot& y) {
                                                       return x.count == y.count && x.ops == y.ops;
                                                   });
                                               });
                if (!repeat) starts.push_back({origin, std::move(s)});
            } catch (const std::exception&) {
                // the family does not exist for these parameters
            } catch (const limits::Expired&) {
                return starts;  // the limit ran out while a family was generated: keep what there is
            }
        }
    }
    return starts;
}

bool is_placement_name(const std::string& given) {
    const std::string name = to_lower(given);
    return name == "1f1b" || name == "v" || name == "dualpipe" || name.rfind("interleaved:", 0) == 0;
}

Placement placement_from_name(const std::string& given, int ranks, int microbatches) {
    const std::string name = to_lower(given);
    if (ranks < 1) throw std::invalid_argument("-P must be at least 1");
    if (microbatches < 1) throw std::invalid_argument("-M must be at least 1");
    if (name == "1f1b") return Placement::single(ranks, loop_stage_map(ranks, ranks), microbatches);
    if (name == "v") return Placement::single(ranks, v_stage_map(ranks, 2 * ranks), microbatches);
    if (name == "dualpipe") {
        if (microbatches % 2 != 0)
            throw std::invalid_argument("the dualpipe placement splits the micro-batches in two directions: -M must be even");
        return Placement::bidirectional(ranks, microbatches / 2);
    }
    if (name.rfind("interleaved:", 0) == 0) {
        const std::string v = name.substr(12);
        int stages_per_rank = 0;
        try {
            size_t used = 0;
            stages_per_rank = std::stoi(v, &used);
            if (used != v.size()) stages_per_rank = 0;
        } catch (const std::exception&) {
            stages_per_rank = 0;
        }
        if (stages_per_rank < 1) throw std::invalid_argument("interleaved:V needs a positive whole V, got '" + v + "'");
        return Placement::single(ranks, loop_stage_map(ranks, ranks * stages_per_rank), microbatches);
    }
    throw std::invalid_argument("unknown placement '" + name + "' (1f1b, v, interleaved:V, dualpipe, or a schedule file)");
}

}  // namespace pp
