#include "verifier/slot_timing.hpp"

#include <array>

namespace pp {

SlotTimeline time_slot(const SlotDag& dag, const StreamOrder& order, const Rational& slowdown) {
    if (auto problem = check_order(dag, order)) throw SlotOrderError(problem->message);
    const size_t n = dag.nodes.size();
    std::vector<std::vector<int>> preds = dag.pred;
    for (const auto& [a, b] : order.extra) preds[static_cast<size_t>(b)].push_back(a);

    SlotTimeline out;
    out.times.assign(n, {});
    std::vector<bool> done(n, false);
    std::array<size_t, kStreams> head{};
    std::array<int, kStreams> running{-1, -1};
    constexpr size_t kC = static_cast<size_t>(Stream::Compute), kN = static_cast<size_t>(Stream::Network);
    Rational t{0}, remaining{0}, network_end{0};
    const Rational stretch = Rational(1) + slowdown;  // compute time per unit of work while the network runs

    auto ready = [&](int v) {
        for (int p : preds[static_cast<size_t>(v)])
            if (!done[static_cast<size_t>(p)]) return false;
        return true;
    };
    for (;;) {
        for (size_t s = 0; s < kStreams; ++s) {
            const auto& list = order.lists[s];
            if (running[s] >= 0 || head[s] >= list.size() || !ready(list[head[s]])) continue;
            const int v = list[head[s]++];
            running[s] = v;
            out.times[static_cast<size_t>(v)].start = t;
            if (s == kC) remaining = dag.nodes[static_cast<size_t>(v)].cost;
            else network_end = t + dag.nodes[static_cast<size_t>(v)].cost;
        }
        if (running[kC] < 0 && running[kN] < 0) break;  // check_order ruled out a deadlock: all done
        const bool contended = running[kN] >= 0 && running[kC] >= 0;
        Rational next = network_end;
        if (running[kC] >= 0) {
            const Rational compute_end = t + (contended ? remaining * stretch : remaining);
            if (running[kN] < 0 || compute_end < next) next = compute_end;
        }
        const Rational dt = next - t;
        if (running[kN] >= 0) {
            out.network_time += dt;
            if (running[kC] < 0) out.exposed_comm += dt;
        }
        if (running[kC] >= 0) {
            out.compute_time += dt;
            remaining -= contended ? dt / stretch : dt;
        }
        t = next;
        if (running[kC] >= 0 && remaining == Rational(0)) {
            out.times[static_cast<size_t>(running[kC])].end = t;
            done[static_cast<size_t>(running[kC])] = true;
            running[kC] = -1;
        }
        if (running[kN] >= 0 && network_end == t) {
            out.times[static_cast<size_t>(running[kN])].end = t;
            done[static_cast<size_t>(running[kN])] = true;
            running[kN] = -1;
        }
    }
    out.duration = t;
    return out;
}

}  // namespace pp
