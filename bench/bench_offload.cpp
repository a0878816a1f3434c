// pipeproof_bench offload: the offload timing (verifier/offload.hpp) on large schedules, beside the plain
// simulator, and the offload chooser (solver/offload_choice.hpp) on small ones, 30 s each: its answer, Z3 queries
// and time.
#include "schedules/registry.hpp"
#include "solver/offload_choice.hpp"
#include "verifier/memory.hpp"
#include "verifier/offload.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <string>

namespace {

using namespace pp;

double seconds_of(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Schedule generate(const std::string& family, int P, int M, std::optional<int> V) {
    GenerateParams params{P, M};
    params.stages_per_rank = V;
    return find_family(family)->generate(params);
}

void time_large(const std::string& family, int P, int M, std::optional<int> V) {
    const Schedule s = generate(family, P, M, V);
    const Costs costs = parse_costs("F=1,I=1,W=1");
    OffloadPolicy policy;
    policy.fraction = Rational(1, 2);
    policy.offload_time = policy.reload_time = Rational(2);
    Simulation plain;
    OffloadTiming moved;
    const double plain_s = seconds_of([&] { plain = simulate(s, costs); });
    const double offload_s = seconds_of([&] { moved = time_with_offload(s, costs, {}, policy); });
    fmt::print("timing  {:<28} {:>9} ops  plain {:7.3f} s  offload {:7.3f} s  {} transfers  makespan {} -> {}\n",
               fmt::format("{}(P={},M={})", family, P, M), s.op_count(), plain_s, offload_s, moved.transfers.size(),
               plain.scale.format(plain.makespan), moved.scale.format(moved.makespan));
}

void time_choice(const std::string& family, int P, int M, std::optional<int> V, const std::string& link, const Rational& below) {
    const Schedule s = generate(family, P, M, V);
    const Costs costs = parse_costs("F=1,I=1,W=1");
    OffloadPolicy policy;
    policy.offload_time = policy.reload_time = *parse_rational(link);
    Rational peak(0);
    for (const Rational& p : peak_activations(s)) peak = std::max(peak, p);
    OffloadChoice choice;
    const double took = seconds_of([&] { choice = choose_offloads(s, costs, {}, policy, peak - below, 30); });
    fmt::print("choice  {:<28} link {:<4} cap {:<4} {:<10} {:>3} of {:>3} moved  makespan {:<8} bound {:<8} {:>2} queries  {:7.2f} s\n",
               fmt::format("{}(P={},M={})", family, P, M), link, format_rational(peak - below), choice_status_name(choice.status),
               choice.moved.size(), choice.eligible, format_rational(choice.makespan), format_rational(choice.lower_bound),
               choice.queries, took);
}

}  // namespace

int run_offload_bench(int, char**) {
    time_large("1f1b", 64, 1024, std::nullopt);
    time_large("group-interleaved", 32, 512, 2);
    time_large("interleaved-1f1b", 32, 512, 2);
    time_choice("1f1b", 4, 8, std::nullopt, "3/2", Rational(1));
    time_choice("group-interleaved", 4, 8, 2, "3/2", Rational(1));
    time_choice("group-interleaved", 4, 16, 2, "3/2", Rational(2));
    time_choice("interleaved-1f1b", 4, 8, 2, "2", Rational(2));
    time_choice("1f1b", 8, 16, std::nullopt, "3/2", Rational(2));
    return 0;
}
