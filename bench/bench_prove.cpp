// The prover benchmarks of issue 3, as a mode of pipeproof_bench:
//   pipeproof_bench prove [--max-p N] [--budget S] [--only dualpipe|dualpipev|exact|formula]
// Times, for every even P from 2 to --max-p (default 32):
//   * the DualPipe and DualPipeV bubble-constant proofs with symbolic costs (the default cost region of
//     `pipeproof prove`: F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0) -- issue target <= 10 s each;
//   * the same proofs at exact costs F=I=W=1, FB=1.5 (cheap; shows where the symbolic part costs);
//   * `pipeproof formula dualpipe` (per-rank idle pieces and their regions).
// Each row prints the verdict, the wall time, the peak memory (each row runs in its own child process, so the
// figure is that proof's alone: ru_maxrss of the child) and the slowest proof obligation (where the time goes).
// A row slower than --budget seconds (default 120) ends that column: larger P are reported as skipped,
// since every step of 2 in P has cost about 5x more so far.
#include "proofs/prove.hpp"
#include "proofs/formula.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace {

struct Timed {
    std::string verdict;
    double seconds = 0;
    std::string slowest;  // name and seconds of the slowest obligation
    std::string note;
    long peak_mib = -1;
};

// Runs `work` in a forked child (fresh address space) and returns its result with the child's peak RSS.
Timed in_child(const std::function<Timed()>& work) {
    int fd[2];
    if (pipe(fd) != 0) return work();
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return work();
    if (pid == 0) {
        close(fd[0]);
        const Timed t = work();
        const std::string msg = fmt::format("{}\n{}\n{}\n{}\n", t.verdict, t.seconds, t.slowest, t.note);
        for (size_t done = 0; done < msg.size();) {
            const ssize_t k = write(fd[1], msg.data() + done, msg.size() - done);
            if (k <= 0) break;
            done += static_cast<size_t>(k);
        }
        _exit(0);
    }
    close(fd[1]);
    std::string text;
    char buf[4096];
    for (ssize_t k; (k = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(k));
    close(fd[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    Timed t;
    std::vector<std::string> lines;
    for (size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(text.substr(a, b - a));
    if (lines.size() < 4) {
        t.verdict = "crashed";
        t.note = fmt::format("child status {}", status);
        return t;
    }
    t.verdict = lines[0];
    t.seconds = std::stod(lines[1]);
    t.slowest = lines[2];
    t.note = lines[3];
    t.peak_mib = usage.ru_maxrss / 1024;
    return t;
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string slowest_obligation(const pp::ProofResult& r) {
    const pp::Obligation* worst = nullptr;
    for (const auto& o : r.obligations)
        if (!worst || o.seconds > worst->seconds) worst = &o;
    return worst ? fmt::format("{} {:.2f}s", worst->name, worst->seconds) : "-";
}

Timed time_proof(const std::string& family, int P, const std::optional<pp::Costs>& costs) {
    Timed out;
    std::string why;
    const auto spec = pp::family_spec(family, P, &why);
    if (!spec) {
        out.verdict = "n/a";
        out.note = why;
        return out;
    }
    pp::ProveOptions options;
    options.property = pp::Property::BubbleConstant;
    options.costs = costs;
    const auto t0 = std::chrono::steady_clock::now();
    const pp::ProofResult r = pp::prove(*spec, options);
    out.seconds = since(t0);
    out.verdict = pp::verdict_name(r.verdict);
    out.slowest = slowest_obligation(r);
    if (r.bubble_exact) out.note = "bubble " + pp::format_rational(*r.bubble_exact);
    if (r.bubble_symbolic) out.note = fmt::format("bubble = max of {} forms", r.bubble_symbolic->forms.size());
    if (r.verdict == pp::Verdict::Unknown) out.note = r.missing.substr(0, 60);
    return out;
}

Timed time_formula(int P) {
    Timed out;
    std::string why;
    const auto spec = pp::family_spec("dualpipe", P, &why);
    if (!spec) {
        out.verdict = "n/a";
        out.note = why;
        return out;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const pp::FormulaResult f = pp::derive_formula(*spec, pp::CostRegion::standard(false));
    out.seconds = since(t0);
    out.verdict = f.missing.empty() ? "derived" : "none";
    out.slowest = slowest_obligation(f.proof);
    out.note = f.missing.empty() ? fmt::format("{} bubble pieces", f.bubble.pieces.size()) : f.missing.substr(0, 60);
    return out;
}

void print_row(const std::string& what, int P, const Timed& t) {
    fmt::print("{:<22} {:>3}  {:<9} {:>9.2f} {:>8}  {:<28} {}\n", what, P, t.verdict, t.seconds,
               t.peak_mib < 0 ? std::string("-") : std::to_string(t.peak_mib), t.slowest, t.note);
    std::fflush(stdout);
}

}  // namespace

int run_prove_bench(int argc, char** argv) {
    int max_p = 32;
    double budget = 120;
    std::string only;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--max-p" && i + 1 < argc) max_p = std::stoi(argv[++i]);
        else if (a == "--budget" && i + 1 < argc) budget = std::stod(argv[++i]);
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else {
            fmt::print(stderr, "usage: pipeproof_bench prove [--max-p N] [--budget S] [--only dualpipe|dualpipev|exact|formula]\n");
            return 2;
        }
    }
    fmt::print("{:<22} {:>3}  {:<9} {:>9} {:>8}  {:<28} {}\n", "proof", "P", "verdict", "seconds", "peak MiB",
               "slowest obligation", "note");
    const pp::Costs exact = pp::parse_costs("F=1,I=1,W=1,FB=1.5");
    struct Column {
        std::string key, label;
        int p_hi;
        std::function<Timed(int)> run;
    };
    const std::vector<Column> columns = {
        {"dualpipe", "dualpipe symbolic", max_p, [](int P) { return time_proof("dualpipe", P, std::nullopt); }},
        {"dualpipev", "dualpipev symbolic", max_p, [](int P) { return time_proof("dualpipev", P, std::nullopt); }},
        {"exact", "dualpipe FB=1.5", max_p, [&](int P) { return time_proof("dualpipe", P, exact); }},
        {"exact", "dualpipev FB=1.5", max_p, [&](int P) { return time_proof("dualpipev", P, exact); }},
        {"formula", "formula dualpipe", max_p, [](int P) { return time_formula(P); }},
    };
    int failures = 0;
    for (const auto& c : columns) {
        if (!only.empty() && only != c.key) continue;
        bool over = false;
        for (int P = 2; P <= c.p_hi; P += 2) {
            if (over) {
                fmt::print("{:<22} {:>3}  {:<9} {:>9} {:>8}  {:<28} {}\n", c.label, P, "skipped", "-", "-", "-",
                           fmt::format("a smaller P took more than {:.0f} s", budget));
                continue;
            }
            const Timed t = in_child([&] { return c.run(P); });
            print_row(c.label, P, t);
            if (t.verdict != "PROVED" && t.verdict != "derived") ++failures;
            if (t.seconds > budget) over = true;
        }
    }
    return failures == 0 ? 0 : 1;
}
