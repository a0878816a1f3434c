#include "solver/z3_window.hpp"

#include "solver/z3_solve.hpp"

#include <z3++.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace pp {
namespace {

class WindowEncoder {
public:
    WindowEncoder(const Instance& inst, const Windows& w, const std::vector<Ticks>& start,
                  const std::vector<bool>& free_task, const Z3Query& query)
        : inst_(inst), start_(start), free_(free_task), query_(query), var_(inst.size(), -1), s_(ctx_), solver_(ctx_) {
        lo_.resize(inst.size());
        hi_.resize(inst.size());
        for (size_t t = 0; t < inst.size(); ++t) {
            lo_[t] = free_[t] ? w.est[t] : start[t];
            hi_[t] = free_[t] ? w.lst[t] : start[t];
            if (!free_[t] && (start[t] < w.est[t] || start[t] > w.lst[t]) && infeasible_.empty())
                infeasible_ = "the fixed op " + describe_op(inst.tasks[t].op) + " lies outside its window for the bound";
        }
    }

    // Empty when the fixed ops leave the free ones some room; else why not (then: Unsat).
    const std::string& infeasible() const { return infeasible_; }

    void build() {
        for (size_t t = 0; t < inst_.size(); ++t)
            if (free_[t]) var_[t] = static_cast<int>(s_.size()), ids_.push_back(static_cast<int>(t)),
                          s_.push_back(ctx_.int_const(("s." + z3_task_name(inst_.tasks[t])).c_str()));
        // A free op stays between the fixed ops of its rank it ran between (for a cool-down or warm-up
        // window: inside the window), so it never needs an order against a fixed op.
        for (int r = 0; r < inst_.ranks; ++r) {
            std::vector<int> ops = inst_.rank_tasks[r];
            std::sort(ops.begin(), ops.end(), [&](int a, int b) { return start_[a] < start_[b]; });
            int last_fixed = -1;
            for (int t : ops) {
                if (!free_[t]) {
                    last_fixed = t;
                    continue;
                }
                if (last_fixed >= 0) lo_[t] = std::max(lo_[t], start_[last_fixed] + inst_.tasks[last_fixed].duration);
            }
            int next_fixed = -1;
            for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
                if (!free_[*it]) {
                    next_fixed = *it;
                    continue;
                }
                if (next_fixed >= 0) hi_[*it] = std::min(hi_[*it], start_[next_fixed] - inst_.tasks[*it].duration);
            }
        }
        // Edges into and out of the fixed part are bounds on the free op.
        for (const auto& e : inst_.edges) {
            const Ticks need = inst_.tasks[e.from].duration + e.lag;
            if (free_[e.to] && !free_[e.from]) lo_[e.to] = std::max(lo_[e.to], start_[e.from] + need);
            if (free_[e.from] && !free_[e.to]) hi_[e.from] = std::min(hi_[e.from], start_[e.to] - need);
        }
        for (int t : ids_) {
            if (lo_[t] > hi_[t]) {
                add(ctx_.bool_val(false));
                return;
            }
            add(s(t) >= int_numeral(ctx_, lo_[t]));
            add(s(t) <= int_numeral(ctx_, hi_[t]));
        }
        for (const auto& e : inst_.edges)
            if (free_[e.from] && free_[e.to])
                add(s(e.to) - s(e.from) >= int_numeral(ctx_, inst_.tasks[e.from].duration + e.lag));
        for (int r = 0; r < inst_.ranks; ++r) add_rank(r);
        if (inst_.cap || inst_.weighted)
            for (int r = 0; r < inst_.ranks; ++r)
                if (inst_.rank_needs_cardinality[r]) inst_.weighted ? add_weighted_memory(r) : add_memory(r);
    }

    size_t variables() const { return s_.size() + orders_; }
    size_t constraints() const { return constraints_; }
    z3::solver& solver() { return solver_; }

    std::vector<Ticks> extract(const z3::model& model) const {
        std::vector<Ticks> out = start_;
        for (int t : ids_) out[t] = integer_of(model.eval(s_[var_[t]], true));
        return out;
    }

private:
    z3::expr s(int t) { return free_[t] ? s_[var_[t]] : int_numeral(ctx_, start_[t]); }

    void add(const z3::expr& e) {
        solver_.add(e);
        if (++constraints_ % 4096 == 0 && (Clock::now() > query_.deadline || query_.stopped())) throw BuildTimeout{};
    }

    // i before j or j before i, for two free ops of one rank.
    void add_pair(int i, int j) {
        const Ticks di = inst_.tasks[i].duration, dj = inst_.tasks[j].duration;
        const Task &ti = inst_.tasks[i], &tj = inst_.tasks[j];
        bool i_first = lo_[i] + di <= hi_[j], j_first = lo_[j] + dj <= hi_[i];
        if (inst_.fifo() && ti.cls == tj.cls) {  // FIFO edges order a class by micro-batch already
            return;
        }
        if (!i_first && !j_first) {
            add(ctx_.bool_val(false));
        } else if (!j_first) {
            add(s(j) - s(i) >= int_numeral(ctx_, di));
        } else if (!i_first) {
            add(s(i) - s(j) >= int_numeral(ctx_, dj));
        } else {
            z3::expr o = ctx_.bool_const(("o." + z3_task_name(ti) + "<" + z3_task_name(tj)).c_str());
            ++orders_;
            add(z3::implies(o, s(j) - s(i) >= int_numeral(ctx_, di)));
            add(z3::implies(!o, s(i) - s(j) >= int_numeral(ctx_, dj)));
        }
    }

    void add_rank(int r) {
        std::vector<int> free_ops;
        for (int t : inst_.rank_tasks[r])
            if (free_[t]) free_ops.push_back(t);
        for (size_t a = 0; a < free_ops.size(); ++a)
            for (size_t b = a + 1; b < free_ops.size(); ++b) {
                const int i = free_ops[a], j = free_ops[b];
                // windows apart: no constraint needed beyond the order they force
                if (lo_[i] + inst_.tasks[i].duration <= lo_[j] && hi_[i] + inst_.tasks[i].duration <= lo_[j]) continue;
                if (lo_[j] + inst_.tasks[j].duration <= lo_[i] && hi_[j] + inst_.tasks[j].duration <= lo_[i]) continue;
                add_pair(i, j);
            }
    }

    // Live activation a at the start of F task f (a's own F is not f): F_a started, W_a not ended.
    // Decided by the bounds when they allow only one answer.
    enum class Tri { False, True, Open };
    Tri started_before(int x, int f) const {  // s(x) <= s(f)
        if (hi_[x] <= lo_[f]) return Tri::True;
        if (lo_[x] > hi_[f]) return Tri::False;
        return Tri::Open;
    }
    Tri ends_after(int w, int f) const {  // s(w) + d(w) > s(f)
        const Ticks d = inst_.tasks[w].duration;
        if (lo_[w] + d > hi_[f]) return Tri::True;
        if (hi_[w] + d <= lo_[f]) return Tri::False;
        return Tri::Open;
    }

    void add_memory(int r) {
        const int limit = *inst_.cap;
        std::vector<const Activation*> acts;
        for (const Activation& a : inst_.activations)
            if (a.rank == r) acts.push_back(&a);
        for (const Activation* fa : acts) {
            const int f = fa->forward;
            int always = 0;
            z3::expr_vector live(ctx_);
            for (const Activation* a : acts) {
                if (a->forward == f) continue;
                const Tri x = started_before(a->forward, f), y = ends_after(a->weight, f);
                if (x == Tri::False || y == Tri::False) continue;
                if (x == Tri::True && y == Tri::True) {
                    ++always;
                    continue;
                }
                z3::expr cond = ctx_.bool_val(true);
                if (x == Tri::Open) cond = cond && s(a->forward) <= s(f);
                if (y == Tri::Open) cond = cond && s(a->weight) + int_numeral(ctx_, inst_.tasks[a->weight].duration) > s(f);
                z3::expr l = ctx_.bool_const(("live." + z3_task_name(inst_.tasks[a->forward]).substr(2) + "@" +
                                              z3_task_name(inst_.tasks[f])).c_str());
                add(z3::implies(cond, l));
                live.push_back(l);
            }
            if (always > limit - 1) {
                add(ctx_.bool_val(false));
                return;
            }
            if (static_cast<int>(live.size()) > limit - 1 - always)
                add(z3::atmost(live, static_cast<unsigned>(limit - 1 - always)));
        }
    }

    // WeightedMemory at the start of each F of rank r (as the full encodings), with what the fixed part of
    // the schedule already decides counted as constants.
    void add_weighted_memory(int r) {
        const WeightedMemory& memory = *inst_.weighted;
        std::vector<const Activation*> acts;
        for (const Activation& a : inst_.activations)
            if (a.rank == r) acts.push_back(&a);
        for (const Activation* fa : acts) {
            const int f = fa->forward;
            std::int64_t always = memory.alloc, open = 0;
            z3::expr_vector live(ctx_);
            std::vector<int> weights;
            auto held = [&](const Activation* a, int freer, std::int64_t weight, const char* part) {
                if (weight == 0) return;
                const Tri x = started_before(a->forward, f), y = ends_after(freer, f);
                if (x == Tri::False || y == Tri::False) return;
                if (x == Tri::True && y == Tri::True) {
                    always += weight;
                    return;
                }
                z3::expr cond = ctx_.bool_val(true);
                if (x == Tri::Open) cond = cond && s(a->forward) <= s(f);
                if (y == Tri::Open) cond = cond && s(freer) + int_numeral(ctx_, inst_.tasks[freer].duration) > s(f);
                z3::expr l = ctx_.bool_const(("live" + std::string(part) + "." + z3_task_name(inst_.tasks[a->forward]).substr(2) +
                                              "@" + z3_task_name(inst_.tasks[f])).c_str());
                add(z3::implies(cond, l));
                live.push_back(l);
                weights.push_back(static_cast<int>(weight));
                open += weight;
            };
            for (const Activation* a : acts) {
                if (a->forward == f) continue;
                held(a, a->weight, memory.kept, "W");
                held(a, a->input, memory.released_by_input(), "I");
            }
            if (always > memory.cap) {
                add(ctx_.bool_val(false));
                return;
            }
            if (open > std::numeric_limits<int>::max())  // Z3's pseudo-Boolean weights are ints
                throw std::overflow_error("weighted memory: more live units on a rank than the encoding counts");
            if (open > memory.cap - always) add(z3::pble(live, weights.data(), static_cast<int>(memory.cap - always)));
        }
    }

    const Instance& inst_;
    const std::vector<Ticks>& start_;
    const std::vector<bool>& free_;
    const Z3Query& query_;
    std::vector<int> var_, ids_;
    std::vector<Ticks> lo_, hi_;
    std::string infeasible_;
    z3::context ctx_;
    z3::expr_vector s_;
    z3::solver solver_;
    size_t orders_ = 0, constraints_ = 0;
};

}  // namespace

std::vector<bool> ops_from(const std::vector<Ticks>& start, Ticks from) {
    std::vector<bool> out(start.size());
    for (size_t t = 0; t < start.size(); ++t) out[t] = start[t] >= from;
    return out;
}

std::vector<bool> ops_before(const Instance& inst, const std::vector<Ticks>& start, Ticks until) {
    std::vector<bool> out(start.size());
    for (size_t t = 0; t < start.size(); ++t) out[t] = start[t] + inst.tasks[t].duration <= until;
    return out;
}

Z3Outcome solve_window(const Instance& inst, const Windows& windows, const std::vector<Ticks>& start,
                       const std::vector<bool>& free_task, const Z3Query& query) {
    const auto t0 = Clock::now();
    Z3Outcome out;
    out.engine = "window";
    if (inst.pairs_allowed()) {
        out.answer = Z3Answer::Skipped;
        out.reason = "overlapped pairs are not re-solved by windows";
        return out;
    }
    WindowEncoder enc(inst, windows, start, free_task, query);
    if (!enc.infeasible().empty()) {
        out.answer = Z3Answer::Unsat;
        out.reason = enc.infeasible();
        return out;
    }
    build_and_check(
        enc, query, t0, out,
        [&](const z3::model& m, Z3Outcome& o) {
            o.start = enc.extract(m);
            o.partner.assign(inst.size(), -1);
        },
        [](z3::params& p) { p.set("arith.solver", 1u); });
    return out;
}

}  // namespace pp
