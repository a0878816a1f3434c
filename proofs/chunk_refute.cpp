#include "proofs/chunk_refute.hpp"

#include "proofs/chunk_claim.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pp {
namespace {

std::optional<int> stages_per_rank(const std::string& family) {
    if (family == "interleaved-1f1b" || family == "zb1p" || family == "looped-bfs" || family == "combined-1f1b") return 2;
    return std::nullopt;
}

}  // namespace

ChunkRefuteResult refute_chunk_claim(const std::string& family, const std::string& claim_text, const ChunkRefuteOptions& o) {
    const ScheduleFamily* generator = find_family(family);
    if (!generator) throw std::invalid_argument("not a schedule family: " + family + " (see `pipeproof list`)");
    const ChunkClaimPtr claim = parse_chunk_claim(claim_text);
    const std::vector<std::string> names = chunk_claim_names_used(claim);
    ChunkRefuteResult r;
    r.claim = claim_text;
    r.family = family;

    // Candidate cost points, one value per component type.
    std::vector<std::array<Rational, kComponents>> points;
    std::array<Rational, kComponents> ones{};
    for (int k = 0; k < kComponents; ++k) {
        const auto c = static_cast<Component>(k);
        const bool is_shared = c == Component::SharedF || c == Component::SharedI || c == Component::SharedW;
        ones[static_cast<size_t>(k)] = is_shared && !o.shared ? Rational(0) : Rational(1);
    }
    points.push_back(ones);
    const ChunkFormula pair = derive_chunk_formula(SlotKind::PairFB, o.pattern, o.layers, o.shared, false);
    if (auto outside = exposing_point(pair)) points.push_back(*outside);
    auto heavy = ones;
    for (int k = 0; k < kComponents; ++k)
        if (stream_of(static_cast<Component>(k)) == Stream::Compute && !(heavy[static_cast<size_t>(k)] == Rational(0))) heavy[static_cast<size_t>(k)] = 4;
    points.push_back(heavy);

    for (int P = o.p_lo; P <= o.p_hi; ++P) {
        std::vector<int> ms;
        if (o.m_range) {
            for (int M = o.m_range->first; M <= o.m_range->second; ++M) ms.push_back(M);
        } else {
            for (int M = 1; M <= 8 * P + 8 && static_cast<int>(ms.size()) < o.steps; ++M) {
                try {
                    (void)generator->generate({P, M, stages_per_rank(family)});
                    ms.push_back(M);
                } catch (const std::exception&) {
                }
            }
        }
        for (const int M : ms) {
            Schedule schedule;
            try {
                schedule = generator->generate({P, M, stages_per_rank(family)});
            } catch (const std::exception&) {
                continue;
            }
            ++r.instances;
            for (const auto& point : points) {
                ++r.points;
                const ChunkCosts costs = uniform_chunk_costs(o.layers, point);
                const ChunkTable table = derive_chunk_table(costs, o.pattern);
                const Simulation sim = simulate(schedule, table.costs());
                const ChunkExposure e = exposure_per_rank(schedule, table);
                std::map<std::string, Rational> v;
                v["exposed_comm"] = e.total_exposed();
                v["network_comm"] = e.total_network();
                Rational worst{0};
                for (const auto& x : e.exposed) worst = std::max(worst, x);
                v["exposed_comm_max"] = worst;
                v["pair_exposed"] = table.of(SlotKind::PairFB).timeline.exposed_comm;
                v["pair_time"] = table.of(SlotKind::PairFB).timeline.duration;
                v["makespan"] = sim.scale.to_units(sim.makespan);
                v["bubble"] = sim.scale.to_units(sim.bubble);
                v["P"] = Rational(P);
                v["M"] = Rational(M);
                for (int k = 0; k < kComponents; ++k) v[component_key(static_cast<Component>(k))] = point[static_cast<size_t>(k)];
                if (chunk_claim_holds(claim, v)) continue;
                r.refuted = true;
                r.P = P;
                r.M = M;
                r.costs = costs;
                for (const auto& name : names) r.values.emplace_back(name, format_rational(v.at(name)));
                for (const char* extra : {"exposed_comm", "network_comm", "pair_exposed", "pair_time"})
                    if (std::find(names.begin(), names.end(), extra) == names.end()) r.values.emplace_back(extra, format_rational(v.at(extra)));
                r.schedule = schedule;
                return r;
            }
        }
    }
    if (r.instances == 0) throw std::invalid_argument(fmt::format("{} generates no schedule for P in {}..{}", family, o.p_lo, o.p_hi));
    r.notes.push_back(fmt::format("no counterexample among {} instance(s) x {} candidate cost point(s): not a proof", r.instances, points.size()));
    return r;
}

}  // namespace pp
