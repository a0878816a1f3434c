// A search certificate (`pipeproof search --certificate DIR`): a schedule and the claim that no schedule of the same
// work ends earlier than a lower bound (OPTIMAL when the bound is the schedule's own makespan).
//
// The checker takes nothing of the search's argument on trust. It reads the schedule with the shared file reader,
// lists the instance's ops itself from the placement (F, I and W of every stage and micro-batch: the search splits
// every backward), re-times the schedule with its own dataflow timing and counts its live activations. The bound it
// re-derives by its own arithmetic (longest chains and rank loads, over windows raised by same-rank loads), or else
// asks z3 and cvc5 its own SMT-LIB2 model of every schedule -- a start time per op, an order per pair of ops of one
// rank, every dependency (plus comm across ranks), the memory limit at every forward's start, and every op ending
// before the bound -- first relaxed to one rank, then whole, and requires unsat. Every schedule satisfies the model,
// except that by default each (kind, stage) runs its micro-batches in order, which loses no makespan (the exchange
// argument in docs/certificates.md; --no-fifo drops it).
#include "checker/internal.hpp"
#include "formats/input_error.hpp"
#include "formats/load.hpp"
#include "formats/native.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace pp::check {
namespace {

Rational rational_field(const nlohmann::json& j, const char* key, const std::string& file) {
    if (!j.contains(key) || !j[key].is_string())
        throw InputError(file, 0, 0, fmt::format("'{}' must be an exact number written as a string (\"14\", \"7/2\")", key));
    const auto value = parse_rational(j[key].get<std::string>());
    if (!value) throw InputError(file, 0, 0, fmt::format("'{}' is not an exact number: {}", key, j[key].get<std::string>()));
    return *value;
}

// The ops of the instance: every (pipeline, stage, micro-batch) once as F, I and W.
std::string coverage_failure(const Schedule& s) {
    std::set<std::tuple<int, int, int, int>> seen;
    for (int r = 0; r < s.placement.ranks; ++r)
        for (const Slot& slot : s.ranks[r]) {
            if (slot.count != 1) return fmt::format("rank {}: the pair {} (the certificate allows no pairs)", r, format_slot(slot));
            const Op& op = slot.ops[0];
            if (op.pipeline < 0 || op.pipeline >= s.placement.pipeline_count() || op.stage < 0 ||
                op.stage >= s.placement.pipelines[op.pipeline].stages())
                return fmt::format("rank {}: {} names a stage the placement does not have", r, format_op(op));
            if (op.kind == OpKind::B) return fmt::format("rank {}: {} is a full backward (the search splits every backward into I and W)", r, format_op(op));
            if (op.microbatch < 0 || op.microbatch >= s.placement.pipelines[op.pipeline].microbatches)
                return fmt::format("rank {}: {} names a micro-batch past the placement's", r, format_op(op));
            seen.insert({static_cast<int>(op.kind), op.pipeline, op.stage, op.microbatch});
        }
    for (int p = 0; p < s.placement.pipeline_count(); ++p)
        for (int stage = 0; stage < s.placement.pipelines[p].stages(); ++stage)
            for (int m = 0; m < s.placement.pipelines[p].microbatches; ++m)
                for (const OpKind kind : {OpKind::F, OpKind::I, OpKind::W})
                    if (!seen.count({static_cast<int>(kind), p, stage, m}))
                        return fmt::format("{} is missing", format_op(Op{kind, p, stage, m}));
    return "";
}

class Checker {
public:
    Checker(const SearchClaim& claim, const std::filesystem::path& dir, const CheckOptions& options)
        : claim_(claim), dir_(dir), options_(options) {}
    // For the tests: the checker's model of a schedule's instance, asked about `claim.lower_bound`.
    Checker(const SearchClaim& claim, const Schedule& schedule, const CheckOptions& options)
        : claim_(claim), options_(options), schedule_(schedule),
          sizes_(schedule.activation_sizes.value_or(ActivationModel{})) {}

    CheckReport run() {
        return log_.run([&] {
            log_.step("claim", [&] { return check_claim(); });
            log_.step("schedule", [&] { return check_schedule(); });
            log_.step("bound", [&] { return check_bound(); });
        });
    }

private:

    std::string check_claim() {
        if (claim_.version != 1) reject("claim", fmt::format("version {}: this checker reads version 1", claim_.version));
        if (claim_.objective != "makespan")
            reject("claim", "NOT CHECKED: objective '" + claim_.objective + "' (the checker's model bounds the makespan only)");
        if (claim_.pairs_allowed)
            reject("claim", "NOT CHECKED: the search allowed overlapped pairs, which the checker's model does not encode");
        if (claim_.lower_bound > claim_.value)
            reject("claim", fmt::format("the lower bound {} is above the schedule's value {}", format_rational(claim_.lower_bound),
                                        format_rational(claim_.value)));
        if ((claim_.status == "optimal") != (claim_.lower_bound == claim_.value))
            reject("claim", fmt::format("status '{}' with value {} and lower bound {}", claim_.status,
                                        format_rational(claim_.value), format_rational(claim_.lower_bound)));
        return fmt::format("{}: makespan {}, no schedule below {}", claim_.status, format_rational(claim_.value),
                           format_rational(claim_.lower_bound));
    }

    std::string check_schedule() {
        const std::filesystem::path file = dir_ / claim_.schedule_file;
        try {
            schedule_ = read_native(read_file(file.string()).view(), file.string());
        } catch (const InputError& e) {
            reject("schedule", fmt::format("{}: {}", e.where(), e.what()));
        }
        if (!schedule_.costs) reject("schedule", "the schedule file names no costs");
        if (schedule_.segments > 1) reject("schedule", "sequence segments are not part of the search's model");
        if (const std::string why = coverage_failure(schedule_); !why.empty()) reject("schedule", why);
        const Graph g = build_graph(schedule_, "schedule");
        if (!g.acyclic()) reject("schedule", "the order and the dependencies form a cycle (the schedule deadlocks)");
        const Timing timing = simulate(schedule_, g, *schedule_.costs, "schedule");
        if (timing.makespan != claim_.value)
            reject("schedule", fmt::format("the schedule's makespan is {}, the certificate says {}",
                                           format_rational(timing.makespan), format_rational(claim_.value)));
        sizes_ = schedule_.activation_sizes.value_or(ActivationModel{});
        std::string memory = "no memory limit";
        if (schedule_.memory_limit) {
            for (int r = 0; r < schedule_.placement.ranks; ++r)
                if (const Rational peak = live_profile(schedule_.ranks[r], sizes_).peak; peak > *schedule_.memory_limit)
                    reject("schedule", fmt::format("rank {} holds {} live activations, over the limit {}", r,
                                                   format_rational(peak), format_rational(*schedule_.memory_limit)));
            memory = fmt::format("every rank's peak within the limit {}", format_rational(*schedule_.memory_limit));
        }
        return fmt::format("every F, I and W of {} ranks x {} micro-batches once, acyclic; makespan {} by the checker's "
                           "own timing; {}",
                           schedule_.placement.ranks, schedule_.placement.total_microbatches(),
                           format_rational(timing.makespan), memory);
    }

public:  // the model, also for the tests (search_arithmetic_bound, search_model_query)
    struct Edge {
        int from, to;
        Rational lag;  // start(to) >= end(from) + lag
    };

    // The instance as the checker models it: every op, its rank and duration, the precedence edges, and the windows
    // those edges force (longest paths: head = the earliest start, tail = the work that must follow an end).
    struct Model {
        std::vector<Op> ops;
        std::vector<int> rank_of;
        std::vector<std::vector<int>> on_rank;
        std::vector<Rational> duration;
        std::vector<Edge> edges;  // dependencies (comm across ranks), and with fifo X(m-1) -> X(m) per class
        std::vector<std::pair<int, int>> fifo;
        std::vector<int> topological;
        std::vector<std::vector<const Edge*>> out;
        std::vector<Rational> head, tail;
    };

    Model build_model() const {
        const Schedule& s = schedule_;
        const Costs& costs = *s.costs;
        Model m;
        m.on_rank.resize(s.placement.ranks);
        std::map<std::tuple<int, int, int, int>, int> id;
        for (int r = 0; r < s.placement.ranks; ++r)
            for (const Slot& slot : s.ranks[r]) {
                const Op& op = slot.ops[0];
                id[{static_cast<int>(op.kind), op.pipeline, op.stage, op.microbatch}] = static_cast<int>(m.ops.size());
                m.on_rank[r].push_back(static_cast<int>(m.ops.size()));
                m.ops.push_back(op);
                m.rank_of.push_back(r);
                m.duration.push_back(costs.duration(op.kind, s.placement.block_of(op.pipeline, op.stage)));
            }
        const auto n = static_cast<int>(m.ops.size());
        auto find = [&](OpKind kind, const Op& like, int stage, int microbatch) {
            return id.at({static_cast<int>(kind), like.pipeline, stage, microbatch});
        };
        // F(s-1,m) -> F(s,m), F(last,m) -> I(last,m), I(s+1,m) -> I(s,m), I(s,m) -> W(s,m); comm across ranks.
        for (int v = 0; v < n; ++v) {
            const Op& op = m.ops[v];
            const int last = s.placement.pipelines[op.pipeline].stages() - 1;
            int u = -1;
            if (op.kind == OpKind::F && op.stage > 0) u = find(OpKind::F, op, op.stage - 1, op.microbatch);
            if (op.kind == OpKind::I)
                u = op.stage == last ? find(OpKind::F, op, op.stage, op.microbatch) : find(OpKind::I, op, op.stage + 1, op.microbatch);
            if (op.kind == OpKind::W) u = find(OpKind::I, op, op.stage, op.microbatch);
            if (u >= 0) m.edges.push_back({u, v, m.rank_of[u] != m.rank_of[v] ? costs.comm : Rational(0)});
            if (options_.fifo && op.microbatch > 0) {
                const int before = find(op.kind, op, op.stage, op.microbatch - 1);
                m.edges.push_back({before, v, Rational(0)});
                m.fifo.push_back({before, v});
            }
        }
        if (options_.fifo && s.memory_limit) add_memory_edges(m, find);
        // Longest paths (the edges are acyclic: each keeps or raises the micro-batch and, within one, follows the data).
        m.out.assign(n, {});
        std::vector<int> indegree(n, 0);
        for (const Edge& e : m.edges) m.out[e.from].push_back(&e), ++indegree[e.to];
        for (int k = 0; k < n; ++k)
            if (indegree[k] == 0) m.topological.push_back(k);
        for (size_t i = 0; i < m.topological.size(); ++i)
            for (const Edge* e : m.out[m.topological[i]])
                if (--indegree[e->to] == 0) m.topological.push_back(e->to);
        if (static_cast<int>(m.topological.size()) != n) reject("bound", "the dependencies form a cycle");
        m.head.assign(n, Rational(0));
        m.tail.assign(n, Rational(0));
        windows(m);
        return m;
    }

    // Heads and tails: longest paths of edges, raised by the same-rank loads until nothing moves. An op's ancestors
    // on its own rank all run before it, one at a time: for any a, those with head >= a take their total duration
    // after a, so start >= a + that total; likewise its descendants on its rank after its end. (Skipped past 4000
    // ops, where the ancestor sets would be large; the longest paths alone are still sound.)
    void windows(Model& m) const {
        const auto n = static_cast<int>(m.ops.size());
        auto longest_paths = [&] {
            for (const int u : m.topological)
                for (const Edge* e : m.out[u]) m.head[e->to] = std::max(m.head[e->to], m.head[u] + m.duration[u] + e->lag);
            for (auto it = m.topological.rbegin(); it != m.topological.rend(); ++it)
                for (const Edge* e : m.out[*it])
                    m.tail[*it] = std::max(m.tail[*it], e->lag + m.duration[e->to] + m.tail[e->to]);
        };
        longest_paths();
        if (n > 4000) return;
        // before[v]: v's ancestors on v's rank (bit sets over the ops).
        const size_t words = (static_cast<size_t>(n) + 63) / 64;
        std::vector<std::vector<std::uint64_t>> ancestors(n, std::vector<std::uint64_t>(words, 0));
        for (const int u : m.topological)
            for (const Edge* e : m.out[u]) {
                auto& to = ancestors[e->to];
                for (size_t w = 0; w < words; ++w) to[w] |= ancestors[u][w];
                to[static_cast<size_t>(u) / 64] |= std::uint64_t(1) << (u % 64);
            }
        auto raise = [&](std::vector<std::pair<Rational, Rational>> windows_and_durations) {  // max_a (a + load)
            std::sort(windows_and_durations.rbegin(), windows_and_durations.rend());
            Rational load{0}, best{0};
            for (const auto& [window, duration] : windows_and_durations) {
                load += duration;
                best = std::max(best, window + load);
            }
            return best;
        };
        for (int round = 0; round < 20; ++round) {
            bool moved = false;
            for (int v = 0; v < n; ++v) {
                std::vector<std::pair<Rational, Rational>> before, after;
                for (const int u : m.on_rank[m.rank_of[v]]) {
                    if (ancestors[v][static_cast<size_t>(u) / 64] >> (u % 64) & 1) before.push_back({m.head[u], m.duration[u]});
                    if (ancestors[u][static_cast<size_t>(v) / 64] >> (v % 64) & 1) after.push_back({m.tail[u], m.duration[u]});
                }
                if (const Rational h = raise(before); h > m.head[v]) m.head[v] = h, moved = true;
                if (const Rational t = raise(after); t > m.tail[v]) m.tail[v] = t, moved = true;
            }
            if (!moved) break;
            longest_paths();
        }
    }

    // On a rank that holds one stage, in micro-batch order, the memory limit C is a precedence. Right after F(m)
    // allocates, F(0..m) have allocated a each, and the I's and W's that ended are I(0..i-1) and W(0..w-1) with
    // w <= i <= m (I(m) follows F(m)); I releases r, W the rest a - r. So C >= (m+1)a - i*r - w*(a-r), which needs
    // w >= ((m+1)a - m*r - C)/(a-r) (at i = m) and i >= (m+1) - C/a (at w = i): W(w-1) and I(i-1) end before F(m)
    // starts, for the least such w and i.
    template <class Find>
    void add_memory_edges(Model& m, Find&& find) const {
        const Rational cap = *schedule_.memory_limit;
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r) {
            std::set<std::pair<int, int>> stages;
            for (const int k : m.on_rank[r]) stages.insert({m.ops[k].pipeline, m.ops[k].stage});
            if (stages.size() != 1) continue;
            const int pipeline = stages.begin()->first, stage = stages.begin()->second;  // clang 14 cannot capture a binding
            const Rational scale = sizes_.scale_of(pipeline, stage);
            const Rational a = sizes_.forward_alloc * scale, rel = sizes_.input_grad_free * scale;
            if (a <= Rational(0)) continue;
            const Op like{OpKind::F, pipeline, stage, 0};
            for (int mb = 0; mb < schedule_.placement.pipelines[pipeline].microbatches; ++mb) {
                const int f = find(OpKind::F, like, stage, mb);
                // The least count n >= x, as an int clamped to 0..mb + 2 (beyond mb + 1, F(mb) can never start).
                auto least = [&](const Rational& x) {
                    if (x <= Rational(0)) return 0;
                    if (x > Rational(mb + 1)) return mb + 2;
                    Integer n = x.numerator() / x.denominator();  // x > 0: the quotient rounds down
                    if (Rational(n) < x) n = n + Integer(1);
                    return static_cast<int>(n.to_int64());
                };
                auto add = [&](OpKind kind, int count) {
                    if (count < 1) return;
                    if (count - 1 >= mb) reject("bound", "the memory limit admits no schedule");  // not reached
                    m.edges.push_back({find(kind, like, stage, count - 1), f, Rational(0)});
                };
                add(OpKind::I, least(Rational(mb + 1) - cap / a));
                if (a > rel) add(OpKind::W, least((Rational(mb + 1) * a - Rational(mb) * rel - cap) / (a - rel)));
            }
        }
    }

    // The largest bound the checker derives by arithmetic alone, and how:
    //   the longest chain of edges, head + duration + tail of one op;
    //   per rank and thresholds a, b: the ops of the rank with head >= a and tail >= b run one at a time, after a and
    //   at least b before the end: a + their total duration + b.
    std::pair<Rational, std::string> arithmetic_bound(const Model& m) const {
        Rational best{0};
        std::string how = "nothing";
        for (size_t k = 0; k < m.ops.size(); ++k)
            if (const Rational chain = m.head[k] + m.duration[k] + m.tail[k]; chain > best) {
                best = chain;
                how = fmt::format("the longest chain of precedences{} and same-rank loads through {}: it cannot start "
                                  "before {}, takes {}, and at least {} must follow: {}",
                                  options_.fifo ? " (dependencies, micro-batch order, memory)" : " (dependencies)",
                                  format_op(m.ops[k]), format_rational(m.head[k]), format_rational(m.duration[k]),
                                  format_rational(m.tail[k]), format_rational(chain));
            }
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r) {
            std::set<Rational> distinct;
            for (const int k : m.on_rank[r]) distinct.insert(m.head[k]);
            // Every distinct head as a threshold, or 64 of them spread evenly (the least among them) on a rank of
            // many ops: fewer thresholds give a weaker bound, never a wrong one, and keep this n log n per threshold.
            std::vector<Rational> heads(distinct.begin(), distinct.end());
            if (heads.size() > 64 && m.on_rank[r].size() > 2000) {
                std::vector<Rational> spread;
                for (size_t i = 0; i < 64; ++i) spread.push_back(heads[i * heads.size() / 64]);
                heads = std::move(spread);
            }
            for (const Rational& a : heads) {
                std::vector<std::pair<Rational, Rational>> late;  // (tail, duration) of the ops with head >= a
                for (const int k : m.on_rank[r])
                    if (m.head[k] >= a) late.push_back({m.tail[k], m.duration[k]});
                std::sort(late.rbegin(), late.rend());
                Rational load{0};
                for (size_t i = 0; i < late.size(); ++i) {
                    load += late[i].second;
                    const Rational& b = late[i].first;  // every op so far has tail >= b
                    if (a + load + b > best) {
                        best = a + load + b;
                        how = fmt::format("rank {}: its {} ops that cannot start before {} and need at least {} after them "
                                          "take {} one at a time: {}",
                                          r, i + 1, format_rational(a), format_rational(b), format_rational(load),
                                          format_rational(best));
                    }
                }
            }
        }
        return {best, how};
    }

    // The delays between ops of one rank through every path of edges (through other ranks too): start(b) >= end(a) +
    // delay, for the pairs a path joins.
    std::vector<Edge> rank_delays(const Model& m, int rank) const {
        std::vector<Edge> out;
        const auto n = static_cast<int>(m.ops.size());
        std::vector<int> position(n, 0);
        for (int i = 0; i < n; ++i) position[m.topological[i]] = i;
        for (const int a : m.on_rank[rank]) {
            // dist[x]: the least time from a's end to x's start, over the paths a -> ... -> x.
            std::vector<std::optional<Rational>> dist(n);
            for (const Edge* e : m.out[a]) dist[e->to] = std::max(dist[e->to].value_or(e->lag), e->lag);
            for (int i = position[a] + 1; i < n; ++i) {
                const int x = m.topological[i];
                if (!dist[x]) continue;
                for (const Edge* e : m.out[x]) {
                    const Rational via = *dist[x] + m.duration[x] + e->lag;
                    if (!dist[e->to] || via > *dist[e->to]) dist[e->to] = via;
                }
            }
            for (const int b : m.on_rank[rank])
                if (b != a && dist[b]) out.push_back({a, b, *dist[b]});
        }
        return out;
    }

    // Every schedule ending before the bound, as SMT-LIB2 (expected unsat): the whole model, or the relaxation to one
    // rank's ops -- their windows and the delays between them through the other ranks, which every schedule obeys.
    std::string query(const Model& m, std::optional<int> only_rank) const {
        const auto n = static_cast<int>(m.ops.size());
        auto in = [&](int k) { return !only_rank || m.rank_of[k] == *only_rank; };
        auto end = [&](int k) { return fmt::format("(+ s{} {})", k, rational_text(m.duration[k])); };
        std::string q = "; pipeproof-check: no schedule of these ops ends before the bound (expected: unsat)\n(set-logic QF_LRA)\n";
        for (int k = 0; k < n; ++k)
            if (in(k)) {
                q += fmt::format("(declare-const s{} Real) ; {}\n(assert (>= s{} {}))\n", k, format_op(m.ops[k]), k, rational_text(m.head[k]));
                q += fmt::format("(assert (< (+ {} {}) {}))\n", end(k), rational_text(m.tail[k]), rational_text(claim_.lower_bound));
            }
        const std::vector<Edge> edges = only_rank ? rank_delays(m, *only_rank) : m.edges;
        for (const Edge& e : edges) q += fmt::format("(assert (>= s{} (+ {} {})))\n", e.to, end(e.from), rational_text(e.lag));
        auto before = [&](int a, int b) { return a < b ? fmt::format("o{}_{}", a, b) : fmt::format("(not o{}_{})", b, a); };
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r) {
            if (only_rank && r != *only_rank) continue;
            const auto& rank = m.on_rank[r];
            for (size_t i = 0; i < rank.size(); ++i)
                for (size_t j = i + 1; j < rank.size(); ++j) {
                    const int a = rank[i], b = rank[j];
                    q += fmt::format("(declare-const o{}_{} Bool)\n(assert (=> o{}_{} (<= {} s{})))\n(assert (=> (not o{}_{}) (<= {} s{})))\n",
                                     a, b, a, b, end(a), b, a, b, end(b), a);
                }
            // Memory, right after each forward's allocation: the stashes allocated before it (and its own) less what
            // the I's and W's before it released.
            if (!schedule_.memory_limit) continue;
            for (const int f : rank) {
                if (m.ops[f].kind != OpKind::F) continue;
                std::string sum = rational_text(sizes_.forward_alloc * sizes_.scale_of(m.ops[f].pipeline, m.ops[f].stage));
                for (const int x : rank) {
                    if (x == f) continue;
                    const Rational scale = sizes_.scale_of(m.ops[x].pipeline, m.ops[x].stage);
                    const Rational delta = m.ops[x].kind == OpKind::F   ? sizes_.forward_alloc * scale
                                           : m.ops[x].kind == OpKind::I ? -(sizes_.input_grad_free * scale)
                                                                        : -((sizes_.forward_alloc - sizes_.input_grad_free) * scale);
                    if (delta != Rational(0)) sum += fmt::format(" (ite {} {} 0.0)", before(x, f), rational_text(delta));
                }
                q += fmt::format("(assert (<= (+ {}) {}))\n", sum, rational_text(*schedule_.memory_limit));
            }
        }
        for (const auto& [a, b] : m.fifo)
            if (in(a) && in(b)) q += fmt::format("(assert {}) ; micro-batch order\n", before(a, b));
        // Orders the edges force (a path from a to b: a runs first), and the windows force (b cannot run before a and
        // both still end before the bound) -- consequences of the constraints above, stated so that they propagate.
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r) {
            if (only_rank && r != *only_rank) continue;
            std::set<std::pair<int, int>> forced;
            for (const Edge& e : only_rank ? edges : rank_delays(m, r)) forced.insert({e.from, e.to});
            const auto& rank = m.on_rank[r];
            for (size_t i = 0; i < rank.size(); ++i)
                for (size_t j = i + 1; j < rank.size(); ++j) {
                    const int a = rank[i], b = rank[j];
                    auto cannot_precede = [&](int x, int y) {  // x before y leaves no room within the bound
                        return m.head[x] + m.duration[x] + m.duration[y] + m.tail[y] >= claim_.lower_bound;
                    };
                    if (forced.count({a, b}) || cannot_precede(b, a)) q += fmt::format("(assert {})\n", before(a, b));
                    else if (forced.count({b, a}) || cannot_precede(a, b)) q += fmt::format("(assert {})\n", before(b, a));
                }
        }
        q += "(check-sat)\n";
        return q;
    }

private:
    // Both solvers on one query; "" when either does not answer unsat, else what they said.
    std::string both_unsat(const std::string& text, double seconds) const {
        static std::atomic<int> counter{0};
        const auto file = std::filesystem::temp_directory_path() / fmt::format("pipeproof-check-{}-search-{}.smt2", getpid(), counter++);
        {
            std::ofstream out(file);
            out << text;
            if (!out) reject("bound", "cannot write " + file.string());
        }
        std::string said, failure;
        try {
            CheckOptions options = options_;
            options.solver_seconds = seconds;
            said = require_unsat("bound", file, 1, options);
        } catch (const Rejected& r) {
            failure = r.reason;
        }
        std::filesystem::remove(file);
        last_failure_ = failure;
        return said;
    }

    // Order pairs of one rank's ops in a query, whole (nullopt) or relaxed to one rank.
    static std::size_t order_pairs(const Model& m, std::optional<int> only_rank) {
        std::size_t pairs = 0;
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r)
            if (!only_rank || r == *only_rank) pairs += m.on_rank[r].size() * (m.on_rank[r].size() - (m.on_rank[r].empty() ? 0 : 1)) / 2;
        return pairs;
    }
    // A query past this many order pairs is not written (its text would run to hundreds of MB): NOT CHECKED.
    static constexpr std::size_t kMaxOrderPairs = 400000;
    // A relaxation's delays walk every op once per op of the rank: past this many steps it is skipped.
    static constexpr std::size_t kMaxDelayWork = 20000000;

    std::string check_bound() {
        const Model m = build_model();
        const std::string model = fmt::format("every order on every rank, the dependencies, comm across ranks{}{}",
                                              schedule_.memory_limit ? ", the memory limit at every forward" : "",
                                              options_.fifo ? ", each (kind, stage) in micro-batch order" : "");
        if (const auto [value, how] = arithmetic_bound(m); value >= claim_.lower_bound)
            return fmt::format("re-derived by the checker's arithmetic, no solver needed: {} >= {}", how,
                               format_rational(claim_.lower_bound));
        // The one-rank relaxations first (at most 10 s each), the rank with the most forced work first: any one unsat
        // settles it.
        const double relaxation_seconds = std::min(options_.solver_seconds, 10.0);
        std::vector<std::pair<Rational, int>> ranks;
        for (int r = 0; r < static_cast<int>(m.on_rank.size()); ++r) {
            Rational first_head{-1}, least_tail{-1}, load{0};
            for (const int k : m.on_rank[r]) {
                load += m.duration[k];
                if (first_head < Rational(0) || m.head[k] < first_head) first_head = m.head[k];
                if (least_tail < Rational(0) || m.tail[k] < least_tail) least_tail = m.tail[k];
            }
            if (!m.on_rank[r].empty()) ranks.push_back({first_head + load + least_tail, r});
        }
        std::sort(ranks.rbegin(), ranks.rend());
        for (const auto& [forced, r] : ranks)
            if (order_pairs(m, r) > kMaxOrderPairs || m.on_rank[r].size() * m.ops.size() > kMaxDelayWork) continue;
            else if (const std::string said = both_unsat(query(m, r), relaxation_seconds); !said.empty())
                return fmt::format("the checker's own model ({}) relaxed to rank {}'s ops (their windows, and the delays "
                                   "between them through the other ranks) has no schedule ending before {}: {}",
                                   model, r, format_rational(claim_.lower_bound), said);
        if (const std::size_t pairs = order_pairs(m, std::nullopt);
            pairs > kMaxOrderPairs || m.ops.size() * m.ops.size() > kMaxDelayWork)
            reject("bound", fmt::format("NOT CHECKED: the checker's arithmetic does not reach {}, and its whole model "
                                        "is too large to write ({} ops, {} order pairs; no one-rank relaxation was "
                                        "unsat)",
                                        format_rational(claim_.lower_bound), m.ops.size(), pairs));
        const std::string said = both_unsat(query(m, std::nullopt), options_.solver_seconds);
        if (said.empty()) reject("bound", last_failure_ + " (the whole model; no one-rank relaxation was unsat either)");
        return fmt::format("the checker's own model ({}) has no schedule ending before {}: {}", model,
                           format_rational(claim_.lower_bound), said);
    }

    const SearchClaim& claim_;
    std::filesystem::path dir_;
    CheckOptions options_;
    Schedule schedule_;
    ActivationModel sizes_;
    StepLog log_;
    mutable std::string last_failure_;
};

}  // namespace

Rational search_arithmetic_bound(const Schedule& schedule, const CheckOptions& options) {
    SearchClaim claim;
    const Checker checker(claim, schedule, options);
    return checker.arithmetic_bound(checker.build_model()).first;
}

std::string search_model_query(const Schedule& schedule, const Rational& bound, const CheckOptions& options,
                               std::optional<int> only_rank) {
    SearchClaim claim;
    claim.lower_bound = bound;
    const Checker checker(claim, schedule, options);
    return checker.query(checker.build_model(), only_rank);
}

bool is_search_certificate(const std::filesystem::path& dir) { return std::filesystem::exists(dir / "search.json"); }

SearchClaim read_search_claim(const std::filesystem::path& dir) {
    const std::filesystem::path path = dir / "search.json";
    const std::string file = path.string();
    const FileText text = read_file(file);  // InputError when unreadable
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.view());
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, 0, 0, std::string("not JSON: ") + e.what());
    }
    // Found by fuzz_search_certificate: j.value("format", "") throws when "format" is not a string.
    if (!j.is_object() || !j.contains("format") || j["format"] != "pipeproof search certificate")
        throw InputError(file, 0, 0, "expected \"format\": \"pipeproof search certificate\"");
    SearchClaim c;
    try {
        // Only an integer: a float past int would be undefined behaviour in the conversion.
        const nlohmann::json& version = j.at("version");
        if (!version.is_number_integer() || version.get<long long>() < 0 || version.get<long long>() > 1000000)
            throw InputError(file, 0, 0, "'version' must be a small non-negative integer");
        c.version = static_cast<int>(version.get<long long>());
        c.status = j.at("status").get<std::string>();
        c.objective = j.at("objective").get<std::string>();
        c.schedule_file = j.at("schedule").get<std::string>();
        c.pairs_allowed = j.at("pairs_allowed").get<bool>();
        c.placement_name = j.value("placement", "");
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, 0, 0, std::string("a field is missing or of the wrong type: ") + e.what());
    }
    if (c.schedule_file.empty() || c.schedule_file.find('/') != std::string::npos)
        throw InputError(file, 0, 0, "'schedule' must name a file in the certificate's directory");
    c.value = rational_field(j, "value", file);
    c.lower_bound = rational_field(j, "lower_bound", file);
    return c;
}

CheckReport check_search_certificate(const SearchClaim& claim, const std::filesystem::path& dir, const CheckOptions& options) {
    return Checker(claim, dir, options).run();
}

std::string verified_search_claim(const SearchClaim& claim, const CheckOptions& options) {
    return fmt::format("no schedule of this placement's F, I and W ops (one at a time per rank, the dependencies, comm "
                       "across ranks, the memory limit{}) has a makespan below {}; the schedule's makespan is {}{}",
                       options.fifo ? "; among the schedules that run each (kind, stage) in micro-batch order, which "
                                      "loses nothing for identical micro-batches: docs/certificates.md"
                                    : "",
                       format_rational(claim.lower_bound), format_rational(claim.value),
                       claim.lower_bound == claim.value ? " (optimal)" : "");
}

}  // namespace pp::check
