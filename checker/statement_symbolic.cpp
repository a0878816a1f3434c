// The periodic window and the bubble statement at symbolic costs (proofs/method.md §4, "Symbolic costs"; §4a): the
// same checks as statement.cpp, on max-plus polynomials over the region's cone instead of numbers. An equality the
// ray values do not settle is shown by exact convex weights or, failing those, by z3 and cvc5 (maxplus.cpp,
// SmtQueries); that M0 is the least is shown at a point of the region, exactly.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace pp::check {
namespace {

CertificateForm times(std::int64_t k, CertificateForm f) {
    for (auto& x : f)
        if (__builtin_mul_overflow(x, k, &x)) throw std::overflow_error("a coefficient overflows 64 bits");
    return f;
}

// The word's block length per rank and lambda: where the instance repeats itself one block later, the simulation
// takes the earlier block's end times plus lambda (checked slot by slot, maxplus.cpp).
SymbolicPeriod period_of(const CertificateWord& w, const CertificateForm& lambda) {
    SymbolicPeriod p;
    for (const auto& block : w.block) p.slots.push_back(static_cast<std::uint32_t>(block.size()));
    p.shift = lambda;
    return p;
}

Costs costs_at(const CertificatePoint& p) {
    Costs costs;
    costs.base.F = p[0];
    costs.base.I = p[1];
    costs.base.W = p[2];
    costs.base.B = p[3];
    costs.base.FB = p[4];
    costs.comm = p[5];
    return costs;
}

}  // namespace

std::string check_window_symbolic(const Certificate& c, const Placement& base, const Derived& d, const Cone& cone,
                                  const CheckOptions& options, int& t_periodic) {
    const CertificateWindow& win = *c.window;
    const CertificateWord& w = *c.word;
    const std::string step = "window";
    if (!win.lambda_form) reject(step, "symbolic costs need lambda as a linear form");
    const std::vector<WindowPair> pairs = window_pairs(c, d, step);
    const Schedule s = word_instance(c, base, win.T);
    const Graph g = timing_graph(c, s, step);
    const SymbolicPeriod period = period_of(w, *win.lambda_form);
    const SymbolicTiming timing = simulate_symbolic(s, g, cone, step, nullptr, &period);
    const CertificateForm shift = times(win.cycle, *win.lambda_form);
    const RayValues shift_values = cone.values(shift);
    SmtQueries smt(cone);
    size_t by_rays = 0;
    for (const WindowPair& pair : pairs) {
        Poly expected = timing.end[pair.at];
        expected.add(shift, shift_values);
        if (expected.same_function(timing.end[pair.later]))
            ++by_rays;
        else
            smt.equal(fmt::format("rank {}, block slot {}: its end in block {} = its end in block {} + {}", pair.rank,
                                  pair.index, pair.block + win.cycle, pair.block, readable_form(shift)),
                      timing.end[pair.later], timing.end[pair.at], shift);
    }
    const std::string solved = smt.run(step, options);
    t_periodic = std::max(d.T0, win.k0 + 1 - d.tau);
    return fmt::format("G_{} simulated symbolically over the region's {} rays ({} slots): each of the {} slots of "
                       "super-steps {}..{} ends {} later in block j + {} than in block j for every cost point ({} by "
                       "their ray values{}{}); lambda = {}; so every rank's idle time repeats with period {} from t = {} "
                       "(M = {})",
                       win.T, cone.rays.size(), g.rank.size(), pairs.size(), win.k0 - d.lag + 1, win.k0, readable_form(shift),
                       win.cycle, by_rays, solved.empty() ? "" : "; ", solved, readable_form(*win.lambda_form), win.cycle,
                       t_periodic, w.m_origin + w.step * t_periodic);
}

std::string check_bubble_symbolic(const Certificate& c, const Placement& base, const Cone& cone, const CheckOptions& options,
                                  int t_periodic) {
    const CertificateWord& w = *c.word;
    const CertificateWindow& win = *c.window;
    const CertificateBubble& b = *c.bubble;
    const std::string step = "bubble";
    if (b.value_forms.empty()) reject(step, "symbolic costs need the bubble as linear forms");
    // Slope 0: every rank works lambda per block, as linear forms equal on every ray (so on the whole cone).
    const RayValues lambda = cone.values(*win.lambda_form);
    for (size_t r = 0; r < w.block.size(); ++r) {
        CertificateForm work{};
        for (const Slot& slot : w.block[r]) {
            const CertificateForm d = slot_form(slot);
            for (int k = 0; k < kCertificateCostVars; ++k) work[k] += d[k];
        }
        if (cone.values(work) != lambda)
            reject(step, fmt::format("rank {} works {} per block but a block takes {}: not equal on the region", r,
                                     readable_form(work), readable_form(*win.lambda_form)));
    }
    const int last_m = w.m_origin + w.step * (t_periodic + win.cycle - 1);
    if (b.from_m > last_m) reject(step, fmt::format("from_m = {} is beyond the first period (it ends at M = {})", b.from_m, last_m));
    if ((b.from_m - c.family_m0) % c.family_step != 0 || b.from_m < c.family_m0)
        reject(step, fmt::format("from_m = {} is not an admissible M", b.from_m));
    const Poly value = Poly::of(b.value_forms, cone);
    SmtQueries smt(cone);
    const CertificateForm zero{};
    std::map<int, Poly> bubble;
    std::vector<int> compared;  // instances whose bubble is compared with the value; a same polynomial needs it once
    // Each instance is timed against the one before (one block and lambda apart in the periodic part), taking the
    // end times the recurrence provably shares with it.
    struct Timed {
        Schedule schedule;
        Graph graph;
        SymbolicTiming timing;
    };
    std::optional<Timed> previous;
    const SymbolicPeriod period = period_of(w, *win.lambda_form);
    for (int m = c.family_m0; m <= last_m; m += c.family_step) {
        Timed now{instance_at(c, base, m), {}, {}};
        now.graph = timing_graph(c, now.schedule, step);
        const SymbolicReference ref{previous ? &previous->schedule : nullptr, previous ? &previous->graph : nullptr,
                                    previous ? &previous->timing : nullptr, *win.lambda_form};
        now.timing = simulate_symbolic(now.schedule, now.graph, cone, step, previous ? &ref : nullptr, &period);
        bubble[m] = now.timing.bubble;
        previous = std::move(now);
        if (m < b.from_m || bubble[m].same_function(value)) continue;
        if (std::any_of(compared.begin(), compared.end(), [&](int k) { return bubble[k].same_function(bubble[m]); })) continue;
        compared.push_back(m);
        smt.equal(fmt::format("bubble({}) = the value", m), bubble[m], value, zero);
    }
    // The values below from_m, as listed, and the least M0: at a point of the region the bubble just below differs.
    std::vector<int> below;
    for (const auto& [m, poly] : bubble)
        if (m < b.from_m) below.push_back(m);
    if (below.size() != b.early_forms.size()) reject(step, fmt::format("{} bubbles listed below from_m, {} admissible M there",
                                                                       b.early_forms.size(), below.size()));
    for (size_t k = 0; k < below.size(); ++k) {
        if (b.early_forms[k].first != below[k])
            reject(step, fmt::format("the bubbles below from_m list M = {} where M = {} is expected", b.early_forms[k].first, below[k]));
        const Poly listed = Poly::of(b.early_forms[k].second, cone);
        if (!listed.same_function(bubble[below[k]]))
            smt.equal(fmt::format("bubble({}) = the value listed for it", below[k]), bubble[below[k]], listed, zero);
    }
    std::string least;
    if (!below.empty()) {
        const int m = below.back();
        if (!b.differs_at) reject(step, fmt::format("no point shows that bubble({}) differs from the value (from_m least)", m));
        const CertificatePoint& point = *b.differs_at;
        if (!cone.contains(point)) reject(step, "the point where the bubble below from_m differs lies outside the region");
        const Schedule s = generate(c, m);
        const Rational here = simulate(s, timing_graph(c, s, step), costs_at(point), step).bubble;
        const Rational there = value.eval(point);
        if (here == there)
            reject(step, fmt::format("at the point given, bubble({}) = {} equals the value: from_m = {} is not shown least", m,
                                     format_rational(here), b.from_m));
        least = fmt::format("; at a point of the region bubble({}) = {} but the value is {} (exact), so M0 = {} is the least",
                            m, format_rational(here), format_rational(there), b.from_m);
    }
    const std::string solved = smt.run(step, options);
    return fmt::format("every rank works lambda per block on the whole region (slope 0); bubble(M) simulated "
                       "symbolically at every admissible M from {} through {}: the value for M >= {}, {} listed below{}{}{}",
                       c.family_m0, last_m, b.from_m, below.size(), least, solved.empty() ? "" : "; ", solved);
}

}  // namespace pp::check
