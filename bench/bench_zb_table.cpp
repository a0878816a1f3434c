// pipeproof_bench zb-table: the Zero Bubble paper's Table 5 instances (Qi et al., ICLR 2024), searched under its
// memory model (issue 32).
//   pipeproof_bench zb-table [--out DIR] [--time-limit S] [--shard K/N] [--only ID,...]   search cells, one file each
//   pipeproof_bench zb-table --merge DIR                                                  DIR/table.json from them
//   pipeproof_bench zb-table --heuristic [--out DIR] [--only ID,...]   the paper's own heuristic alone (our port,
//                         solver/zb_auto_schedule.hpp): DIR/heuristic/<id>.txt and its rate in the cell's JSON
// A cell is (model, p, m, limit): Table 9's costs (ms; the paper's TB is our I), the 1F1B placement, activation
// sizes F = 1, I = 1 - M_W/M_B (Table 1: M_W/M_B = 32h/(34h+5as) per layer), the cap p (ZB-1p) or 2p (ZB-2p) in
// units of M_B, and the span objective (each rank's last end minus its earliest possible start). Shard K/N takes
// every N-th cell from the K-th (0-based), so `seq 0 7 | parallel pipeproof_bench zb-table --shard {}/8` or a
// Slurm array runs the table; --merge then collects the cells.
//
// Each cell writes DIR/<id>.txt (the schedule, with its costs, memory limit and activation sizes: `pipeproof
// verify` and `simulate` re-check it) and DIR/cells/<id>.json (the search's numbers, exact). The bubble rate is
// (span - m(F+I+W)) / span; a lower bound on the span gives one on the rate (the rate grows with the span).
#include "bench/zb_table_cells.hpp"
#include "formats/native.hpp"
#include "model/rational.hpp"
#include "solver/search.hpp"
#include "solver/search_generators.hpp"
#include "solver/search_instance.hpp"
#include "solver/zb_auto_schedule.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using pp::Rational;

using pp::zb_table::exact;
using ZbCell = pp::zb_table::Cell;
using pp::zb_table::table9;

struct Job {
    const ZbCell* cell;
    int factor;  // 1: ZB-1p, 2: ZB-2p
    std::string id() const { return fmt::format("{}-p{}-m{}-{}p", cell->model, cell->p, cell->m, factor); }
};

std::vector<Job> all_jobs() {
    std::vector<Job> jobs;
    for (const ZbCell& c : table9())
        for (int factor : {1, 2}) jobs.push_back({&c, factor});
    return jobs;
}

pp::SearchProblem problem_of(const Job& job) { return pp::zb_table::cell_problem(*job.cell, job.factor); }

std::string lower(std::string text) {
    for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return text;
}

Rational rate(const Rational& span, const Rational& work) { return span > Rational(0) ? (span - work) / span : Rational(0); }

// The paper's heuristic alone (our port), best of its variants under the cell's cap and objective: written to
// DIR/heuristic/<id>.txt with the cell's costs, limit and sizes (for `pipeproof show --svg`), its rate added to
// the cell's JSON (`heuristic_file`, `heuristic_rate`). Empty when it does not apply or fit.
nlohmann::json heuristic_fields(const Job& job, const std::filesystem::path& out) {
    const pp::Instance inst = pp::build_instance(problem_of(job));
    auto z = pp::zb_auto_schedule(inst);
    if (!z) return nlohmann::json::object();
    const pp::Evaluation e = pp::evaluate_schedule(inst, z->schedule);
    if (!e.ok) throw std::logic_error(job.id() + ": the heuristic's schedule does not verify: " + e.problem);
    std::filesystem::create_directories(out / "heuristic");
    const std::string file = "heuristic/" + job.id() + ".txt";
    std::ofstream(out / file) << pp::write_native(z->schedule);
    const ZbCell& c = *job.cell;
    const Rational work = Rational(c.m) * (exact(c.F) + exact(c.I) + exact(c.W));
    return {{"heuristic_file", file},
            {"heuristic_rate", pp::format_rational(rate(inst.scale.to_units(e.value), work))},
            {"heuristic_from", z->origin}};
}

int run_cell(const Job& job, const std::filesystem::path& out, double time_limit) {
    const pp::SearchProblem problem = problem_of(job);
    pp::SearchOptions options;
    options.time_limit = time_limit;
    options.warm_starts = pp::generator_warm_starts(problem.placement);
    const pp::SearchResult r = pp::search(problem, options);
    const ZbCell& c = *job.cell;
    const Rational work = Rational(c.m) * (exact(c.F) + exact(c.I) + exact(c.W));
    nlohmann::json j{{"model", c.model},
                     {"p", c.p},
                     {"m", c.m},
                     {"limit", fmt::format("{}p", job.factor)},
                     {"status", lower(pp::search_status_name(r.status))},
                     {"paper", job.factor == 1 ? c.paper_1p : c.paper_2p},
                     {"seconds", std::round(r.seconds * 10) / 10},
                     {"time_limit", time_limit}};
    if (r.schedule) {
        const std::string file = job.id() + ".txt";
        std::ofstream(out / file) << pp::write_native(*r.schedule);
        j["file"] = file;
        j["span"] = pp::format_rational(r.units(r.value));
        j["bubble_rate"] = pp::format_rational(rate(r.units(r.value), work));
        j["from"] = r.origin;
    }
    j.update(heuristic_fields(job, out));
    j["lower_bound"] = pp::format_rational(r.units(r.lower_bound));
    j["lower_bound_rate"] = pp::format_rational(rate(r.units(r.lower_bound), work));
    j["lower_bound_kind"] = r.lower_bound_kind;
    std::filesystem::create_directories(out / "cells");
    std::ofstream(out / "cells" / (job.id() + ".json")) << j.dump(2) << "\n";
    fmt::print("{:<22} {:<10} rate {:<10} (paper {}), lower bound {}  [{:.1f} s, {}]\n", job.id(), j["status"].get<std::string>(),
               j.contains("bubble_rate") ? fmt::format("{:.4f}", pp::to_double(rate(r.units(r.value), work))) : "-",
               job.factor == 1 ? c.paper_1p : c.paper_2p, fmt::format("{:.4f}", pp::to_double(rate(r.units(r.lower_bound), work))),
               r.seconds, r.origin);
    std::fflush(stdout);  // a long sharded run is watched through its log
    return 0;
}

// --heuristic: the heuristic's fields into an existing cell's JSON (the search is not re-run).
int run_heuristic(const Job& job, const std::filesystem::path& out) {
    const nlohmann::json h = heuristic_fields(job, out);
    const ZbCell& c = *job.cell;
    if (h.empty()) {
        fmt::print("{:<22} the heuristic does not apply or does not fit the cap\n", job.id());
        return 1;
    }
    fmt::print("{:<22} heuristic rate {:.5f} (paper {}), {}\n", job.id(),
               pp::to_double(*pp::parse_rational(h["heuristic_rate"].get<std::string>())),
               job.factor == 1 ? c.paper_1p : c.paper_2p, h["heuristic_from"].get<std::string>());
    const std::filesystem::path cell = out / "cells" / (job.id() + ".json");
    std::ifstream in(cell);
    if (!in) return 0;
    nlohmann::json j = nlohmann::json::parse(in);
    j.update(h);
    std::ofstream(cell) << j.dump(2) << "\n";
    return 0;
}

int merge(const std::filesystem::path& dir) {
    nlohmann::json table = nlohmann::json::array();
    for (const Job& job : all_jobs()) {
        std::ifstream in(dir / "cells" / (job.id() + ".json"));
        if (!in) continue;
        table.push_back(nlohmann::json::parse(in));
    }
    std::ofstream(dir / "table.json") << table.dump(2) << "\n";
    fmt::print("{}: {} of {} cells\n", (dir / "table.json").string(), table.size(), all_jobs().size());
    return table.size() == all_jobs().size() ? 0 : 1;
}

}  // namespace

int run_zb_table_bench(int argc, char** argv) {
    std::filesystem::path out = "bench/zb-table";
    double time_limit = 120;
    int shard = 0, shards = 1;
    std::vector<std::string> only;
    bool heuristic = false;
    for (int k = 0; k < argc; ++k) {
        const std::string a = argv[k];
        auto next = [&]() -> std::string {
            if (k + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++k];
        };
        if (a == "--merge") return merge(next());
        if (a == "--out") out = next();
        else if (a == "--heuristic") heuristic = true;
        else if (a == "--time-limit") time_limit = std::stod(next());
        else if (a == "--shard") {
            const std::string s = next();
            if (std::sscanf(s.c_str(), "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 || shard >= shards)
                throw std::invalid_argument("--shard expects K/N with 0 <= K < N");
        } else if (a == "--only") {
            std::stringstream ids(next());
            for (std::string id; std::getline(ids, id, ',');) only.push_back(id);
        } else {
            throw std::invalid_argument("zb-table: unknown argument " + a);
        }
    }
    std::filesystem::create_directories(out);
    const auto jobs = all_jobs();
    for (size_t k = 0; k < jobs.size(); ++k) {
        if (static_cast<int>(k % static_cast<size_t>(shards)) != shard) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), jobs[k].id()) == only.end()) continue;
        if (heuristic)
            run_heuristic(jobs[k], out);
        else
            run_cell(jobs[k], out, time_limit);
    }
    return 0;
}
