// pipeproof_bench: how long the foundation takes on a large schedule.
//   pipeproof_bench [FAMILY P M [V]]     (default: zbv 64 1024, i.e. 393,216 ops on 2 stages per rank)
//   pipeproof_bench search [NAME...]     the search figures of issue 2 (bench_search.cpp)
//   pipeproof_bench prove [--max-p N]    the prover figures of issue 3 (bench_prove.cpp)
//   pipeproof_bench chunks [FAMILY P M [V]]   chunk costs against opaque costs, issue 11 (bench_chunks.cpp)
//   pipeproof_bench read [FAMILY P M...] verify/simulate of a file against an awk token count (bench_read.cpp)
//   pipeproof_bench python-path [FAMILY P V M]  verify + simulate of a PyTorch CSV against PyTorch's dry run in
//                                        Python, bench/pytorch_path.py (bench_python_path.cpp)
//   pipeproof_bench limits [M]           memory per op of streamed outputs, time-limit margins (bench_limits.cpp)
//   pipeproof_bench zb-table [...]       the Zero Bubble paper's Table 5 cells, searched (bench_zb_table.cpp)
//   pipeproof_bench certificate [--max-p N] [--max-p-symbolic N] [--families a,b]  the checker's time beside the prover's (bench_certificate.cpp)
//   pipeproof_bench search-grid [...]    the search on issue 42's grid, the Zero Bubble ILP (CBC) beside it
//                                        (bench_search_grid.cpp, peer_zb_ilp.hpp)
//   pipeproof_bench offload              the offload timing on large schedules and the offload chooser on small ones
//                                        (bench_offload.cpp)
// Times each phase (best of 3): generate, write and re-read the native text, build the CSR dependency
// graph, verify (every check, on the built graph), simulate (longest path), and reports peak RSS.
#include "formats/native.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace {

double best_ms(const std::function<void()>& work, int repeats = 3) {
    double best = 1e300;
    for (int k = 0; k < repeats; ++k) {
        const auto start = std::chrono::steady_clock::now();
        work();
        const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
        best = std::min(best, took.count());
    }
    return best;
}

long peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

}  // namespace

int run_search_bench(int argc, char** argv);  // bench_search.cpp
int run_prove_bench(int argc, char** argv);   // bench_prove.cpp
int run_chunk_bench(int argc, char** argv);   // bench_chunks.cpp
int run_read_bench(int argc, char** argv, const std::string& self);  // bench_read.cpp
int run_python_path_bench(int argc, char** argv, const std::string& self);  // bench_python_path.cpp
int run_limits_bench(int argc, char** argv, const std::string& self);  // bench_limits.cpp
int run_zb_table_bench(int argc, char** argv);  // bench_zb_table.cpp
int run_certificate_bench(int argc, char** argv, const std::string& self);  // bench_certificate.cpp
int run_search_grid_bench(int argc, char** argv);  // bench_search_grid.cpp
int run_offload_bench(int argc, char** argv);      // bench_offload.cpp

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "search") return run_search_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "prove") return run_prove_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "chunks") return run_chunk_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "read") return run_read_bench(argc - 2, argv + 2, argv[0]);
    if (argc > 1 && std::string(argv[1]) == "python-path") return run_python_path_bench(argc - 2, argv + 2, argv[0]);
    if (argc > 1 && std::string(argv[1]) == "limits") return run_limits_bench(argc - 2, argv + 2, argv[0]);
    if (argc > 1 && std::string(argv[1]) == "zb-table") return run_zb_table_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "search-grid") return run_search_grid_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "offload") return run_offload_bench(argc - 2, argv + 2);
    if (argc > 1 && std::string(argv[1]) == "certificate") return run_certificate_bench(argc - 2, argv + 2, argv[0]);
    const std::string family = argc > 1 ? argv[1] : "zbv";
    const int P = argc > 2 ? std::stoi(argv[2]) : 64;
    const int M = argc > 3 ? std::stoi(argv[3]) : 1024;
    const std::optional<int> V = argc > 4 ? std::optional<int>(std::stoi(argv[4])) : std::nullopt;
    const pp::ScheduleFamily* f = pp::find_family(family);
    if (!f) {
        fmt::print(stderr, "unknown family {}\n", family);
        return 2;
    }
    pp::Schedule schedule;
    const double generate = best_ms([&] { schedule = f->generate({P, M, V}); });
    std::string text;
    const double write = best_ms([&] { text = pp::write_native(schedule); });
    pp::Schedule parsed;
    const double parse = best_ms([&] { parsed = pp::read_native(text, "bench.txt"); });
    const double build = best_ms([&] { (void)pp::build_schedule_graph(parsed); });
    const pp::ScheduleGraph graph = pp::build_schedule_graph(parsed);
    pp::VerifyReport report;
    const double verify = best_ms([&] { report = pp::verify(parsed, graph); });
    const pp::Costs costs = pp::parse_costs("F=1,I=1,W=1");
    pp::Simulation sim;
    const double longest_path = best_ms([&] { sim = pp::simulate(parsed, graph, costs); });
    fmt::print("{} P={} M={}{}: {} ops in {} slots, valid={}, makespan={}\n", family, P, M, V ? fmt::format(" V={}", *V) : "",
               parsed.op_count(), parsed.slot_count(), report.ok(), sim.scale.format(sim.makespan));
    fmt::print("{:<28}{:>10.1f} ms\n", "generate", generate);
    fmt::print("{:<28}{:>10.1f} ms  ({:.1f} MiB of text)\n", "write native text", write, text.size() / 1048576.0);
    fmt::print("{:<28}{:>10.1f} ms\n", "parse native text", parse);
    fmt::print("{:<28}{:>10.1f} ms\n", "build CSR graph", build);
    fmt::print("{:<28}{:>10.1f} ms\n", "verify (all checks)", verify);
    fmt::print("{:<28}{:>10.1f} ms\n", "simulate (longest path)", longest_path);
    fmt::print("{:<28}{:>10} MiB\n", "peak RSS", peak_rss_mib());
    return report.ok() ? 0 : 1;
}
