// pipeproof_bench chunks [FAMILY P M [V]] (default dualpipev 32 1500: about 100k slots): issue 11's
// benchmark. Times the exact simulation of one schedule with opaque costs against the same schedule with
// chunk costs at L = 4 layers per chunk (derive the per-slot-kind durations once, then the same longest path,
// then the per-rank exposed communication by a per-slot lookup), best of 3, on the graph built once.
// The goal: chunk costs within 3x of opaque costs.
#include "schedules/registry.hpp"
#include "solver/chunk_best_z3.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace {

double best_of_3_ms(const std::function<void()>& work) {
    double best = 1e300;
    for (int k = 0; k < 3; ++k) {
        const auto start = std::chrono::steady_clock::now();
        work();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

}  // namespace

int run_chunk_bench(int argc, char** argv) {
    const std::string family = argc > 0 ? argv[0] : "dualpipev";
    const int P = argc > 1 ? std::stoi(argv[1]) : 32;
    const int M = argc > 2 ? std::stoi(argv[2]) : 1500;
    const std::optional<int> V = argc > 3 ? std::optional<int>(std::stoi(argv[3])) : std::nullopt;
    const pp::ScheduleFamily* f = pp::find_family(family);
    if (!f) {
        fmt::print(stderr, "unknown family {}\n", family);
        return 2;
    }
    const pp::Schedule schedule = f->generate({P, M, V});
    const pp::ScheduleGraph graph = pp::build_schedule_graph(schedule);
    const std::string chunk_text =
        "layers=4,attn_f=1.5,dispatch_f=1,mlp_f=2,combine_f=1.25,combine_b=1,mlp_i=2,mlp_w=1.5,dispatch_b=1.25,attn_i=1.5,"
        "attn_w=0.75,shared_f=0.25,shared_i=0.25,shared_w=0.25,pp=0.5";
    const pp::ChunkCosts chunk = pp::parse_chunk_costs(chunk_text);
    const pp::Costs opaque = pp::derive_chunk_table(chunk, pp::PatternSpec{}).costs();  // the same numbers, given

    pp::Simulation sim;
    double opaque_ms = best_of_3_ms([&] { sim = pp::simulate(schedule, graph, opaque); });
    pp::Simulation chunked;
    pp::ChunkExposure exposure;
    const double chunk_ms = best_of_3_ms([&] {
        const pp::ChunkTable table = pp::derive_chunk_table(chunk, pp::PatternSpec{});
        chunked = pp::simulate(schedule, graph, table.costs());
        exposure = pp::exposure_per_rank(schedule, table);
    });
    opaque_ms = std::min(opaque_ms, best_of_3_ms([&] { sim = pp::simulate(schedule, graph, opaque); }));  // warm caches for both
    pp::PatternSpec best;
    best.kind = pp::PatternKind::Best;
    const double best_ms = best_of_3_ms([&] { (void)pp::derive_chunk_table(chunk, best, pp::chunk_best_solver()); });
    // Network-bound costs where the exhaustive search runs out of budget on the F&B pair and Z3 finishes it.
    const pp::ChunkCosts heavy = pp::parse_chunk_costs(
        "layers=4,attn_f=4,dispatch_f=9,mlp_f=3,combine_f=6,combine_b=8,mlp_i=2,mlp_w=1,dispatch_b=8,attn_i=5,attn_w=9");
    pp::ChunkTable heavy_table;
    const double heavy_ms = best_of_3_ms([&] { heavy_table = pp::derive_chunk_table(heavy, best, pp::chunk_best_solver()); });

    fmt::print("{} P={} M={}{}: {} slots; chunk costs {} (pattern deepseek)\n", family, P, M, V ? fmt::format(" V={}", *V) : "",
               schedule.slot_count(), chunk_text);
    fmt::print("makespan opaque {} / chunk {}; exposed all-to-all, all ranks: {} of {}\n", sim.scale.format(sim.makespan),
               chunked.scale.format(chunked.makespan), pp::format_rational(exposure.total_exposed()),
               pp::format_rational(exposure.total_network()));
    fmt::print("{:<44}{:>10.1f} ms\n", "simulate, opaque costs", opaque_ms);
    fmt::print("{:<44}{:>10.1f} ms  ({:.2f}x; goal <= 3x)\n", "derive + simulate + exposure, chunk costs", chunk_ms, chunk_ms / opaque_ms);
    fmt::print("{:<44}{:>10.1f} ms  (6 slot kinds, exhaustive or Z3)\n", "derive with pattern best (L=4)", best_ms);
    const auto& pair = heavy_table.of(pp::SlotKind::PairFB);
    fmt::print("{:<44}{:>10.1f} ms  (F&B {} by {}; {})\n", "derive with pattern best, network-bound L=4", heavy_ms,
               pp::format_rational(pair.timeline.duration), pair.method, pair.optimal ? "optimal" : "not proved optimal");
    return sim.makespan == chunked.makespan && chunk_ms <= 3 * opaque_ms ? 0 : 1;
}
