#include "proofs/batched_failure.hpp"

#include "verifier/batched.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace pp {

const char* recurring_failure_name(RecurringCommFailure::Kind kind) {
    return kind == RecurringCommFailure::Kind::Deadlock ? "deadlock" : "mismatch";
}

std::vector<int> stable_head(const ProgramWord& pw, int t) {
    std::vector<int> out;
    for (size_t r = 0; r < pw.prefix.size(); ++r)
        out.push_back(static_cast<int>(pw.prefix[r].size() + pw.block[r].size() * static_cast<size_t>(t)));
    return out;
}

std::vector<int> stable_tail(const ProgramWord& pw, int t) {
    std::vector<int> out;
    for (size_t r = 0; r < pw.prefix.size(); ++r)
        out.push_back(static_cast<int>(pw.suffix[r].size() + pw.block[r].size() * static_cast<size_t>(t)));
    return out;
}

namespace {

struct Post {
    int rank = 0, step = 0, index = 0;
};

// Per ordered pair (sender, receiver): the sends and the receives in posting order.
struct Channels {
    int ranks = 0;
    std::vector<std::vector<Post>> sends, recvs;
    explicit Channels(const CommProgram& program) : ranks(static_cast<int>(program.size())) {
        sends.resize(static_cast<size_t>(ranks) * ranks), recvs.resize(sends.size());
        for (int r = 0; r < ranks; ++r)
            for (int k = 0; k < static_cast<int>(program[r].size()); ++k)
                for (int i = 0; i < static_cast<int>(program[r][k].batch.size()); ++i) {
                    const P2POp& op = program[r][k].batch[i];
                    if (op.peer < 0 || op.peer >= ranks) continue;
                    if (op.is_send) sends[static_cast<size_t>(r) * ranks + op.peer].push_back({r, k, i});
                    else recvs[static_cast<size_t>(op.peer) * ranks + r].push_back({r, k, i});
                }
    }
};

// Counts of sends a->b and receives on b from a in a word's fixed parts and per block: pairing from the end is
// stable when both are equal.
bool channel_counts_agree(const ProgramWord& pw, int a, int b) {
    auto count = [&](const std::vector<std::vector<P2POp>>& part, int self, int peer, bool send) {
        long n = 0;
        for (const auto& batch : part)
            for (const P2POp& op : batch) n += op.is_send == send && op.peer == peer;
        (void)self;
        return n;
    };
    const long sv = count(pw.block[a], a, b, true), rv = count(pw.block[b], b, a, false);
    const long sf = count(pw.prefix[a], a, b, true) + count(pw.suffix[a], a, b, true);
    const long rf = count(pw.prefix[b], b, a, false) + count(pw.suffix[b], b, a, false);
    return sv == rv && sf == rf;
}

std::string step_text(const Schedule& s, const CommProgram& program, int r, int k) {
    const int slot = program[r][k].slot;
    return slot >= 0 && slot < static_cast<int>(s.ranks[r].size())
               ? fmt::format("rank {} batch {} (before {})", r, k, format_slot(s.ranks[r][slot]))
               : fmt::format("rank {} batch {} (final commit)", r, k);
}
std::string after_text(const Schedule& s, const CommProgram& program, int r, int k) {
    const int slot = k >= 1 ? program[r][k - 1].slot : -1;
    return slot >= 0 && slot < static_cast<int>(s.ranks[r].size()) ? "after " + format_slot(s.ranks[r][slot]) : "at once";
}

class Finder {
public:
    // pw: needed for tails only (whether a channel's pairing from the end is stable).
    Finder(const Schedule& s, const CommProgram& program, const ProgramWord* pw, const std::vector<int>& len, bool from_end)
        : s_(s), program_(program), pw_(pw), from_end_(from_end), channels_(program) {
        for (int r = 0; r < channels_.ranks; ++r) {
            const int size = static_cast<int>(program[r].size());
            const int n = std::min(size, len[r]);
            lo_.push_back(from_end ? size - n : 0);
            hi_.push_back(from_end ? size : n);
        }
    }

    std::optional<RecurringCommFailure> mismatch() const {
        for (int a = 0; a < channels_.ranks; ++a)
            for (int b = 0; b < channels_.ranks; ++b) {
                const auto& sends = channels_.sends[static_cast<size_t>(a) * channels_.ranks + b];
                const auto& recvs = channels_.recvs[static_cast<size_t>(a) * channels_.ranks + b];
                if (from_end_ && (sends.size() != recvs.size() || !channel_counts_agree(*pw_, a, b))) continue;
                const size_t n = std::min(sends.size(), recvs.size());
                for (size_t m = 0; m < n; ++m) {
                    const size_t i = from_end_ ? sends.size() - 1 - m : m, j = from_end_ ? recvs.size() - 1 - m : m;
                    const Post& x = sends[i];
                    const Post& y = recvs[j];
                    const P2POp& so = op(x);
                    const P2POp& ro = op(y);
                    if (std::tie(so.activation, so.pipeline, so.stage, so.microbatch) ==
                        std::tie(ro.activation, ro.pipeline, ro.stage, ro.microbatch))
                        continue;
                    if (!stable(x) || !stable(y)) break;  // the first divergence is not in the stable part
                    RecurringCommFailure f;
                    f.kind = RecurringCommFailure::Kind::Mismatch;
                    f.from_end = from_end_;
                    f.witness.push_back(fmt::format("the {} message from rank {} to rank {} is sent as {} in {} but "
                                                    "received as {} in {}",
                                                    ordinal(m + 1) + (from_end_ ? " from the end" : ""), a, b, format_p2p(so),
                                                    step_text(s_, program_, x.rank, x.step), format_p2p(ro),
                                                    step_text(s_, program_, y.rank, y.step)));
                    return f;
                }
            }
        return std::nullopt;
    }

    std::optional<RecurringCommFailure> deadlock() const {
        // Nodes: stable steps; edges (r,k-1) -> (r,k) and (q,j-1) -> (r,k) for a counterpart in batch j >= 1 of q.
        struct Edge {
            int q, j;       // the predecessor node (q, j)
            int op = -1;    // the op of (r,k) whose counterpart is posted after (q, j) ends; -1: rank order
            bool beyond = false;  // the counterpart lies beyond q's head: posted after (q, j) or later batches end
        };
        const int P = channels_.ranks;
        std::vector<std::vector<std::vector<Edge>>> preds(P);
        for (int r = 0; r < P; ++r) preds[r].resize(program_[r].size());
        for (int a = 0; a < P; ++a)
            for (int b = 0; b < P; ++b) {
                const auto& sends = channels_.sends[static_cast<size_t>(a) * P + b];
                const auto& recvs = channels_.recvs[static_cast<size_t>(a) * P + b];
                if (from_end_ && (sends.size() != recvs.size() || !channel_counts_agree(*pw_, a, b))) continue;
                const size_t n = std::min(sends.size(), recvs.size());
                for (size_t m = 0; m < n; ++m) {
                    const size_t i = from_end_ ? sends.size() - 1 - m : m, j = from_end_ ? recvs.size() - 1 - m : m;
                    link(preds, sends[i], recvs[j]);
                    link(preds, recvs[j], sends[i]);
                }
            }
        for (int r = 0; r < P; ++r)
            for (int k = lo_[r] + 1; k < hi_[r]; ++k) preds[r][k].push_back({r, k - 1, -1, false});
        // Depth-first search for a cycle among stable nodes (iterative; colours 0 new, 1 on stack, 2 done).
        std::vector<std::vector<char>> colour(P);
        for (int r = 0; r < P; ++r) colour[r].assign(program_[r].size(), 0);
        struct Frame {
            int r, k;
            size_t next;
        };
        for (int r0 = 0; r0 < P; ++r0)
            for (int k0 = lo_[r0]; k0 < hi_[r0]; ++k0) {
                if (colour[r0][k0]) continue;
                std::vector<Frame> stack{{r0, k0, 0}};
                colour[r0][k0] = 1;
                while (!stack.empty()) {
                    Frame& f = stack.back();
                    if (f.next == preds[f.r][f.k].size()) {
                        colour[f.r][f.k] = 2;
                        stack.pop_back();
                        continue;
                    }
                    const Edge e = preds[f.r][f.k][f.next++];
                    if (colour[e.q][e.j] == 2) continue;
                    if (colour[e.q][e.j] == 0) {
                        colour[e.q][e.j] = 1;
                        stack.push_back({e.q, e.j, 0});
                        continue;
                    }
                    // A cycle: (e.q, e.j) is on the stack; the frames from it to the top wait on each other.
                    size_t from = 0;
                    while (stack[from].r != e.q || stack[from].k != e.j) ++from;
                    RecurringCommFailure out;
                    out.kind = RecurringCommFailure::Kind::Deadlock;
                    out.from_end = from_end_;
                    for (size_t x = from; x < stack.size(); ++x) {
                        const Frame& a = stack[x];
                        const Edge& via = preds[a.r][a.k][a.next - 1];
                        out.witness.push_back(wait_text(a.r, a.k, via));
                    }
                    return out;
                }
            }
        return std::nullopt;
    }

private:
    const Schedule& s_;
    const CommProgram& program_;
    const ProgramWord* pw_;
    bool from_end_;
    Channels channels_;
    std::vector<int> lo_, hi_;  // per rank: stable steps [lo, hi)

    const P2POp& op(const Post& p) const { return program_[p.rank][p.step].batch[p.index]; }
    bool stable(int r, int k) const { return k >= lo_[r] && k < hi_[r]; }
    bool stable(const Post& p) const { return stable(p.rank, p.step); }

    template <class Edges>
    void link(Edges& preds, const Post& self, const Post& other) const {
        // self's batch completes only after `other` is posted, i.e. after other's previous batch (and slot) ends.
        if (other.step == 0 || !stable(self)) return;
        if (stable(other) && stable(other.rank, other.step - 1)) {
            preds[self.rank][self.step].push_back({other.rank, other.step - 1, self.index, false});
            return;
        }
        // A counterpart beyond the peer's head (heads only): self's op is the n-th of its channel with n fixed by the
        // head, and the peer's head holds fewer than n + 1 matching posts in every larger instance too, so there the
        // counterpart is again at or beyond the head's end, and its batch waits (rank order) for the head's last
        // batch to complete. The edge (last head batch of the peer) -> self is then a path of every larger instance.
        if (!from_end_ && other.step >= hi_[other.rank] && hi_[other.rank] > 0)
            preds[self.rank][self.step].push_back({other.rank, hi_[other.rank] - 1, self.index, true});
    }

    template <class Edge>
    std::string wait_text(int r, int k, const Edge& via) const {
        if (via.op < 0)
            return fmt::format("{} is posted only when its batch {} has completed", step_text(s_, program_, r, k), k - 1);
        const P2POp& o = program_[r][k].batch[via.op];
        if (via.beyond)
            return fmt::format("{} holds {} ({} rank {}), whose counterpart rank {} posts only beyond its stable head, "
                               "after its batch {} ({}) and the batches up to the counterpart have completed",
                               step_text(s_, program_, r, k), format_p2p(o), o.is_send ? "send to" : "receive from",
                               o.peer, via.q, via.j, step_text(s_, program_, via.q, via.j));
        return fmt::format("{} holds {} ({} rank {}), whose counterpart rank {} posts only in its batch {} ({}), i.e. "
                           "after its batch {} completes",
                           step_text(s_, program_, r, k), format_p2p(o), o.is_send ? "send to" : "receive from", o.peer,
                           via.q, via.j + 1, after_text(s_, program_, via.q, via.j + 1), via.j);
    }

    static std::string ordinal(size_t n) {
        const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
        return std::to_string(n) + suffix;
    }
};

}  // namespace

std::optional<RecurringCommFailure> recurring_comm_failure(const Schedule& schedule, const CommProgram& program,
                                                           const ProgramWord& pw, int t) {
    for (bool from_end : {false, true}) {
        const Finder finder(schedule, program, &pw, from_end ? stable_tail(pw, t) : stable_head(pw, t), from_end);
        if (auto f = finder.mismatch()) return f;
        if (auto f = finder.deadlock()) return f;
    }
    return std::nullopt;
}

std::optional<RecurringCommFailure> recurring_comm_failure_in_heads(const Schedule& schedule, const CommProgram& program,
                                                                    const std::vector<int>& heads) {
    const Finder finder(schedule, program, nullptr, heads, false);
    if (auto f = finder.mismatch()) return f;
    return finder.deadlock();
}

}  // namespace pp
