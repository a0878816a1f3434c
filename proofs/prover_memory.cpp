// Activation peaks for every M: a block that allocates what it releases keeps the live count periodic, so
// the peak is the largest over prefix, one block and suffix (proofs/method.md §5).
#include "proofs/prover.hpp"

#include "verifier/memory.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tuple>

namespace pp {
namespace {

// What each slot allocates and releases, in integer ticks over every stash size (uneven stages scale each stage's).
struct StashCount {
    const ActivationModel& sizes;
    TimeScale scale;

    explicit StashCount(const ActivationModel& s) : sizes(s) {
        auto include = [&](const Rational& k) {
            scale.include(sizes.forward_alloc * k);
            scale.include(sizes.input_grad_free * k);
        };
        if (sizes.uniform()) include(Rational(1));
        for (const auto& stages : sizes.stage_scale)
            for (const Rational& k : stages) include(k);
    }
    Ticks alloc(const Op& op) const { return scale.to_ticks(sizes.forward_alloc * sizes.scale_of(op.pipeline, op.stage)); }
    Ticks free_i(const Op& op) const { return scale.to_ticks(sizes.input_grad_free * sizes.scale_of(op.pipeline, op.stage)); }
    Ticks allocated(const Slot& s) const {
        Ticks a = 0;
        for (const Op& op : s) if (op.kind == OpKind::F) a += alloc(op);
        return a;
    }
    Ticks released(const Slot& s) const {
        Ticks a = 0;
        for (const Op& op : s) {
            if (op.kind == OpKind::I) a += free_i(op);
            if (op.kind == OpKind::W) a += alloc(op) - free_i(op);
            if (op.kind == OpKind::B) a += alloc(op);
        }
        return a;
    }
    Ticks net(const std::vector<Slot>& part) const {
        Ticks n = 0;
        for (const Slot& s : part) n += allocated(s) - released(s);
        return n;
    }
};

}  // namespace

void Prover::note_activation_sizes() {
    const ActivationModel& sizes = options.activations;
    std::string scales;
    for (const auto& stages : sizes.stage_scale) {
        std::vector<std::string> each;
        for (const Rational& s : stages) each.push_back(format_rational(s));
        scales += fmt::format("{}[{}]", scales.empty() ? "" : " ", fmt::join(each, " "));
    }
    res.assumptions.push_back("activation sizes: " + format_activation_sizes(sizes) +
                              (scales.empty() ? "" : ", each stage's stash scaled by " + scales + " (per pipeline, stage 0 first)"));
}

// A zone word's live count after the blocks of zone i is a constant plus t times the nets of zones 0..i (each block
// of a zone is the same slots, raised); a positive partial sum makes the peak grow without bound, which two
// instances then show. Bounded peaks of zone words are not proved here yet.
ProofResult& Prover::prove_zone_memory() {
    const auto t0 = std::chrono::steady_clock::now();
    note_activation_sizes();
    const StashCount count(options.activations);
    const ZoneWord& w = family.zones->word;
    // The fastest growth: the largest partial sum of any rank.
    int r = -1, z = -1;
    Ticks fastest = 0;
    for (int rank = 0; rank < w.ranks(); ++rank) {
        Ticks partial = 0;
        for (int zone = 0; zone < w.zones(); ++zone) {
            partial += count.net(w.zone_block(rank, zone));
            if (partial > fastest) fastest = partial, r = rank, z = zone;
        }
    }
    if (r < 0)
        return unknown("this family's order grows in several places per rank (a zone word); its activation peak is "
                       "proved only when a zone's blocks allocate more than they release (REFUTED: it grows without "
                       "bound), and here none does");
    const Rational growth = count.scale.to_units(fastest);
    add("zone-net",
        fmt::format("on rank {} the blocks of zones 0..{} allocate {} more than they release, so the live count after "
                    "zone {} grows by {} per block",
                    r, z, format_rational(growth), z, format_rational(growth)),
        "exact count over the zone word", false, seconds_since(t0));
    // The first instance past the bound (searched up to 64 blocks; past that, the first whose live count after zone z
    // is past it: that count is L + t * growth exactly, L the fixed parts' up to z), or two instances 4 blocks apart.
    const auto peak_at = [&](int k) { return peak_activations(inst(k), options.activations)[r]; };
    int t = 0;
    bool past_bound = false;
    if (options.memory_bound) {
        for (; t <= 64 && !(past_bound = peak_at(t) > *options.memory_bound); ++t) cache.erase(t);
        if (!past_bound) {
            Ticks before = 0;
            for (int part = 0; part <= z; ++part)
                for (const ZoneSlot& fixed : w.fixed[r][part]) before += count.allocated(fixed.slot) - count.released(fixed.slot);
            const Rational needed = (*options.memory_bound - count.scale.to_units(before)) / growth;
            const Integer blocks = needed.numerator() / needed.denominator() + Integer(1);  // floor + 1: strictly past
            // Only where that instance is of a size the prover builds (about 3 ops per stage and micro-batch).
            const auto ops = [&](long long m) { return 3LL * family.ranks * family.stages_per_rank.value_or(1) * m; };
            if (blocks <= Integer(1 << 20) && ops(family.microbatches(static_cast<int>(blocks.to_int64()))) <= 20'000'000) {
                t = static_cast<int>(blocks.to_int64());
                past_bound = peak_at(t) > *options.memory_bound;
            }
        }
    }
    Counterexample cx;
    cx.ranks = family.ranks;
    if (past_bound) {
        cx.microbatches = M(t);
        cx.what = fmt::format("rank {} holds {} activations at P={}, M={} (bound {}){}; the live count grows by {} per block",
                              r, format_rational(peak_at(t)), family.ranks, M(t), format_rational(*options.memory_bound),
                              t <= 64 ? "" : ", the first M whose live count after the growing zones is past it",
                              format_rational(growth));
    } else {
        t = 4;
        cx.microbatches = M(0);
        cx.other_microbatches = M(t);
        cx.what = fmt::format("rank {}'s live activations grow by {} per block: peak {} at M={} but {} at M={}", r,
                              format_rational(growth), format_rational(peak_at(0)), M(0), format_rational(peak_at(t)),
                              M(t));
    }
    cx.schedule = inst(t);
    return refuted(cx);
}

ProofResult& Prover::prove_memory() {
    const auto t0 = std::chrono::steady_clock::now();
    note_activation_sizes();
    const StashCount count(options.activations);
    const TimeScale& scale = count.scale;
    auto allocated = [&](const Slot& s) { return count.allocated(s); };
    auto released = [&](const Slot& s) { return count.released(s); };
    // (peak reached inside the part starting from live = 0, net change)
    auto profile = [&](const std::vector<Slot>& part) {
        Ticks live = 0, peak = 0;
        bool any = false;
        for (const Slot& s : part) {
            live += allocated(s);
            peak = any ? std::max(peak, live) : live;
            any = true;
            live -= released(s);
        }
        return std::tuple<Ticks, Ticks, bool>(peak, live, any);
    };
    std::vector<Rational> peak_t0, peak_t;
    bool bounded = true;
    int growing_rank = -1;
    Ticks growth = 0;
    for (int r = 0; r < word->ranks(); ++r) {
        auto [pu, nu, au] = profile(word->prefix[r]);
        auto [pv, nv, av] = profile(word->block[r]);
        auto [pw, nw, aw] = profile(word->suffix[r]);
        (void)nw;
        Ticks p0 = au ? pu : 0;
        if (aw) p0 = std::max(p0, nu + pw);
        Ticks p1 = p0;
        if (av) p1 = std::max(p1, nu + pv);
        if (nv != 0) {
            bounded = false;
            if (growing_rank < 0 || nv > growth) growing_rank = r, growth = nv;
        }
        peak_t0.push_back(scale.to_units(p0));
        peak_t.push_back(scale.to_units(p1));
    }
    if (!bounded) {
        // Concrete instances show the growth.
        Counterexample cx;
        cx.ranks = family.ranks;
        cx.microbatches = M(0);
        cx.other_microbatches = M(4);
        const auto a = peak_activations(inst(0), options.activations);
        const auto b = peak_activations(inst(4), options.activations);
        cx.what = fmt::format("rank {}'s live activations grow by {} per block: peak {} at M={} but {} at M={}",
                              growing_rank, format_rational(scale.to_units(growth)), format_rational(a[growing_rank]),
                              M(0), format_rational(b[growing_rank]), M(4));
        cx.schedule = inst(4);
        add("block-net", "a block allocates as much as it releases on every rank", "exact count: fails", false);
        return refuted(cx);
    }
    // Cross-check the closed form on the instances.
    for (int t = 0; t <= std::min(T_check, 6); ++t) {
        const auto peaks = peak_activations(inst(t), options.activations);
        for (int r = 0; r < word->ranks(); ++r)
            if (!(peaks[r] == (t == 0 ? peak_t0[r] : peak_t[r])))
                return unknown("internal: the closed-form peak disagrees with the instance at M = " + std::to_string(M(t)));
    }
    add("block-net", "on every rank a block releases exactly what it allocates, so the live count after the "
                     "prefix, at each block position and in the suffix is the same for every t",
        "exact count over the periodic word", true, seconds_since(t0));
    res.peaks = peak_t;
    res.peaks_at_origin = peak_t0;
    res.certificate.memory = CertificateMemory{peak_t, peak_t0, options.memory_bound};
    res.peaks_from_m = M(1);
    std::string values;
    for (size_t r = 0; r < peak_t.size(); ++r) values += (r ? " " : "") + format_rational(peak_t[r]);
    std::string values0;
    for (size_t r = 0; r < peak_t0.size(); ++r) values0 += (r ? " " : "") + format_rational(peak_t0[r]);
    add("peaks", fmt::format("peak per rank for every M > {}: [{}]; at M = {}: [{}]", M(0), values, M(0), values0),
        "maximum over prefix, one block and suffix (checked against the instances for t <= 6)");
    Rational worst{0};
    for (const auto& v : peak_t) worst = std::max(worst, v);
    for (const auto& v : peak_t0) worst = std::max(worst, v);
    if (options.memory_bound && worst > *options.memory_bound) {
        Counterexample cx;
        cx.ranks = family.ranks;
        int t = 1, rank = 0;
        for (size_t r = 0; r < peak_t.size(); ++r)
            if (peak_t[r] > *options.memory_bound) rank = static_cast<int>(r);
        for (size_t r = 0; r < peak_t0.size(); ++r)
            if (peak_t0[r] > *options.memory_bound) t = 0, rank = static_cast<int>(r);
        cx.microbatches = M(t);
        cx.what = fmt::format("rank {} holds {} activations at P={}, M={} (bound {})", rank,
                              format_rational(t == 0 ? peak_t0[rank] : peak_t[rank]), family.ranks, M(t),
                              format_rational(*options.memory_bound));
        cx.schedule = inst(t);
        return refuted(cx);
    }
    return proved(fmt::format("activation peak per rank = [{}] for every M > {} ([{}] at M = {})", values, M(0),
                              values0, M(0)));
}

}  // namespace pp
