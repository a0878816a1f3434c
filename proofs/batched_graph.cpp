#include "proofs/batched_graph.hpp"

#include "verifier/batched.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace pp {

BatchedGraph build_batched_graph(const Schedule& schedule, const CommProgram& program) {
    BatchedGraph out;
    if (const auto problems = check_comm_program(schedule, program); !problems.empty()) {
        out.failure = std::string(violation_name(problems.front().kind)) + ": " + problems.front().message;
        if (!problems.front().witness.empty()) out.failure += "; " + problems.front().witness.front();
        return out;
    }
    ScheduleGraph g = build_schedule_graph(schedule);
    const int ranks = static_cast<int>(program.size());
    auto slots_of = [&](int r) { return static_cast<int>(schedule.ranks[r].size()); };

    // Counterparts pair in posting order per channel: the i-th send a->b meets the i-th receive on b from a.
    struct Posted {
        int rank, step;
    };
    std::vector<std::vector<Posted>> sends(static_cast<size_t>(ranks) * ranks), recvs(sends.size());
    for (int r = 0; r < ranks; ++r)
        for (int k = 0; k < static_cast<int>(program[r].size()); ++k)
            for (const P2POp& op : program[r][k].batch) {
                if (op.is_send) sends[static_cast<size_t>(r) * ranks + op.peer].push_back({r, k});
                else recvs[static_cast<size_t>(op.peer) * ranks + r].push_back({r, k});
            }
    // (from, to) -> pays comm; a pair joined by a paying and a free edge keeps the paying one.
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> edges;
    auto slot_id = [&](int r, int k) { return g.rank_begin[r] + static_cast<std::uint32_t>(k); };
    auto add_counterpart = [&](const Posted& self, const Posted& other) {
        if (self.step >= slots_of(self.rank)) return;  // a trailing commit: nothing waits for it
        if (other.step == 0) return;                   // posted at time 0: below own post + comm
        if (other.step - 1 >= slots_of(other.rank)) {
            // Posted after an earlier trailing commit completes: not an end of a slot. Never emitted by the
            // generic rule or the reference (one trailing commit at most); refuse rather than mis-time it.
            out.failure = fmt::format("rank {} posts a batch after a trailing commit; the batched timing graph does "
                                      "not model that",
                                      other.rank);
            return;
        }
        auto& cross = edges[{slot_id(other.rank, other.step - 1), slot_id(self.rank, self.step)}];
        cross = true;
    };
    for (size_t channel = 0; channel < sends.size(); ++channel)
        for (size_t i = 0; i < sends[channel].size() && i < recvs[channel].size(); ++i) {
            add_counterpart(sends[channel][i], recvs[channel][i]);
            add_counterpart(recvs[channel][i], sends[channel][i]);
        }
    if (!out.failure.empty()) return out;
    std::set<std::uint32_t> has_pred;
    for (const auto& [e, cross] : edges) has_pred.insert(e.second);
    for (int r = 0; r < ranks; ++r)
        for (int k = 0; k < slots_of(r); ++k) {
            const bool paid = !program[r][k].batch.empty();
            if (k > 0) {
                auto [it, fresh] = edges.try_emplace({slot_id(r, k - 1), slot_id(r, k)}, paid);
                if (!fresh) it->second = it->second || paid;
            } else if (paid && !has_pred.count(slot_id(r, 0))) {
                out.first_batch_waits.push_back(slot_id(r, 0));
            }
        }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ends;
    std::vector<EdgeInfo> infos;
    for (const auto& [e, cross] : edges) {
        ends.push_back(e);
        const bool same_rank = g.slot_rank[e.first] == g.slot_rank[e.second];
        infos.push_back({same_rank ? EdgeKind::RankOrder : EdgeKind::Dependency, cross, 0});
    }
    g.graph = SlotGraph(boost::edges_are_unsorted_multi_pass, ends.begin(), ends.end(), infos.begin(), g.slot_count());
    out.graph = std::move(g);
    return out;
}

ScheduleGraph batched_timing_graph(const Schedule& schedule, const CommProgram& program, bool comm_may_be_positive) {
    BatchedGraph bg = build_batched_graph(schedule, program);
    if (!bg.graph) throw SimulationError("no batched timing: " + bg.failure);
    if (!bg.first_batch_waits.empty() && comm_may_be_positive)
        throw SimulationError("a rank's first batch waits comm without a predecessor, which the batched timing graph "
                              "does not model when comm > 0");
    return std::move(*bg.graph);
}

// ---------------------------------------------------------------------------------------------------
// The program as a periodic word

namespace {

using Batch = std::vector<P2POp>;

Batch shift_batch(Batch batch, const std::vector<int>& delta, int k) {
    for (P2POp& op : batch) op.microbatch += delta[op.pipeline] * k;
    return batch;
}

bool equal_batches(const std::vector<Batch>& a, size_t a0, const std::vector<Batch>& b, size_t b0, size_t n,
                   const std::vector<int>& delta, int shift) {
    for (size_t k = 0; k < n; ++k)
        if (shift_batch(a[a0 + k], delta, shift) != b[b0 + k]) return false;
    return true;
}

std::vector<Batch> batches_of(const CommProgram& program, int r) {
    std::vector<Batch> out;
    for (const CommStep& step : program[r]) out.push_back(step.batch);
    return out;
}

}  // namespace

CommProgram ProgramWord::instantiate(const PeriodicWord& word, int t) const {
    CommProgram program(prefix.size());
    for (size_t r = 0; r < prefix.size(); ++r) {
        std::vector<Batch> seq(prefix[r].begin(), prefix[r].end());
        for (int j = 0; j < t; ++j)
            for (const Batch& b : block[r]) seq.push_back(shift_batch(b, delta, j));
        for (const Batch& b : suffix[r]) seq.push_back(shift_batch(b, delta, t));
        const int slots = static_cast<int>(word.prefix[r].size() + word.block[r].size() * t + word.suffix[r].size());
        for (size_t k = 0; k < seq.size(); ++k)
            program[r].push_back(CommStep{std::move(seq[k]), static_cast<int>(k) < slots ? static_cast<int>(k) : -1});
    }
    return program;
}

ProgramFit fit_program_word(const PeriodicWord& word, const CommProgram& p0, const CommProgram& p1,
                            const CommProgram& p2) {
    ProgramFit fit;
    const int P = word.ranks();
    if (static_cast<int>(p0.size()) != P || static_cast<int>(p1.size()) != P || static_cast<int>(p2.size()) != P) {
        fit.failure = "the communication programs do not have one entry per rank";
        return fit;
    }
    ProgramWord pw;
    pw.delta = word.delta;
    pw.prefix.resize(P), pw.block.resize(P), pw.suffix.resize(P);
    for (int r = 0; r < P; ++r) {
        const auto a = batches_of(p0, r), b = batches_of(p1, r), c = batches_of(p2, r);
        const size_t L = word.block[r].size();
        if (b.size() != a.size() + L || c.size() != a.size() + 2 * L) {
            fit.failure = fmt::format("rank {}: the program does not grow by one batch per slot of a block", r);
            return fit;
        }
        size_t lcp = 0;
        while (lcp < a.size() && a[lcp] == b[lcp]) ++lcp;
        bool found = false;
        for (size_t p = lcp + 1; p-- > 0 && !found;) {
            if (!equal_batches(a, p, b, p + L, a.size() - p, pw.delta, 1)) continue;
            std::vector<Batch> u(a.begin(), a.begin() + static_cast<long>(p));
            std::vector<Batch> v(b.begin() + static_cast<long>(p), b.begin() + static_cast<long>(p + L));
            std::vector<Batch> w(a.begin() + static_cast<long>(p), a.end());
            if (!equal_batches(u, 0, c, 0, u.size(), pw.delta, 0) || !equal_batches(v, 0, c, u.size(), L, pw.delta, 0) ||
                !equal_batches(v, 0, c, u.size() + L, L, pw.delta, 1) ||
                !equal_batches(w, 0, c, u.size() + 2 * L, w.size(), pw.delta, 2))
                continue;
            pw.prefix[r] = std::move(u), pw.block[r] = std::move(v), pw.suffix[r] = std::move(w);
            found = true;
        }
        if (!found) {
            fit.failure = fmt::format("rank {}: the communication program for the larger M is not the smaller one "
                                      "with one block of batches inserted",
                                      r);
            return fit;
        }
    }
    fit.word = std::move(pw);
    return fit;
}

int program_check_horizon(const ProgramWord& pw) {
    int T = 3;
    for (size_t r = 0; r < pw.prefix.size(); ++r) {
        const int n = static_cast<int>(pw.prefix[r].size() + pw.suffix[r].size());
        const int L = static_cast<int>(pw.block[r].size());
        if (L > 0) T = std::max(T, (n + L + L - 1) / L);
    }
    return T;
}

std::string program_mismatch(const ProgramWord& pw, const PeriodicWord& word, int t, const CommProgram& program) {
    const CommProgram expected = pw.instantiate(word, t);
    if (expected.size() != program.size()) return "rank count differs";
    for (size_t r = 0; r < expected.size(); ++r)
        for (size_t k = 0; k < std::max(expected[r].size(), program[r].size()); ++k) {
            if (k >= expected[r].size() || k >= program[r].size())
                return fmt::format("rank {}: {} steps in the word, {} in the program", r, expected[r].size(),
                                   program[r].size());
            if (expected[r][k].batch != program[r][k].batch || expected[r][k].slot != program[r][k].slot)
                return fmt::format("rank {} step {}: word has {}, program has {}", r, k,
                                   format_batch(expected[r][k].batch), format_batch(program[r][k].batch));
        }
    return "";
}

BatchedStability batched_stable_from(const PeriodicWord& word, const ProgramWord& pw) {
    BatchedStability st;
    const int P = word.ranks();
    auto ceil_div = [](long a, long b) { return a <= 0 ? 0L : (a + b - 1) / b; };
    long T0 = 1;
    // Split offsets: a step's coordinates in the program word and in the slot word differ by a fixed number of
    // blocks once each word's prefix and suffix are a whole block apart from the other's.
    for (int r = 0; r < P; ++r) {
        const long L = static_cast<long>(word.block[r].size());
        if (L == 0) {
            if (!pw.block[r].empty()) {
                st.failure = fmt::format("rank {} has program blocks but no slot blocks", r);
                return st;
            }
            continue;
        }
        const long du = std::labs(static_cast<long>(word.prefix[r].size()) - static_cast<long>(pw.prefix[r].size()));
        const long dw = std::labs(static_cast<long>(word.suffix[r].size()) - static_cast<long>(pw.suffix[r].size()));
        T0 = std::max(T0, ceil_div(du, L) + ceil_div(dw, L) + 2);
    }
    // Channels: per (sender, receiver), the counts of sends and receives in prefix, block and suffix.
    struct Counts {
        long u = 0, v = 0, w = 0;
    };
    std::map<std::pair<int, int>, Counts> send, recv;
    for (int r = 0; r < P; ++r) {
        auto count = [&](const std::vector<Batch>& part, long Counts::*field) {
            for (const Batch& b : part)
                for (const P2POp& op : b) {
                    if (op.is_send) ++(send[{r, op.peer}].*field);
                    else ++(recv[{op.peer, r}].*field);
                }
        };
        count(pw.prefix[r], &Counts::u), count(pw.block[r], &Counts::v), count(pw.suffix[r], &Counts::w);
    }
    std::set<std::pair<int, int>> channels;
    for (const auto& [c, n] : send) channels.insert(c);
    for (const auto& [c, n] : recv) channels.insert(c);
    for (const auto& c : channels) {
        const Counts s = send[c], q = recv[c];
        if (s.v != q.v || s.u + s.w != q.u + q.w) {
            st.failure = fmt::format("channel {}->{}: {} + {}t sends but {} + {}t receives", c.first, c.second, s.u + s.w,
                                     s.v, q.u + q.w, q.v);
            return st;
        }
        if (s.v == 0) continue;  // a fixed number of messages in fixed positions
        // Counter values below max(prefix counts) or within max(suffix counts) of the end pair across a region
        // boundary; once t blocks outnumber both, every pairing keeps its block offset.
        T0 = std::max(T0, ceil_div(std::labs(s.u - q.u) + std::max(s.w, q.w), s.v) + 2);
    }
    st.T0 = static_cast<int>(T0);
    return st;
}

std::vector<std::string> edge_classes(const PeriodicWord& word, const ScheduleGraph& g, int t) {
    const auto places = slot_places(word, t);
    auto region = [](Region r) { return r == Region::Prefix ? 'U' : r == Region::Block ? 'V' : 'W'; };
    std::set<std::string> out;
    for (std::uint32_t u = 0; u < g.slot_count(); ++u)
        for (auto e : out_edges_of(g.graph, u)) {
            const std::uint32_t v = target_of(g.graph, e);
            const SlotPlace& a = places[u];
            const SlotPlace& b = places[v];
            // A block's j counts from the first block, a suffix position from t; offsets between them.
            auto level = [&](const SlotPlace& p) { return p.region == Region::Block ? p.block : p.region == Region::Suffix ? t : 0; };
            long offset = 0;
            if (a.region == Region::Prefix && b.region == Region::Prefix) offset = 0;
            else if (a.region == Region::Prefix) offset = level(b);          // j_v, or t (a t-dependent class)
            else if (b.region == Region::Prefix) offset = -level(a);
            else offset = level(b) - level(a);
            out.insert(fmt::format("{}{}{}>{}{}{}:{}{}", g.slot_rank[u], region(a.region), a.index, g.slot_rank[v],
                                   region(b.region), b.index, offset, g.graph[e].cross_rank ? "c" : ""));
        }
    return {out.begin(), out.end()};
}

}  // namespace pp
