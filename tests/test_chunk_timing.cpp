// Issue 11: two-stream timing of one slot against timelines worked out by hand (the derivations are in the
// comments), and `best` against an independent brute-force interleaver written here: its own component
// names, data edges and timer, sharing nothing with verifier/ but the chunk-cost text.
#include "model/chunk_dag.hpp"
#include "model/overlap_pattern.hpp"
#include "verifier/chunk_best.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/slot_timing.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace pp;

namespace {

// Case A (one layer): attn_f=2 dispatch_f=1 mlp_f=3 combine_f=1 | combine_b=1 mlp_i=3 mlp_w=2 dispatch_b=4 attn_i=2 attn_w=1.
const char* kCaseA = "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1";

SlotTimeline timed(const std::string& costs, const std::string& pattern, SlotKind kind) {
    return time_slot_kind(kind, parse_chunk_costs(costs), parse_pattern(pattern)).timeline;
}

// start/end of a named component in a timed slot.
std::pair<Rational, Rational> when(const SlotKindTiming& t, const std::string& name) {
    for (int v = 0; v < t.dag.node_count(); ++v)
        if (t.dag.nodes[static_cast<size_t>(v)].name() == name)
            return {t.timeline.times[static_cast<size_t>(v)].start, t.timeline.times[static_cast<size_t>(v)].end};
    FAIL("no component " << name);
    return {};
}

using Span = std::pair<Rational, Rational>;
Span span(int a, int b) { return {Rational(a), Rational(b)}; }

}  // namespace

TEST_CASE("chunk timing: 1-layer pair under deepseek, hand timeline", "[chunk]") {
    // C: attn_f0 [0,2]  mlp_i0 [2,5] (combine_b0 done at 1)  mlp_w0 [5,7]  mlp_f0 [7,10] (dispatch_f0 done at 3)
    //    attn_i0 [10,12] (dispatch_b0 done at 9)  attn_w0 [12,13]
    // N: combine_b0 [0,1]  dispatch_f0 [2,3] (after attn_f0)  dispatch_b0 [5,9] (after mlp_i0)  combine_f0 [10,11]
    // The compute stream never waits: duration 13 = compute sum, nothing exposed; network time 1+1+4+1 = 7.
    const auto t = time_slot_kind(SlotKind::PairFB, parse_chunk_costs(kCaseA), parse_pattern("deepseek"));
    CHECK(when(t, "attn_f0") == span(0, 2));
    CHECK(when(t, "combine_b0") == span(0, 1));
    CHECK(when(t, "mlp_i0") == span(2, 5));
    CHECK(when(t, "dispatch_f0") == span(2, 3));
    CHECK(when(t, "mlp_w0") == span(5, 7));
    CHECK(when(t, "dispatch_b0") == span(5, 9));
    CHECK(when(t, "mlp_f0") == span(7, 10));
    CHECK(when(t, "combine_f0") == span(10, 11));
    CHECK(when(t, "attn_i0") == span(10, 12));
    CHECK(when(t, "attn_w0") == span(12, 13));
    CHECK(t.timeline.duration == 13);
    CHECK(t.timeline.exposed_comm == 0);
    CHECK(t.timeline.network_time == 7);
}

TEST_CASE("chunk timing: 1-layer pair under megatron, serial and best", "[chunk]") {
    // megatron (no --delay-wgrad-compute): dispatch_b0 waits for the whole MLP backward (mlp_w0 ends at 7):
    // dispatch_b0 [7,11], mlp_f0 [7,10], combine_f0 [11,12], attn_i0 [11,13], attn_w0 [13,14];
    // compute idles in [10,11] while dispatch_b0 runs: duration 14, exposed 1.
    const auto m = time_slot_kind(SlotKind::PairFB, parse_chunk_costs(kCaseA), parse_pattern("megatron"));
    CHECK(when(m, "dispatch_b0") == span(7, 11));
    CHECK(when(m, "combine_f0") == span(11, 12));
    CHECK(when(m, "attn_i0") == span(11, 13));
    CHECK(m.timeline.duration == 14);
    CHECK(m.timeline.exposed_comm == 1);
    // serial: the plain sum 7 + 13 = 20, all 7 units of network exposed.
    const auto s = timed(kCaseA, "serial", SlotKind::PairFB);
    CHECK(s.duration == 20);
    CHECK(s.exposed_comm == 7);
    CHECK(s.network_time == 7);
    // best: at least the compute sum 13, and deepseek reaches it.
    const auto b = timed(kCaseA, "best", SlotKind::PairFB);
    CHECK(b.duration == 13);
    CHECK(b.exposed_comm == 0);
}

TEST_CASE("chunk timing: lone ops of case A by hand", "[chunk]") {
    // F: the chain attn_f, dispatch_f, mlp_f, combine_f = 7, its 2 network units exposed.
    CHECK(timed(kCaseA, "deepseek", SlotKind::F).duration == 7);
    CHECK(timed(kCaseA, "deepseek", SlotKind::F).exposed_comm == 2);
    // I: combine_b, mlp_i, dispatch_b, attn_i = 10, 5 exposed.  W: mlp_w + attn_w = 3, no network.
    CHECK(timed(kCaseA, "deepseek", SlotKind::I).duration == 10);
    CHECK(timed(kCaseA, "deepseek", SlotKind::I).exposed_comm == 5);
    CHECK(timed(kCaseA, "deepseek", SlotKind::W).duration == 3);
    CHECK(timed(kCaseA, "deepseek", SlotKind::W).network_time == 0);
    // B with W inline: combine_b [0,1] mlp_i [1,4] mlp_w [4,6] dispatch_b [4,8] attn_i [8,10] attn_w [10,11]:
    // 11, exposed [0,1] + [6,8] = 3. Under megatron dispatch_b waits for mlp_w: [6,10], attn_i [10,12],
    // attn_w [12,13]: 13, exposed 1 + 4 = 5.
    CHECK(timed(kCaseA, "deepseek", SlotKind::B).duration == 11);
    CHECK(timed(kCaseA, "deepseek", SlotKind::B).exposed_comm == 3);
    CHECK(timed(kCaseA, "megatron", SlotKind::B).duration == 13);
    CHECK(timed(kCaseA, "megatron", SlotKind::B).exposed_comm == 5);
}

TEST_CASE("chunk timing: a dispatch longer than the compute hiding it is partly exposed", "[chunk]") {
    // Case A with dispatch_f=6, dispatch_b=1. Under deepseek the forward's dispatch hides under the backward's
    // mlp_i + mlp_w = 5 < 6: dispatch_f0 [2,8], mlp_i0 [2,5], mlp_w0 [5,7], compute waits [7,8], mlp_f0 [8,11],
    // dispatch_b0 [8,9], combine_f0 [11,12], attn_i0 [11,13], attn_w0 [13,14]: duration 14, exposed 1.
    const std::string costs = "attn_f=2,dispatch_f=6,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=1,attn_i=2,attn_w=1";
    const auto t = time_slot_kind(SlotKind::PairFB, parse_chunk_costs(costs), parse_pattern("deepseek"));
    CHECK(when(t, "dispatch_f0") == span(2, 8));
    CHECK(when(t, "mlp_f0") == span(8, 11));
    CHECK(when(t, "dispatch_b0") == span(8, 9));
    CHECK(when(t, "attn_w0") == span(13, 14));
    CHECK(t.timeline.duration == 14);
    CHECK(t.timeline.exposed_comm == 1);
}

TEST_CASE("chunk timing: 2-layer pairs by hand", "[chunk]") {
    // Every component 1, L=2, deepseek (j = forward layer, m = 1 - j):
    // C: aF0[0,1] mI1[1,2] mW1[2,3] mF0[3,4] aI1[4,5] aW1[5,6] aF1[6,7] mI0[7,8] mW0[8,9] mF1[9,10] aI0[10,11] aW0[11,12]
    // N: cB1[0,1] dF0[1,2] dB1[2,3] cF0[4,5] cB0[5,6] dF1[7,8] dB0[8,9] cF1[10,11]
    // 12 = compute sum, nothing exposed, 8 units of network.
    const std::string ones = "layers=2,attn_f=1,dispatch_f=1,mlp_f=1,combine_f=1,combine_b=1,mlp_i=1,mlp_w=1,dispatch_b=1,attn_i=1,attn_w=1";
    const auto t = time_slot_kind(SlotKind::PairFB, parse_chunk_costs(ones), parse_pattern("deepseek"));
    CHECK(when(t, "combine_f0") == span(4, 5));
    CHECK(when(t, "combine_b0") == span(5, 6));
    CHECK(when(t, "attn_f1") == span(6, 7));
    CHECK(when(t, "dispatch_b0") == span(8, 9));
    CHECK(when(t, "combine_f1") == span(10, 11));
    CHECK(when(t, "attn_w0") == span(11, 12));
    CHECK(t.timeline.duration == 12);
    CHECK(t.timeline.exposed_comm == 0);
    CHECK(t.timeline.network_time == 8);
    // Network components 2, compute 1: the network stream is busy back to back (2 x 8 = 16) and the compute
    // stream waits four times for one unit: aF0[0,1] then mI1 waits for cB1 [0,2]; mF0 ends 5, aI1 waits for
    // dB1 [4,6]; aF1 ends 9, mI0 waits for cB0 [8,10]; mF1 ends 13, aI0 waits for dB0 [12,14]: 16, exposed 4.
    const std::string heavy = "layers=2,attn_f=1,dispatch_f=2,mlp_f=1,combine_f=2,combine_b=2,mlp_i=1,mlp_w=1,dispatch_b=2,attn_i=1,attn_w=1";
    const auto h = time_slot_kind(SlotKind::PairFB, parse_chunk_costs(heavy), parse_pattern("deepseek"));
    CHECK(when(h, "mlp_i1") == span(2, 3));
    CHECK(when(h, "attn_i1") == span(6, 7));
    CHECK(when(h, "mlp_i0") == span(10, 11));
    CHECK(when(h, "attn_i0") == span(14, 15));
    CHECK(h.timeline.duration == 16);
    CHECK(h.timeline.exposed_comm == 4);
    // The network stream alone needs 16: best cannot do better.
    CHECK(timed(heavy, "best", SlotKind::PairFB).duration == 16);
}

TEST_CASE("chunk timing: contention slows compute while the network runs", "[chunk]") {
    // Lone F with a shared expert, slowdown 1 (compute at half speed during an all-to-all):
    // attn_f [0,2]; dispatch_f [2,4] and shared_f (cost 2) beside it at half speed: 1 unit of work by 4, the
    // last unit alone [4,5]; mlp_f needs dispatch_f and the compute stream: [5,8]; combine_f [8,9].
    // Duration 9, network 3, exposed only combine_f's 1.
    const std::string costs =
        "attn_f=2,dispatch_f=2,mlp_f=3,combine_f=1,combine_b=0,mlp_i=0,mlp_w=0,dispatch_b=0,attn_i=0,attn_w=0,shared_f=2,slowdown=1";
    const auto t = time_slot_kind(SlotKind::F, parse_chunk_costs(costs), parse_pattern("deepseek"));
    CHECK(when(t, "shared_f0") == span(2, 5));
    CHECK(when(t, "mlp_f0") == span(5, 8));
    CHECK(t.timeline.duration == 9);
    CHECK(t.timeline.exposed_comm == 1);
    CHECK(t.timeline.network_time == 3);
    // Without contention the shared expert hides under the dispatch: [2,4], mlp_f [4,7], combine_f [7,8].
    const std::string plain = costs.substr(0, costs.rfind(",slowdown"));
    CHECK(timed(plain, "deepseek", SlotKind::F).duration == 8);
    // Under megatron the shared expert is inside the attention node: dispatch_f waits for it, 2+2+2+3+1 = 10.
    CHECK(timed(plain, "megatron", SlotKind::F).duration == 10);
}

// ---------------------------------------------------------------------------------------------------------
// An independent brute force: component names, streams, costs and data edges written out here, every
// pair of stream orders that keeps each chunk's own chain order on a stream, timed by a plain fixed-point
// timer in integers.
namespace {

struct BfNode {
    std::string name;
    int stream;  // 0 compute, 1 network
    int cost;
};

struct BfSlot {
    std::vector<BfNode> nodes;
    std::vector<std::pair<std::string, std::string>> edges;
};

// One layer-pair's worth of hand-written structure: forward layer chain and backward layer chain.
BfSlot bf_pair(int L, const std::map<std::string, int>& cost, bool forward, bool input_grad, bool weight_grad) {
    BfSlot s;
    auto add = [&](const std::string& key, int l, int stream) {
        const int c = cost.at(key);
        if (c > 0) s.nodes.push_back({key + std::to_string(l), stream, c});
    };
    for (int l = 0; l < L; ++l) {
        if (forward) {
            add("attn_f", l, 0), add("dispatch_f", l, 1), add("mlp_f", l, 0), add("combine_f", l, 1);
            s.edges.push_back({"attn_f" + std::to_string(l), "dispatch_f" + std::to_string(l)});
            s.edges.push_back({"dispatch_f" + std::to_string(l), "mlp_f" + std::to_string(l)});
            s.edges.push_back({"mlp_f" + std::to_string(l), "combine_f" + std::to_string(l)});
            if (l + 1 < L) s.edges.push_back({"combine_f" + std::to_string(l), "attn_f" + std::to_string(l + 1)});
        }
        if (input_grad) {
            add("combine_b", l, 1), add("mlp_i", l, 0), add("dispatch_b", l, 1), add("attn_i", l, 0);
            s.edges.push_back({"combine_b" + std::to_string(l), "mlp_i" + std::to_string(l)});
            s.edges.push_back({"mlp_i" + std::to_string(l), "dispatch_b" + std::to_string(l)});
            s.edges.push_back({"dispatch_b" + std::to_string(l), "attn_i" + std::to_string(l)});
            if (l > 0) s.edges.push_back({"attn_i" + std::to_string(l), "combine_b" + std::to_string(l - 1)});
        }
        if (weight_grad) {
            add("mlp_w", l, 0), add("attn_w", l, 0);
            if (input_grad) {
                s.edges.push_back({"mlp_i" + std::to_string(l), "mlp_w" + std::to_string(l)});
                s.edges.push_back({"attn_i" + std::to_string(l), "attn_w" + std::to_string(l)});
            }
        }
    }
    return s;  // every cost > 0 in the cases below, so no edge needs contracting
}

// Minimum duration over all stream orders; each order is timed by iterating start = max(stream prev end,
// pred ends) to a fixed point. Orders whose iteration does not settle (a cycle) are skipped.
int bf_best(const BfSlot& s) {
    const int n = static_cast<int>(s.nodes.size());
    std::map<std::string, int> id;
    for (int v = 0; v < n; ++v) id[s.nodes[static_cast<size_t>(v)].name] = v;
    std::vector<std::vector<int>> pred(static_cast<size_t>(n));
    for (const auto& [a, b] : s.edges) pred[static_cast<size_t>(id.at(b))].push_back(id.at(a));
    std::vector<int> streams[2];
    for (int v = 0; v < n; ++v) streams[s.nodes[static_cast<size_t>(v)].stream].push_back(v);
    // Reachability (Floyd-Warshall): an order that puts a node before one of its own ancestors cannot run.
    std::vector<std::vector<bool>> reach(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n), false));
    for (int v = 0; v < n; ++v)
        for (int p : pred[static_cast<size_t>(v)]) reach[static_cast<size_t>(p)][static_cast<size_t>(v)] = true;
    for (int k = 0; k < n; ++k)
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b)
                if (reach[static_cast<size_t>(a)][static_cast<size_t>(k)] && reach[static_cast<size_t>(k)][static_cast<size_t>(b)])
                    reach[static_cast<size_t>(a)][static_cast<size_t>(b)] = true;
    // All orders of a stream in which every same-stream ancestor comes first.
    auto orders_of = [&](const std::vector<int>& nodes) {
        std::vector<std::vector<int>> all;
        std::vector<int> perm = nodes;
        std::sort(perm.begin(), perm.end());
        do {
            std::vector<int> pos(static_cast<size_t>(n), -1);
            for (size_t k = 0; k < perm.size(); ++k) pos[static_cast<size_t>(perm[k])] = static_cast<int>(k);
            bool ok = true;
            for (int v : perm)
                for (int p : perm)
                    if (reach[static_cast<size_t>(p)][static_cast<size_t>(v)] && pos[static_cast<size_t>(p)] > pos[static_cast<size_t>(v)]) ok = false;
            if (ok) all.push_back(perm);
        } while (std::next_permutation(perm.begin(), perm.end()));
        return all;
    };
    const auto compute_orders = orders_of(streams[0]);
    const auto network_orders = orders_of(streams[1]);
    int best = 1 << 30;
    for (const auto& co : compute_orders)
        for (const auto& no : network_orders) {
            std::vector<int> prev(static_cast<size_t>(n), -1);
            for (const auto* order : {&co, &no})
                for (size_t k = 1; k < order->size(); ++k) prev[static_cast<size_t>((*order)[k])] = (*order)[k - 1];
            std::vector<int> start(static_cast<size_t>(n), 0);
            bool settled = false;
            for (int round = 0; round <= n + 1 && !settled; ++round) {
                settled = true;
                for (int v = 0; v < n; ++v) {
                    int t = 0;
                    if (prev[static_cast<size_t>(v)] >= 0) {
                        const int p = prev[static_cast<size_t>(v)];
                        t = std::max(t, start[static_cast<size_t>(p)] + s.nodes[static_cast<size_t>(p)].cost);
                    }
                    for (int p : pred[static_cast<size_t>(v)]) t = std::max(t, start[static_cast<size_t>(p)] + s.nodes[static_cast<size_t>(p)].cost);
                    if (t != start[static_cast<size_t>(v)]) start[static_cast<size_t>(v)] = t, settled = false;
                }
            }
            if (!settled) continue;  // a cycle: this order cannot run
            int end = 0;
            for (int v = 0; v < n; ++v) end = std::max(end, start[static_cast<size_t>(v)] + s.nodes[static_cast<size_t>(v)].cost);
            best = std::min(best, end);
        }
    return best;
}

std::string chunk_text(int L, const std::map<std::string, int>& cost) {
    std::string text = "layers=" + std::to_string(L);
    for (const auto& [k, v] : cost) text += "," + k + "=" + std::to_string(v);
    return text;
}

}  // namespace

TEST_CASE("chunk best: equals an independent brute force, never worse than a fixed pattern", "[chunk][best]") {
    // Small random cost sets (fixed seed), 1-layer F&B pairs, 2-layer F&I pairs and lone B.
    std::uint32_t seed = 12345;
    auto next = [&] {
        seed = seed * 1103515245u + 12345u;
        return static_cast<int>((seed >> 16) % 5) + 1;
    };
    const std::vector<std::string> keys = {"attn_f", "dispatch_f", "mlp_f", "combine_f", "combine_b",
                                           "mlp_i", "mlp_w", "dispatch_b", "attn_i", "attn_w"};
    for (int round = 0; round < 12; ++round) {
        std::map<std::string, int> cost;
        for (const auto& k : keys) cost[k] = next();
        struct Case {
            int L;
            SlotKind kind;
            bool f, i, w;
        };
        for (const Case c : {Case{1, SlotKind::PairFB, true, true, true}, Case{2, SlotKind::PairFI, true, true, false},
                             Case{2, SlotKind::B, false, true, true}}) {
            const std::string text = chunk_text(c.L, cost);
            INFO(text << " " << slot_kind_name(c.kind));
            const int expected = bf_best(bf_pair(c.L, cost, c.f, c.i, c.w));
            const auto best = timed(text, "best", c.kind);
            CHECK(best.duration == expected);
            for (const char* fixed : {"deepseek", "megatron", "serial"}) CHECK(best.duration <= timed(text, fixed, c.kind).duration);
            // With no contention, exposed = duration - compute sum: the best order also exposes the least.
            CHECK(best.exposed_comm + best.compute_time == best.duration);
        }
    }
}

TEST_CASE("chunk best: with contention, enumeration never loses to a fixed pattern", "[chunk][best]") {
    const std::string costs = std::string(kCaseA) + ",slowdown=1/2";
    const auto best = timed(costs, "best", SlotKind::PairFB);
    for (const char* fixed : {"deepseek", "megatron", "serial"}) CHECK(best.duration <= timed(costs, fixed, SlotKind::PairFB).duration);
    // The slowdown only lengthens: best with contention >= best without.
    CHECK(best.duration >= timed(kCaseA, "best", SlotKind::PairFB).duration);
}
