#include "verifier/verify.hpp"

#include "verifier/dataflow_walk.hpp"
#include "verifier/memory.hpp"

#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/strong_components.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <optional>
#include <tuple>

namespace pp {

const char* violation_name(ViolationKind kind) {
    switch (kind) {
        case ViolationKind::OutOfRange: return "out-of-range";
        case ViolationKind::Duplicate: return "duplicate";
        case ViolationKind::Missing: return "missing";
        case ViolationKind::BothBackwards: return "both-backwards";
        case ViolationKind::WrongRank: return "wrong-rank";
        case ViolationKind::BadPair: return "bad-pair";
        case ViolationKind::WWithoutI: return "w-without-i";
        case ViolationKind::WBeforeI: return "w-before-i";
        case ViolationKind::OrderContradicts: return "order-contradicts-dependency";
        case ViolationKind::Deadlock: return "deadlock";
        case ViolationKind::MemoryLimit: return "memory-limit";
        case ViolationKind::CommMismatch: return "comm-mismatch";
        case ViolationKind::CommDeadlock: return "comm-deadlock";
        case ViolationKind::CommMissing: return "comm-missing";
        case ViolationKind::SegmentOrder: return "segment-order";
        case ViolationKind::HostMemoryLimit: return "host-memory-limit";
    }
    return "?";
}

namespace {

constexpr size_t kKinds = static_cast<size_t>(ViolationKind::HostMemoryLimit) + 1;

class Reporter {
public:
    Reporter(VerifyReport& report, size_t limit) : report_(report), limit_(limit) { report_.suppressed.assign(kKinds, 0); }

    void add(Violation v) {
        auto k = static_cast<size_t>(v.kind);
        if (counts_[k]++ >= limit_) {
            ++report_.suppressed[k];
            return;
        }
        report_.violations.push_back(std::move(v));
    }

private:
    VerifyReport& report_;
    size_t limit_;
    std::array<size_t, kKinds> counts_{};
};

Violation at(ViolationKind kind, const Schedule& s, int rank, int position, const Op* op, std::string message) {
    Violation v;
    v.kind = kind;
    v.rank = rank;
    v.position = position;
    if (op) v.op = *op;
    if (rank >= 0 && position >= 0) v.loc = s.ranks[rank][position].loc;
    v.message = std::move(message);
    return v;
}

std::string where(int rank, int position) { return fmt::format("rank {}, position {}", rank, position); }

// The line of a rank's list in the file (its first slot's), so a missing op can say where it belongs.
SourceLoc rank_line(const Schedule& s, int rank) {
    if (rank < 0 || rank >= static_cast<int>(s.ranks.size())) return {};
    for (const Slot& slot : s.ranks[rank])
        if (slot.loc.known()) return {slot.loc.line, 1};
    return {};
}

// Ops the structural checks found in a wrong place: whatever else they break (order, deadlock, a missing
// op they stand for) follows from that one mistake and is counted, not reported again.
struct Misplaced {
    std::vector<bool> op;         // by op id: out of range (never set), wrong rank, or a duplicate
    std::vector<bool> intended;   // by op id: the op a misplaced one was most likely meant to be
    size_t follow_on = 0;
};

// The op `op` on `rank` was probably meant to be: the same kind and micro-batch of a (pipeline, stage) that
// `rank` holds and that the schedule lacks -- "3F0" on rank 0 of DualPipe meant "3F0@1". One candidate, or none.
std::optional<Op> likely_intended(const Schedule& s, const OpIndex& index, const std::vector<std::uint16_t>& count,
                                  const Op& op, int rank) {
    std::optional<Op> found;
    int candidates = 0;
    for (int p = 0; p < s.placement.pipeline_count(); ++p) {
        const auto& pipe = s.placement.pipelines[p];
        for (int st = 0; st < pipe.stages(); ++st) {
            if (pipe.stage_rank[st] != rank) continue;
            const Op alt{op.kind, p, st, op.microbatch};
            if (!index.in_range(alt) || count[index.id(alt)] > 0) continue;
            // Prefer the same stage number in another pipeline (a forgotten "@k"), then any stage.
            if (st == op.stage) return alt;
            found = alt;
            ++candidates;
        }
    }
    if (candidates == 1) return found;
    return std::nullopt;
}

// Range, duplicates, placement and the shape of overlapped pairs. An op that occurs twice is reported where it
// is wrong: on a rank that does not hold its stage (with the op it was likely meant to be), or, when every
// occurrence is on the right rank, at the second one.
Misplaced check_slots(const Schedule& s, const OpIndex& index, Reporter& out) {
    Misplaced bad{std::vector<bool>(index.size(), false), std::vector<bool>(index.size(), false), 0};
    std::vector<std::uint16_t> count(index.size(), 0);
    for (const auto& slots : s.ranks)
        for (const Slot& slot : slots)
            for (const Op& op : slot)
                if (index.in_range(op) && count[index.id(op)] < 0xffff) ++count[index.id(op)];
    std::vector<bool> seen_on_owner(index.size(), false);
    auto where_else = [&](const Op& op, int rank) {
        std::vector<int> others;
        for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r)
            if (r != rank)
                for (const Slot& slot : s.ranks[r])
                    for (const Op& o : slot)
                        if (o == op && (others.empty() || others.back() != r)) others.push_back(r);
        return others;
    };
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r) {
        for (int k = 0; k < static_cast<int>(s.ranks[r].size()); ++k) {
            const Slot& slot = s.ranks[r][k];
            if (slot.is_pair() && (slot.ops[0].kind != OpKind::F || !is_backward(slot.ops[1].kind)))
                out.add(at(ViolationKind::BadPair, s, r, k, &slot.ops[0],
                           fmt::format("{}: overlapped unit {} must be one F and one backward (I or B)", where(r, k),
                                       format_slot(slot))));
            for (const Op& op : slot) {
                if (!index.in_range(op)) {
                    out.add(at(ViolationKind::OutOfRange, s, r, k, &op,
                               fmt::format("{}: {} names a pipeline, stage or micro-batch the placement does not have",
                                           where(r, k), format_op(op))));
                    continue;
                }
                const size_t id = index.id(op);
                const int owner = s.placement.rank_of(op.pipeline, op.stage);
                if (owner != r) {
                    bad.op[id] = true;
                    std::string message = fmt::format("{}: {} runs on rank {}, but its stage is held by rank {}", where(r, k),
                                                      format_op(op), r, owner);
                    if (count[id] > 1) {
                        const auto others = where_else(op, r);
                        if (!others.empty()) message += fmt::format(" (which also runs it: rank {})", fmt::join(others, ", rank "));
                    }
                    if (const auto meant = likely_intended(s, index, count, op, r)) {
                        message += fmt::format("; did you mean {}? Rank {} holds its stage and the schedule lacks it",
                                               format_op(*meant), r);
                        bad.intended[index.id(*meant)] = true;
                    }
                    out.add(at(ViolationKind::WrongRank, s, r, k, &op, std::move(message)));
                    continue;
                }
                if (seen_on_owner[id]) {
                    bad.op[id] = true;
                    out.add(at(ViolationKind::Duplicate, s, r, k, &op,
                               fmt::format("{}: {} occurs a second time on rank {}; remove one of them", where(r, k),
                                           format_op(op), r)));
                }
                seen_on_owner[id] = true;
            }
        }
    }
    return bad;
}

// Every (stage, micro-batch) needs one F and either one B or one I followed by one W. A missing op is placed
// at the line of the rank that should run it.
void check_completeness(const Schedule& s, const ScheduleGraph& g, Misplaced& bad, Reporter& out) {
    auto locate = [&](const Op& op, int& rank, int& pos) {
        auto slot = g.slot_of(op);
        rank = slot < 0 ? -1 : static_cast<int>(g.slot_rank[slot]);
        pos = slot < 0 ? -1 : static_cast<int>(g.position(slot));
    };
    auto missing = [&](const Op& op, int owner, std::string message) {
        if (bad.intended[g.index.id(op)]) {
            ++bad.follow_on;  // reported with the misplaced op that stands for it
            return;
        }
        Violation v = at(ViolationKind::Missing, s, -1, -1, &op, std::move(message));
        v.rank = owner;
        v.loc = rank_line(s, owner);
        out.add(std::move(v));
    };
    auto rank_text = [&](int owner) {
        const SourceLoc line = rank_line(s, owner);
        return line.known() ? fmt::format("rank {}'s line (line {}) should hold it", owner, line.line)
                            : fmt::format("rank {} should run it", owner);
    };
    for (int p = 0; p < s.placement.pipeline_count(); ++p) {
        const auto& pipe = s.placement.pipelines[p];
        for (int st = 0; st < pipe.stages(); ++st) {
            for (int m = 0; m < pipe.microbatches; ++m) {
                Op f{OpKind::F, p, st, m}, i{OpKind::I, p, st, m}, w{OpKind::W, p, st, m}, b{OpKind::B, p, st, m};
                const bool has_f = g.present(f), has_i = g.present(i), has_w = g.present(w), has_b = g.present(b);
                const int owner = pipe.stage_rank[st];
                int r, k;
                if (!has_f) missing(f, owner, fmt::format("{} is missing: {}", format_op(f), rank_text(owner)));
                if (has_b && (has_i || has_w)) {
                    const Op& extra = has_i ? i : w;
                    locate(extra, r, k);
                    out.add(at(ViolationKind::BothBackwards, s, r, k, &extra,
                               fmt::format("{}: {} runs although {} already did the full backward", where(r, k),
                                           format_op(extra), format_op(b))));
                } else if (!has_b && !has_i) {
                    if (bad.intended[g.index.id(i)]) {
                        ++bad.follow_on;
                    } else {
                        missing(b, owner,
                                fmt::format("the backward of stage {}, {}{} is missing (neither {} nor {}): {}", st,
                                            s.segments > 1 ? fmt::format("segment unit {} (micro-batch {}, segment {})", m,
                                                                         s.microbatch_of(m), s.segment_of(m))
                                                           : fmt::format("micro-batch {}", m),
                                            p ? fmt::format(" of pipeline {}", p) : "", format_op(b),
                                            format_op(i), rank_text(owner)));
                    }
                } else if (has_i && !has_w) {
                    missing(w, owner,
                            fmt::format("{} is missing: {} split the backward, so its W must run; {}", format_op(w),
                                        format_op(i), rank_text(owner)));
                }
                if (has_w && !has_i && !has_b) {
                    locate(w, r, k);
                    out.add(at(ViolationKind::WWithoutI, s, r, k, &w,
                               fmt::format("{}: {} has no {} to follow", where(r, k), format_op(w), format_op(i))));
                }
            }
        }
    }
}

std::string slot_label(const Schedule& s, const ScheduleGraph& g, std::uint32_t slot) {
    return format_slot(g.slot(s, slot));
}

// Dependencies reversed inside one rank: reported one by one, and left out of the deadlock search.
std::vector<bool> check_rank_order(const Schedule& s, const ScheduleGraph& g, Misplaced& bad, Reporter& out) {
    std::vector<bool> reversed(boost::num_edges(g.graph), false);
    for (std::uint32_t u = 0; u < g.slot_count(); ++u) {
        for (auto e : out_edges_of(g.graph, u)) {
            const EdgeInfo& info = g.graph[e];
            const std::uint32_t v = target_of(g.graph, e);
            if (info.kind != EdgeKind::Dependency || g.slot_rank[u] != g.slot_rank[v]) continue;
            if (g.position(u) < g.position(v)) continue;
            reversed[edge_number(g.graph, e)] = true;
            const auto [pred, op] = dependency_link(s, g, v, info);
            if (bad.op[g.index.id(pred)] || bad.op[g.index.id(op)]) {
                ++bad.follow_on;
                continue;
            }
            const int r = static_cast<int>(g.slot_rank[v]), k = static_cast<int>(g.position(v));
            if (u == v) {
                out.add(at(ViolationKind::OrderContradicts, s, r, k, &op,
                           fmt::format("{}: the overlapped unit {} pairs {} with its own dependency {}", where(r, k),
                                       slot_label(s, g, v), format_op(op), format_op(pred))));
            } else if (op.kind == OpKind::W && pred.kind == OpKind::I) {
                out.add(at(ViolationKind::WBeforeI, s, r, k, &op,
                           fmt::format("{}: {} runs before its {} (position {})", where(r, k), format_op(op),
                                       format_op(pred), g.position(u))));
            } else {
                out.add(at(ViolationKind::OrderContradicts, s, r, k, &op,
                           fmt::format("{}: {} runs before its dependency {} (position {} on the same rank)", where(r, k),
                                       format_op(op), format_op(pred), g.position(u))));
            }
        }
    }
    return reversed;
}

// Seq1F1B's rules inside a stage (Schedule::segments): forward segment j after segment j-1 of the same micro-batch,
// input-gradient backward (I or B) of segment j after that of segment j+1. Both ops are on the stage's rank, so a
// rule is broken exactly when the rank's order runs the later one first; the timing cannot break it.
void check_segment_order(const Schedule& s, Reporter& out) {
    const int k = s.segments;
    if (k <= 1) return;
    const OpIndex index(s.placement);
    constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();
    // The first place of each op on the rank that holds its stage (an op elsewhere is a wrong-rank violation).
    const auto on_its_rank = [&](const Op& op, int r) { return index.in_range(op) && s.placement.rank_of(op.pipeline, op.stage) == r; };
    std::vector<std::uint32_t> position(index.size(), kAbsent);
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r)
        for (std::uint32_t p = 0; p < s.ranks[r].size(); ++p)
            for (const Op& op : s.ranks[r][p])
                if (on_its_rank(op, r) && position[index.id(op)] == kAbsent) position[index.id(op)] = p;
    auto named = [&](const Op& op) {
        return fmt::format("{} (micro-batch {}, segment {})", format_op(op), s.microbatch_of(op.microbatch),
                           s.segment_of(op.microbatch));
    };
    auto runs_later = [&](Op pred, std::uint32_t here) {
        if (!index.in_range(pred)) return false;
        const std::uint32_t at_pred = position[index.id(pred)];
        return at_pred != kAbsent && at_pred >= here;
    };
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r) {
        const auto& slots = s.ranks[r];
        for (std::uint32_t p = 0; p < slots.size(); ++p)
            for (const Op& op : slots[p]) {
                if (!on_its_rank(op, r)) continue;
                const int j = s.segment_of(op.microbatch);
                const bool forward = op.kind == OpKind::F, gradient = is_backward(op.kind);
                if (!(forward && j > 0) && !(gradient && j < k - 1)) continue;
                Op pred = op;
                pred.microbatch = op.microbatch + (forward ? -1 : 1);
                if (gradient) {
                    pred.kind = OpKind::I;
                    if (!runs_later(pred, p)) pred.kind = OpKind::B;
                }
                if (!runs_later(pred, p)) continue;
                const int here = static_cast<int>(p);
                out.add(at(ViolationKind::SegmentOrder, s, r, here, &op,
                                     fmt::format("{}: {} runs before {} (position {}): {}", where(r, here), named(op), named(pred),
                                                 position[index.id(pred)],
                                                 forward ? "a micro-batch's forward segments run in order"
                                                         : "a micro-batch's backward segments run in reverse order")));
            }
    }
}

// The edge by which `waiter` waits for `awaited` (a dependency if there is one, else the rank order).
const EdgeInfo* waiting_link(const ScheduleGraph& g, std::uint32_t waiter, std::uint32_t awaited,
                             const std::vector<bool>& ignored) {
    const EdgeInfo* link = nullptr;
    for (auto e : out_edges_of(g.graph, awaited)) {
        if (target_of(g.graph, e) != waiter || ignored[edge_number(g.graph, e)]) continue;
        if (!link || g.graph[e].kind == EdgeKind::Dependency) link = &g.graph[e];
    }
    return link;
}

// Human-readable chain, starting at a dependency:
// "rank 1 waits at 1F1 for 0F1, which rank 0 runs after 0B0, which waits for 1B0, which rank 1 runs after 1F1"
Violation describe_deadlock(const Schedule& s, const ScheduleGraph& g, std::vector<std::uint32_t> cycle,
                            const std::vector<bool>& ignored, size_t blocked) {
    const size_t n = cycle.size();
    auto link_at = [&](size_t i) { return waiting_link(g, cycle[i], cycle[(i + 1) % n], ignored); };
    for (size_t i = 0; i < n; ++i) {
        const EdgeInfo* link = link_at(i);
        if (link && link->kind == EdgeKind::Dependency) {
            std::rotate(cycle.begin(), cycle.begin() + static_cast<std::ptrdiff_t>(i), cycle.end());
            break;
        }
    }
    std::string chain;
    std::vector<std::string> steps;
    for (size_t i = 0; i < n; ++i) {
        const std::uint32_t waiter = cycle[i];
        const EdgeInfo* link = link_at(i);
        const bool dependency = link && link->kind == EdgeKind::Dependency;
        // A run of rank-order hops on one rank reads as one: "rank 0 runs 0F2 only after 0B0".
        size_t j = i;
        while (!dependency && j + 1 < n) {
            const EdgeInfo* next = link_at(j + 1);
            if (next && next->kind == EdgeKind::Dependency) break;
            ++j;
        }
        const std::uint32_t awaited = cycle[(j + 1) % n];
        const int waiter_rank = static_cast<int>(g.slot_rank[waiter]);
        const int awaited_rank = static_cast<int>(g.slot_rank[awaited]);
        const std::optional<DependencyLink> ops =
            dependency ? std::optional(dependency_link(s, g, waiter, *link)) : std::nullopt;
        const std::string awaited_label = ops ? format_op(ops->from) : slot_label(s, g, awaited);
        const std::string waiter_label = ops ? format_op(ops->to) : slot_label(s, g, waiter);
        if (i == 0) chain = fmt::format("rank {} waits at {}", waiter_rank, waiter_label);
        if (dependency) {
            chain += fmt::format("{} {}", i == 0 ? " for" : ", which waits for", awaited_label);
            steps.push_back(fmt::format("{} (rank {}) needs {} (rank {})", waiter_label, waiter_rank, awaited_label,
                                        awaited_rank));
        } else {
            chain += i == 0 ? fmt::format(" until it has run {}", awaited_label)
                            : fmt::format(", which rank {} runs after {}", awaited_rank, awaited_label);
            steps.push_back(fmt::format("rank {} runs {} only after {}", waiter_rank, waiter_label, awaited_label));
        }
        i = j;
    }
    chain += " -- a cycle, so none of them can start";
    const std::uint32_t first = cycle.front();
    const int r = static_cast<int>(g.slot_rank[first]), k = static_cast<int>(g.position(first));
    Violation v = at(ViolationKind::Deadlock, s, r, k, &g.slot(s, first).ops[0],
                     fmt::format("deadlock ({} slots blocked, shortest cycle has {}): {}", blocked, n, chain));
    v.witness = std::move(steps);
    return v;
}

// Kahn's pass without the ignored edges; returns how many slots never become ready.
size_t count_blocked(const ScheduleGraph& g, const std::vector<bool>& ignored) {
    const std::uint32_t n = g.slot_count();
    std::vector<std::uint32_t> indegree(n, 0), ready;
    for (std::uint32_t u = 0; u < n; ++u)
        for (auto e : out_edges_of(g.graph, u))
            if (!ignored[edge_number(g.graph, e)]) ++indegree[target_of(g.graph, e)];
    for (std::uint32_t u = 0; u < n; ++u)
        if (indegree[u] == 0) ready.push_back(u);
    for (size_t head = 0; head < ready.size(); ++head)
        for (auto e : out_edges_of(g.graph, ready[head]))
            if (!ignored[edge_number(g.graph, e)] && --indegree[target_of(g.graph, e)] == 0)
                ready.push_back(target_of(g.graph, e));
    return n - ready.size();
}

// A deadlock through a misplaced op is that op's doing: moving it back removes the cycle (or shows the next one).
bool passes_misplaced_op(const Schedule& s, const ScheduleGraph& g, const std::vector<std::uint32_t>& cycle,
                         const Misplaced& bad) {
    for (std::uint32_t slot : cycle)
        for (const Op& op : g.slot(s, slot))
            if (g.index.in_range(op) && bad.op[g.index.id(op)]) return true;
    return false;
}

// File order, so a reader fixes the first mistake first; violations without a position keep their order, last.
void sort_by_position(std::vector<Violation>& violations) {
    std::stable_sort(violations.begin(), violations.end(), [](const Violation& a, const Violation& b) {
        if (a.loc.known() != b.loc.known()) return a.loc.known();
        if (!a.loc.known()) return false;
        return std::tie(a.loc.line, a.loc.column) < std::tie(b.loc.line, b.loc.column);
    });
}

void check_memory(const Schedule& s, const VerifyOptions& options, VerifyReport& report, Reporter& out) {
    report.peak_activations = peak_activations(s, options.activations);
    if (!options.memory_limit) return;
    const Rational limit = *options.memory_limit;
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r) {
        if (report.peak_activations[r] <= limit) continue;
        const auto profile = activation_profile(s, r, options.activations);
        const int k = static_cast<int>(std::find_if(profile.begin(), profile.end(), [&](const Rational& live) {
                                           return live > limit;
                                       }) - profile.begin());
        out.add(at(ViolationKind::MemoryLimit, s, r, k, &s.ranks[r][k].ops[0],
                   fmt::format("{}: {} brings the live activations to {}, above the limit of {} (peak on this rank: {})",
                               where(r, k), format_slot(s.ranks[r][k]), format_rational(profile[k]),
                               format_rational(limit), format_rational(report.peak_activations[r]))));
    }
}

}  // namespace

std::vector<std::uint32_t> shortest_cycle(const ScheduleGraph& g, const std::vector<bool>& ignored_edge) {
    std::function<bool(const SlotEdge&)> keep = [&](const SlotEdge& e) { return !ignored_edge[edge_number(g.graph, e)]; };
    const boost::filtered_graph<SlotGraph, std::function<bool(const SlotEdge&)>> live(g.graph, keep);
    const std::uint32_t n = g.slot_count();
    std::vector<int> component(n);
    boost::strong_components(live, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, live)));
    std::vector<int> size(n, 0);
    for (int c : component) ++size[c];

    std::vector<std::uint32_t> best;
    std::vector<std::int64_t> parent(n, -2);  // -2 = unvisited in the current search
    std::vector<std::uint32_t> level(n, 0), touched;
    size_t budget = 50'000'000;  // edge visits; past it we keep the shortest cycle found so far
    for (std::uint32_t root = 0; root < n && budget > 0; ++root) {
        for (auto e : out_edges_of(g.graph, root))
            if (keep(e) && target_of(g.graph, e) == root) return {root};
        if (size[component[root]] < 2) continue;
        // BFS from root inside its component; the first edge back to root closes a shortest cycle through it.
        const std::uint32_t depth_limit = best.empty() ? n : static_cast<std::uint32_t>(best.size() - 1);
        std::deque<std::uint32_t> queue{root};
        parent[root] = -1;
        level[root] = 0;
        touched.assign(1, root);
        std::int64_t closing = -1;
        while (!queue.empty() && closing < 0 && budget > 0) {
            const std::uint32_t u = queue.front();
            queue.pop_front();
            if (level[u] >= depth_limit) break;
            for (auto e : out_edges_of(g.graph, u)) {
                --budget;
                const std::uint32_t v = target_of(g.graph, e);
                if (!keep(e) || component[v] != component[root]) continue;
                if (v == root) {
                    closing = u;
                    break;
                }
                if (parent[v] != -2) continue;
                parent[v] = u;
                level[v] = level[u] + 1;
                touched.push_back(v);
                queue.push_back(v);
            }
        }
        if (closing >= 0) {
            // Edges run root -> ... -> closing -> root; listed from closing back to root, each waits for the next.
            std::vector<std::uint32_t> path;
            for (std::int64_t x = closing; x >= 0; x = parent[x]) path.push_back(static_cast<std::uint32_t>(x));
            if (best.empty() || path.size() < best.size()) best = std::move(path);
        }
        for (auto t : touched) parent[t] = -2;
        if (best.size() == 2) break;  // self-loops are ruled out, so nothing is shorter
    }
    return best;
}

VerifyReport verify(const Schedule& schedule, const VerifyOptions& options) {
    // The graph is built only to find and explain a violation (dataflow_walk.hpp).
    dataflow::Walk walk(schedule);
    dataflow::NoClock clock;
    if (!walk.run(clock)) return verify(schedule, build_schedule_graph(schedule), options);
    return verify_walked(schedule, options, walk.ops_run());
}

VerifyReport verify_walked(const Schedule& schedule, const VerifyOptions& options, size_t ops) {
    VerifyReport report;
    report.ops = ops;
    Reporter out(report, options.max_reports_per_kind);
    check_segment_order(schedule, out);
    check_memory(schedule, options, report, out);
    sort_by_position(report.violations);
    return report;
}

VerifyReport verify(const Schedule& schedule, const ScheduleGraph& graph, const VerifyOptions& options) {
    VerifyReport report;
    report.ops = schedule.op_count();
    Reporter out(report, options.max_reports_per_kind);
    Misplaced bad = check_slots(schedule, graph.index, out);
    check_completeness(schedule, graph, bad, out);
    const auto reversed = check_rank_order(schedule, graph, bad, out);
    if (const size_t blocked = count_blocked(graph, reversed); blocked > 0) {
        const auto cycle = shortest_cycle(graph, reversed);
        if (passes_misplaced_op(schedule, graph, cycle, bad)) ++bad.follow_on;
        else if (!cycle.empty()) out.add(describe_deadlock(schedule, graph, cycle, reversed, blocked));
    }
    check_segment_order(schedule, out);
    check_memory(schedule, options, report, out);
    report.follow_on = bad.follow_on;
    sort_by_position(report.violations);
    return report;
}

}  // namespace pp
