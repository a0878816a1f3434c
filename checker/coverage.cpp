// Op coverage for every M, by induction on t. For one (pipeline, stage) and one kind of op, let u, v, w count how
// often micro-batch x occurs in the word's prefix, block (at j = 0) and suffix (at t = 0); pipeline p grows by d per
// block and holds N micro-batches at t = 0. Instance t counts
//     c_t(x) = u(x) + sum_{j<t} v(x - j d) + w(x - t d),
// so c_{t+1}(x) - c_t(x) = D(x - t d) with D(y) = v(y) + w(y - d) - w(y), the same function for every t. Every op
// occurs once in every instance -- c_t = 1 exactly on [0, N + t d) -- iff c_0 = 1 on [0, N) and 0 elsewhere, and
// D = 1 exactly on [N, N + d) (then induction on t; conversely t = 0 and t = 1 force both). Likewise a W for every I:
// c^W_t = c^I_t for every t iff c^W_0 = c^I_0 and D^W = D^I. Finitely many integers compared: no solver is needed.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

namespace pp::check {
namespace {

using Counts = std::map<long long, long long>;  // micro-batch -> multiplicity (zeros left out)

void add(Counts& c, long long x, long long k) {
    if ((c[x] += k) == 0) c.erase(x);
}

struct Parts {
    Counts u, v, w;
};

// c_0 and D of one kind.
std::pair<Counts, Counts> base_and_step(const Parts& p, long long d) {
    Counts c0 = p.u, D = p.v;
    for (const auto& [x, k] : p.w) add(c0, x, k), add(D, x + d, k), add(D, x, -k);
    return {c0, D};
}

// "" when c holds every x of [lo, hi) once and nothing else, else the first x where it does not.
std::string once_exactly(const Counts& c, long long lo, long long hi) {
    for (const auto& [x, k] : c)
        if (x < lo || x >= hi || k != 1) return fmt::format("micro-batch {} occurs {} time(s)", x, k);
    if (static_cast<long long>(c.size()) != hi - lo) {
        for (long long x = lo; x < hi; ++x)
            if (!c.count(x)) return fmt::format("micro-batch {} is missing", x);
    }
    return "";
}

}  // namespace

std::string check_coverage(const CertificateWord& w, const Placement& base) {
    enum Kind { kF, kBackward, kI, kW };
    std::map<std::pair<int, int>, std::array<Parts, 4>> parts;  // (pipeline, stage)
    for (int p = 0; p < base.pipeline_count(); ++p)
        for (int s = 0; s < base.pipelines[p].stages(); ++s) parts[{p, s}];
    auto count = [&](const std::vector<std::vector<Slot>>& part, Counts Parts::*into) {
        for (const auto& rank : part)
            for (const Slot& slot : rank)
                for (const Op& op : slot) {
                    const auto it = parts.find({op.pipeline, op.stage});
                    if (it == parts.end()) reject("coverage", format_op(op) + " names a stage the placement does not have");
                    auto& kinds = it->second;
                    switch (op.kind) {
                        case OpKind::F: add(kinds[kF].*into, op.microbatch, 1); break;
                        case OpKind::B: add(kinds[kBackward].*into, op.microbatch, 1); break;
                        case OpKind::I: add(kinds[kBackward].*into, op.microbatch, 1), add(kinds[kI].*into, op.microbatch, 1); break;
                        case OpKind::W: add(kinds[kW].*into, op.microbatch, 1); break;
                    }
                }
    };
    count(w.prefix, &Parts::u);
    count(w.block, &Parts::v);
    count(w.suffix, &Parts::w);
    for (const auto& [key, kinds] : parts) {
        const auto p = key.first, s = key.second;  // not a structured binding: clang 14 cannot capture one
        const long long N = base.pipelines[p].microbatches, d = w.delta[p];
        auto where = [&](const char* what) { return fmt::format("pipeline {}, stage {}, {}: ", p, s, what); };
        for (const auto& [kind, name] : {std::pair{kF, "forwards"}, std::pair{kBackward, "backwards (B or I)"}}) {
            const auto [c0, D] = base_and_step(kinds[kind], d);
            if (const std::string bad = once_exactly(c0, 0, N); !bad.empty()) reject("coverage", where(name) + "at t = 0 " + bad);
            if (const std::string bad = once_exactly(D, N, N + d); !bad.empty())
                reject("coverage", where(name) + "one more block does not add each new micro-batch once: " + bad);
        }
        if (base_and_step(kinds[kW], d) != base_and_step(kinds[kI], d))
            reject("coverage", where("W") + "the weight gradients are not those of the split backwards (one W per I)");
    }
    return fmt::format("every op once in every instance, by induction on t: at t = 0, and one block adds exactly the d "
                       "new micro-batches of each of the {} (pipeline, stage) pairs, a W for every I",
                       parts.size());
}

}  // namespace pp::check
