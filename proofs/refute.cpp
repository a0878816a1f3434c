// `pipeproof refute`: claims evaluated exactly on instances and symbolically (Z3) over a cost region, the
// search for the smallest counterexample, and the periodicity proofs that close the search over every M.
#include "proofs/claim.hpp"

#include "model/dag.hpp"
#include "proofs/batched_graph.hpp"
#include "limits/z3_check.hpp"
#include "proofs/budget.hpp"
#include "proofs/prover.hpp"
#include "proofs/smt.hpp"
#include "schedules/registry.hpp"
#include "verifier/batched.hpp"
#include "verifier/memory.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <limits>
#include <numeric>
#include <map>
#include <set>

namespace pp {

// Instances and their quantities

namespace {

struct ParamFacts {
    int copies = 0, blocks_per_rank = 0;
    int stages = 0;  // DeepSeek's PP: the pipeline's model blocks
    Rational param_share{0};
};

ParamFacts param_facts(const Placement& placement) {
    ParamFacts f;
    for (int c : placement.copies_per_block()) f.copies = std::max(f.copies, c);
    const int blocks = placement.blocks();
    f.stages = blocks;
    for (int r = 0; r < placement.ranks; ++r)
        f.blocks_per_rank = std::max(f.blocks_per_rank, static_cast<int>(placement.blocks_on_rank(r).size()));
    if (blocks > 0) f.param_share = Rational(f.blocks_per_rank, blocks);
    return f;
}

struct ExactFacts {
    Rational makespan{0}, bubble{0}, bubble_fraction{0}, span{0};
    std::vector<Rational> idle, peak;
    ParamFacts params;
};

struct SymFacts {
    SymbolicTiming timing;
    std::vector<MaxPoly> first_start, last_end;
    std::vector<Rational> peak;
    ParamFacts params;
    int ranks = 0;
};

// Admissible M and instance caches for one family at one P.
class Instances {
public:
    Instances(const FamilySpec& spec, const ActivationModel& activations, TimingModel model, Rational rank_share)
        : spec_(spec), activations_(activations), model_(model), share_(rank_share) {}

    // What a claim's name reads, in the claim's units (RefuteOptions::rank_share): a cost letter is the rank's cost,
    // a peak counts rank stashes.
    bool op_cost(int var) const { return var >= 0 && var != static_cast<int>(CostVar::comm); }
    const Rational& rank_share() const { return share_; }

    bool admissible(int M) const { return M >= spec_.m0 && (M - spec_.m0) % spec_.step == 0; }

    const Schedule& schedule(int M) {
        auto it = schedules_.find(M);
        if (it == schedules_.end()) it = schedules_.emplace(M, spec_.generate(M)).first;
        return it->second;
    }

    ExactFacts exact(int M, const Costs& costs) {
        const Schedule& s = schedule(M);
        const ScheduleGraph g = build_schedule_graph(s);
        const Simulation sim = model_ == TimingModel::Batched
                                   ? simulate_model(CommModel::Batched, s, g, costs, activations_)
                                   : simulate(s, g, costs, activations_);
        ExactFacts f;
        f.makespan = sim.scale.to_units(sim.makespan);
        f.bubble = sim.scale.to_units(sim.bubble);
        f.bubble_fraction = sim.bubble_fraction;
        for (const auto& r : sim.ranks) {
            f.idle.push_back(sim.scale.to_units(r.idle));
            f.peak.push_back(r.peak_activations * share_);
            f.span = std::max(f.span, sim.scale.to_units(r.last_end - r.first_start));
        }
        f.params = param_facts(s.placement);
        return f;
    }

    const SymFacts& symbolic(int M, const CostRegion& region) {
        auto it = symbolic_.find(M);
        if (it != symbolic_.end()) return it->second;
        const Schedule& s = schedule(M);
        const ScheduleGraph g = model_ == TimingModel::Batched
                                    ? batched_timing_graph(s, batched_program(s), region.may_be_positive(CostVar::comm))
                                    : build_schedule_graph(s);
        SymFacts f;
        f.timing = symbolic_simulate(s, g, region);
        f.ranks = s.placement.ranks;
        for (int r = 0; r < f.ranks; ++r) {
            if (g.rank_begin[r + 1] > g.rank_begin[r]) {
                f.first_start.push_back(f.timing.start[g.rank_begin[r]]);
                f.last_end.push_back(f.timing.end[g.rank_begin[r + 1] - 1]);
            } else {
                f.first_start.push_back(MaxPoly::of(LinForm{}, region));
                f.last_end.push_back(MaxPoly::of(LinForm{}, region));
            }
        }
        f.peak = peak_activations(s, activations_);
        for (Rational& peak : f.peak) peak *= share_;
        f.params = param_facts(s.placement);
        return symbolic_.emplace(M, std::move(f)).first->second;
    }

    void forget(int M) {
        schedules_.erase(M);
        symbolic_.erase(M);
    }

private:
    const FamilySpec& spec_;
    ActivationModel activations_;
    TimingModel model_;
    Rational share_{1};
    std::map<int, Schedule> schedules_;
    std::map<int, SymFacts> symbolic_;
};

// M' of a call: an integer expression in P and M.
std::optional<int> integer_arg(const ClaimPtr& n, int P, int M) {
    std::function<std::optional<Rational>(const ClaimPtr&)> ev = [&](const ClaimPtr& x) -> std::optional<Rational> {
        switch (x->kind) {
            case ClaimNode::Number: return x->value;
            case ClaimNode::Name:
                if (x->name == "P") return Rational(P);
                if (x->name == "M") return Rational(M);
                throw ClaimError{"an argument may use only P, M and numbers: " + x->text, 0};
            case ClaimNode::Neg: {
                auto a = ev(x->args[0]);
                return a ? std::optional<Rational>(-*a) : std::nullopt;
            }
            case ClaimNode::Add:
            case ClaimNode::Sub:
            case ClaimNode::Mul:
            case ClaimNode::Div: {
                auto a = ev(x->args[0]), b = ev(x->args[1]);
                if (!a || !b) return std::nullopt;
                if (x->kind == ClaimNode::Add) return *a + *b;
                if (x->kind == ClaimNode::Sub) return *a - *b;
                if (x->kind == ClaimNode::Mul) return *a * *b;
                if (*b == Rational(0)) return std::nullopt;
                return *a / *b;
            }
            default: throw ClaimError{"not an integer expression: " + x->text, 0};
        }
    };
    auto v = ev(n);
    if (!v || v->denominator() != 1) return std::nullopt;
    const auto whole = v->numerator().try_int64();
    if (!whole || *whole < std::numeric_limits<int>::min() || *whole > std::numeric_limits<int>::max()) return std::nullopt;
    return static_cast<int>(*whole);
}

struct Vacuous {};  // an M' that is not admissible

// Exact evaluation.
struct CVal {
    bool is_bool = false;
    bool b = false;
    Rational r{0};
};

class ExactEvaluator {
public:
    ExactEvaluator(Instances& inst, int P, int M, const Costs& costs, std::vector<ClaimValue>* values)
        : inst_(inst), P_(P), M_(M), costs_(costs), point_(point_of(costs)), values_(values) {}

    CVal eval(const ClaimPtr& n) {
        CVal v = eval_inner(n);
        if (values_ && (n->kind == ClaimNode::Name || n->kind == ClaimNode::Call) && !v.is_bool && cost_var_index(n->name) < 0 &&
            n->name != "P" && n->name != "M")
            record(n->text, format_rational(v.r));
        return v;
    }
    void record(const std::string& text, const std::string& value) {
        for (const auto& cv : *values_)
            if (cv.text == text) return;
        values_->push_back({text, value});
    }

private:
    Instances& inst_;
    int P_, M_;
    Costs costs_;
    CostPoint point_;
    std::vector<ClaimValue>* values_;
    std::map<int, ExactFacts> facts_;

    const ExactFacts& facts(int M) {
        if (!inst_.admissible(M)) throw Vacuous{};
        auto it = facts_.find(M);
        if (it == facts_.end()) it = facts_.emplace(M, inst_.exact(M, costs_)).first;
        return it->second;
    }
    static CVal num(Rational r) { return {false, false, r}; }
    static CVal boolean(bool b) { return {true, b, Rational(0)}; }
    int rank_arg(const ClaimPtr& n) {
        auto r = integer_arg(n, P_, M_);
        if (!r || *r < 0 || *r >= P_) throw ClaimError{"rank out of range: " + n->text, 0};
        return *r;
    }
    int m_arg(const ClaimPtr& n) {
        auto m = integer_arg(n, P_, M_);
        if (!m) throw Vacuous{};
        return *m;
    }

    CVal eval_inner(const ClaimPtr& n) {
        switch (n->kind) {
            case ClaimNode::Number: return num(n->value);
            case ClaimNode::Name: {
                const int v = cost_var_index(n->name);
                if (v >= 0) return num(inst_.op_cost(v) ? point_[v] / inst_.rank_share() : point_[v]);
                if (n->name == "P") return num(Rational(P_));
                if (n->name == "M") return num(Rational(M_));
                const ExactFacts& f = facts(M_);
                if (n->name == "bubble" || n->name == "idle") return num(f.bubble);
                if (n->name == "makespan") return num(f.makespan);
                if (n->name == "span") return num(f.span);
                if (n->name == "bubble_fraction") return num(f.bubble_fraction);
                if (n->name == "peak") return num(*std::max_element(f.peak.begin(), f.peak.end()));
                if (n->name == "copies") return num(Rational(f.params.copies));
                if (n->name == "PP") return num(Rational(f.params.stages));
                if (n->name == "blocks_per_rank") return num(Rational(f.params.blocks_per_rank));
                if (n->name == "param_share") return num(f.params.param_share);
                break;
            }
            case ClaimNode::Call: {
                if (n->name == "idle") {
                    const int r = rank_arg(n->args[0]);
                    const int M = n->args.size() > 1 ? m_arg(n->args[1]) : M_;
                    return num(facts(M).idle[r]);
                }
                if (n->name == "peak") return num(facts(M_).peak[rank_arg(n->args[0])]);
                const ExactFacts& f = facts(m_arg(n->args[0]));
                if (n->name == "bubble") return num(f.bubble);
                if (n->name == "makespan") return num(f.makespan);
                if (n->name == "span") return num(f.span);
                if (n->name == "bubble_fraction") return num(f.bubble_fraction);
                break;
            }
            case ClaimNode::Neg: return num(-eval(n->args[0]).r);
            case ClaimNode::Not: return boolean(!eval(n->args[0]).b);
            case ClaimNode::And: return boolean(eval(n->args[0]).b && eval(n->args[1]).b);
            case ClaimNode::Or: return boolean(eval(n->args[0]).b || eval(n->args[1]).b);
            default: {
                const CVal a = eval(n->args[0]), b = eval(n->args[1]);
                if (values_ && n->kind >= ClaimNode::Eq && n->kind <= ClaimNode::Gt) {
                    record(n->args[0]->text, format_rational(a.r));
                    record(n->args[1]->text, format_rational(b.r));
                }
                switch (n->kind) {
                    case ClaimNode::Add: return num(a.r + b.r);
                    case ClaimNode::Sub: return num(a.r - b.r);
                    case ClaimNode::Mul: return num(a.r * b.r);
                    case ClaimNode::Div:
                        if (b.r == Rational(0)) throw ClaimError{"division by zero in " + n->text, 0};
                        return num(a.r / b.r);
                    case ClaimNode::Eq: return boolean(a.r == b.r);
                    case ClaimNode::Ne: return boolean(!(a.r == b.r));
                    case ClaimNode::Le: return boolean(a.r <= b.r);
                    case ClaimNode::Ge: return boolean(a.r >= b.r);
                    case ClaimNode::Lt: return boolean(a.r < b.r);
                    case ClaimNode::Gt: return boolean(a.r > b.r);
                    default: break;
                }
            }
        }
        throw ClaimError{"cannot evaluate " + n->text, 0};
    }
};

// Symbolic evaluation into Z3.
class SymbolicEvaluator {
public:
    SymbolicEvaluator(z3::context& ctx, Instances& inst, const CostRegion& region, int P, int M)
        : ctx_(ctx), inst_(inst), region_(region), P_(P), M_(M) {}

    z3::expr eval(const ClaimPtr& n) {
        switch (n->kind) {
            case ClaimNode::Number: return smt::rational(ctx_, n->value);
            case ClaimNode::Name: {
                const int v = cost_var_index(n->name);
                if (v >= 0)
                    return inst_.op_cost(v) ? smt::cost_var(ctx_, v) / smt::rational(ctx_, inst_.rank_share()) : smt::cost_var(ctx_, v);
                if (n->name == "P") return ctx_.real_val(P_);
                if (n->name == "M") return ctx_.real_val(M_);
                if (n->name == "bubble" || n->name == "idle") return bubble(M_);
                if (n->name == "makespan") return smt::max_of(ctx_, facts(M_).timing.makespan);
                if (n->name == "span") return span(M_);
                if (n->name == "bubble_fraction") return fraction(M_);
                if (n->name == "peak") return const_max(facts(M_).peak);
                if (n->name == "copies") return ctx_.real_val(facts(M_).params.copies);
                if (n->name == "blocks_per_rank") return ctx_.real_val(facts(M_).params.blocks_per_rank);
                if (n->name == "PP") return ctx_.real_val(facts(M_).params.stages);
                if (n->name == "param_share") return smt::rational(ctx_, facts(M_).params.param_share);
                break;
            }
            case ClaimNode::Call: {
                if (n->name == "idle") {
                    const int r = rank_arg(n->args[0]);
                    const int M = n->args.size() > 1 ? m_arg(n->args[1]) : M_;
                    return idle(M, r);
                }
                if (n->name == "peak") return smt::rational(ctx_, facts(M_).peak[rank_arg(n->args[0])]);
                const int M = m_arg(n->args[0]);
                if (n->name == "bubble") return bubble(M);
                if (n->name == "makespan") return smt::max_of(ctx_, facts(M).timing.makespan);
                if (n->name == "span") return span(M);
                if (n->name == "bubble_fraction") return fraction(M);
                break;
            }
            case ClaimNode::Neg: return -eval(n->args[0]);
            case ClaimNode::Not: return !eval(n->args[0]);
            case ClaimNode::And: return eval(n->args[0]) && eval(n->args[1]);
            case ClaimNode::Or: return eval(n->args[0]) || eval(n->args[1]);
            case ClaimNode::Add: return eval(n->args[0]) + eval(n->args[1]);
            case ClaimNode::Sub: return eval(n->args[0]) - eval(n->args[1]);
            case ClaimNode::Mul: return eval(n->args[0]) * eval(n->args[1]);
            case ClaimNode::Div: return eval(n->args[0]) / eval(n->args[1]);
            case ClaimNode::Eq: return eval(n->args[0]) == eval(n->args[1]);
            case ClaimNode::Ne: return eval(n->args[0]) != eval(n->args[1]);
            case ClaimNode::Le: return eval(n->args[0]) <= eval(n->args[1]);
            case ClaimNode::Ge: return eval(n->args[0]) >= eval(n->args[1]);
            case ClaimNode::Lt: return eval(n->args[0]) < eval(n->args[1]);
            case ClaimNode::Gt: return eval(n->args[0]) > eval(n->args[1]);
        }
        throw ClaimError{"cannot evaluate " + n->text, 0};
    }

private:
    z3::context& ctx_;
    Instances& inst_;
    const CostRegion& region_;
    int P_, M_;

    const SymFacts& facts(int M) {
        if (!inst_.admissible(M)) throw Vacuous{};
        return inst_.symbolic(M, region_);
    }
    int rank_arg(const ClaimPtr& n) {
        auto r = integer_arg(n, P_, M_);
        if (!r || *r < 0 || *r >= P_) throw ClaimError{"rank out of range: " + n->text, 0};
        return *r;
    }
    int m_arg(const ClaimPtr& n) {
        auto m = integer_arg(n, P_, M_);
        if (!m) throw Vacuous{};
        return *m;
    }
    z3::expr idle(int M, int r) {
        const SymFacts& f = facts(M);
        return smt::max_of(ctx_, f.timing.makespan) - smt::form(ctx_, f.timing.busy[r]);
    }
    z3::expr bubble(int M) {
        const SymFacts& f = facts(M);
        MaxPoly b;
        for (int r = 0; r < f.ranks; ++r) {
            MaxPoly i = f.timing.makespan;
            i.shift(LinForm{} - f.timing.busy[r], region_);
            b.merge(i);
        }
        b.prune();
        return smt::max_of(ctx_, b);
    }
    z3::expr span(int M) {
        const SymFacts& f = facts(M);
        z3::expr best = smt::max_of(ctx_, f.last_end[0]) - smt::max_of(ctx_, f.first_start[0]);
        for (int r = 1; r < f.ranks; ++r) {
            z3::expr s = smt::max_of(ctx_, f.last_end[r]) - smt::max_of(ctx_, f.first_start[r]);
            best = z3::ite(s > best, s, best);
        }
        return best;
    }
    z3::expr fraction(int M) {
        const SymFacts& f = facts(M);
        z3::expr total = ctx_.real_val(0);
        for (int r = 0; r < f.ranks; ++r) total = total + idle(M, r);
        return total / (ctx_.real_val(f.ranks) * smt::max_of(ctx_, f.timing.makespan));
    }
    z3::expr const_max(const std::vector<Rational>& v) {
        Rational best = v.empty() ? Rational(0) : v[0];
        for (const auto& x : v) best = std::max(best, x);
        return smt::rational(ctx_, best);
    }
};

// Names the claim uses, to decide whether the search over M can be closed by a periodicity proof.
void names_in(const ClaimPtr& n, std::set<std::string>& names, bool in_arg) {
    if (n->kind == ClaimNode::Name && !in_arg) names.insert(n->name);
    if (n->kind == ClaimNode::Call) {
        names.insert(n->name);
        for (size_t k = 0; k < n->args.size(); ++k) names_in(n->args[k], names, true);
        return;
    }
    for (const auto& a : n->args) names_in(a, names, in_arg);
}

// Largest |M' - M| over the calls (nullopt when some M' is not M + constant).
std::optional<int> m_offsets(const ClaimPtr& n, int P, int M0, int step) {
    int worst = 0;
    std::function<bool(const ClaimPtr&)> walk = [&](const ClaimPtr& x) {
        if (x->kind == ClaimNode::Call) {
            const bool rank_first = x->name == "idle" || x->name == "peak";
            const size_t m_index = rank_first ? 1 : 0;
            if (x->args.size() > m_index) {
                auto a = integer_arg(x->args[m_index], P, M0), b = integer_arg(x->args[m_index], P, M0 + step);
                if (!a || !b || *b - *a != step) return false;
                worst = std::max(worst, std::abs(*a - M0));
            }
            return true;
        }
        for (const auto& c : x->args)
            if (!walk(c)) return false;
        return true;
    };
    if (!walk(n)) return std::nullopt;
    return worst;
}

std::string point_text(const CostPoint& p) {
    std::string s;
    for (int i = 0; i < kCostVars; ++i) s += (i ? "," : "") + std::string(cost_var_name(i)) + "=" + format_rational(p[i]);
    return s;
}

}  // namespace

const char* refute_status_name(RefuteResult::Status status) {
    switch (status) {
        case RefuteResult::Refuted: return "refuted";
        case RefuteResult::Holds: return "holds";
        case RefuteResult::Undecided: return "undecided";
    }
    return "?";
}

std::optional<bool> evaluate_claim(const ClaimPtr& claim, const ClaimContext& context, std::vector<ClaimValue>* values) {
    Instances inst(*context.family, context.activations, context.model, context.rank_share);
    ExactEvaluator ev(inst, context.family->ranks, context.M, context.costs, values);
    try {
        return ev.eval(claim).b;
    } catch (const Vacuous&) {
        return std::nullopt;
    }
}

namespace {

struct PeriodicWindow {
    int t_periodic = 0, cycle = 1;  // in blocks of the family's M step
    std::optional<MaxPoly> bubble;   // symbolic: the proved eventual bubble, when constant
    int from_m = 0;
};

// Rank units (RefuteOptions::rank_share) to a stage's: op costs times the share, comm as it is.
CostPoint in_stage_units(CostPoint point, const Rational& share) {
    for (int i = 0; i < kCostVars; ++i)
        if (i != static_cast<int>(CostVar::comm)) point[i] *= share;
    return point;
}

CostPoint in_rank_units(CostPoint point, const Rational& share) {
    for (int i = 0; i < kCostVars; ++i)
        if (i != static_cast<int>(CostVar::comm)) point[i] /= share;
    return point;
}

// What an instance is timed at, at a grid point (RefuteOptions::point_costs).
Costs timed_costs(const RefuteOptions& options, const CostPoint& point) {
    return options.point_costs ? options.point_costs(point) : costs_at(point);
}

// The `pipeproof prove` command that re-runs one of the proofs refute relies on: the family's flags
// (prove_command), the cost setting's (RefuteOptions::prove_flags) and, at a grid point, that point's costs as
// prove reads them: a micro-batch's for sequence segments (the grid point is a segment unit's, at 1/k), a decoder
// layer's without a pair cost under --layout (RefuteOptions::point_costs; prove refuses FB there).
std::string recheck_command(const FamilySpec& spec, const RefuteOptions& options, const std::string& property,
                            const CostPoint* point) {
    std::string costs;
    if (point && options.point_costs) {
        Costs layer = costs_at(*point);
        layer.base.FB.reset();  // as point_costs does: a pair runs at its two ops' layer sums
        costs = " --costs " + format_costs(layer);
    } else if (point) {
        const CostPoint as_read = family_takes_segments(spec.name) ? in_stage_units(*point, Rational(spec.segments)) : *point;
        costs = " --costs " + costs_text(as_read);
    }
    const bool batched = property == "bubble-constant" && options.model == TimingModel::Batched;  // only timing reads it
    return prove_command(spec, property, costs + options.prove_flags + (batched ? " --model batched" : ""));
}

// The prover's periodicity result that closes the search over M: once over the symbolic region, or at
// every grid point with exact costs (the window is the latest of them, its period the lcm). `why` says what failed.
std::optional<PeriodicWindow> periodic_window(const FamilySpec& spec, const RefuteOptions& options, const CostRegion& region,
                                              const std::vector<CostPoint>& grid, std::string& why) {
    ProveOptions po;
    po.model = options.model;
    po.activations = options.activations;
    auto failed = [&](const ProofResult& pr, const CostPoint* point) {
        why = fmt::format("`{}` is {}", recheck_command(spec, options, "bubble-constant", point),
                          pr.verdict == Verdict::Refuted ? "REFUTED (the bubble is not constant in M)" : "UNKNOWN");
        return std::nullopt;
    };
    if (options.symbolic) {
        po.region = region;
        const ProofResult pr = prove(spec, po);
        if (pr.verdict != Verdict::Proved) return failed(pr, nullptr);
        return PeriodicWindow{pr.t_periodic, pr.cycle, pr.bubble_symbolic, pr.constant_from_m};
    }
    PeriodicWindow window;
    for (const CostPoint& point : grid) {
        po.costs = timed_costs(options, point);
        const ProofResult pr = prove(spec, po);
        if (pr.verdict != Verdict::Proved) return failed(pr, &point);
        window.t_periodic = std::max(window.t_periodic, pr.t_periodic);
        window.cycle = std::lcm(window.cycle, pr.cycle);
        if (window.cycle > 64) {
            why = "the idle times' periods at the grid points have no common period up to 64 blocks";
            return std::nullopt;
        }
    }
    return window;
}

// The memory proof that closes the search over M for the activation peaks: every rank's peak is the same for every
// M past the proof's origin, so the instances up to the first M past it cover every M. Returns that last block t.
// `point`: a grid point the cited command names (the peaks do not depend on costs, but prove --layout needs some),
// or none.
std::optional<int> peak_window(const FamilySpec& spec, const RefuteOptions& options, const CostPoint* point,
                               std::string& why) {
    ProveOptions po;
    po.property = Property::MemoryBound;
    po.model = options.model;
    po.activations = options.activations;
    const ProofResult pr = prove(spec, po);
    if (pr.verdict != Verdict::Proved) {
        why = fmt::format("`{}` is {}", recheck_command(spec, options, "memory-bound", point),
                          pr.verdict == Verdict::Refuted ? "REFUTED" : "UNKNOWN");
        return std::nullopt;
    }
    if (pr.peaks_from_m < spec.m0) {
        why = "internal: the memory proof names no M its peaks hold from";
        return std::nullopt;
    }
    return (pr.peaks_from_m - spec.m0 + spec.step - 1) / spec.step;  // the t of the first M >= peaks_from_m
}

// Which measured quantities a claim reads, by how they behave as M grows.
struct ClaimUses {
    std::vector<std::string> unbounded;  // M, makespan, span, bubble_fraction: no periodicity argument closes them
    bool idle = false;                   // bubble, idle: closed by the bubble-constant proof
    bool peak = false;                   // peak: closed by the memory-bound proof
};

ClaimUses claim_uses(const std::set<std::string>& names) {
    ClaimUses uses;
    for (const char* name : {"M", "makespan", "span", "bubble_fraction"})
        if (names.count(name)) uses.unbounded.emplace_back(name);
    uses.idle = names.count("bubble") || names.count("idle");
    uses.peak = names.count("peak") > 0;
    return uses;
}


// The search of refute(); fills `res` (returns as soon as a counterexample is found).
void search(RefuteResult& res, const std::string& family, const std::string& claim_text, const RefuteOptions& options) {
    const ClaimPtr claim = parse_condition(claim_text);
    CostRegion region = with_op_costs_scaled(options.region, options.rank_share);
    if (options.symbolic) region.finish();
    std::set<std::string> names;
    names_in(claim, names, false);
    const ClaimUses uses = claim_uses(names);
    std::vector<std::string> open_reasons;  // why the search over M stayed open, per P
    std::vector<CostPoint> grid = options.symbolic ? std::vector<CostPoint>{} : parse_cost_grid(options.grid);
    for (CostPoint& point : grid) point = in_stage_units(point, options.rank_share);
    // A counterexample must satisfy the assumptions it is stated under, so grid points outside the region go.
    const size_t grid_size = grid.size();
    std::erase_if(grid, [&](const CostPoint& point) { return !region.contains(point); });
    if (grid.size() < grid_size)
        res.notes.push_back(fmt::format("{} of {} grid point(s) skipped: outside the cost region", grid_size - grid.size(),
                                        grid_size));
    if (!options.symbolic && grid.empty()) throw ClaimError{"no grid point lies in the cost region", 0};
    bool all_closed = true;  // every P's M-range was covered by a periodicity proof (or given)
    std::vector<std::string> skipped;  // why each P (or its whole M range) had nothing to check
    size_t checked = 0;                // instances where the claim was evaluated (not vacuous) at least once
    for (int P = options.p_lo; P <= options.p_hi; ++P) {
        std::string why;
        const auto spec = family_spec(family, P, &why, options.stages_per_rank, options.group_size, options.segments);
        if (!spec) {
            res.notes.push_back(fmt::format("P={} skipped: {}", P, why));
            skipped.push_back(fmt::format("P={}: {}", P, why));
            continue;
        }
        // Which M to search: the admissible M of [m_first, m_last], an arithmetic progression walked lazily (a
        // range such as 1..2147483647 is not materialised; the time limit bounds the walk).
        std::int64_t m_first = spec->m0, m_last = spec->m0;
        bool closed = false;
        std::string closing;
        if (options.m_range) {
            m_first = std::max<std::int64_t>(options.m_range->first, spec->m0);
            m_first += (spec->step - (m_first - spec->m0) % spec->step) % spec->step;
            m_last = options.m_range->second;
            closed = true;
        } else {
            int t_last = options.default_steps;
            const auto offsets = m_offsets(claim, P, spec->m0, spec->step);
            std::string why;
            if (!uses.unbounded.empty()) {
                why = fmt::format("the claim uses {}, which no periodicity proof bounds as M grows",
                                  fmt::join(uses.unbounded, ", "));
            } else if (!offsets) {
                why = "an M' argument of the claim is not M + a constant";
            } else {
                int t_closed = 0;
                std::vector<std::string> by;
                const CostPoint* cited_point = options.symbolic ? nullptr : &grid[0];  // in the recheck commands
                bool ok = true;
                if (uses.idle) {
                    if (const auto window = periodic_window(*spec, options, region, grid, why)) {
                        if (window->bubble) {
                            res.bubble = window->bubble;
                            res.bubble_P = P;
                            res.bubble_from_m = window->from_m;
                            res.bubble_region = region;
                        }
                        t_closed = std::max(t_closed, window->t_periodic + window->cycle - 1);
                        const std::string command = recheck_command(*spec, options, "bubble-constant", cited_point);
                        by.push_back(fmt::format(
                            "every idle time is periodic in M from M={} with period {} {}({}{}: PROVED)",
                            spec->microbatches(window->t_periodic), window->cycle * spec->step,
                            options.symbolic ? "" : fmt::format("at each of the {} grid point(s) ", grid.size()), command,
                            grid.size() > 1 ? ", and likewise at the other points" : ""));
                    } else {
                        ok = false;
                    }
                }
                if (ok && uses.peak) {
                    std::string peak_why;
                    // The peaks do not depend on costs: the cited run names some only where prove needs them.
                    const CostPoint* peak_point = options.point_costs ? cited_point : nullptr;
                    if (const auto t = peak_window(*spec, options, peak_point, peak_why)) {
                        t_closed = std::max(t_closed, *t);
                        by.push_back(fmt::format("every rank's activation peak is the same for every M >= {} ({}: PROVED)",
                                                 spec->microbatches(*t), recheck_command(*spec, options, "memory-bound", peak_point)));
                    } else {
                        ok = false;
                        why = peak_why;
                    }
                }
                if (ok) {
                    t_last = t_closed;
                    closed = true;
                    closing = by.empty()
                                  ? fmt::format("P={}: the claim reads nothing that depends on M, so M = {} covers every M", P,
                                                spec->m0)
                                  : fmt::format("P={}: {}, so M = {}..{} covers every M", P, fmt::join(by, "; "), spec->m0,
                                                spec->microbatches(t_last));
                }
            }
            if (!closed) open_reasons.push_back(fmt::format("P={}: {}", P, why));
            m_last = spec->microbatches(t_last);
        }
        if (!closed) all_closed = false;
        if (!closing.empty()) res.notes.push_back(closing);
        if (m_first > m_last)
            skipped.push_back(fmt::format("P={}: no admissible M in {}..{} ({} needs {})", P, options.m_range->first,
                                          options.m_range->second, spec->name, spec->precondition));
        Instances inst(*spec, options.activations, options.model, options.rank_share);
        // A family that orders for its costs (v-zb) is generated for each grid point it is timed at; symbolic costs
        // keep its default order, which the notes state.
        std::vector<FamilySpec> point_specs;
        std::vector<Instances> point_insts;
        if (!spec->order_assumption.empty()) {
            if (options.symbolic) {
                if (P == options.p_lo) res.notes.push_back(spec->order_assumption);
            } else {
                point_specs.assign(grid.size(), *spec);
                for (size_t k = 0; k < grid.size(); ++k)
                    order_family_for_costs(point_specs[k], timed_costs(options, grid[k]), std::nullopt);
                for (const FamilySpec& s : point_specs) point_insts.emplace_back(s, options.activations, options.model, options.rank_share);
                if (P == options.p_lo) res.notes.push_back(point_specs.front().order_assumption);
            }
        }
        for (std::int64_t m = m_first; m <= m_last; m += spec->step) {
            const int M = static_cast<int>(m);
            budget::check(fmt::format("searching P={} M={} ({} instance(s) searched)", P, M, res.instances));
            // A limit that runs out inside the instance (timing it polls the clock) names the instance too.
            const auto where = [&](budget::Exhausted e) {
                return budget::Exhausted{e.what + fmt::format(" (searching P={} M={}, {} instance(s) searched)", P, M,
                                                              res.instances - 1)};
            };
            ++res.instances;
            std::int64_t counted_at = -1;  // `checked` counts this instance once
            auto found = [&](const CostPoint& point, Instances& inst) {
                std::vector<ClaimValue> values;
                ExactEvaluator ev(inst, P, M, timed_costs(options, point), &values);
                bool holds = true;
                try {
                    holds = ev.eval(claim).b;
                } catch (const Vacuous&) {
                    return false;
                }
                if (counted_at != M) ++checked, counted_at = M;
                if (holds) return false;
                res.status = RefuteResult::Refuted;
                res.P = P;
                res.M = M;
                res.costs = point;
                res.values = values;
                res.schedule = inst.schedule(M);
                res.schedule_costs = timed_costs(options, point);
                return true;
            };
            if (!options.symbolic) {
                for (size_t k = 0; k < grid.size(); ++k) {
                    budget::check(fmt::format("searching P={} M={} ({} cost point(s) searched)", P, M, res.cost_points));
                    ++res.cost_points;
                    Instances& at = point_insts.empty() ? inst : point_insts[k];
                    try {
                        if (found(grid[k], at)) return;
                    } catch (const budget::Exhausted& e) {
                        throw where(e);
                    }
                    if (!point_insts.empty()) at.forget(M);
                }
                inst.forget(M);
                continue;
            }
            z3::context ctx;
            z3::solver solver(ctx);
            smt::keep_ctrl_c(solver);
            smt::assert_region(solver, region);
            SymbolicEvaluator ev(ctx, inst, region, P, M);
            z3::expr claim_expr(ctx);
            try {
                claim_expr = ev.eval(claim);
            } catch (const Vacuous&) {
                continue;
            }
            ++checked, counted_at = M;
            solver.add(!claim_expr);
            ++res.solver_calls;
            auto out = smt::check(ctx, solver, "claim at P=" + std::to_string(P) + " M=" + std::to_string(M), "sat if refuted");
            if (out.result == z3::unknown) {
                res.notes.push_back(fmt::format("P={} M={}: Z3 could not decide", P, M));
                all_closed = false;
                continue;
            }
            if (out.result == z3::unsat) continue;
            // A counterexample: prefer small integer or half-integer costs.
            CostPoint point = *out.witness;
            for (int denominator : {1, 2, 4}) {
                solver.push();
                z3::expr_vector ks(ctx);
                for (int v = 0; v < kCostVars; ++v) {
                    z3::expr k = ctx.int_const(("k_" + std::string(cost_var_name(v))).c_str());
                    solver.add(smt::cost_var(ctx, v) * ctx.real_val(denominator) == z3::to_real(k));
                    solver.add(k >= 0 && k <= 12 * denominator);
                }
                ++res.solver_calls;
                const bool nice = limits::check(solver, limits::CheckLimit::within_ms(5000)) == z3::sat;
                if (nice) point = smt::point_from_model(ctx, solver.get_model());
                solver.pop();
                if (nice) break;
            }
            if (!spec->order_assumption.empty()) {
                // The family orders for its costs: Z3 searched its default order, so a counterexample counts only
                // when the order built for that point breaks the claim too.
                FamilySpec at = *spec;
                order_family_for_costs(at, timed_costs(options, point), std::nullopt);
                Instances ordered(at, options.activations, options.model, options.rank_share);
                if (found(point, ordered)) return;
                res.notes.push_back(fmt::format("P={} M={}: the default order breaks the claim at {}, the order {} builds "
                                                "for those costs does not (no counterexample)",
                                                P, M, point_text(point), spec->name));
                continue;
            }
            if (found(point, inst)) return;
            res.notes.push_back("P=" + std::to_string(P) + " M=" + std::to_string(M) + ": Z3's counterexample " +
                                point_text(point) + " did not survive the exact re-check (internal inconsistency)");
            all_closed = false;
        }
        // Symbolic costs searched one fixed order of a family whose order follows the costs: nothing holds for the
        // family beyond that order.
        if (options.symbolic && !spec->order_assumption.empty()) all_closed = false;
    }
    // Nothing checked is nothing claimed: a range whose every instance was skipped or vacuous is a usage error.
    if (checked == 0) {
        if (res.instances > 0)
            skipped.push_back(fmt::format("{} instance(s) searched, at none of which every M' the claim names is admissible",
                                          res.instances));
        throw std::invalid_argument(fmt::format("no instance to check the claim on: {}", fmt::join(skipped, "; ")));
    }
    res.status = all_closed ? RefuteResult::Holds : RefuteResult::Undecided;
    if (!all_closed && !options.m_range)
        res.notes.push_back(fmt::format("M is unbounded and the search over it stayed open ({}): the claim held on the M "
                                        "values searched",
                                        open_reasons.empty() ? "see the notes above" : fmt::format("{}", fmt::join(open_reasons, "; "))));
}

}  // namespace

RefuteResult refute(const std::string& family, const std::string& claim_text, const RefuteOptions& options) {
    RefuteResult res;
    res.family = family;
    res.claim = claim_text;
    try {
        search(res, family, claim_text, options);
    } catch (const budget::Exhausted& e) {
        // --time-limit / --memory-budget: what was searched stays reported; nothing is claimed beyond it.
        res.status = RefuteResult::Undecided;
        res.notes.push_back(e.what + "; no counterexample among the instances searched before it");
    }
    if (res.costs) res.costs = in_rank_units(*res.costs, options.rank_share);  // as the claim states them
    return res;
}

}  // namespace pp
