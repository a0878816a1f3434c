// pipeproof_bench search-grid: the optimal search over a benchmark grid (issue 42), one JSON line per cell,
// with the Zero Bubble paper's ILP solved by CBC beside it on the cells it applies to (bench/peer_zb_ilp.hpp).
//
//   pipeproof_bench search-grid [--out FILE] [--shard K/N] [--time-limit S] [--placements a,b] [--costs a,b]
//                               [--caps 1p,2p] [--max-p P] [--max-m M] [--peer cbc] [--peer-time-limit S]
//                               [--peer-max-binaries N] [--cbc PATH] [--list]
//   pipeproof_bench search-grid --summary FILE     a Markdown table of the lines in FILE
//
// The cells are bench/search_grid_cells.hpp's. Each is turned into a search problem by the functions `pipeproof
// search` uses (cli/search_io.hpp: search_problem_from, then scale_to_rank_units for --units rank), so a cell is
// exactly `pipeproof search --placement X -P P -M M --costs C [--stage-costs ...] --memory-limit k*P --units rank`.
// --out appends one line per cell and flushes it; a cell whose id is already in FILE is skipped, so an interrupted
// run resumes where it stopped. Every schedule the search returns is verified (memory cap included) and timed
// again here, by the verifier and the simulator directly, independently of the search's own re-verification.
#include "bench/peer_zb_ilp.hpp"
#include "bench/search_grid_cells.hpp"
#include "cli/search_io.hpp"
#include "model/cost_presets.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using pp::Rational;
using pp::grid::Cell;

struct GridOptions {
    pp::grid::Filter filter;
    std::string out;              // empty: standard output only
    double time_limit = 60;
    bool peer = false;            // --peer cbc
    pp::peer::ZbIlpOptions peer_options;
    bool list = false;
};

// zb-1.5b-edges: the first and last model block at 1.3x the preset's F, I and W (--stage-costs), comm unchanged.
std::vector<std::string> edge_stage_costs(int blocks) {
    const pp::Costs base = pp::parse_costs("zb-1.5b");
    const Rational k(13, 10);
    const std::string items = fmt::format("F={},I={},W={}", pp::format_rational(base.base.F * k), pp::format_rational(base.base.I * k),
                                          pp::format_rational(base.base.W * k));
    return {fmt::format("0:{}", items), fmt::format("{}:{}", blocks - 1, items)};
}

std::string costs_text(const Cell& c) { return c.costs == "zb-1.5b-edges" ? "zb-1.5b" : c.costs; }

// The cell as `pipeproof search ... --units rank` builds it, with the same functions.
pp::SearchProblem problem_of(const Cell& c) {
    std::vector<std::string> stage_costs;
    if (c.costs == "zb-1.5b-edges") stage_costs = edge_stage_costs(pp::placement_from_name(c.placement, c.P, c.M).blocks());
    pp::SearchProblem problem = pp::cli::search_problem_from(c.placement, c.P, c.M, costs_text(c), c.memory_limit(), std::nullopt,
                                                             "makespan", nullptr, stage_costs);
    pp::cli::scale_to_rank_units(problem);
    return problem;
}

// The command that searches the same cell.
std::string search_command(const Cell& c) {
    std::string stage;
    if (c.costs == "zb-1.5b-edges")
        for (const auto& s : edge_stage_costs(pp::placement_from_name(c.placement, c.P, c.M).blocks())) stage += " --stage-costs " + s;
    return fmt::format("pipeproof search --placement {} -P {} -M {} --costs {}{} --memory-limit {} --units rank", c.placement, c.P, c.M,
                       costs_text(c), stage, c.memory_limit());
}

// The verifier and the simulator on the schedule, here and not in the search: nullopt when it verifies and the
// simulator's makespan equals the search's, else what differs.
std::optional<std::string> reverify(const pp::SearchProblem& problem, const pp::SearchResult& r) {
    pp::VerifyOptions vo;
    vo.memory_limit = problem.memory_limit;
    vo.activations = problem.activations;
    pp::Schedule s = *r.schedule;
    s.costs = problem.costs;
    const pp::VerifyReport report = pp::verify(s, vo);
    if (!report.ok())
        return fmt::format("{}: {}", pp::violation_name(report.violations.front().kind), report.violations.front().message);
    const pp::Simulation sim = pp::simulate(s, problem.costs, problem.activations);
    const Rational makespan = sim.scale.to_units(sim.makespan);
    if (makespan != r.units(r.makespan))
        return fmt::format("the simulator's makespan {} differs from the search's {}", pp::format_rational(makespan),
                           pp::format_rational(r.units(r.makespan)));
    return std::nullopt;
}

std::string decimal(double x, int digits) { return fmt::format("{:.{}f}", x, digits); }

nlohmann::json peer_json(const pp::peer::ZbIlpResult& p) {
    nlohmann::json j{{"solver", "cbc"}, {"status", p.status}, {"note", p.note}, {"binaries", p.binaries},
                     {"seconds", std::round(p.seconds * 100) / 100}};
    if (p.makespan) j["makespan"] = pp::format_rational(*p.makespan);
    j["reverified"] = p.schedule.has_value();  // solve_zb_ilp keeps a schedule only when our verifier passed it
    if (p.cbc_objective) j["cbc_objective"] = *p.cbc_objective;
    if (p.cbc_bound) j["cbc_bound"] = *p.cbc_bound;
    return j;
}

nlohmann::json run_cell(const Cell& c, const GridOptions& o) {
    const pp::SearchProblem problem = problem_of(c);
    pp::SearchOptions options;
    options.time_limit = o.time_limit;
    options.warm_starts = pp::generator_warm_starts(problem.placement);
    const pp::SearchResult r = pp::search(problem, options);
    nlohmann::json j{{"cell", c.id()},      {"index", c.index},  {"placement", c.placement}, {"P", c.P},
                     {"M", c.M},            {"cap", c.cap},      {"costs", c.costs},
                     {"memory_limit_rank_units", c.memory_limit()},
                     {"memory_limit_stage_activations", pp::format_rational(*problem.memory_limit)},
                     {"status", pp::search_status_name(r.status)},
                     {"seconds", std::round(r.seconds * 100) / 100}, {"time_limit", o.time_limit}};
    if (r.schedule) {
        const Rational gap = r.units(r.value - r.lower_bound);
        const Rational lb = r.units(r.lower_bound);
        j["makespan"] = pp::format_rational(r.units(r.makespan));
        j["lower_bound"] = pp::format_rational(lb);
        j["gap"] = pp::format_rational(gap);
        j["gap_fraction"] = decimal(lb > Rational(0) ? pp::to_double(gap / lb) : 0.0, 6);
        j["lower_bound_kind"] = r.lower_bound_kind;
        j["origin"] = r.origin;
        const auto problem_found = reverify(problem, r);
        j["reverified"] = !problem_found;
        if (problem_found) j["reverify_problem"] = *problem_found;
    } else {
        j["makespan"] = nullptr;
        j["lower_bound"] = r.status == pp::SearchStatus::Infeasible ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(pp::format_rational(r.units(r.lower_bound)));
        j["reverified"] = false;
    }
    if (o.peer) {
        if (const auto why = pp::peer::zb_ilp_not_applicable(problem))
            j["peer"] = {{"solver", "cbc"}, {"status", "skipped"}, {"note", *why}};
        else
            j["peer"] = peer_json(pp::peer::solve_zb_ilp(problem, o.peer_options));
    }
    return j;
}

std::set<std::string> cells_done(const std::string& file) {
    std::set<std::string> done;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        try {
            done.insert(nlohmann::json::parse(line).at("cell").get<std::string>());
        } catch (const std::exception&) {
            // a line cut short by a killed run: the cell runs again
        }
    }
    return done;
}

void print_cell(const nlohmann::json& j) {
    std::string peer;
    if (j.contains("peer")) {
        const auto& p = j["peer"];
        peer = fmt::format("  | cbc {} {} {:.1f} s", p["status"].get<std::string>(),
                           p.contains("makespan") ? p["makespan"].get<std::string>() : "-", p.value("seconds", 0.0));
    }
    fmt::print(stderr, "{:<44} {:<9} {:>12} gap {:>9} {:>7.2f} s  verified {}{}\n", j["cell"].get<std::string>(),
               j["status"].get<std::string>(), j["makespan"].is_null() ? "-" : j["makespan"].get<std::string>(),
               j.value("gap_fraction", std::string("-")), j["seconds"].get<double>(), j["reverified"].get<bool>() ? "yes" : "NO", peer);
}

int run_grid(const GridOptions& o) {
    const auto cells = pp::grid::selected_cells(o.filter);
    if (o.list) {
        for (const Cell& c : cells) fmt::print("{:>4} {:<44} {}\n", c.index, c.id(), search_command(c));
        return 0;
    }
    const std::set<std::string> done = o.out.empty() ? std::set<std::string>{} : cells_done(o.out);
    std::ofstream out;
    if (!o.out.empty()) out.open(o.out, std::ios::app);
    int ran = 0, skipped = 0;
    for (const Cell& c : cells) {
        if (done.count(c.id())) {
            ++skipped;
            continue;
        }
        const nlohmann::json j = run_cell(c, o);
        ++ran;
        if (out.is_open()) out << j.dump() << "\n" << std::flush;
        else std::cout << j.dump() << "\n" << std::flush;
        print_cell(j);
    }
    fmt::print(stderr, "search-grid: {} cell(s) run, {} already in {}\n", ran, skipped, o.out.empty() ? "-" : o.out);
    return 0;
}

// --- --summary ------------------------------------------------------------------------------------------------

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int summary(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw std::invalid_argument("--summary: cannot read " + file);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    std::sort(lines.begin(), lines.end(), [](const nlohmann::json& a, const nlohmann::json& b) { return a["index"].get<size_t>() < b["index"].get<size_t>(); });
    struct Group {
        int cells = 0, optimal = 0, verified = 0;
        double max_gap = 0;
        std::vector<double> seconds;
    };
    std::map<std::pair<size_t, int>, Group> groups;  // (placement's position in the grid, P)
    const auto& order = pp::grid::grid_placements();
    int optimal = 0, verified = 0, with_schedule = 0;
    for (const auto& j : lines) {
        const size_t at = std::find(order.begin(), order.end(), j["placement"].get<std::string>()) - order.begin();
        Group& g = groups[{at, j["P"].get<int>()}];
        ++g.cells;
        const bool opt = j["status"] == "OPTIMAL";
        g.optimal += opt;
        optimal += opt;
        if (!j["makespan"].is_null()) {
            ++with_schedule;
            g.verified += j["reverified"].get<bool>();
            verified += j["reverified"].get<bool>();
            g.max_gap = std::max(g.max_gap, std::stod(j["gap_fraction"].get<std::string>()));
        }
        g.seconds.push_back(j["seconds"].get<double>());
    }
    fmt::print("| placement | P | cells | OPTIMAL | max gap | median s | re-verified |\n|---|---|---|---|---|---|---|\n");
    for (const auto& [key, g] : groups)
        fmt::print("| {} | {} | {} | {} | {:.4f} % | {:.2f} | {}/{} |\n", order[key.first], key.second, g.cells, g.optimal, 100 * g.max_gap,
                   median(g.seconds), g.verified, g.cells);
    const int n = static_cast<int>(lines.size());
    fmt::print("\nOPTIMAL: {} of {} cells ({:.1f} %); schedules re-verified by the simulator: {} of {}.\n", optimal, n,
               n ? 100.0 * optimal / n : 0.0, verified, with_schedule);

    // The peer beside ours, on the cells it ran.
    std::vector<const nlohmann::json*> peer;
    for (const auto& j : lines)
        if (j.contains("peer") && j["peer"]["status"] != "skipped") peer.push_back(&j);
    int skipped = 0, too_large = 0;  // not the paper's placement / over --peer-max-binaries (or no cbc)
    for (const auto& j : lines)
        if (j.contains("peer") && j["peer"]["status"] == "skipped")
            ++(j["peer"]["note"].get<std::string>().rfind("the paper's ILP", 0) == 0 ? skipped : too_large);
    if (peer.empty() && skipped + too_large == 0) return 0;
    fmt::print("\n| cell | ours | makespan | s | CBC (ZB ILP) | makespan | CBC bound | s |\n|---|---|---|---|---|---|---|---|\n");
    int both = 0, ours_faster_or_equal_time = 0, same_value = 0, ours_better = 0;
    for (const auto* jp : peer) {
        const auto& j = *jp;
        const auto& p = j["peer"];
        fmt::print("| {} | {} | {} | {:.2f} | {} | {} | {} | {:.2f} |\n", j["cell"].get<std::string>(), j["status"].get<std::string>(),
                   j["makespan"].is_null() ? "-" : j["makespan"].get<std::string>(), j["seconds"].get<double>(),
                   p["status"].get<std::string>(), p.contains("makespan") ? p["makespan"].get<std::string>() : "-",
                   p.contains("cbc_bound") ? fmt::format("{:.1f}", p["cbc_bound"].get<double>()) : "-", p["seconds"].get<double>());
        if (p.contains("makespan") && !j["makespan"].is_null()) {
            ++both;
            const Rational ours = *pp::parse_rational(j["makespan"].get<std::string>());
            const Rational theirs = *pp::parse_rational(p["makespan"].get<std::string>());
            same_value += ours == theirs;
            ours_better += ours < theirs;
            ours_faster_or_equal_time += j["seconds"].get<double>() <= p["seconds"].get<double>();
        }
    }
    fmt::print("\nPeer: {} cell(s) run by CBC, {} skipped as too large (or without cbc), {} not its placement; both have a schedule "
               "on {}: the same makespan on {}, ours shorter on {}, ours in no more time on {}.\n",
               peer.size(), too_large, skipped, both, same_value, ours_better, ours_faster_or_equal_time);
    return 0;
}

GridOptions parse(int argc, char** argv, std::string& summary_file) {
    GridOptions o;
    for (int k = 0; k < argc; ++k) {
        const std::string a = argv[k];
        auto next = [&]() -> std::string {
            if (k + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++k];
        };
        if (a == "--summary") summary_file = next();
        else if (a == "--out") o.out = next();
        else if (a == "--time-limit") o.time_limit = std::stod(next());
        else if (a == "--placements") o.filter.placements = pp::grid::split_list(next());
        else if (a == "--costs") o.filter.costs = pp::grid::split_list(next());
        else if (a == "--caps") o.filter.caps = pp::grid::split_list(next());
        else if (a == "--max-p") o.filter.max_p = std::stoi(next());
        else if (a == "--max-m") o.filter.max_m = std::stoi(next());
        else if (a == "--list") o.list = true;
        else if (a == "--peer") {
            if (next() != "cbc") throw std::invalid_argument("--peer: the only peer is cbc (the Zero Bubble paper's ILP)");
            o.peer = true;
        } else if (a == "--peer-time-limit") o.peer_options.time_limit = std::stod(next());
        else if (a == "--peer-max-binaries") o.peer_options.max_binaries = std::stoul(next());
        else if (a == "--cbc") o.peer_options.cbc = next();
        else if (a == "--shard") {
            const std::string s = next();
            if (std::sscanf(s.c_str(), "%d/%d", &o.filter.shard, &o.filter.shards) != 2 || o.filter.shards < 1 || o.filter.shard < 0 ||
                o.filter.shard >= o.filter.shards)
                throw std::invalid_argument("--shard expects K/N with 0 <= K < N");
        } else {
            throw std::invalid_argument("search-grid: unknown argument " + a);
        }
    }
    for (const auto& p : o.filter.placements)
        if (!pp::grid::listed(pp::grid::grid_placements(), p)) throw std::invalid_argument("--placements: not in the grid: " + p);
    for (const auto& c : o.filter.costs)
        if (!pp::grid::listed(pp::grid::grid_costs(), c)) throw std::invalid_argument("--costs: not in the grid: " + c);
    for (const auto& c : o.filter.caps)
        if (!pp::grid::listed(pp::grid::grid_caps(), c)) throw std::invalid_argument("--caps: not in the grid: " + c);
    return o;
}

}  // namespace

int run_search_grid_bench(int argc, char** argv) {
    try {
        std::string summary_file;
        const GridOptions o = parse(argc, argv, summary_file);
        if (!summary_file.empty()) return summary(summary_file);
        return run_grid(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "search-grid: {}\n", e.what());
        return 2;
    }
}
