// The Zero Bubble paper's ILP as a peer of the search (peer_zb_ilp.hpp says which equations and deviations).
#include "bench/peer_zb_ilp.hpp"

#include "verifier/simulate.hpp"
#include "verifier/verify.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

extern char** environ;

namespace pp::peer {
namespace {

constexpr OpKind kKinds[3] = {OpKind::F, OpKind::I, OpKind::W};  // the paper's F, B, W

// The paper's graph over 3 S m passes: ids (kind, stage, micro-batch), parents, and each pass's ancestors.
struct PassGraph {
    int stages = 0, mbs = 0;
    std::vector<std::vector<int>> parents;
    std::vector<std::vector<std::uint64_t>> ancestors;  // bit sets over pass ids
    std::vector<int> topo_position;

    int size() const { return 3 * stages * mbs; }
    int id(int kind, int stage, int mb) const { return (kind * stages + stage) * mbs + mb; }
    int kind_of(int id) const { return id / (stages * mbs); }
    int stage_of(int id) const { return (id / mbs) % stages; }
    int mb_of(int id) const { return id % mbs; }
    bool precedes(int a, int b) const { return (ancestors[b][a / 64] >> (a % 64)) & 1; }
};

// build_graph of the authors' code: dependencies plus the per-kind FIFO edge X(i,j-1) -> X(i,j).
std::vector<std::vector<int>> pass_parents(const PassGraph& g) {
    std::vector<std::vector<int>> parents(g.size());
    const int last = g.stages - 1;
    for (int s = 0; s < g.stages; ++s)
        for (int j = 0; j < g.mbs; ++j) {
            auto& f = parents[g.id(0, s, j)];
            auto& b = parents[g.id(1, s, j)];
            auto& w = parents[g.id(2, s, j)];
            if (s > 0) f.push_back(g.id(0, s - 1, j));
            b.push_back(s == last ? g.id(0, s, j) : g.id(1, s + 1, j));
            w.push_back(g.id(1, s, j));
            if (j > 0)
                for (int kind = 0; kind < 3; ++kind) parents[g.id(kind, s, j)].push_back(g.id(kind, s, j - 1));
        }
    return parents;
}

// Ancestor sets by one pass in topological order (Kahn): the closure that decides which pairs need a binary.
void close_transitively(PassGraph& g) {
    const int n = g.size();
    const size_t words = static_cast<size_t>(n + 63) / 64;
    std::vector<std::vector<int>> children(n);
    std::vector<int> waiting(n, 0);
    for (int v = 0; v < n; ++v) {
        waiting[v] = static_cast<int>(g.parents[v].size());
        for (int p : g.parents[v]) children[p].push_back(v);
    }
    std::vector<int> order;
    for (int v = 0; v < n; ++v)
        if (waiting[v] == 0) order.push_back(v);
    for (size_t k = 0; k < order.size(); ++k)
        for (int c : children[order[k]])
            if (--waiting[c] == 0) order.push_back(c);
    if (static_cast<int>(order.size()) != n) throw std::logic_error("zb-ilp: the pass graph has a cycle");
    g.ancestors.assign(n, std::vector<std::uint64_t>(words, 0));
    g.topo_position.assign(n, 0);
    for (size_t k = 0; k < order.size(); ++k) {
        const int v = order[k];
        g.topo_position[v] = static_cast<int>(k);
        for (int p : g.parents[v]) {
            for (size_t w = 0; w < words; ++w) g.ancestors[v][w] |= g.ancestors[p][w];
            g.ancestors[v][p / 64] |= std::uint64_t{1} << (p % 64);
        }
    }
}

PassGraph pass_graph(int stages, int mbs) {
    PassGraph g;
    g.stages = stages;
    g.mbs = mbs;
    g.parents = pass_parents(g);
    close_transitively(g);
    return g;
}

std::string number(double x) { return fmt::format("{:.12g}", x); }

std::string pass_name(const PassGraph& g, int id) {
    static const char* letters = "FBW";  // the paper's letters: its B is our I
    return fmt::format("{}_{}_{}", letters[g.kind_of(id)], g.stage_of(id), g.mb_of(id));
}

// One LP row "name: terms sense rhs", terms already written as " + 3 x - 2 y".
struct Row {
    std::string name, terms, sense;
    double rhs = 0;
};

void add_term(std::string& terms, double coefficient, const std::string& var) {
    if (coefficient == 0) return;
    terms += fmt::format(" {} {} {}", coefficient < 0 ? "-" : "+", number(std::abs(coefficient)), var);
}

// Everything the rows need: the graph, per-pass costs and memory, the binaries of each unordered pair.
struct Builder {
    const SearchProblem& problem;
    PassGraph g;
    std::vector<double> cost, mem;
    std::vector<Rational> exact_cost;
    double comm = 0, inf = 0;
    std::unordered_map<std::int64_t, std::string> binary;  // a * n + b (a < b) -> o_a_b: 1 when a runs before b
    std::vector<std::vector<int>> stage_passes;
    std::vector<Row> rows;

    explicit Builder(const SearchProblem& p) : problem(p) {
        const Pipeline& pipe = p.placement.pipelines[0];
        g = pass_graph(pipe.stages(), pipe.microbatches);
        const int n = g.size();
        cost.resize(n);
        mem.resize(n);
        exact_cost.resize(n);
        // M_F, M_B, M_W of the paper in our sizes: F allocates, I releases its share, W the rest (they sum to 0).
        const double alloc = to_double(p.activations.forward_alloc), by_input = to_double(p.activations.input_grad_free);
        const double kind_mem[3] = {alloc, -by_input, -(alloc - by_input)};
        Rational work = 0;
        for (int v = 0; v < n; ++v) {
            exact_cost[v] = p.costs.duration(kKinds[g.kind_of(v)], p.placement.block_of(0, g.stage_of(v)));
            cost[v] = to_double(exact_cost[v]);
            mem[v] = kind_mem[g.kind_of(v)];
            work += exact_cost[v];
        }
        comm = to_double(p.costs.comm);
        inf = to_double(work + p.costs.comm * Rational(3 * g.stages * g.mbs));  // the code's (T_F+T_B+T_W+3c) p m
        stage_passes.resize(g.stages);
        for (int v = 0; v < n; ++v) stage_passes[g.stage_of(v)].push_back(v);
        for (const auto& passes : stage_passes)
            for (size_t x = 0; x < passes.size(); ++x)
                for (size_t y = x + 1; y < passes.size(); ++y) {
                    const int a = std::min(passes[x], passes[y]), b = std::max(passes[x], passes[y]);
                    if (!g.precedes(a, b) && !g.precedes(b, a))
                        binary[static_cast<std::int64_t>(a) * n + b] = "o_" + pass_name(g, a) + "_" + pass_name(g, b);
                }
    }

    const std::string* order_var(int a, int b) const {  // a < b
        const auto it = binary.find(static_cast<std::int64_t>(a) * g.size() + b);
        return it == binary.end() ? nullptr : &it->second;
    }
    std::string end(int v) const { return "e_" + pass_name(g, v); }

    // O(a->k) as coefficient * binary + constant: o_a_k when a < k, 1 - o_k_a otherwise.
    void add_order(std::string& terms, double& constant, int a, int k, double coefficient) const {
        if (a < k) {
            add_term(terms, coefficient, *order_var(a, k));
        } else {
            constant += coefficient;
            add_term(terms, -coefficient, *order_var(k, a));
        }
    }

    // (2), (3) and the FIFO edges: E(child) >= E(parent) + T(child) (+ T_comm between stages).
    void dependency_rows() {
        rows.push_back({"first", " + 1 " + end(g.id(0, 0, 0)), ">=", cost[g.id(0, 0, 0)]});
        for (int v = 0; v < g.size(); ++v)
            for (int p : g.parents[v]) {
                std::string terms;
                add_term(terms, 1, end(v));
                add_term(terms, -1, end(p));
                rows.push_back({"d_" + pass_name(g, v) + "_" + pass_name(g, p), terms, ">=",
                                cost[v] + (g.stage_of(p) != g.stage_of(v) ? comm : 0)});
            }
    }

    // (4): with o = O(a->b), E(b) >= E(a) + T(b) - (1 - o) inf and E(a) >= E(b) + T(a) - o inf.
    void order_rows() {
        for (const auto& [key, o] : binary) {
            const int a = static_cast<int>(key / g.size()), b = static_cast<int>(key % g.size());
            std::string after, before;
            add_term(after, 1, end(b));
            add_term(after, -1, end(a));
            add_term(after, -inf, o);
            rows.push_back({"x" + o.substr(1), after, ">=", cost[b] - inf});
            add_term(before, 1, end(a));
            add_term(before, -1, end(b));
            add_term(before, inf, o);
            rows.push_back({"y" + o.substr(1), before, ">=", cost[a]});
        }
    }

    // (5): M(k) + sum over passes a of k's stage that run before k of M(a) <= M_limit, at every pass k.
    void memory_rows() {
        if (!problem.memory_limit) return;
        const double cap = to_double(*problem.memory_limit);
        for (const auto& passes : stage_passes)
            for (int k : passes) {
                std::string terms;
                double constant = mem[k];
                for (int a : passes) {
                    if (a == k || mem[a] == 0) continue;
                    if (g.precedes(a, k)) constant += mem[a];
                    else if (!g.precedes(k, a)) add_order(terms, constant, a, k, mem[a]);
                }
                if (terms.empty()) terms = " + 0 " + end(k);
                rows.push_back({"m_" + pass_name(g, k), terms, "<=", cap - constant});
            }
    }

    // Objective rows (our deviation: the makespan). res >= E(W(i, m)) per stage, and the code's remaining-work rows
    // without the stage's start: res >= E(k) + the cost of every pass of k's stage that runs after k.
    void objective_rows() {
        for (int s = 0; s < g.stages; ++s) {
            std::string terms;
            add_term(terms, 1, "res");
            add_term(terms, -1, end(g.id(2, s, g.mbs - 1)));
            rows.push_back({fmt::format("span_{}", s), terms, ">=", 0});
        }
        for (const auto& passes : stage_passes)
            for (int k : passes) {
                std::string terms;
                add_term(terms, 1, "res");
                add_term(terms, -1, end(k));
                double constant = 0;  // sum of T(a) O(k->a) = terms + constant
                for (int a : passes) {
                    if (a == k || g.precedes(a, k)) continue;
                    if (g.precedes(k, a)) constant += cost[a];
                    else if (k < a) add_term(terms, -cost[a], *order_var(k, a));
                    else {
                        constant += cost[a];
                        add_term(terms, cost[a], *order_var(a, k));
                    }
                }
                rows.push_back({"r_" + pass_name(g, k), terms, ">=", constant});
            }
    }

    std::string lp_text() const {
        std::string out;
        out += "\\ The Zero Bubble paper's ILP (Qi et al., ICLR 2024), makespan objective; pipeproof bench/peer_zb_ilp.hpp\n";
        out += fmt::format("\\ stages {}, micro-batches {}, binaries {}, big-M {}\n", g.stages, g.mbs, binary.size(), number(inf));
        out += "Minimize\n obj: + 1 res\nSubject To\n";
        for (const Row& r : rows) out += fmt::format(" {}:{} {} {}\n", r.name, r.terms, r.sense, number(r.rhs));
        out += "Binaries\n";
        for (const auto& [key, o] : binary) out += " " + o + "\n";
        out += "End\n";
        return out;
    }
};

// --- CBC as a process ----------------------------------------------------------------------------------------

struct CbcRun {
    bool started = false, killed = false;
    double seconds = 0;
    std::string log, solution;  // what it printed, its solution file (empty when none)
};

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// cbc model.lp timeMode elapsed sec S solve solu solution.txt, output to cbc.log; killed 10 s after its own limit.
CbcRun run_cbc(const std::string& cbc, const std::filesystem::path& dir, double time_limit) {
    CbcRun run;
    const std::string lp = (dir / "model.lp").string(), solution = (dir / "solution.txt").string(),
                      log = (dir / "cbc.log").string();
    std::vector<std::string> args = {cbc, lp, "timeMode", "elapsed", "sec", fmt::format("{}", time_limit), "solve", "solu", solution};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    const auto started = std::chrono::steady_clock::now();
    const int spawned = posix_spawn(&pid, cbc.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return run;
    run.started = true;
    const auto hard = started + std::chrono::duration<double>(time_limit + 10);
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= hard) {
            kill(pid, SIGKILL);  // our own child, by its pid
            waitpid(pid, &status, 0);
            run.killed = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    run.log = read_text(log);
    if (std::filesystem::exists(solution)) run.solution = read_text(solution);
    return run;
}

// "Objective value:   27.0000" style lines of CBC's log.
std::optional<double> log_value(const std::string& log, const std::string& label) {
    const size_t at = log.rfind(label);
    if (at == std::string::npos) return std::nullopt;
    char* end = nullptr;
    const char* text = log.c_str() + at + label.size();
    const double value = std::strtod(text, &end);
    return end == text ? std::nullopt : std::optional<double>(value);
}

std::string result_line(const std::string& log) {
    const size_t at = log.rfind("Result - ");
    if (at == std::string::npos) return "";
    return log.substr(at, log.find('\n', at) - at);
}

// The solution file: a status line ("Optimal - objective value 27", "Stopped on time - objective value ...",
// "Infeasible - ...", "Stopped on time (no integer solution - continuous used) - ..."), then "index name value
// reduced-cost" per variable.
std::string solution_status(const std::string& first_line) {
    std::string lower = first_line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("optimal", 0) == 0) return "optimal";
    if (lower.find("infeasible") != std::string::npos) return "infeasible";
    if (lower.find("no integer solution") != std::string::npos) return "unknown";
    if (lower.rfind("stopped", 0) == 0) return "feasible";
    return "unknown";
}

std::map<std::string, double> solution_values(const std::string& solution) {
    std::map<std::string, double> values;
    std::istringstream lines(solution);
    std::string line;
    std::getline(lines, line);  // the status line
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string index, name;
        double value = 0;
        if (fields >> index >> name >> value) values[name] = value;
    }
    return values;
}

// Per rank, the ops in order of CBC's start times (E - T); equal starts (rounding) in topological order.
Schedule schedule_from_ends(const Builder& b, const std::map<std::string, double>& values) {
    const PassGraph& g = b.g;
    const double grain = *std::min_element(b.cost.begin(), b.cost.end()) * 1e-3;  // far below any duration
    Schedule s;
    s.placement = b.problem.placement;
    s.ranks.assign(s.placement.ranks, {});
    std::vector<std::vector<std::pair<std::pair<long long, int>, int>>> order(s.placement.ranks);
    for (int v = 0; v < g.size(); ++v) {
        const auto it = values.find(b.end(v));
        const double start = (it == values.end() ? 0.0 : it->second) - b.cost[v];
        order[s.placement.rank_of(0, g.stage_of(v))].push_back({{std::llround(start / grain), g.topo_position[v]}, v});
    }
    for (int r = 0; r < s.placement.ranks; ++r) {
        std::sort(order[r].begin(), order[r].end());
        for (const auto& [key, v] : order[r])
            s.ranks[r].push_back(Slot::single(Op{kKinds[g.kind_of(v)], 0, g.stage_of(v), g.mb_of(v)}));
    }
    s.costs = b.problem.costs;
    s.memory_limit = b.problem.memory_limit;
    if (!(b.problem.activations == ActivationModel{})) s.activation_sizes = b.problem.activations;
    return s;
}

// Our verifier and simulator on the schedule CBC's times give: the peer's answer counts only when it verifies.
void check_schedule(ZbIlpResult& out, Schedule schedule, const SearchProblem& problem) {
    VerifyOptions vo;
    vo.memory_limit = problem.memory_limit;
    vo.activations = problem.activations;
    const VerifyReport report = verify(schedule, vo);
    if (!report.ok()) {
        out.status = "error";
        out.note = fmt::format("CBC's order does not verify: {}: {}", violation_name(report.violations.front().kind),
                               report.violations.front().message);
        return;
    }
    const Simulation sim = simulate(schedule, problem.costs, problem.activations);
    out.makespan = sim.scale.to_units(sim.makespan);
    out.schedule = std::move(schedule);
}

struct TempDir {
    std::filesystem::path path;
    bool keep = false;
    ~TempDir() {
        std::error_code ignored;
        if (!keep && !path.empty()) std::filesystem::remove_all(path, ignored);
    }
};

}  // namespace

std::optional<std::string> zb_ilp_not_applicable(const SearchProblem& problem) {
    const Placement& p = problem.placement;
    if (p.pipeline_count() != 1) return "the paper's ILP has one pipeline (the 1f1b placement)";
    const Pipeline& pipe = p.pipelines[0];
    std::vector<int> stages_on(p.ranks, 0);
    for (int r : pipe.stage_rank) ++stages_on[r];
    if (pipe.stages() != p.ranks || std::any_of(stages_on.begin(), stages_on.end(), [](int n) { return n != 1; }))
        return "the paper's ILP has one stage per rank (the 1f1b placement)";
    if (problem.overlap) return "the paper's ILP has no overlapped F&B pairs";
    if (pipe.microbatches < 1) return "no micro-batches";
    return std::nullopt;
}

std::size_t zb_ilp_binaries(const SearchProblem& problem) {
    const Pipeline& pipe = problem.placement.pipelines.at(0);
    const std::size_t m = static_cast<std::size_t>(pipe.microbatches);
    return static_cast<std::size_t>(pipe.stages()) * 3 * m * (m - 1) / 2;
}

ZbIlpModel build_zb_ilp(const SearchProblem& problem) {
    if (const auto why = zb_ilp_not_applicable(problem)) throw std::invalid_argument(*why);
    Builder b(problem);
    b.dependency_rows();
    b.order_rows();
    b.memory_rows();
    b.objective_rows();
    ZbIlpModel model;
    model.lp = b.lp_text();
    model.binaries = b.binary.size();
    model.rows = b.rows.size();
    for (int v = 0; v < b.g.size(); ++v) {
        model.ops.push_back(Op{kKinds[b.g.kind_of(v)], 0, b.g.stage_of(v), b.g.mb_of(v)});
        model.duration.push_back(b.exact_cost[v]);
    }
    return model;
}

ZbIlpResult solve_zb_ilp(const SearchProblem& problem, const ZbIlpOptions& options) {
    ZbIlpResult out;
    if (const auto why = zb_ilp_not_applicable(problem)) {
        out.note = *why;
        return out;
    }
    out.binaries = zb_ilp_binaries(problem);
    if (out.binaries > options.max_binaries) {
        out.note = fmt::format("too large: {} binaries (limit {})", out.binaries, options.max_binaries);
        return out;
    }
    if (access(options.cbc.c_str(), X_OK) != 0) {
        out.note = options.cbc + " not found (Debian package coinor-cbc; scripts/setup.sh installs it)";
        return out;
    }
    Builder b(problem);
    b.dependency_rows();
    b.order_rows();
    b.memory_rows();
    b.objective_rows();
    out.binaries = b.binary.size();

    TempDir dir;
    dir.keep = options.keep_files;
    std::string pattern = (std::filesystem::temp_directory_path() / "pp-zb-ilp-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        out.status = "error";
        out.note = "cannot create a temporary directory";
        return out;
    }
    dir.path = pattern;
    std::ofstream(dir.path / "model.lp") << b.lp_text();

    const CbcRun run = run_cbc(options.cbc, dir.path, options.time_limit);
    out.seconds = run.seconds;
    if (!run.started) {
        out.status = "error";
        out.note = "could not start " + options.cbc;
        return out;
    }
    out.note = result_line(run.log);
    if (options.keep_files) out.note += " [files: " + dir.path.string() + "]";
    if (run.killed) {
        out.status = "unknown";
        out.note = fmt::format("killed {} s after its time limit", 10);
        return out;
    }
    if (run.solution.empty()) {
        out.status = "unknown";
        if (out.note.empty()) out.note = "no solution file";
        return out;
    }
    out.status = solution_status(run.solution.substr(0, run.solution.find('\n')));
    out.cbc_objective = log_value(run.log, "Objective value:");
    out.cbc_bound = out.status == "optimal" ? out.cbc_objective : log_value(run.log, "Lower bound:");
    if (out.status == "optimal" || out.status == "feasible")
        check_schedule(out, schedule_from_ends(b, solution_values(run.solution)), problem);
    return out;
}

}  // namespace pp::peer
