// Symbolic timing, the checker's own: every end time a max-plus polynomial (the max of linear forms in the costs),
// computed by the same longest-path recurrence as the exact timing (graph.cpp), each form kept with its values
// on the cone's rays. A form that another matches or exceeds on every ray is dropped: it never exceeds it on the
// cone. Two polynomials with the same ray-value vectors are the same function; any other equality the checker
// needs is split into inclusions, each form shown below the other side's max by exact convex weights
// (dominance.cpp) or by an SMT query answered by z3 and cvc5 (SmtQueries).
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>

#include <unistd.h>

namespace pp::check {
namespace {

constexpr int kVars = kCertificateCostVars;

CertificateForm plus(CertificateForm a, const CertificateForm& b) {
    for (int k = 0; k < kVars; ++k)
        if (__builtin_add_overflow(a[k], b[k], &a[k])) throw std::overflow_error("a coefficient overflows 64 bits");
    return a;
}

CertificateForm unit(int var) {
    CertificateForm f{};
    f[var] = 1;
    return f;
}

std::int64_t total(const RayValues& values) {
    std::int64_t s = 0;
    for (auto v : values)
        if (__builtin_add_overflow(s, v, &s)) throw std::overflow_error("a sum of ray values overflows 64 bits");
    return s;
}

}  // namespace

std::string readable_form(const CertificateForm& f) {
    constexpr std::array<const char*, kCertificateCostVars> names = {"F", "I", "W", "B", "FB", "comm"};
    std::string out;
    for (int k = 0; k < kCertificateCostVars; ++k) {
        if (f[k] == 0) continue;
        const auto magnitude = f[k] < 0 ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(f[k]) : static_cast<std::uint64_t>(f[k]);
        const std::string coefficient = magnitude == 1 ? "" : fmt::format("{}*", magnitude);
        out += fmt::format("{}{}{}", out.empty() ? (f[k] < 0 ? "-" : "") : (f[k] < 0 ? " - " : " + "), coefficient, names[k]);
    }
    return out.empty() ? "0" : out;
}

std::string readable_poly(const std::vector<CertificateForm>& forms) {
    if (forms.size() == 1) return readable_form(forms[0]);
    std::string out;
    for (const auto& f : forms) out += (out.empty() ? "" : ", ") + readable_form(f);
    return "max(" + out + ")";
}

CertificateForm slot_form(const Slot& slot) {
    if (slot.count == 2) return unit(4);  // FB: an overlapped pair takes one cost, whatever its backward
    switch (slot.ops[0].kind) {
        case OpKind::F: return unit(0);
        case OpKind::I: return unit(1);
        case OpKind::W: return unit(2);
        case OpKind::B: return unit(3);
    }
    return {};
}

Poly Poly::of(const CertificateForm& form, const Cone& cone) { return Poly{{Term{form, cone.values(form)}}}; }

Poly Poly::of(const std::vector<CertificateForm>& forms, const Cone& cone) {
    Poly p;
    for (const auto& f : forms) p.terms.push_back({f, cone.values(f)});
    p.prune();
    return p;
}

void Poly::add(const CertificateForm& form, const RayValues& values) {
    for (Term& t : terms) {
        t.form = plus(t.form, form);
        for (size_t k = 0; k < values.size(); ++k)
            if (__builtin_add_overflow(t.values[k], values[k], &t.values[k]))
                throw std::overflow_error("a ray value overflows 64 bits");
    }
}

namespace {

// Whether u >= t on every ray, on 32-bit copies of the values (8 lanes, the unused ones 0 on both sides), a loop the
// compiler turns into a few vector compares; values that do not fit take the 64-bit loop.
using Lanes = std::array<std::int32_t, 8>;
bool fits_lanes(const RayValues& v) {
    if (v.size() > 8) return false;
    return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x >= INT32_MIN && x <= INT32_MAX; });
}
Lanes lanes_of(const RayValues& v) {
    Lanes out{};
    for (size_t k = 0; k < v.size(); ++k) out[k] = static_cast<std::int32_t>(v[k]);
    return out;
}
bool at_least(const Lanes& u, const Lanes& t) {
    int below = 0;
    for (size_t k = 0; k < 8; ++k) below |= u[k] < t[k];
    return below == 0;
}
bool at_least(const RayValues& u, const RayValues& t) {
    for (size_t i = 0; i < t.size(); ++i)
        if (u[i] < t[i]) return false;
    return true;
}

}  // namespace

// Largest ray-value sum first: a form dominated by another comes after it; among forms with equal values on every
// ray (equal on the cone) the lexicographically first is kept.
void Poly::prune() {
    std::vector<std::pair<std::int64_t, size_t>> order;
    bool small = true;
    for (size_t k = 0; k < terms.size(); ++k) {
        order.emplace_back(total(terms[k].values), k);
        small = small && fits_lanes(terms[k].values);
    }
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return terms[a.second].form < terms[b.second].form;
    });
    std::vector<Term> kept;
    std::vector<Lanes> kept_lanes;
    for (const auto& [sum, k] : order) {
        const Term& t = terms[k];
        bool dominated = false;
        if (small) {
            const Lanes tl = lanes_of(t.values);
            for (size_t u = 0; u < kept_lanes.size() && !dominated; ++u) dominated = at_least(kept_lanes[u], tl);
            if (!dominated) kept_lanes.push_back(tl);
        } else {
            for (size_t u = 0; u < kept.size() && !dominated; ++u) dominated = at_least(kept[u].values, t.values);
        }
        if (!dominated) kept.push_back(t);
    }
    std::sort(kept.begin(), kept.end(), [](const Term& a, const Term& b) { return a.values < b.values; });
    terms = std::move(kept);
}

bool Poly::same_function(const Poly& other) const {
    if (terms.size() != other.terms.size()) return false;
    for (size_t k = 0; k < terms.size(); ++k)
        if (terms[k].values != other.terms[k].values) return false;
    return true;
}

Rational Poly::eval(const CertificatePoint& point) const {
    std::optional<Rational> best;
    for (const Term& t : terms) {
        Rational v(0);
        for (int k = 0; k < kVars; ++k) v += Rational(t.form[k]) * point[k];
        if (!best || v > *best) best = v;
    }
    return best.value_or(Rational(0));
}

namespace {

// Slot v takes the end time of an earlier-timed slot w (plus `shift` when shifted) when the recurrence is the same
// on both: equal durations, predecessor lists that correspond one by one with the same cross-rank flags, and each
// predecessor's end equal to its counterpart's (plus `shift`) -- known from how it was itself taken, or compared.
// Then max_j(end(u_j) + c_j) + d is the same function on both sides (a shift moves every operand alike), whatever
// the instances are: nothing about their structure is assumed. Shifted needs a predecessor (a slot without one
// starts at 0 either way). w is a slot of another instance already timed (the reference), or of this one, one
// period earlier on its rank.
struct Side {
    const Graph* graph;
    const std::vector<const Slot*>* slots;
    const std::vector<Poly>* end;
};
bool same_recurrence(const Graph& g, std::uint32_t v, const CertificateForm& d, const std::vector<Poly>& end, const Side& ref,
                     std::uint32_t w, const std::vector<std::uint32_t>& known, const CertificateForm* shift,
                     const RayValues& shift_values) {
    if (slot_form(*(*ref.slots)[w]) != d) return false;
    const auto& pv = g.preds[v];
    const auto& pw = ref.graph->preds[w];
    if (pv.size() != pw.size() || (shift && pv.empty())) return false;
    for (size_t j = 0; j < pv.size(); ++j) {
        if (pv[j].cross_rank != pw[j].cross_rank) return false;
        const std::uint32_t u = pv[j].from, q = pw[j].from;
        if (known[u] == q) continue;
        Poly expected = (*ref.end)[q];
        if (shift) expected.add(*shift, shift_values);
        if (!expected.same_function(end[u])) return false;
    }
    return true;
}

}  // namespace

SymbolicTiming simulate_symbolic(const Schedule& s, const Graph& g, const Cone& cone, const std::string& step,
                                 const SymbolicReference* ref, const SymbolicPeriod* period) {
    if (!g.acyclic()) reject(step, "the instance deadlocks: its dependency graph has a cycle, so it has no timing");
    SymbolicTiming out;
    out.end.assign(g.rank.size(), Poly{});
    out.busy.assign(s.placement.ranks, CertificateForm{});
    std::vector<std::uint32_t> rank_start, ref_start;
    const std::vector<const Slot*> slot = slots_of(s, &rank_start);
    std::vector<std::uint32_t> last(s.placement.ranks, UINT32_MAX);
    for (int r = 0; r < s.placement.ranks; ++r)
        if (!s.ranks[r].empty()) last[r] = rank_start[r] + static_cast<std::uint32_t>(s.ranks[r].size()) - 1;
    const std::vector<const Slot*> ref_slots = ref ? slots_of(*ref->schedule, &ref_start) : std::vector<const Slot*>{};
    const Side other{ref ? ref->graph : nullptr, &ref_slots, ref ? &ref->timing->end : nullptr};
    const Side itself{&g, &slot, &out.end};
    const RayValues ref_shift = ref ? cone.values(ref->shift) : RayValues{};
    const RayValues own_shift = period ? cone.values(period->shift) : RayValues{};
    // What each slot was taken from: the reference's slot as is, shifted, or this instance's one period earlier.
    std::vector<std::uint32_t> same_as(g.rank.size(), UINT32_MAX), shifted_from(g.rank.size(), UINT32_MAX),
        period_from(g.rank.size(), UINT32_MAX);
    const CertificateForm comm = unit(5);
    const RayValues comm_values = cone.values(comm);
    for (std::uint32_t v : g.topo) {
        const CertificateForm d = slot_form(*slot[v]);
        const int r = static_cast<int>(g.rank[v]);
        const auto i = v - rank_start[r];
        out.busy[r] = plus(out.busy[r], d);
        if (ref) {
            const auto n_ref = static_cast<std::uint32_t>(ref->schedule->ranks[r].size());
            const auto n = static_cast<std::uint32_t>(s.ranks[r].size());
            if (i < n_ref && same_recurrence(g, v, d, out.end, other, ref_start[r] + i, same_as, nullptr, ref_shift)) {
                same_as[v] = ref_start[r] + i;
                out.end[v] = ref->timing->end[same_as[v]];
                ++out.taken;
                continue;
            }
            if (n > n_ref && i >= n - n_ref &&
                same_recurrence(g, v, d, out.end, other, ref_start[r] + i - (n - n_ref), shifted_from, &ref->shift, ref_shift)) {
                shifted_from[v] = ref_start[r] + i - (n - n_ref);
                out.end[v] = ref->timing->end[shifted_from[v]];
                out.end[v].add(ref->shift, ref_shift);
                ++out.taken;
                continue;
            }
        }
        if (period && r < static_cast<int>(period->slots.size()) && period->slots[r] > 0 && i >= period->slots[r] &&
            same_recurrence(g, v, d, out.end, itself, v - period->slots[r], period_from, &period->shift, own_shift)) {
            period_from[v] = v - period->slots[r];
            out.end[v] = out.end[period_from[v]];
            out.end[v].add(period->shift, own_shift);
            ++out.taken;
            continue;
        }
        Poly start;
        for (const Pred& p : g.preds[v]) {
            Poly in = out.end[p.from];
            if (p.cross_rank) in.add(comm, comm_values);
            start.terms.insert(start.terms.end(), in.terms.begin(), in.terms.end());
        }
        if (start.terms.empty()) start = Poly::of(CertificateForm{}, cone);  // no predecessor: starts at 0
        start.add(d, cone.values(d));
        start.prune();
        out.end[v] = std::move(start);
    }
    for (int r = 0; r < s.placement.ranks; ++r)
        if (last[r] != UINT32_MAX) out.makespan.terms.insert(out.makespan.terms.end(), out.end[last[r]].terms.begin(),
                                                             out.end[last[r]].terms.end());
    out.makespan.prune();
    // bubble = max over ranks of (makespan - busy_r). A rank that works at least as long as another on every ray
    // (and is not the first of equals) idles no longer than it anywhere on the cone: its idle time adds nothing.
    std::vector<RayValues> work;
    for (int r = 0; r < s.placement.ranks; ++r) work.push_back(cone.values(out.busy[r]));
    for (int r = 0; r < s.placement.ranks; ++r) {
        bool covered = false;
        for (int q = 0; q < s.placement.ranks && !covered; ++q)
            covered = q != r && at_least(work[r], work[q]) && (work[r] != work[q] || q < r);
        if (covered) continue;
        Poly idle = out.makespan;
        CertificateForm minus{};
        for (int k = 0; k < kVars; ++k)
            if (__builtin_sub_overflow(std::int64_t{0}, out.busy[r][k], &minus[k]))
                throw std::overflow_error("a busy time's coefficient overflows 64 bits");
        idle.add(minus, cone.values(minus));
        out.bubble.terms.insert(out.bubble.terms.end(), idle.terms.begin(), idle.terms.end());
    }
    out.bubble.prune();
    return out;
}

// ---- SMT queries

std::string rational_text(const Rational& r) {
    const std::string num = r.numerator().sign() < 0 ? fmt::format("(- {})", (Integer(0) - r.numerator()).to_string())
                                                       : r.numerator().to_string();
    return r.denominator() == Integer(1) ? num : fmt::format("(/ {} {})", num, r.denominator().to_string());
}

namespace {

std::string integer_text(std::int64_t v) {
    if (v >= 0) return std::to_string(v);
    // -v may not fit: print the magnitude from the unsigned negation
    const auto magnitude = static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v);
    return fmt::format("(- {})", magnitude);
}


constexpr std::array<const char*, kVars> kNames = {"cF", "cI", "cW", "cB", "cFB", "ccomm"};

std::string form_text(const CertificateForm& f) {
    std::string out;
    int terms = 0;
    for (int k = 0; k < kVars; ++k)
        if (f[k] != 0) out += fmt::format(" (* {} {})", integer_text(f[k]), kNames[k]), ++terms;
    if (terms == 0) return "0.0";
    return terms == 1 ? out.substr(1) : "(+" + out + ")";
}

}  // namespace

SmtQueries::SmtQueries(const Cone& cone) : cone_(cone) {
    text_ = "(set-logic QF_LRA)\n";
    for (const char* n : kNames) text_ += fmt::format("(declare-const {} Real)\n", n);
    for (const CertificateConstraint& k : cone.constraints) {
        std::string lhs;
        for (int i = 0; i < kVars; ++i)
            if (k.a[i] != Rational(0)) lhs += fmt::format(" (* {} {})", rational_text(k.a[i]), kNames[i]);
        lhs = lhs.empty() ? "0.0" : "(+ 0.0" + lhs + ")";
        text_ += fmt::format("(assert ({} {} {}))\n", k.rel, lhs, rational_text(k.b));
    }
}

// a = b + shift everywhere on the region, as two inclusions: every form of a is <= max(b) + shift, and every form of
// b plus shift is <= max(a). A form that one form of the other side matches or exceeds on every ray, or a convex
// combination of them does (exact weights, dominance.cpp), needs nothing more; any other form f is a query "f >
// every form of the other side" -- a conjunction of linear inequalities, expected unsat.
void SmtQueries::equal(const std::string& what, const Poly& a, const Poly& b, const CertificateForm& shift) {
    const RayValues shift_values = cone_.values(shift);
    Poly b_shifted = b;
    b_shifted.add(shift, shift_values);
    auto covered = [](const Term& f, const Poly& by) {
        return std::any_of(by.terms.begin(), by.terms.end(), [&](const Term& g) {
            for (size_t k = 0; k < f.values.size(); ++k)
                if (g.values[k] < f.values[k]) return false;
            return true;
        });
    };
    auto query = [&](const Term& f, const Poly& others, const std::string& side) {
        std::string above;
        for (const Term& g : others.terms) above += fmt::format(" (> {} {})", form_text(f.form), form_text(g.form));
        if (!asked_.insert(above).second) return;  // the same query already stands (equal polynomials compared twice)
        text_ += fmt::format("; {} ({})\n(push 1)\n(assert (and true{}))\n(check-sat)\n(pop 1)\n", what, side, above);
        what_.push_back(what + " (" + side + ")");
    };
    auto bounded = [&](const Term& f, const Poly& by) {
        if (covered(f, by)) return true;
        if (below_max_on_cone(f, by.terms)) return ++by_weights_, true;
        return false;
    };
    for (const Term& f : a.terms)
        if (!bounded(f, b_shifted)) query(f, b_shifted, "a form of the left side above the right side");
    for (const Term& g : b_shifted.terms)
        if (!bounded(g, a)) query(g, a, "a form of the right side above the left side");
}

std::string SmtQueries::run(const std::string& step, const CheckOptions& options) const {
    const std::string weights =
        by_weights_ ? fmt::format("{} form(s) below the other side's max by exact convex weights on the rays", by_weights_) : "";
    if (what_.empty()) return weights;
    static std::atomic<int> counter{0};
    const auto file = std::filesystem::temp_directory_path() /
                      fmt::format("pipeproof-check-{}-{}-{}.smt2", getpid(), step, counter++);
    {
        std::ofstream out(file);
        out << text_;
        if (!out) reject(step, "cannot write " + file.string());
    }
    std::string said;
    try {
        said = require_unsat(step, file, static_cast<int>(what_.size()), options);
    } catch (const Rejected& r) {
        std::filesystem::remove(file);
        // The query's number names the comparison.
        std::string which;
        if (const auto at = r.reason.find("query "); at != std::string::npos) {
            const int k = std::atoi(r.reason.c_str() + at + 6);
            if (k >= 1 && k <= static_cast<int>(what_.size())) which = " (" + what_[k - 1] + ")";
        }
        throw Rejected{r.step, r.reason + which};
    }
    std::filesystem::remove(file);
    return fmt::format("{}{}{} form(s) that no weights bound shown below the other side's max on the region: {}", weights,
                       weights.empty() ? "" : "; ", what_.size(), said);
}

}  // namespace pp::check
