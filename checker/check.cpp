// The order of the checker's steps (checker/check.hpp): each recomputes what it checks, the first that fails is the
// answer.
#include "checker/internal.hpp"
#include "schedules/v1f1b.hpp"
#include "schedules/v_zb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <sstream>

namespace pp::check {

void reject(const std::string& step, const std::string& reason) { throw Rejected{step, reason}; }

bool CheckReport::checked() const {
    return !steps.empty() && std::all_of(steps.begin(), steps.end(), [](const Step& s) { return s.ok; });
}

std::string CheckReport::first_failure() const {
    for (const Step& s : steps)
        if (!s.ok) return s.name + ": " + s.detail;
    return "";
}

namespace {

class Checker {
public:
    Checker(const Certificate& c, const std::filesystem::path& dir, const CheckOptions& options)
        : c_(c), dir_(dir), options_(options) {}

    CheckReport run() {
        if (c_.zone_word)
            return log_.run([&] {
                step("claim", [&] { return zone_claim(); });
                step("zone word", [&] { return check_zone_word(c_); });
                step("zone timing", [&] { return zone_timing(); });
            });
        return log_.run([&] {
            step("claim", [&] { return claim(); });
            step("shape", [&] { return shape(); });
            step("word", [&] { return word(); });
            if (c_.structure_check || has_step_program(c_)) step("structure", [&] { return structure(); });
            step("stability", [&] { return stability(); });
            if (c_.timing_model == "batched") step("program", [&] { return check_program(c_, T0_); });
            step("potentials", [&] { return potentials(); });
            step("coverage", [&] { return coverage(); });
            if (c_.property == "bubble-constant" && !c_.costs) {
                step("region", [&] { return region(); });
                step("window", [&] { return check_window_symbolic(c_, base_, derived_, cone_, options_, t_periodic_); });
                step("bubble", [&] { return check_bubble_symbolic(c_, base_, cone_, options_, t_periodic_); });
            } else if (c_.property == "bubble-constant") {
                step("window", [&] { return check_window(c_, base_, derived_, t_periodic_); });
                step("bubble", [&] { return check_bubble(c_, base_, t_periodic_); });
            } else if (c_.property == "memory-bound") {
                step("memory", [&] { return check_memory(c_); });
            } else {
                step("acyclic", [&] { return acyclic(); });
            }
            for (const CertificateObligation& o : c_.obligations)
                step("obligation " + o.name, [&] { return obligation(o); });
        });
    }

private:
    template <class F>
    void step(const std::string& name, F&& body) {
        log_.step(name, std::forward<F>(body));
    }

    void require_proved_and_known() const {
        if (c_.verdict != "PROVED") reject("claim", "the certificate's verdict is '" + c_.verdict + "', not PROVED");
        if (c_.property != "bubble-constant" && c_.property != "memory-bound" && c_.property != "deadlock-free" &&
            c_.property != "dependencies")
            reject("claim", "unknown property '" + c_.property + "'");
    }

    // The steps the certificate says it does not carry: NOT CHECKED, at the step named.
    [[noreturn]] void not_carried(const std::string& step) const {
        std::string what;
        for (const auto& n : c_.not_carried) what += (what.empty() ? "" : "; ") + n;
        reject(step, "NOT CHECKED: the certificate does not carry every step of the proof: " + what);
    }

    // This checker does not time zone words yet (proofs/method.md §4b), whatever the certificate says it carries.
    [[noreturn]] std::string zone_timing() const { not_carried("zone timing"); }

    // A zone word's certificate: its order is checked (step `zone word`); its timing is not carried yet, so the
    // certificate must say so.
    std::string zone_claim() {
        require_proved_and_known();
        if (c_.word) reject("claim", "both a periodic word and a zone word");
        if (c_.timing_model != "dataflow" && c_.timing_model != "batched")
            reject("claim", "unknown timing model '" + c_.timing_model + "'");
        if (c_.program) reject("claim", "a communication program beside a zone word (version 1 carries none for it)");
        if (c_.not_carried.empty())
            reject("claim", "a zone word's certificate carries no timing, but names no step it does not carry");
        return fmt::format("{} of {} at P = {}{}: {}", c_.property, c_.family, c_.ranks,
                           c_.stages_per_rank ? fmt::format(", V = {}", *c_.stages_per_rank) : "", c_.statement);
    }

    std::string claim() {
        require_proved_and_known();
        if (!c_.not_carried.empty()) not_carried("claim");
        if (c_.timing_model != "dataflow" && c_.timing_model != "batched")
            reject("claim", "unknown timing model '" + c_.timing_model + "'");
        if ((c_.timing_model == "batched") != c_.program.has_value())
            reject("claim", c_.program ? "a communication program, but dataflow timing" : "batched timing, but no communication program");
        if (c_.property == "bubble-constant" && !c_.costs && c_.region_constraints.empty())
            reject("claim", "a bubble statement at symbolic costs needs the region's constraints");
        // Exact and symbolic members never mix: each path reads only its own.
        const bool symbolic_members = (c_.window && c_.window->lambda_form) || (c_.bubble && !c_.bubble->value_forms.empty());
        if (c_.costs && symbolic_members) reject("claim", "exact costs, but lambda or the bubble given as linear forms");
        if (!c_.costs && c_.property == "bubble-constant" && c_.window && c_.bubble &&
            (!c_.window->lambda_form || c_.bubble->value_forms.empty()))
            reject("claim", "symbolic costs, but lambda or the bubble given as a number");
        if (!c_.word || !c_.potentials) reject("claim", "no periodic word or no potentials");
        if (c_.property == "bubble-constant" && (!c_.window || !c_.bubble)) reject("claim", "no window or no bubble statement");
        if (c_.property == "memory-bound" && !c_.memory) reject("claim", "no peaks");
        return fmt::format("{} of {} at P = {}{}: {}", c_.property, c_.family, c_.ranks,
                           c_.stages_per_rank ? fmt::format(", V = {}", *c_.stages_per_rank) : "", c_.statement);
    }

    std::string shape() {
        const CertificateWord& w = *c_.word;
        const auto P = static_cast<size_t>(c_.ranks);
        if (w.prefix.size() != P || w.block.size() != P || w.suffix.size() != P)
            reject("shape", fmt::format("the word has {} ranks, the claim {}", w.block.size(), P));
        const CertificatePotentials& p = *c_.potentials;
        if (p.sigma.size() != P || p.alpha.size() != P || p.beta.size() != P) reject("shape", "one potential per rank is expected");
        for (size_t r = 0; r < P; ++r)
            if (p.alpha[r].size() != w.prefix[r].size() || p.beta[r].size() != w.suffix[r].size())
                reject("shape", fmt::format("rank {}: the potentials do not match the word's prefix and suffix", r));
        if (w.step != c_.family_step) reject("shape", "the word's step is not the family's");
        if (w.m_origin < c_.family_m0 || (w.m_origin - c_.family_m0) % c_.family_step != 0)
            reject("shape", fmt::format("the word's origin M = {} is not an admissible M", w.m_origin));
        base_ = generate(c_, w.m_origin).placement;
        if (static_cast<int>(w.delta.size()) != base_.pipeline_count())
            reject("shape", fmt::format("{} deltas for {} pipelines", w.delta.size(), base_.pipeline_count()));
        // Per-block costs and per-stage stash scales name blocks and stages the placement has, every stage once.
        if (c_.costs)
            for (const auto& [block, costs] : c_.costs->per_block)
                if (block < 0 || block >= base_.blocks())
                    reject("shape", fmt::format("block_costs names block {}, but the placement has {} blocks", block, base_.blocks()));
        const auto& scales = c_.activations.stage_scale;
        if (!scales.empty()) {
            if (static_cast<int>(scales.size()) != base_.pipeline_count())
                reject("shape", fmt::format("stage_scale has {} pipelines, the placement {}", scales.size(), base_.pipeline_count()));
            for (size_t p = 0; p < scales.size(); ++p)
                if (static_cast<int>(scales[p].size()) != base_.pipelines[p].stages())
                    reject("shape", fmt::format("stage_scale has {} stages for pipeline {}, the placement {}", scales[p].size(),
                                                p, base_.pipelines[p].stages()));
        }
        size_t slots = 0;
        for (size_t r = 0; r < P; ++r) slots += w.prefix[r].size() + w.block[r].size() + w.suffix[r].size();
        return fmt::format("{} ranks, {} pipeline(s), {} slots in prefix, block and suffix", P, w.delta.size(), slots);
    }

    std::string word() {
        const CertificateWord& w = *c_.word;
        const int horizon = agreement_horizon(w);
        for (int t = 0; t <= horizon; ++t) {
            const int m = w.m_origin + w.step * t;
            const std::string diff = first_difference(generate(c_, m), instantiate(w, base_, t));
            if (!diff.empty()) reject("word", fmt::format("at M = {} (t = {}) the generator and the word differ: {}", m, t, diff));
        }
        return fmt::format("the word's instances are the generator's for t = 0..{} (M = {}..{}), Lemma 1's horizon "
                           "max_r ceil((n_r + L_r)/L_r) = {}: the two agree for every t, given the generator's structure "
                           "{}",
                           horizon, w.m_origin, w.m_origin + w.step * horizon, horizon,
                           c_.structure_check || has_step_program(c_) ? "(the step structure checks it)"
                                                                     : "lemma (A1, argued, not machine-checked)");
    }

    // The structure lemma by a finite check: the greedy's state recurrence re-run here (schedules/v_zb.hpp for
    // v-zb's rounds, schedules/v1f1b.hpp for 1F1B-V's sweep: the generator's own instrumented run, as the word step
    // runs the generator), then the word compared with the generator far enough that Lemma 1 ties it to the
    // periodic word the recurrence gives from from_m on.
    std::string structure() {
        if (has_step_program(c_)) return check_step_program(c_, base_);
        const CertificateStructureCheck& sc = *c_.structure_check;
        // The prover looks for the recurrence up to M = 16P + 16; a record beyond that is no certificate it wrote (and
        // would make this step build rows of that length).
        if (sc.from_m > 16 * c_.ranks + 16)
            reject("structure", fmt::format("from_m = {} lies beyond 16P + 16 = {}, where the prover stops looking",
                                            sc.from_m, 16 * c_.ranks + 16));
        GreedyRecurrence rec;
        if (sc.method == "greedy-state-recurrence" && c_.family == "v-zb") {
            GenerateParams params{c_.ranks, 1, c_.stages_per_rank};
            if (c_.ordered_for_costs) {
                params.costs = c_.costs;
                params.activation_sizes = c_.ordered_for_sizes;
            }
            rec = check_v_zb_recurrence(params, sc.from_m, sc.from_m);
        } else if (sc.method == "sweep-state-recurrence" && c_.family == "1f1b-v") {
            rec = check_1f1b_v_recurrence(c_.ranks, sc.from_m, sc.from_m);
        } else {
            reject("structure", "unknown structure check '" + sc.method + "' for " + c_.family);
        }
        if (!rec.holds) reject("structure", fmt::format("the greedy's state does not repeat at M = {}: {}", sc.from_m, rec.failure));
        if (rec.period_m != sc.period_m)
            reject("structure", fmt::format("the state repeats with period {}, the certificate says {}", rec.period_m, sc.period_m));
        const int e = rec.period_m, top = sc.from_m + e - 1;
        const Schedule at_top = generate(c_, top), grown = generate(c_, top + e);
        long long T = 3;
        for (int r = 0; r < c_.ranks; ++r) {
            const auto n = static_cast<long long>(at_top.ranks[r].size());
            const long long L = static_cast<long long>(grown.ranks[r].size()) - n;
            if (L <= 0) reject("structure", fmt::format("rank {} gains no slot per period from M = {}", r, top));
            T = std::max(T, (n + L + L - 1) / L);
        }
        const CertificateWord& w = *c_.word;
        const long long last = top + e * T;
        for (long long m = w.m_origin; m <= last; m += w.step) {
            const int t = static_cast<int>((m - w.m_origin) / w.step);
            const std::string diff = first_difference(generate(c_, static_cast<int>(m)), instantiate(w, base_, t));
            if (!diff.empty()) reject("structure", fmt::format("at M = {} the generator and the word differ: {}", m, diff));
        }
        const bool sweep = sc.method == "sweep-state-recurrence";
        return fmt::format("the {} repeats with period {} micro-batch(es) in all {} runs at M = {}{}, {} before that "
                           "as for any larger M: the order is a periodic word for every M >= {}; the certificate's "
                           "word equals the generator for M = {}..{} (Lemma 1 for each residue class), so the two are "
                           "one word for every M",
                           sweep ? "compaction sweep's state (within its read window)" : "greedy's whole state", e,
                           rec.runs_checked, sc.from_m, e > 1 ? fmt::format("..{}", top) : std::string(),
                           sweep ? "its input" : "every comparison with M", sc.from_m, w.m_origin, last);
    }

    // Symbolic costs: the cone every comparison is made on, from the constraints as stated.
    std::string region() {
        cone_ = cone_of(c_.region_constraints, "region");
        const CertificatePoint inside = point_inside(cone_, "region", c_.region_point);
        std::string rays;
        for (const auto& ray : cone_.rays) {
            std::string one;
            for (int k = 0; k < kCertificateCostVars; ++k) one += (k ? "," : "") + std::to_string(ray[k]);
            rays += (rays.empty() ? "" : " ") + ("(" + one + ")");
        }
        std::string point;
        for (int k = 0; k < kCertificateCostVars; ++k) point += (k ? "," : "") + format_rational(inside[k]);
        return fmt::format("{} constraints; the extreme rays of their homogeneous closure, (F,I,W,B,FB,comm): {}; a "
                           "point of the region, so the claim is not vacuous: ({})",
                           c_.region_constraints.size(), rays, point);
    }

    std::string stability() {
        T0_ = stable_from(*c_.word);
        return fmt::format("T0 = {}: from there the edges of G_t in block coordinates do not depend on t", T0_);
    }

    std::string potentials() {
        const CertificatePotentials& p = *c_.potentials;
        if (p.T < std::max(T0_, 2)) reject("potentials", fmt::format("computed on G_{}, below max(T0, 2) = {}", p.T, std::max(T0_, 2)));
        derived_ = derive(c_, word_instance(c_, base_, p.T), T0_);
        const int last = p.T + derived_.lag + 2;
        for (int t = p.T; t <= last; ++t) check_potentials(c_, word_instance(c_, base_, t), t, &derived_);
        return fmt::format("every edge of G_{}..G_{} goes to the same or a later super-step (at most lag = {} later past "
                           "the head); head <= {}, invariant middle from k_inv = {}, tail from t + {}, T_struct = {}",
                           p.T, last, derived_.lag, derived_.head_end, derived_.k_inv, derived_.tau, derived_.T_struct);
    }

    std::string coverage() { return check_coverage(*c_.word, base_); }

    std::string acyclic() {
        const CertificateWord& w = *c_.word;
        int count = 0;
        for (int m = c_.family_m0; m <= w.m_origin + w.step * derived_.T_struct; m += c_.family_step, ++count) {
            const Graph g = timing_graph(c_, generate(c_, m), "acyclic");
            if (!g.acyclic()) reject("acyclic", fmt::format("at M = {} the dependency graph has a cycle (a deadlock)", m));
        }
        return fmt::format("the {} instances M = {}..{} (through T_struct = {}) are acyclic; with the potentials, every G_t "
                           "is (proofs/method.md §3)",
                           count, c_.family_m0, w.m_origin + w.step * derived_.T_struct, derived_.T_struct);
    }

    std::string obligation(const CertificateObligation& o) {
        const auto file = dir_ / o.file;
        std::ifstream in(file);
        if (!in) reject("", "cannot read " + o.file);
        std::stringstream text;
        text << in.rdbuf();
        int queries = 0;
        for (size_t at = 0; (at = text.str().find("(check-sat)", at)) != std::string::npos; ++at) ++queries;
        if (queries == 0) reject("", o.file + " holds no (check-sat)");
        return o.statement + ": " + require_unsat("", file, queries, options_);
    }

    const Certificate& c_;
    std::filesystem::path dir_;
    const CheckOptions& options_;
    StepLog log_;
    Placement base_;
    int T0_ = 1, t_periodic_ = 0;
    Derived derived_;
    Cone cone_;
};

std::string constraint_text(const CertificateConstraint& k) {
    constexpr std::array<const char*, kCertificateCostVars> names = {"F", "I", "W", "B", "FB", "comm"};
    std::string lhs;
    for (int i = 0; i < kCertificateCostVars; ++i) {
        if (k.a[i] == Rational(0)) continue;
        const bool negative = k.a[i] < Rational(0);
        const Rational magnitude = negative ? Rational(0) - k.a[i] : k.a[i];
        const std::string coefficient = magnitude == Rational(1) ? "" : format_rational(magnitude) + "*";
        lhs += fmt::format("{}{}{}", lhs.empty() ? (negative ? "-" : "") : (negative ? " - " : " + "), coefficient, names[i]);
    }
    return fmt::format("{} {} {}", lhs.empty() ? "0" : lhs, k.rel, format_rational(k.b));
}

}  // namespace

// Rebuilt from the numbers the steps re-derived, not from the certificate's own wording of them.
std::string verified_claim(const Certificate& c) {
    const std::string who = fmt::format("{} at P = {}{}{}{}", c.family, c.ranks,
                                        c.stages_per_rank ? fmt::format(", V = {}", *c.stages_per_rank) : std::string(),
                                        c.group_size ? fmt::format(", G = {}", *c.group_size) : std::string(),
                                        c.segments ? fmt::format(", k = {} sequence segments per micro-batch (costs and sizes "
                                                                 "per segment unit)", *c.segments)
                                                   : std::string());
    const std::string every_m = fmt::format("every admissible M (M = {} + {}n)", c.family_m0, c.family_step);
    if (c.property == "bubble-constant" && c.bubble) {
        const CertificateBubble& b = *c.bubble;
        std::string value, below, where;
        if (c.costs) {
            value = format_rational(b.value);
            for (const auto& [m, v] : b.early) below += fmt::format("{}bubble({}) = {}", below.empty() ? "" : ", ", m, format_rational(v));
            where = "at costs " + format_costs(*c.costs);
            std::string blocks;
            for (const auto& [block, costs] : c.costs->per_block)
                blocks += fmt::format("{}block {}: {}", blocks.empty() ? "" : "; ", block, format_op_costs(costs));
            if (!blocks.empty()) where += " with per-block costs (" + blocks + ")";
        } else {
            value = readable_poly(b.value_forms);
            for (const auto& [m, forms] : b.early_forms)
                below += fmt::format("{}bubble({}) = {}", below.empty() ? "" : ", ", m, readable_poly(forms));
            for (const auto& k : c.region_constraints) where += (where.empty() ? "" : ", ") + constraint_text(k);
            where = "at every cost point of the region " + where;
        }
        if (c.timing_model == "batched") where += ", under batched timing (blocking P2P batches)";
        return fmt::format("{}: bubble = {} for every admissible M >= {} (M = {} + {}n), {}{}", who, value, b.from_m,
                           c.family_m0, c.family_step, where, below.empty() ? "" : "; below it: " + below);
    }
    if (c.property == "memory-bound" && c.memory) {
        std::string sizes = format_activation_sizes(c.activations);
        for (size_t p = 0; p < c.activations.stage_scale.size(); ++p) {
            std::string each;
            for (const Rational& s : c.activations.stage_scale[p]) each += (each.empty() ? "" : " ") + format_rational(s);
            sizes += fmt::format("{}[{}]", p == 0 ? ", each stage's stash scaled by " : " ", each);
        }
        if (c.memory->bound)
            return fmt::format("{}: at {}, every rank's activation peak is at most {} (activation sizes {})", who, every_m,
                               format_rational(*c.memory->bound), sizes);
        auto listed = [](const std::vector<Rational>& values) {
            std::string out;
            for (const auto& v : values) out += (out.empty() ? "" : " ") + format_rational(v);
            return "[" + out + "]";
        };
        std::string early;  // checked in check_memory against each instance below the word's origin
        for (const auto& [m, peaks] : c.memory->early) early += fmt::format("; at M = {}: {}", m, listed(peaks));
        return fmt::format("{}: at {} past the word's first instance, the activation peaks per rank are {} (activation "
                           "sizes {}){}",
                           who, every_m, listed(c.memory->peaks), sizes, early);
    }
    if (c.property == "deadlock-free") return fmt::format("{}: at {}, the dependency graph with each rank's order is acyclic", who, every_m);
    if (c.property == "dependencies")
        return fmt::format("{}: at {}, every op runs exactly once, every dependency in order, and nothing deadlocks", who, every_m);
    return who + ": " + c.property;
}

CheckReport check_certificate(const Certificate& certificate, const std::filesystem::path& dir, const CheckOptions& options) {
    return Checker(certificate, dir, options).run();
}

}  // namespace pp::check
