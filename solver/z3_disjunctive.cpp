// Disjunctive encoding in difference logic (z3-lessons.md, encoding (c)), for durations too large for
// a time-indexed model: an integer start s(i) per task in its window [est, lst], and
//   precedence   s(j) - s(i) >= duration(i) + lag                  for every edge i -> j
//   one at a time   o(i,j) -> s(j) - s(i) >= d(i);  !o(i,j) -> s(i) - s(j) >= d(j)
//                for every same-rank pair that neither the precedence closure nor the windows order
//                (an ordered pair gets its difference constraint directly, or nothing if implied)
//   memory       on ranks holding several stages: at each F, at most L - 1 other activations live,
//                live(a, f) <= before(F_a, f) & before(f, W_a)
// The objective bound is in the windows (every task ends by its deadline). Solved by Z3's SMT core with
// the Bellman-Ford difference-logic engine (arith.solver=1, the best setting measured in z3-lessons §4).
#include "solver/z3_encoding.hpp"
#include "solver/z3_solve.hpp"

#include <z3++.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace pp {
namespace {

class DisjunctiveEncoder {
public:
    DisjunctiveEncoder(const Instance& inst, const Windows& w, const Z3Query& query)
        : inst_(inst), w_(w), query_(query), start_(ctx_), solver_(ctx_) {}

    void build() {
        ancestors_ = same_rank_relatives(inst_, true);
        for (size_t i = 0; i < inst_.size(); ++i) {
            const int same = query_.tied ? (*query_.tied)[i] : -1;
            if (same >= 0 && same < static_cast<int>(i)) start_.push_back(start_[same]);
            else start_.push_back(ctx_.int_const(("s." + z3_task_name(inst_.tasks[i])).c_str()));
            add(start_[i] >= int_numeral(ctx_, w_.est[i]));
            add(start_[i] <= int_numeral(ctx_, w_.lst[i]));
        }
        for (const auto& e : inst_.edges)
            add(start_[e.to] - start_[e.from] >= int_numeral(ctx_, inst_.tasks[e.from].duration + e.lag));
        for (int r = 0; r < inst_.ranks; ++r) add_rank_order(r);
        for (int r = 0; r < inst_.ranks; ++r)
            if (inst_.rank_needs_cardinality[r]) inst_.weighted ? add_weighted_memory(r) : add_memory(r);
        if (query_.budgets)
            for (int r = 0; r < inst_.ranks && r < static_cast<int>(query_.budgets->size()); ++r)
                if ((*query_.budgets)[r].applies) add_budget(r, (*query_.budgets)[r]);
    }

    size_t variables() const { return start_.size() + orders_; }
    size_t constraints() const { return constraints_; }
    z3::solver& solver() { return solver_; }

    std::vector<Ticks> extract(const z3::model& model) {
        std::vector<Ticks> s(inst_.size());
        for (size_t i = 0; i < inst_.size(); ++i) s[i] = integer_of(model.eval(start_[i], true));
        return s;
    }

private:
    void add(const z3::expr& e) {
        solver_.add(e);
        if (++constraints_ % 4096 == 0 && (Clock::now() > query_.deadline || query_.stopped())) throw BuildTimeout{};
    }

    bool is_ancestor(int a, int b) const {  // a runs before b by precedence (same rank)
        const auto& anc = ancestors_[b];
        return std::binary_search(anc.begin(), anc.end(), a);
    }

    // "i starts before j" on one rank: a constant (from the closure or the windows) or an order variable.
    z3::expr before(int i, int j) {
        if (is_ancestor(i, j)) return ctx_.bool_val(true);
        if (is_ancestor(j, i)) return ctx_.bool_val(false);
        const auto key = std::make_pair(std::min(i, j), std::max(i, j));
        auto it = order_.find(key);
        if (it == order_.end()) return ctx_.bool_val(i < j);  // never reached: pairs are created first
        return i < j ? it->second : !it->second;
    }

    void add_rank_order(int r) {
        const auto& tasks = inst_.rank_tasks[r];
        for (size_t a = 0; a < tasks.size(); ++a)
            for (size_t b = a + 1; b < tasks.size(); ++b) {
                const int i = std::min(tasks[a], tasks[b]), j = std::max(tasks[a], tasks[b]);
                if (is_ancestor(i, j) || is_ancestor(j, i)) continue;
                const Ticks di = inst_.tasks[i].duration, dj = inst_.tasks[j].duration;
                const bool i_first = w_.est[i] + di <= w_.lst[j], j_first = w_.est[j] + dj <= w_.lst[i];
                const z3::expr i_then_j = start_[j] - start_[i] >= int_numeral(ctx_, di);
                const z3::expr j_then_i = start_[i] - start_[j] >= int_numeral(ctx_, dj);
                if (!i_first && !j_first) {
                    add(ctx_.bool_val(false));
                } else if (!j_first) {
                    add(i_then_j);
                    order_.emplace(std::make_pair(i, j), ctx_.bool_val(true));
                } else if (!i_first) {
                    add(j_then_i);
                    order_.emplace(std::make_pair(i, j), ctx_.bool_val(false));
                } else {
                    z3::expr o = ctx_.bool_const(("o." + z3_task_name(inst_.tasks[i]) + "<" + z3_task_name(inst_.tasks[j])).c_str());
                    ++orders_;
                    add(z3::implies(o, i_then_j));
                    add(z3::implies(!o, j_then_i));
                    order_.emplace(std::make_pair(i, j), o);
                }
            }
    }

    void add_memory(int r) {
        const int limit = *inst_.cap;
        for (int f : inst_.rank_tasks[r]) {
            if (inst_.tasks[f].op.kind != OpKind::F) continue;
            z3::expr_vector live(ctx_);
            for (const Activation& a : inst_.activations) {
                if (a.rank != r || a.forward == f) continue;
                z3::expr l = ctx_.bool_const(("live." + z3_task_name(inst_.tasks[a.forward]).substr(2) + "@" +
                                              z3_task_name(inst_.tasks[f])).c_str());
                add(z3::implies(before(a.forward, f) && before(f, a.weight), l));
                live.push_back(l);
            }
            if (static_cast<int>(live.size()) > limit - 1) add(z3::atmost(live, static_cast<unsigned>(std::max(0, limit - 1))));
        }
    }

    // WeightedMemory at the start of each F of rank r: its own alloc, plus kept for every stash started before
    // it whose W has not ended, plus alloc - kept for those whose I has not ended, at most cap.
    void add_weighted_memory(int r) {
        const WeightedMemory& memory = *inst_.weighted;
        for (int f : inst_.rank_tasks[r]) {
            if (inst_.tasks[f].op.kind != OpKind::F) continue;
            z3::expr_vector live(ctx_);
            std::vector<int> weights;
            std::int64_t open = 0;
            auto held = [&](const Activation& a, int freer, std::int64_t weight, const char* part) {
                if (weight == 0) return;
                z3::expr l = ctx_.bool_const(("live" + std::string(part) + "." + z3_task_name(inst_.tasks[a.forward]).substr(2) +
                                              "@" + z3_task_name(inst_.tasks[f])).c_str());
                add(z3::implies(before(a.forward, f) && before(f, freer), l));
                live.push_back(l);
                weights.push_back(static_cast<int>(weight));
                open += weight;
            };
            for (const Activation& a : inst_.activations) {
                if (a.rank != r || a.forward == f) continue;
                held(a, a.weight, memory.kept, "W");
                held(a, a.input, memory.released_by_input(), "I");
            }
            const std::int64_t bound = memory.cap - memory.alloc;
            if (open > std::numeric_limits<int>::max())  // Z3's pseudo-Boolean weights are ints
                throw std::overflow_error("weighted memory: more live units on a rank than the encoding counts");
            if (bound < 0) add(ctx_.bool_val(false));
            else if (open > bound) add(z3::pble(live, weights.data(), static_cast<int>(bound)));
        }
    }

    // start(i) - (work of the rank's ops before i) within the rank's idle budget (rank_budget.hpp).
    void add_budget(int r, const RankBudget& budget) {
        const auto& tasks = inst_.rank_tasks[r];
        for (int i : tasks) {
            if (Clock::now() > query_.deadline || query_.stopped()) throw BuildTimeout{};  // each sum is large
            z3::expr_vector terms(ctx_);
            terms.push_back(start_[i]);
            for (int j : tasks) {
                if (j == i) continue;
                const z3::expr b = before(j, i);
                if (b.is_true()) terms.push_back(int_numeral(ctx_, -inst_.tasks[j].duration));
                else if (!b.is_false()) terms.push_back(z3::ite(b, int_numeral(ctx_, -inst_.tasks[j].duration), ctx_.int_val(0)));
            }
            const z3::expr position = z3::sum(terms);
            const bool forward = inst_.tasks[i].op.kind == OpKind::F;
            add(position >= int_numeral(ctx_, budget.lo + (forward ? Ticks(0) : budget.warm)));
            add(position <= int_numeral(ctx_, query_.bound - budget.load - (forward ? budget.cool : Ticks(0))));
        }
    }

    const Instance& inst_;
    const Windows& w_;
    const Z3Query& query_;
    z3::context ctx_;
    z3::expr_vector start_;
    z3::solver solver_;
    std::vector<std::vector<int>> ancestors_;
    std::map<std::pair<int, int>, z3::expr> order_;
    size_t orders_ = 0, constraints_ = 0;
};


}  // namespace

size_t disjunctive_variables(const Instance& inst, const Windows& w) {
    size_t pairs = 0;
    for (int r = 0; r < inst.ranks; ++r) pairs += inst.rank_tasks[r].size() * (inst.rank_tasks[r].size() - 1) / 2;
    return inst.size() + pairs;
}

Z3Outcome solve_disjunctive(const Instance& inst, const TaskBounds& bounds, const Z3Query& query) {
    if (inst.pairs_allowed()) {
        Z3Outcome out;
        out.engine = "disjunctive";
        out.answer = Z3Answer::Skipped;
        out.reason = "overlapped pairs need the time-indexed encoding";
        return out;
    }
    return solve_disjunctive_in(inst, windows_for_bound(inst, bounds, query.bound, query.strengthen), query);
}

Z3Outcome solve_disjunctive_in(const Instance& inst, const Windows& w, const Z3Query& query) {
    const auto t0 = Clock::now();
    Z3Outcome out;
    out.engine = "disjunctive";
    if (w.empty_task >= 0) {
        out.answer = Z3Answer::Unsat;
        out.reason = "empty window: " + describe_op(inst.tasks[w.empty_task].op) + " cannot start before " +
                     format_rational(inst.to_units(w.est[w.empty_task])) + " and must start by " +
                     format_rational(inst.to_units(w.lst[w.empty_task]));
        return out;
    }
    if (disjunctive_variables(inst, w) > query.max_variables) {
        out.answer = Z3Answer::Skipped;
        out.reason = "encoding too large";
        return out;
    }
    DisjunctiveEncoder enc(inst, w, query);
    build_and_check(
        enc, query, t0, out,
        [&](const z3::model& m, Z3Outcome& o) {
            o.start = enc.extract(m);
            o.partner.assign(inst.size(), -1);
        },
        // Difference logic (Bellman-Ford) without the budget cuts; they are sums, so the simplex then.
        [&](z3::params& p) { p.set("arith.solver", query.budgets ? 2u : 1u); });
    // The same solver for a re-check with a stock z3: with the cuts its default arithmetic did not answer
    // the DualPipe P=8 optimality query in 26 min; through the API with this one it took 8.
    if (!out.smt2.empty())
        out.smt2 = "(set-option :smt.arith.solver " + std::string(query.budgets ? "2" : "1") + ")\n" + out.smt2;
    return out;
}

}  // namespace pp
