// Batched timing (DeepSeek's blocking P2P batches; proofs/method.md §2b), re-derived by the checker's own code from
// the semantics as docs/model.md states it:
//   a rank posts batch k when its slot k-1 ends (batch 0 at time 0); an operation completes when its counterpart --
//   the operation of the same channel (sender, receiver) and the same posting position -- has been posted too, plus
//   comm; a batch completes when all its operations have (an empty one at once), and slot k starts then.
// So slot (a, k) starts at the latest of: the end of (a, k-1), plus comm when batch k is non-empty; and, for every
// operation of batch k whose counterpart is posted in batch j >= 1 of rank b, the end of (b, j-1) plus comm. A
// counterpart posted at time 0 adds nothing past the own post plus comm. A rank's first batch is posted at 0 too, but
// in a consistent program it holds no send (nothing is computed yet), and each of its receives pairs with a send
// posted after a slot: that edge already pays comm, so no slot waits on posts at time 0 alone.
//
// The program is checked consistent first (every message named once on each end, in the same order, sent after it is
// computed and received before it is used). Then every dependency of the dataflow graph follows from a path of the
// batched graph: producer -> ... -> (sender's slot before the batch holding the send) -> receiver's batch -> ...
// -> consumer, paying comm on the way. The graph keeps the dataflow edges as well; they change no longest path.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace pp::check {
namespace {

using Batch = std::vector<P2POp>;

std::string message(const P2POp& op) {
    return fmt::format("the {} of stage {} micro-batch {}{}", op.activation ? "activation" : "gradient", op.stage, op.microbatch,
                       op.pipeline ? fmt::format(" (pipeline {})", op.pipeline) : std::string());
}

bool stage_exists(const Placement& pl, int pipeline, int stage) {
    return pipeline >= 0 && pipeline < pl.pipeline_count() && stage >= 0 && stage < pl.pipelines[pipeline].stages();
}

// The message an op needs from another rank (its input), or sends to one (its output); none when it stays local.
std::optional<P2POp> needed(const Op& op, int rank, const Placement& pl, bool output) {
    if (op.kind == OpKind::W) return std::nullopt;
    const bool forward = op.kind == OpKind::F;
    const int other = output == forward ? op.stage + 1 : op.stage - 1;
    if (!stage_exists(pl, op.pipeline, other)) return std::nullopt;
    const int peer = pl.rank_of(op.pipeline, other);
    if (peer == rank) return std::nullopt;
    const int stage = op.stage;
    return P2POp{output, forward, op.pipeline, output ? stage : other, static_cast<int>(op.microbatch), peer};
}

std::uint64_t tensor_key(const P2POp& op) {
    return ((static_cast<std::uint64_t>(op.pipeline) << 20 | static_cast<std::uint64_t>(op.stage)) << 33 |
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.microbatch)) << 1) |
           (op.activation ? 1U : 0U);
}

struct Posted {
    int rank, step;
};

// The consistency rules above; returns the counterpart pairs per channel, (sender's post, receiver's post).
std::vector<std::pair<Posted, Posted>> pair_up(const Schedule& s, const CommProgram& program, const std::string& step) {
    const Placement& pl = s.placement;
    const int P = pl.ranks;
    if (static_cast<int>(program.size()) != P) reject(step, fmt::format("a program of {} ranks for {}", program.size(), P));
    std::map<std::pair<int, int>, std::vector<std::pair<Posted, const P2POp*>>> sends, receives;
    for (int r = 0; r < P; ++r) {
        const int slots = static_cast<int>(s.ranks[r].size());
        const int steps = static_cast<int>(program[r].size());
        if (steps < slots || steps > slots + 1)
            reject(step, fmt::format("rank {}: {} batches for {} slots (one per slot and at most one trailing commit)", r, steps, slots));
        std::unordered_map<std::uint64_t, int> computed_at, received_at;  // tensor -> slot / step
        for (int k = 0; k < slots; ++k)
            for (const Op& op : s.ranks[r][k])
                if (op.kind != OpKind::W)
                    computed_at[tensor_key(P2POp{true, op.kind == OpKind::F, op.pipeline, static_cast<int>(op.stage),
                                                 static_cast<int>(op.microbatch), 0})] = k;
        for (int k = 0; k < steps; ++k)
            for (const P2POp& op : program[r][k].batch) {
                const std::string where = fmt::format("rank {} batch {}: {} {}", r, k, op.is_send ? "a send of" : "a receive of", message(op));
                if (!stage_exists(pl, op.pipeline, op.stage)) reject(step, where + " names a stage the placement does not have");
                const int consumer_stage = op.activation ? op.stage + 1 : op.stage - 1;
                if (!stage_exists(pl, op.pipeline, consumer_stage)) reject(step, where + ": no stage consumes it");
                const int producer = pl.rank_of(op.pipeline, op.stage), consumer = pl.rank_of(op.pipeline, consumer_stage);
                if (producer == consumer) reject(step, where + ": it stays on one rank");
                if ((op.is_send ? producer : consumer) != r || op.peer != (op.is_send ? consumer : producer))
                    reject(step, where + fmt::format(" to or from rank {}, which is not where it goes", op.peer));
                if (op.is_send) {
                    const auto at = computed_at.find(tensor_key(op));
                    if (at == computed_at.end() || at->second >= k)
                        reject(step, where + ": the rank has not computed it before this batch is posted");
                    sends[{r, op.peer}].push_back({{r, k}, &op});
                } else {
                    received_at.emplace(tensor_key(op), k);
                    receives[{op.peer, r}].push_back({{r, k}, &op});
                }
            }
        for (int k = 0; k < slots; ++k)
            for (const Op& op : s.ranks[r][k])
                if (const auto need = needed(op, r, pl, false)) {
                    const auto at = received_at.find(tensor_key(*need));
                    if (at == received_at.end() || at->second > k)
                        reject(step, fmt::format("rank {} slot {}: {} needs {} from rank {}, received in no batch up to {}", r, k,
                                                 format_op(op), message(*need), need->peer, k));
                }
    }
    std::vector<std::pair<Posted, Posted>> pairs;
    for (const auto& [channel, out] : sends) {
        const auto& in = receives[channel];
        if (in.size() != out.size())
            reject(step, fmt::format("channel {} -> {}: {} sends, {} receives", channel.first, channel.second, out.size(), in.size()));
        for (size_t i = 0; i < out.size(); ++i) {
            if (tensor_key(*out[i].second) != tensor_key(*in[i].second))
                reject(step, fmt::format("channel {} -> {}: send {} carries {}, but receive {} expects {}", channel.first,
                                         channel.second, i, message(*out[i].second), i, message(*in[i].second)));
            pairs.emplace_back(out[i].first, in[i].first);
        }
    }
    for (const auto& [channel, in] : receives)
        if (!sends.count(channel) && !in.empty())
            reject(step, fmt::format("channel {} -> {}: {} receives, no send", channel.first, channel.second, in.size()));
    return pairs;
}

}  // namespace

CommProgram generic_program(const Schedule& s) {
    CommProgram program(s.ranks.size());
    for (int r = 0; r < static_cast<int>(s.ranks.size()); ++r) {
        Batch outputs;  // the previous slot's sends
        for (const Slot& slot : s.ranks[r]) {
            Batch batch = std::move(outputs);
            for (const Op& op : slot)
                if (auto in = needed(op, r, s.placement, false)) batch.push_back(*in);
            program[r].push_back(CommStep{std::move(batch), static_cast<int>(program[r].size())});
            outputs.clear();
            for (const Op& op : slot)
                if (auto out = needed(op, r, s.placement, true)) outputs.push_back(*out);
        }
        if (!outputs.empty()) program[r].push_back(CommStep{std::move(outputs), -1});
    }
    return program;
}

Graph build_batched_graph(const Schedule& s, const std::string& step) {
    const CommProgram program = s.comm_program ? *s.comm_program : generic_program(s);
    const auto pairs = pair_up(s, program, step);
    Graph g = build_graph(s, step);
    std::vector<std::uint32_t> first;
    slots_of(s, &first);
    auto id = [&](int r, int k) { return first[r] + static_cast<std::uint32_t>(k); };
    // Each end of a pair waits for the other's post: the end of the slot before the other's batch.
    auto wait = [&](const Posted& self, const Posted& other) {
        if (self.step >= static_cast<int>(s.ranks[self.rank].size())) return;  // a trailing commit: nothing waits for it
        if (other.step == 0) return;                                            // posted at time 0
        const int before = std::min(other.step - 1, static_cast<int>(s.ranks[other.rank].size()) - 1);
        g.preds[id(self.rank, self.step)].push_back({id(other.rank, before), true, true});
    };
    for (const auto& [send, receive] : pairs) wait(send, receive), wait(receive, send);
    for (int r = 0; r < s.placement.ranks; ++r)
        for (int k = 1; k < static_cast<int>(s.ranks[r].size()); ++k)
            if (!program[r][k].batch.empty()) g.preds[id(r, k)].push_back({id(r, k - 1), true, false});
    sort_topologically(g);
    return g;
}

Graph timing_graph(const Certificate& c, const Schedule& s, const std::string& step) {
    return c.timing_model == "batched" ? build_batched_graph(s, step) : build_graph(s, step);
}

namespace {

Batch shifted_batch(Batch batch, const std::vector<int>& delta, int k) {
    for (P2POp& op : batch) {
        if (op.pipeline < 0 || op.pipeline >= static_cast<int>(delta.size())) reject("program", "a message of a pipeline without a delta");
        const long long m = static_cast<long long>(op.microbatch) + static_cast<long long>(delta[op.pipeline]) * k;
        if (m > (1LL << 30)) reject("program", "a micro-batch index beyond 2^30");
        op.microbatch = static_cast<int>(m);
    }
    return batch;
}

long long ceil_div(long long a, long long b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Per channel (sender, receiver): messages in the program word's prefix, block and suffix, counted at the sender
// (sends) and at the receiver (receives).
struct ChannelCounts {
    long long u = 0, v = 0, w = 0;
};

}  // namespace

CommProgram program_instance(const CertificateProgram& p, const CertificateWord& w, int t) {
    CommProgram out(p.block.size());
    for (size_t r = 0; r < p.block.size(); ++r) {
        std::vector<Batch> steps(p.prefix[r].begin(), p.prefix[r].end());
        for (int j = 0; j < t; ++j)
            for (const Batch& b : p.block[r]) steps.push_back(shifted_batch(b, p.delta, j));
        for (const Batch& b : p.suffix[r]) steps.push_back(shifted_batch(b, p.delta, t));
        const size_t slots = w.prefix[r].size() + w.block[r].size() * static_cast<size_t>(t) + w.suffix[r].size();
        for (size_t k = 0; k < steps.size(); ++k)
            out[r].push_back(CommStep{std::move(steps[k]), k < slots ? static_cast<int>(k) : -1});
    }
    return out;
}

std::string check_program(const Certificate& c, int& T0) {
    if (!c.program) reject("program", "batched timing, but no communication program");
    const CertificateProgram& p = *c.program;
    const CertificateWord& w = *c.word;
    const size_t P = w.block.size();
    if (p.prefix.size() != P || p.block.size() != P || p.suffix.size() != P)
        reject("program", fmt::format("the program has {} ranks, the word {}", p.block.size(), P));
    if (p.delta != w.delta) reject("program", "the program's deltas are not the word's");
    // One batch per slot of a block, and the fixed parts one trailing commit apart at most: step k runs slot k for
    // every t.
    long long horizon = agreement_horizon(w), T = 1;
    for (size_t r = 0; r < P; ++r) {
        const long long L = static_cast<long long>(w.block[r].size());
        if (static_cast<long long>(p.block[r].size()) != L)
            reject("program", fmt::format("rank {}: {} batches per block for {} slots", r, p.block[r].size(), L));
        const long long fixed_slots = static_cast<long long>(w.prefix[r].size() + w.suffix[r].size());
        const long long fixed_batches = static_cast<long long>(p.prefix[r].size() + p.suffix[r].size());
        if (fixed_batches != fixed_slots && fixed_batches != fixed_slots + 1)
            reject("program", fmt::format("rank {}: {} fixed batches for {} fixed slots", r, fixed_batches, fixed_slots));
        if (L > 0) {
            horizon = std::max(horizon, (fixed_batches + L + L - 1) / L);
            // A step's block coordinates in the two words differ by a fixed number of blocks once each word's prefix
            // and suffix lie a whole block apart from the other's.
            auto apart = [](size_t a, size_t b) { return std::llabs(static_cast<long long>(a) - static_cast<long long>(b)); };
            T = std::max(T, ceil_div(apart(w.prefix[r].size(), p.prefix[r].size()), L) +
                                ceil_div(apart(w.suffix[r].size(), p.suffix[r].size()), L) + 2);
        }
    }
    bool attached = false;
    for (int t = 0; t <= horizon; ++t) {
        const int m = w.m_origin + w.step * t;
        const Schedule generated = generate(c, m);
        attached = generated.comm_program.has_value();
        const CommProgram expected = generated.comm_program ? *generated.comm_program : generic_program(generated);
        const CommProgram mine = program_instance(p, w, t);
        for (size_t r = 0; r < P; ++r) {
            if (expected.size() != P || expected[r].size() != mine[r].size())
                reject("program", fmt::format("at M = {} rank {} has {} batches in the generator's program, {} in the word's", m,
                                              r, expected.size() == P ? expected[r].size() : 0, mine[r].size()));
            for (size_t k = 0; k < mine[r].size(); ++k)
                if (expected[r][k].batch != mine[r][k].batch || expected[r][k].slot != mine[r][k].slot)
                    reject("program", fmt::format("at M = {} rank {} batch {} differs from the generator's program", m, r, k));
        }
    }
    // Channels pair by posting order: a running counter on each end. With the same growth per block on both ends and
    // the same fixed count, a message of a block pairs with one a fixed number of blocks away once the counters'
    // prefix and suffix parts can no longer meet.
    std::map<std::pair<int, int>, ChannelCounts> sends, receives;
    for (size_t r = 0; r < P; ++r) {
        auto count = [&](const std::vector<Batch>& part, long long ChannelCounts::*field) {
            for (const Batch& b : part)
                for (const P2POp& op : b) {
                    const int rank = static_cast<int>(r);
                    if (op.is_send) ++(sends[{rank, op.peer}].*field);
                    else ++(receives[{op.peer, rank}].*field);
                }
        };
        count(p.prefix[r], &ChannelCounts::u), count(p.block[r], &ChannelCounts::v), count(p.suffix[r], &ChannelCounts::w);
    }
    std::map<std::pair<int, int>, bool> channels;
    for (const auto& [ch, n] : sends) channels[ch] = true;
    for (const auto& [ch, n] : receives) channels[ch] = true;
    for (const auto& [ch, unused] : channels) {
        const ChannelCounts s = sends[ch], q = receives[ch];
        if (s.v != q.v || s.u + s.w != q.u + q.w)
            reject("program", fmt::format("channel {} -> {}: {} + {}t sends, {} + {}t receives", ch.first, ch.second, s.u + s.w,
                                          s.v, q.u + q.w, q.v));
        if (s.v > 0) T = std::max(T, ceil_div(std::llabs(s.u - q.u) + std::max(s.w, q.w), s.v) + 2);
    }
    const int dataflow_T0 = T0;
    T0 = static_cast<int>(std::max<long long>(T, T0));
    return fmt::format("the program word's instances are the generator's {} for t = 0..{} (Lemma 1 on batch sequences), one "
                       "batch per slot; {} channels with equal growth on both ends; batched edges in block coordinates "
                       "fixed from T0 = {} (dataflow's {}), given that the program is a periodic word for every M "
                       "(argued, proofs/method.md §2b)",
                       attached ? "attached program" : "generic rule",
                       horizon, channels.size(), T0, dataflow_T0);
}

}  // namespace pp::check
