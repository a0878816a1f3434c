// Time-indexed order encoding (z3-lessons.md, encoding (d)): one Boolean y(i,t) <=> start(i) <= t for
// every task i and every t of its start window [est, lst); y(i,t) is false below the window and true
// from lst on (the window is implied by the precedence constraints, see lower_bound.hpp). Clauses:
//   order        y(i,t) -> y(i,t+1)
//   precedence   y(j,t) -> y(i, t - duration(i) - lag)          for every edge i -> j
//   one at a time   at-most-1 over run(i,t) <= y(i,t) & !y(i,t-d) per rank and time
//   memory       at-most-L over live(a,t) <= y(F_a,t) & !y(W_a,t-d_W) per rank and time, on ranks whose
//                cap is not already expressed by memory edges (several stages per rank)
//   pairs        pair(f,b) -> (y(f,t) <-> y(b,t)); paired tasks occupy FB instead of their durations
// The objective bound is in the windows: every W must end by the deadline.
// All of it is propositional with cardinality, so the solver is Z3's SAT core ("QF_FD").
#include "solver/z3_encoding.hpp"
#include "solver/z3_solve.hpp"

#include <z3++.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

namespace pp {
namespace {

// A literal that may be a constant; constants never reach Z3.
struct Lit {
    enum State : signed char { False = 0, True = 1, Var = 2 } state = False;
    unsigned var = 0;
    bool negated = false;
    Lit operator!() const {
        Lit l = *this;
        if (state == Var) l.negated = !negated;
        else l.state = state == True ? False : True;
        return l;
    }
    static Lit constant(bool value) { return Lit{value ? True : False, 0, false}; }
};

class TimeIndexedEncoder {
public:
    TimeIndexedEncoder(const Instance& inst, const Windows& w, const Z3Query& query)
        : inst_(inst), w_(w), query_(query), vars_(ctx_), solver_(ctx_, "QF_FD") {}

    void build() {
        make_start_variables();
        if (inst_.pairs_allowed()) make_pairs();
        for (size_t t = 0; t < inst_.size(); ++t) add_order(static_cast<int>(t));
        for (const auto& edge : inst_.edges) add_precedence(edge);
        add_deadlines();
        for (int r = 0; r < inst_.ranks; ++r) add_one_at_a_time(r);
        for (int r = 0; r < inst_.ranks; ++r)
            if (inst_.rank_needs_cardinality[r]) inst_.weighted ? add_weighted_memory(r) : add_memory(r);
    }

    size_t variables() const { return vars_.size(); }
    size_t constraints() const { return constraints_; }
    z3::solver& solver() { return solver_; }

    Z3Outcome extract(const z3::model& model) {
        Z3Outcome out;
        out.start.resize(inst_.size());
        out.partner.assign(inst_.size(), -1);
        for (size_t i = 0; i < inst_.size(); ++i) {
            Ticks start = w_.lst[i];
            for (Ticks t = w_.est[i]; t < w_.lst[i]; ++t)
                if (value(model, y(static_cast<int>(i), t))) {
                    start = t;
                    break;
                }
            out.start[i] = start;
        }
        for (const auto& p : pairs_)
            if (value(model, p.lit)) out.partner[p.f] = p.b, out.partner[p.b] = p.f;
        return out;
    }

private:
    struct Pair {
        int f, b;
        Lit lit;
    };

    Lit new_var(const std::string& name) {
        vars_.push_back(ctx_.bool_const(name.c_str()));
        return Lit{Lit::Var, static_cast<unsigned>(vars_.size() - 1), false};
    }
    z3::expr expr_of(const Lit& l) {
        if (l.state != Lit::Var) return ctx_.bool_val(l.state == Lit::True);
        return l.negated ? !vars_[l.var] : vars_[l.var];
    }
    bool value(const z3::model& model, const Lit& l) {
        if (l.state != Lit::Var) return l.state == Lit::True;
        const bool v = model.eval(vars_[l.var], true).is_true();
        return l.negated ? !v : v;
    }

    void tick() {
        if (++constraints_ % 4096 == 0 && (Clock::now() > query_.deadline || query_.stopped())) throw BuildTimeout{};
    }
    void clause(std::initializer_list<Lit> lits) {
        z3::expr_vector v(ctx_);
        for (const Lit& l : lits) {
            if (l.state == Lit::True) return;
            if (l.state == Lit::Var) v.push_back(expr_of(l));
        }
        solver_.add(v.empty() ? ctx_.bool_val(false) : z3::mk_or(v));
        tick();
    }
    // sum of weight * lit <= bound (weights positive).
    void at_most_weighted(const std::vector<std::pair<Lit, std::int64_t>>& terms, std::int64_t bound) {
        z3::expr_vector v(ctx_);
        std::vector<int> weights;
        std::int64_t open = 0;
        for (const auto& [l, weight] : terms) {
            if (l.state == Lit::True) bound -= weight;
            else if (l.state == Lit::Var) v.push_back(expr_of(l)), weights.push_back(static_cast<int>(weight)), open += weight;
        }
        if (open > std::numeric_limits<int>::max())  // Z3's pseudo-Boolean weights are ints
            throw std::overflow_error("weighted memory: more live units on a rank than the encoding counts");
        if (bound < 0) solver_.add(ctx_.bool_val(false));
        else if (open > bound) solver_.add(z3::pble(v, weights.data(), static_cast<int>(bound)));
        else return;
        tick();
    }
    void at_most(const std::vector<Lit>& lits, int bound) {
        z3::expr_vector v(ctx_);
        int fixed = 0;
        for (const Lit& l : lits) {
            if (l.state == Lit::True) ++fixed;
            else if (l.state == Lit::Var) v.push_back(expr_of(l));
        }
        const int left = bound - fixed;
        if (left < 0) solver_.add(ctx_.bool_val(false));
        else if (static_cast<int>(v.size()) > left) solver_.add(z3::atmost(v, static_cast<unsigned>(left)));
        else return;
        tick();
    }

    // start(i) <= t
    Lit y(int i, Ticks t) const {
        if (t < w_.est[i]) return Lit::constant(false);
        if (t >= w_.lst[i]) return Lit::constant(true);
        return Lit{Lit::Var, static_cast<unsigned>(base_[i] + static_cast<size_t>((t - w_.est[i]).to_int64())), false};
    }

    void make_start_variables() {
        base_.resize(inst_.size());
        for (size_t i = 0; i < inst_.size(); ++i) {
            base_[i] = vars_.size();
            const std::string name = z3_task_name(inst_.tasks[i]) + "<=";
            for (Ticks t = w_.est[i]; t < w_.lst[i]; ++t) new_var(name + to_string(t));
        }
    }

    void add_order(int i) {
        for (Ticks t = w_.est[i]; t + 1 < w_.lst[i]; ++t) clause({!y(i, t), y(i, t + 1)});
    }

    // Candidate pairs of an F and an I: same rank, windows that meet. With F&B pairs the I's W is
    // absorbed: it shares the I's `paired` literal and, when paired, starts (with length 0) exactly at
    // the unit's end: start(W) >= start(I) + FB from the I -> W edge, start(W) <= start(I) + FB here.
    void make_pairs() {
        paired_.assign(inst_.size(), Lit::constant(false));
        std::vector<std::vector<Lit>> of_task(inst_.size());
        for (int r = 0; r < inst_.ranks; ++r)
            for (int f : inst_.rank_tasks[r]) {
                if (inst_.tasks[f].op.kind != OpKind::F) continue;
                for (int b : inst_.rank_tasks[r]) {
                    if (inst_.tasks[b].op.kind != OpKind::I) continue;
                    if (std::max(w_.est[f], w_.est[b]) > std::min(w_.lst[f], w_.lst[b])) continue;
                    Lit p = new_var("pair." + z3_task_name(inst_.tasks[f]) + "+" + z3_task_name(inst_.tasks[b]));
                    pairs_.push_back({f, b, p});
                    of_task[f].push_back(p);
                    of_task[b].push_back(p);
                    const Ticks lo = std::min(w_.est[f], w_.est[b]), hi = std::max(w_.lst[f], w_.lst[b]);
                    for (Ticks t = lo; t <= hi; ++t) {
                        clause({!p, !y(f, t), y(b, t)});
                        clause({!p, !y(b, t), y(f, t)});
                    }
                }
            }
        for (size_t i = 0; i < inst_.size(); ++i) {
            if (of_task[i].empty()) continue;
            paired_[i] = new_var("paired." + z3_task_name(inst_.tasks[i]));
            z3::expr_vector any(ctx_);
            for (const Lit& p : of_task[i]) clause({!p, paired_[i]}), any.push_back(expr_of(p));
            any.push_back(expr_of(!paired_[i]));
            solver_.add(z3::mk_or(any));
            at_most(of_task[i], 1);
        }
        if (!inst_.fused_pairs()) return;
        for (size_t b = 0; b < inst_.size(); ++b) {
            if (inst_.tasks[b].op.kind != OpKind::I || paired_[b].state != Lit::Var) continue;
            const int i = static_cast<int>(b), w = inst_.weight_of(i);
            paired_[w] = paired_[i];
            for (Ticks t = w_.est[i] + *inst_.pair; t < w_.lst[w]; ++t) clause({!paired_[i], !y(i, t - *inst_.pair), y(w, t)});
        }
    }

    bool may_pair(int i) const { return !paired_.empty() && paired_[i].state == Lit::Var; }

    // start(j) >= start(i) + duration(i) + lag, duration(i) = FB when i is paired.
    void add_precedence(const PrecedenceEdge& e) {
        const int i = e.from, j = e.to;
        auto require = [&](Ticks span, Lit unless) {
            for (Ticks t = w_.est[j]; t <= w_.lst[j]; ++t) {
                if (t - span >= w_.lst[i]) break;  // y(i, t - span) is true from here on
                clause({!y(j, t), unless, y(i, t - span)});
            }
        };
        if (!may_pair(i)) {
            require(inst_.tasks[i].duration + e.lag, Lit::constant(false));
        } else {
            require(inst_.tasks[i].duration + e.lag, paired_[i]);
            require(inst_.pair_duration(i) + e.lag, !paired_[i]);
        }
    }

    // The bound: every task ends by its deadline (makespan T, or T + h_r on rank r for the span).
    // Windows give start <= lst, computed with the least duration a task may have: a pairable task's
    // real duration can exceed it, and an absorbable W (length 0 inside an F&B pair) that ends up in no
    // candidate pair runs on its own, so both get the explicit version (constant true, hence free,
    // where the window already implies it).
    void add_deadlines() {
        const bool span = inst_.problem.objective == Objective::Span;
        for (size_t i = 0; i < inst_.size(); ++i) {
            const int t = static_cast<int>(i);
            const Ticks deadline = query_.bound + (span ? inst_.earliest_rank_start[inst_.tasks[i].rank] : 0);
            if (!may_pair(t)) {
                clause({y(t, deadline - inst_.tasks[i].duration)});
                continue;
            }
            clause({paired_[t], y(t, deadline - inst_.tasks[i].duration)});
            clause({!paired_[t], y(t, deadline - inst_.pair_duration(t))});
        }
    }

    void add_one_at_a_time(int r) {
        std::map<Ticks, std::vector<Lit>> running;
        for (int i : inst_.rank_tasks[r]) {
            const Ticks d = inst_.tasks[i].duration;
            const std::string name = "run." + z3_task_name(inst_.tasks[i]) + "@";
            for (Ticks t = w_.est[i]; t < w_.lst[i] + d; ++t) {
                const Lit started = y(i, t), long_ago = y(i, t - d);
                if (started.state == Lit::False || long_ago.state == Lit::True) continue;
                if (!may_pair(i) && long_ago.state == Lit::False) {
                    running[t].push_back(started);  // start <= t and start > t - d: runs at t
                    continue;
                }
                Lit run = new_var(name + to_string(t));
                if (may_pair(i)) clause({!started, long_ago, paired_[i], run});
                else clause({!started, long_ago, run});
                running[t].push_back(run);
            }
        }
        for (const auto& p : pairs_) {
            if (inst_.tasks[p.f].rank != r) continue;
            const std::string name = "run." + z3_task_name(inst_.tasks[p.f]) + "+" + z3_task_name(inst_.tasks[p.b]) + "@";
            for (Ticks t = std::min(w_.est[p.f], w_.est[p.b]); t < w_.lst[p.f] + *inst_.pair; ++t) {
                const Lit started = y(p.f, t), long_ago = y(p.f, t - *inst_.pair);
                if (started.state == Lit::False || long_ago.state == Lit::True) continue;
                Lit run = new_var(name + to_string(t));
                clause({!p.lit, !started, long_ago, run});
                running[t].push_back(run);
            }
        }
        for (const auto& [t, lits] : running) at_most(lits, 1);
    }

    // Every time an F of rank r may start: where the memory cap is checked.
    std::vector<Ticks> forward_start_times(int r) {
        std::vector<Ticks> times;
        for (int i : inst_.rank_tasks[r])
            if (inst_.tasks[i].op.kind == OpKind::F)
                for (Ticks t = w_.est[i]; t <= w_.lst[i]; ++t) times.push_back(t);
        std::sort(times.begin(), times.end());
        times.erase(std::unique(times.begin(), times.end()), times.end());
        return times;
    }

    // A literal implied by "the stash of `forward` is held at t": F started by t and `freer` (its I or W) not
    // ended by t; a fixed literal when one side is decided, nullopt when the stash cannot be held at t. `name()`
    // names a new variable (built only when one is needed).
    template <class Name>
    std::optional<Lit> held_at(int forward, int freer, Ticks t, Name&& name) {
        const Lit started = y(forward, t), freed = y(freer, t - inst_.tasks[freer].duration);
        if (started.state == Lit::False || freed.state == Lit::True) return std::nullopt;
        if (freed.state == Lit::False) return started;
        if (started.state == Lit::True) return !freed;
        Lit l = new_var(name());
        clause({!started, freed, l});
        return l;
    }

    // live(a,t) <= F_a started by t and W_a not ended by t; at most L at every time an F may start.
    void add_memory(int r) {
        const int limit = *inst_.cap;
        const std::vector<Ticks> times = forward_start_times(r);
        std::map<Ticks, std::vector<Lit>> live;
        for (const Activation& a : inst_.activations) {
            if (a.rank != r) continue;
            const Ticks dw = inst_.tasks[a.weight].duration;
            const std::string name = "live." + z3_task_name(inst_.tasks[a.forward]).substr(2) + "@";
            for (Ticks t : times) {
                const Lit started = y(a.forward, t), freed = y(a.weight, t - dw);
                if (started.state == Lit::False || freed.state == Lit::True) continue;
                if (may_pair(a.weight)) {
                    // An absorbed W (F&B) frees at its start, the end of its unit: freed by t when
                    // start(W) <= t - d_W, or when it is paired and start(W) <= t.
                    Lit l = new_var(name + t.to_string());
                    clause({!started, freed, paired_[a.weight], l});
                    clause({!started, freed, y(a.weight, t), l});
                    live[t].push_back(l);
                } else {
                    live[t].push_back(*held_at(a.forward, a.weight, t, [&] { return name + to_string(t); }));
                }
            }
        }
        for (const auto& [t, lits] : live) at_most(lits, limit);
    }

    // WeightedMemory: at every time an F of rank r may start, kept units per stash started and not freed by
    // its W, plus alloc - kept per stash started and not freed by its I, at most cap.
    void add_weighted_memory(int r) {
        const WeightedMemory& memory = *inst_.weighted;
        const std::vector<Ticks> times = forward_start_times(r);
        std::map<Ticks, std::vector<std::pair<Lit, std::int64_t>>> live;
        auto held = [&](const Activation& a, int freer, Ticks t, std::int64_t weight, const char* part) {
            if (weight == 0) return;
            auto name = [&] { return "live" + std::string(part) + "." + z3_task_name(inst_.tasks[a.forward]).substr(2) + "@" + to_string(t); };
            if (auto l = held_at(a.forward, freer, t, name)) live[t].push_back({*l, weight});
        };
        for (const Activation& a : inst_.activations) {
            if (a.rank != r) continue;
            for (Ticks t : times) {
                held(a, a.weight, t, memory.kept, "W");
                held(a, a.input, t, memory.released_by_input(), "I");
            }
        }
        for (const auto& [t, terms] : live) at_most_weighted(terms, memory.cap);
    }

    const Instance& inst_;
    const Windows& w_;
    const Z3Query& query_;
    z3::context ctx_;
    z3::expr_vector vars_;
    z3::solver solver_;
    std::vector<size_t> base_;
    std::vector<Lit> paired_;
    std::vector<Pair> pairs_;
    size_t constraints_ = 0;
};


}  // namespace

z3::expr int_numeral(z3::context& ctx, const Ticks& value) {
    if (const auto small = value.try_int64()) return ctx.int_val(static_cast<int64_t>(*small));
    return ctx.int_val(value.to_string().c_str());
}

Ticks integer_of(const z3::expr& numeral) {
    const auto value = numeral.is_numeral() ? Integer::parse(Z3_get_numeral_string(numeral.ctx(), numeral)) : std::nullopt;
    if (!value) throw std::runtime_error("Z3 returned a non-integer value " + numeral.to_string());
    return *value;
}

const char* z3_answer_name(Z3Answer answer) {
    switch (answer) {
        case Z3Answer::Sat: return "sat";
        case Z3Answer::Unsat: return "unsat";
        case Z3Answer::Unknown: return "unknown";
        case Z3Answer::Skipped: return "skipped";
    }
    return "unknown";
}

size_t time_indexed_variables(const Instance& inst, const Windows& w) {
    Ticks total = 0;  // exact: with large durations the count can pass any machine integer
    for (size_t i = 0; i < inst.size(); ++i)
        if (w.lst[i] > w.est[i]) total += (w.lst[i] - w.est[i]) * 2 + inst.tasks[i].duration;
    const auto small = total.try_int64();
    return small ? static_cast<size_t>(*small) : std::numeric_limits<size_t>::max();
}

Z3Outcome solve_time_indexed(const Instance& inst, const TaskBounds& bounds, const Z3Query& query) {
    const auto t0 = Clock::now();
    Z3Outcome out;
    out.engine = "time-indexed";
    const Windows w = windows_for_bound(inst, bounds, query.bound, query.strengthen);
    if (w.empty_task >= 0) {
        out.answer = Z3Answer::Unsat;
        out.reason = "empty window: " + describe_op(inst.tasks[w.empty_task].op) + " cannot start before " +
                     format_rational(inst.to_units(w.est[w.empty_task])) + " and must start by " +
                     format_rational(inst.to_units(w.lst[w.empty_task]));
        return out;
    }
    const size_t estimate = time_indexed_variables(inst, w);
    if (estimate > query.max_variables) {
        out.answer = Z3Answer::Skipped;
        out.reason = "encoding too large (" + std::to_string(estimate) + " variables)";
        return out;
    }
    TimeIndexedEncoder enc(inst, w, query);
    build_and_check(
        enc, query, t0, out,
        [&](const z3::model& m, Z3Outcome& o) {
            Z3Outcome model = enc.extract(m);
            o.start = std::move(model.start);
            o.partner = std::move(model.partner);
        },
        [](z3::params&) {});
    return out;
}

}  // namespace pp
