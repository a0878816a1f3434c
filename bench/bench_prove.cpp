// The prover benchmarks of issue 3, as a mode of pipeproof_bench:
//   pipeproof_bench prove [--max-p N] [--budget S] [--only dualpipe|dualpipev|exact|formula]
// Times, for every even P from 2 to --max-p (default 32):
//   * the DualPipe and DualPipeV bubble-constant proofs with symbolic costs (the default cost region of
//     `pipeproof prove`: F, I, W > 0, B = I + W, 0 < FB <= F + B, comm = 0) -- issue target <= 10 s each;
//   * the same proofs at exact costs F=I=W=1, FB=1.5 (cheap; shows where the symbolic part costs);
//   * `pipeproof formula dualpipe` (per-rank idle pieces and their regions) for P <= 16.
// Each row prints the verdict, the wall time, and the slowest proof obligation (where the time goes).
// A row slower than --budget seconds (default 120) ends that column: larger P are reported as skipped,
// since every step of 2 in P has cost about 5x more so far.
#include "proofs/prove.hpp"
#include "proofs/formula.hpp"

#include <fmt/format.h>

#include <chrono>
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
};

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
    fmt::print("{:<22} {:>3}  {:<9} {:>9.2f}  {:<28} {}\n", what, P, t.verdict, t.seconds, t.slowest, t.note);
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
    fmt::print("{:<22} {:>3}  {:<9} {:>9}  {:<28} {}\n", "proof", "P", "verdict", "seconds", "slowest obligation", "note");
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
        {"formula", "formula dualpipe", std::min(max_p, 16), [](int P) { return time_formula(P); }},
    };
    int failures = 0;
    for (const auto& c : columns) {
        if (!only.empty() && only != c.key) continue;
        bool over = false;
        for (int P = 2; P <= c.p_hi; P += 2) {
            if (over) {
                fmt::print("{:<22} {:>3}  {:<9} {:>9}  {:<28} {}\n", c.label, P, "skipped", "-", "-",
                           fmt::format("a smaller P took more than {:.0f} s", budget));
                continue;
            }
            const Timed t = c.run(P);
            print_row(c.label, P, t);
            if (t.verdict != "PROVED" && t.verdict != "derived") ++failures;
            if (t.seconds > budget) over = true;
        }
    }
    return failures == 0 ? 0 : 1;
}
