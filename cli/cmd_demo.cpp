// pipeproof demo: the main job on built-in examples -- generate 1F1B and DualPipe for 4 ranks and
// 8 micro-batches, verify them, time them and draw their timelines; then show what the verifier says
// about a deliberately deadlocked variant; finally a certified-optimal search and a proof for every M.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "formats/native.hpp"
#include "render/ascii_gantt.hpp"
#include "schedules/registry.hpp"
#include "proofs/prove.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

namespace pp::cli {
namespace {

void show_family(const char* name, const char* costs_text) {
    const Schedule schedule = find_family(name)->generate({4, 8, std::nullopt});
    const Costs costs = parse_costs(costs_text);
    std::cout << fmt::format("== {} (P=4, M=8), costs {}\n", name, costs_text);
    const auto timed = verify_and_simulate(schedule, costs, {});
    std::cout << "verify: OK (every op once, on its rank, dependencies respected, no deadlock)\n";
    std::cout << ascii_gantt(schedule, timed.sim);
    std::cout << simulation_text(schedule, timed.slots, timed.sim, costs) << "\n";
}

void demo_search() {
    SearchProblem problem;
    problem.placement = placement_from_name("1f1b", 4, 8);
    problem.costs = parse_costs("F=1,I=1,W=1");
    problem.memory_limit = 2;
    SearchOptions options;
    options.time_limit = 20;
    options.warm_starts = generator_warm_starts(problem.placement);
    const SearchResult r = search(problem, options);
    std::cout << "\n== pipeproof search -P 4 -M 8 --costs F=1,I=1,W=1 --memory-limit 2\n"
              << fmt::format("status {}, makespan {}, lower bound {} ({}), {:.2f} s\n", search_status_name(r.status),
                             format_rational(r.units(r.value)), format_rational(r.units(r.lower_bound)),
                             r.lower_bound_kind, r.seconds);
}

void demo_proof() {
    ProveOptions options;
    options.property = Property::BubbleConstant;
    const ProofResult proof = prove(*family_spec("dualpipe", 4), options);
    std::cout << "\n== pipeproof prove dualpipe -P 4 --property bubble-constant\n"
              << verdict_name(proof.verdict) << ": " << proof.summary << "\n";
}

int run_demo() {
    show_family("1f1b", "F=1,B=2");
    show_family("dualpipe", "F=1,I=1,W=1,FB=3");
    // Move rank 0's first backward ahead of its second forward: 0B0 waits for 1B0, which rank 1 runs
    // after 1F1, which waits for 0F1, which rank 0 now runs after 0B0 -- a deadlock across two ranks.
    Schedule broken = find_family("1f1b")->generate({4, 8, std::nullopt});
    auto& rank0 = broken.ranks[0];
    std::rotate(rank0.begin() + 1, rank0.begin() + 4, rank0.begin() + 5);
    broken.source = "1f1b with rank 0's 0B0 moved ahead of 0F1";
    std::cout << "== " << broken.source << "\n" << write_native(broken);
    std::cout << violations_text(broken, verify(broken));
    demo_search();
    demo_proof();
    return kOk;
}

}  // namespace

Runner add_demo(CLI::App& app) {
    app.add_subcommand("demo", "run the main job on built-in examples (generate, verify, time, draw)");
    return [] { return run_demo(); };
}

}  // namespace pp::cli
