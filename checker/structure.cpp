// Stability, super-step potentials and the numbers derived from them (proofs/method.md §2-3), recomputed: the
// certificate gives only sigma, alpha and beta; T0, the head, k_inv, tau, the lag and T_struct come from here.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace pp::check {
namespace {

long long floor_div(long long a, long long b) {
    long long q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}

}  // namespace

int stable_from(const CertificateWord& w) {
    const size_t pipelines = w.delta.size();
    std::vector<long long> maxU(pipelines, LLONG_MIN), minV(pipelines, LLONG_MAX), maxV(pipelines, LLONG_MIN),
        minW(pipelines, LLONG_MAX);
    auto scan = [&](const std::vector<std::vector<Slot>>& part, auto&& update) {
        for (const auto& rank : part)
            for (const Slot& slot : rank)
                for (const Op& op : slot) {
                    if (op.pipeline >= static_cast<int>(pipelines)) reject("stability", "an op names a pipeline without a delta");
                    update(op.pipeline, op.microbatch);
                }
    };
    scan(w.prefix, [&](int p, long long m) { maxU[p] = std::max(maxU[p], m); });
    scan(w.block, [&](int p, long long m) { minV[p] = std::min(minV[p], m), maxV[p] = std::max(maxV[p], m); });
    scan(w.suffix, [&](int p, long long m) { minW[p] = std::min(minW[p], m); });
    long long T0 = 1;
    for (size_t p = 0; p < pipelines; ++p) {
        const long long d = w.delta[p];
        const bool U = maxU[p] != LLONG_MIN, V = maxV[p] != LLONG_MIN, W = minW[p] != LLONG_MAX;
        if (d == 0) {
            if (V) reject("stability", fmt::format("pipeline {} has block ops but does not grow", p));
            if (U && W) reject("stability", fmt::format("pipeline {} does not grow but has ops before and after the blocks", p));
            continue;
        }
        if (U && W) T0 = std::max(T0, floor_div(maxU[p] - minW[p], d) + 1);
        if (U && V && W) T0 = std::max(T0, floor_div(maxU[p] - minV[p], d) + floor_div(maxV[p] - minW[p], d) + 1);
    }
    if (T0 > 1 << 20) reject("stability", "T0 beyond 2^20 blocks");
    return static_cast<int>(T0);
}

int super_step(const CertificatePotentials& p, const Place& place, int t) {
    switch (place.part) {
        case Part::Prefix: return p.alpha[place.rank][place.index];
        case Part::Block: return place.block + p.sigma[place.rank];
        case Part::Suffix: return t + p.beta[place.rank][place.index];
    }
    return 0;
}

void check_potentials(const Certificate& c, const Schedule& instance, int t, const Derived* derived) {
    const CertificateWord& w = *c.word;
    const CertificatePotentials& p = *c.potentials;
    const Graph g = timing_graph(c, instance, "potentials");
    const auto at = places(w, t);
    const std::string step = "potentials on G_" + std::to_string(t);
    for (std::uint32_t v = 0; v < g.rank.size(); ++v)
        for (const Pred& e : g.preds[v]) {
            const int su = super_step(p, at[e.from], t), sv = super_step(p, at[v], t);
            if (sv < su)
                reject(step, fmt::format("an edge goes from super-step {} (rank {}) back to super-step {} (rank {})", su,
                                         g.rank[e.from], sv, g.rank[v]));
            if (derived && at[v].part != Part::Prefix && sv > derived->head_end && sv - su > derived->lag)
                reject(step, fmt::format("an edge spans {} super-steps, more than the lag {} of G_T", sv - su, derived->lag));
        }
}

Derived derive(const Certificate& c, const Schedule& instance_T, int T0) {
    const CertificateWord& w = *c.word;
    const CertificatePotentials& p = *c.potentials;
    Derived d;
    d.T0 = T0;
    const int P = static_cast<int>(w.block.size());
    const int T = p.T;
    const Graph g = timing_graph(c, instance_T, "potentials");
    const auto at = places(w, T);
    const int min_sig = *std::min_element(p.sigma.begin(), p.sigma.end());
    const int max_sig = *std::max_element(p.sigma.begin(), p.sigma.end());
    int head = min_sig - 1, min_beta = INT_MAX;
    for (int r = 0; r < P; ++r) {
        for (int a : p.alpha[r]) head = std::max(head, a);
        for (int b : p.beta[r]) min_beta = std::min(min_beta, b);
    }
    for (std::uint32_t v = 0; v < g.rank.size(); ++v)
        for (const Pred& e : g.preds[v])
            if (at[e.from].part == Part::Prefix && at[v].part != Part::Prefix) head = std::max(head, super_step(p, at[v], T));
    d.head_end = head;
    d.k_inv = std::max(head + 1, max_sig);
    d.tau = std::min(min_beta, min_sig);
    for (std::uint32_t v = 0; v < g.rank.size(); ++v)
        for (const Pred& e : g.preds[v]) {
            const int sv = super_step(p, at[v], T);
            if (at[v].part == Part::Prefix || sv <= head) continue;
            d.lag = std::max(d.lag, sv - super_step(p, at[e.from], T));
        }
    d.T_struct = std::max({T0, head - (min_beta == INT_MAX ? head : min_beta) + 1, d.k_inv - d.tau + 1, head - min_sig + 1, 1});
    return d;
}

}  // namespace pp::check
