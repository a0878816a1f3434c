#include "solver/periodic.hpp"

#include "limits/z3_check.hpp"
#include "solver/z3_encoding.hpp"

#include <z3++.h>

#include <algorithm>
#include <limits>
#include <map>

namespace pp {
namespace {

Ticks floor_div(const Ticks& a, const Ticks& b) { return a >= Ticks(0) ? a / b : -((-a + b - Ticks(1)) / b); }
Ticks mod(const Ticks& a, const Ticks& b) { return a - floor_div(a, b) * b; }

std::string class_text(const PeriodicClass& c) {
    std::string s = std::string(1, kind_letter(c.op.kind)) + std::to_string(c.op.stage);
    if (c.op.pipeline > 0) s += "@" + std::to_string(c.op.pipeline);
    return s;
}

}  // namespace

PeriodicModel periodic_model(const Instance& inst) {
    PeriodicModel m;
    std::vector<int> cls_of(inst.size(), -1);
    for (size_t t = 0; t < inst.size(); ++t) {
        const Task& task = inst.tasks[t];
        if (task.op.microbatch != 0) continue;
        cls_of[t] = static_cast<int>(m.classes.size());
        m.classes.push_back({task.op, task.rank, task.duration, static_cast<int>(t)});
    }
    for (const auto& e : inst.edges)
        if (e.why == Why::Dependency && cls_of[e.from] >= 0 && cls_of[e.to] >= 0)
            m.edges.push_back({cls_of[e.from], cls_of[e.to], e.lag});
    for (const Activation& a : inst.activations)
        if (cls_of[a.forward] >= 0) m.stashes.push_back({cls_of[a.forward], cls_of[a.weight]});

    // Least time from the start of each stash's F to the end of its W: longest path over the
    // dependency edges (micro-batch 0 is a DAG; relax until stable).
    const size_t n = m.classes.size();
    std::vector<Ticks> load(inst.ranks, 0), lens(inst.ranks, 0);
    for (const auto& c : m.classes) load[c.rank] += c.duration;
    for (const auto& [f, w] : m.stashes) {
        std::vector<Ticks> dist(n, -1);
        dist[f] = 0;
        for (size_t round = 0; round < n; ++round) {
            bool changed = false;
            for (const auto& e : m.edges)
                if (dist[e.from] >= 0 && dist[e.from] + m.classes[e.from].duration + e.lag > dist[e.to])
                    dist[e.to] = dist[e.from] + m.classes[e.from].duration + e.lag, changed = true;
            if (!changed) break;
        }
        lens[m.classes[f].rank] += dist[w] + m.classes[w].duration;
    }
    m.bound = Rational(0);
    for (int r = 0; r < inst.ranks; ++r) {
        if (Rational(load[r]) > m.bound) {
            m.bound = Rational(load[r]);
            m.bound_argument = "rank " + std::to_string(r) + " runs " + to_string(load[r]) +
                               " of work per micro-batch (of every pipeline)";
        }
        if (inst.cap && Rational(lens[r], *inst.cap) > m.bound) {
            m.bound = Rational(lens[r], *inst.cap);
            m.bound_argument = "rank " + std::to_string(r) + ": its stashes of one micro-batch live at least " +
                               to_string(lens[r]) + " in total (start of F to end of W along the dependencies) and at most " +
                               std::to_string(*inst.cap) + " live at once, so a micro-batch takes at least " +
                               format_rational(m.bound) + " per rank on average (Little's law)";
        }
    }
    return m;
}

namespace {

// Is there a block of period T? Fills block.offset on success.
z3::check_result block_at(const Instance& inst, const PeriodicModel& m, Ticks T, std::chrono::steady_clock::time_point deadline,
                          const std::vector<Ticks>* heads, int anchor, int slack, const std::atomic<bool>* stop,
                          std::vector<Ticks>& offset) {
    const limits::CheckLimit limit{limits::Deadline::at(deadline), stop};
    if (limit.expired()) return z3::unknown;
    z3::context ctx;
    z3::solver solver(ctx);
    const size_t n = m.classes.size();
    auto num = [&](Ticks v) { return int_numeral(ctx, v); };
    z3::expr_vector phi(ctx);
    for (size_t c = 0; c < n; ++c) {
        if (m.classes[c].duration > T) return z3::unsat;
        phi.push_back(ctx.int_const(("phi" + std::to_string(c)).c_str()));
        solver.add(phi[c] >= 0);
        if (heads) solver.add(phi[c] >= int_numeral(ctx, (*heads)[m.classes[c].task]));
        if (heads && slack >= 0) solver.add(phi[c] <= int_numeral(ctx, (*heads)[m.classes[c].task] + Ticks(slack) * T));
    }
    if (anchor >= 0) solver.add(phi[anchor] == int_numeral(ctx, (*heads)[m.classes[anchor].task]));
    for (const auto& e : m.edges) solver.add(phi[e.to] - phi[e.from] >= num(m.classes[e.from].duration + e.lag));
    int fresh = 0;
    auto integer = [&] { return ctx.int_const(("k" + std::to_string(fresh++)).c_str()); };
    for (size_t a = 0; a < n; ++a)
        for (size_t b = a + 1; b < n; ++b) {
            if (m.classes[a].rank != m.classes[b].rank) continue;
            const z3::expr k = integer();
            const z3::expr u = phi[b] - phi[a] - k * num(T);
            solver.add(u >= num(m.classes[a].duration) && u <= num(T - m.classes[b].duration));
        }
    if (inst.cap) {
        for (int r = 0; r < inst.ranks; ++r) {
            std::vector<size_t> mine;
            for (size_t s = 0; s < m.stashes.size(); ++s)
                if (m.classes[m.stashes[s].first].rank == r) mine.push_back(s);
            if (mine.empty()) continue;
            std::vector<z3::expr> q, rho;
            z3::expr base = ctx.int_val(0);
            for (size_t s : mine) {
                const auto [f, w] = m.stashes[s];
                q.push_back(integer());
                rho.push_back(integer());
                solver.add(q.back() >= 0 && rho.back() >= 0 && rho.back() <= num(T - 1));
                solver.add(phi[w] + num(m.classes[w].duration) - phi[f] == q.back() * num(T) + rho.back());
                base = base + q.back();
            }
            solver.add(base <= *inst.cap);
            for (size_t i = 0; i < mine.size(); ++i) {
                z3::expr count = base;
                for (size_t j = 0; j < mine.size(); ++j) {
                    if (i == j) {
                        count = count + z3::ite(rho[j] > 0, ctx.int_val(1), ctx.int_val(0));
                        continue;
                    }
                    const z3::expr k = integer();
                    const z3::expr u = phi[m.stashes[mine[i]].first] - phi[m.stashes[mine[j]].first] - k * num(T);
                    solver.add(u >= 0 && u <= num(T - 1));
                    count = count + z3::ite(u < rho[j], ctx.int_val(1), ctx.int_val(0));
                }
                solver.add(count <= *inst.cap);
            }
        }
    }
    const z3::check_result r = limits::check(solver, limit);
    if (r == z3::sat) {
        const z3::model model = solver.get_model();
        offset.resize(n);
        for (size_t c = 0; c < n; ++c) offset[c] = integer_of(model.eval(phi[c], true));
        if (!heads) {
            const Ticks least = *std::min_element(offset.begin(), offset.end());
            for (Ticks& o : offset) o -= least;
        }
    }
    return r;
}

// Live peak per rank from the offsets (the same formula as the memory constraint of block_at).
std::vector<int> live_peaks(const Instance& inst, const PeriodicModel& m, const PeriodicBlock& block) {
    std::vector<int> peak(inst.ranks, 0);
    for (int r = 0; r < inst.ranks; ++r) {
        Ticks base = 0;
        std::vector<std::pair<Ticks, Ticks>> arcs;  // (start mod T, rho)
        for (const auto& [f, w] : m.stashes) {
            if (m.classes[f].rank != r) continue;
            const Ticks D = block.offset[w] + m.classes[w].duration - block.offset[f];
            base += floor_div(D, block.period);
            arcs.push_back({mod(block.offset[f], block.period), mod(D, block.period)});
        }
        Ticks most = 0;
        for (const auto& [x, unused] : arcs) {
            Ticks count = 0;
            for (const auto& [s, rho] : arcs)
                if (mod(x - s, block.period) < rho) ++count;
            most = std::max(most, count);
        }
        const Ticks live = base + most;  // a read-off block may claim any count: clamp, never wrap
        peak[r] = live > Ticks(std::numeric_limits<int>::max()) ? std::numeric_limits<int>::max()
                                                                 : static_cast<int>(live.to_int64());
    }
    return peak;
}

PeriodicBlock unsupported_block() {
    PeriodicBlock block;
    block.reason = "overlapped pairs are not modelled by the periodic search";
    return block;
}

// A block with the model's classes and throughput bound, no offsets yet.
PeriodicBlock block_frame(const PeriodicModel& m) {
    PeriodicBlock block;
    block.classes = m.classes;
    block.bound = m.bound;
    block.bound_argument = m.bound_argument;
    return block;
}

}  // namespace

PeriodicBlock find_periodic_block(const Instance& inst, std::chrono::steady_clock::time_point deadline, int max_periods,
                                  const std::vector<Ticks>* heads, int anchor_rank, const std::atomic<bool>* stop) {
    if (inst.pairs_allowed()) return unsupported_block();
    const PeriodicModel m = periodic_model(inst);
    PeriodicBlock block = block_frame(m);
    const Ticks first = (m.bound.numerator() + m.bound.denominator() - 1) / m.bound.denominator();
    int anchor = -1;
    if (heads && anchor_rank >= 0)
        for (size_t c = 0; c < m.classes.size(); ++c)
            if (m.classes[c].rank == anchor_rank &&
                (anchor < 0 || (*heads)[m.classes[c].task] < (*heads)[m.classes[anchor].task]))
                anchor = static_cast<int>(c);
    for (Ticks T = first; T < first + Ticks(max_periods); ++T) {
        ++block.periods_tried;
        // Offsets within `slack` periods of their heads first (1, 2, 4, 8), then unbounded: the earliest
        // blocks have the shortest round trips, so repeating them gives short warm-ups and cool-downs.
        // Each attempt but the last gets a quarter of the time left; one that runs out says nothing.
        z3::check_result r = z3::unsat;
        bool undecided = false;
        for (int slack : {1, 2, 4, 8, -1}) {
            if (!heads && slack >= 0) continue;
            const auto now = std::chrono::steady_clock::now();
            const auto until = slack < 0 || deadline <= now ? deadline : now + (deadline - now) / 4;
            r = anchor >= 0 ? block_at(inst, m, T, until, heads, anchor, slack, stop, block.offset) : z3::unsat;
            if (r == z3::sat) block.anchored_rank = anchor_rank;
            if (r != z3::sat) {
                undecided = undecided || r == z3::unknown;
                r = block_at(inst, m, T, until, heads, -1, slack, stop, block.offset);
            }
            if (r == z3::sat) break;
            undecided = undecided || r == z3::unknown;
        }
        if (r != z3::sat && undecided) r = z3::unknown;
        if (r == z3::sat) {
            block.found = true;
            block.period = T;
            break;
        }
        if (r == z3::unknown) {
            block.reason = (stop && stop->load()) || limits::stop_requested() ? "stopped" : "time limit reached at period " + to_string(T);
            return block;
        }
    }
    if (!block.found) {
        block.reason = "no block up to period " + to_string(first + Ticks(max_periods - 1));
        return block;
    }
    block.live_peak = live_peaks(inst, m, block);
    return block;
}

PeriodicBlock block_from_starts(const Instance& inst, const std::vector<Ticks>& start, const std::vector<Ticks>* heads) {
    if (inst.pairs_allowed()) return unsupported_block();
    const PeriodicModel m = periodic_model(inst);
    PeriodicBlock block = block_frame(m);
    int M = std::numeric_limits<int>::max();  // per pipeline: a period runs one micro-batch of each
    for (const Pipeline& line : inst.problem.placement.pipelines) M = std::min(M, line.microbatches);
    const int m0 = M / 2;
    if (M < 3 || start.size() != inst.size()) {
        block.reason = "too few micro-batches to read a steady state off";
        return block;
    }
    std::map<std::pair<int, int>, Ticks> start_of;  // (class id, micro-batch) -> start, for m0 - 1 .. m0 + 1
    for (size_t t = 0; t < inst.size(); ++t) {
        const int mb = inst.tasks[t].op.microbatch;
        if (mb >= m0 - 1 && mb <= m0 + 1) start_of[{inst.tasks[t].cls, mb}] = start[t];
    }
    Ticks T = -1;
    block.offset.resize(m.classes.size());
    for (size_t c = 0; c < m.classes.size(); ++c) {
        const int cls = inst.tasks[m.classes[c].task].cls;
        const Ticks before = start_of.at({cls, m0 - 1}), here = start_of.at({cls, m0}), after = start_of.at({cls, m0 + 1});
        if (T < Ticks(0)) T = here - before;
        if (here - before != T || after - here != T || T <= Ticks(0)) {
            block.reason = "micro-batches " + std::to_string(m0 - 1) + ".." + std::to_string(m0 + 1) + " of " +
                           class_text(m.classes[c]) + " are not spaced like the others";
            return block;
        }
        block.offset[c] = here - Ticks(m0) * T;
    }
    Ticks shift = -*std::min_element(block.offset.begin(), block.offset.end());
    if (heads)
        for (size_t c = 0; c < m.classes.size(); ++c)
            shift = std::max(shift, (*heads)[m.classes[c].task] - block.offset[c]);
    for (Ticks& o : block.offset) o += shift;
    block.found = true;
    block.period = T;
    block.live_peak = live_peaks(inst, m, block);
    return block;
}

std::vector<Ticks> periodic_starts(const Instance& inst, const PeriodicBlock& block) {
    std::map<int, size_t> class_of_cls;  // the instance's class id -> block class
    for (size_t c = 0; c < block.classes.size(); ++c) class_of_cls[inst.tasks[block.classes[c].task].cls] = c;
    std::vector<Ticks> start(inst.size());
    for (size_t t = 0; t < inst.size(); ++t) {
        const size_t c = class_of_cls.at(inst.tasks[t].cls);
        start[t] = Ticks(inst.tasks[t].op.microbatch) * block.period + block.offset[c];
    }
    return start;
}

std::string check_periodic_block(const Instance& inst, const PeriodicBlock& block, int periods) {
    const PeriodicModel m = periodic_model(inst);
    const Ticks T = block.period;
    struct Op2 { Ticks start, end; int cls; int mb; };
    std::vector<std::vector<Op2>> by_rank(inst.ranks);
    for (int mb = 0; mb < periods; ++mb)
        for (size_t c = 0; c < m.classes.size(); ++c)
            by_rank[m.classes[c].rank].push_back(
                {Ticks(mb) * T + block.offset[c], Ticks(mb) * T + block.offset[c] + m.classes[c].duration, static_cast<int>(c), mb});
    for (int r = 0; r < inst.ranks; ++r) {
        auto& ops = by_rank[r];
        std::sort(ops.begin(), ops.end(), [](const Op2& a, const Op2& b) { return a.start < b.start; });
        for (size_t k = 1; k < ops.size(); ++k)
            if (ops[k].start < ops[k - 1].end)
                return "rank " + std::to_string(r) + ": " + class_text(m.classes[ops[k - 1].cls]) + " of micro-batch " +
                       std::to_string(ops[k - 1].mb) + " overlaps " + class_text(m.classes[ops[k].cls]);
    }
    for (const auto& e : m.edges)
        if (block.offset[e.to] < block.offset[e.from] + m.classes[e.from].duration + e.lag)
            return class_text(m.classes[e.to]) + " starts before " + class_text(m.classes[e.from]) + " has arrived";
    if (inst.cap) {
        // live activations at every op start within the middle period (full overlap of earlier periods)
        const Ticks from = Ticks(periods / 2) * T, to = from + T;
        for (int r = 0; r < inst.ranks; ++r) {
            std::vector<std::pair<Ticks, Ticks>> live;  // [start F, end W)
            for (int mb = 0; mb < periods; ++mb)
                for (const auto& [f, w] : m.stashes)
                    if (m.classes[f].rank == r)
                        live.push_back({Ticks(mb) * T + block.offset[f], Ticks(mb) * T + block.offset[w] + m.classes[w].duration});
            for (const auto& [t, unused] : live) {
                if (t < from || t >= to) continue;
                int count = 0;
                for (const auto& [a, b] : live) count += a <= t && t < b;
                if (count > *inst.cap)
                    return "rank " + std::to_string(r) + " holds " + std::to_string(count) + " activations at " +
                           to_string(t) + ", above the cap " + std::to_string(*inst.cap);
            }
        }
    }
    return "";
}

std::string periodic_word(const PeriodicBlock& block, int ranks) {
    std::string out;
    for (int r = 0; r < ranks; ++r) {
        std::vector<size_t> mine;
        for (size_t c = 0; c < block.classes.size(); ++c)
            if (block.classes[c].rank == r) mine.push_back(c);
        std::sort(mine.begin(), mine.end(), [&](size_t a, size_t b) {
            return mod(block.offset[a], block.period) < mod(block.offset[b], block.period);
        });
        out += "rank " + std::to_string(r) + ":";
        for (size_t c : mine) {
            // in period k the class runs micro-batch k - floor(phi / T), at phi mod T
            out += " " + class_text(block.classes[c]) + "(m-" + to_string(floor_div(block.offset[c], block.period)) +
                   ")@" + to_string(mod(block.offset[c], block.period));
        }
        out += "\n";
    }
    return out;
}

}  // namespace pp
