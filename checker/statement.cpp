// The exact periodic window (proofs/method.md §4, Lemma 3's premise), the bubble statement from the base cases, and
// the activation peaks (§5): each number of the certificate recomputed.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pp::check {

std::vector<WindowPair> window_pairs(const Certificate& c, const Derived& d, const std::string& step) {
    const CertificateWindow& win = *c.window;
    const CertificateWord& w = *c.word;
    const CertificatePotentials& p = *c.potentials;
    if (win.T < d.T0) reject(step, fmt::format("simulated instance G_{} is below T0 = {}", win.T, d.T0));
    if (win.k0 < d.k_inv + d.lag - 1)
        reject(step, fmt::format("k0 = {} is below k_inv + lag - 1 = {}: the window is not in the invariant middle", win.k0,
                                 d.k_inv + d.lag - 1));
    if (win.k0 + win.cycle > win.T + d.tau - 1)
        reject(step, fmt::format("super-step k0 + c = {} is not in the middle of G_{} (it ends at {})", win.k0 + win.cycle,
                                 win.T, win.T + d.tau - 1));
    // Global id of block slot (rank, index) in block j of G_T.
    std::vector<std::uint32_t> rank_start(w.block.size());
    std::uint32_t id = 0;
    for (size_t r = 0; r < w.block.size(); ++r) {
        rank_start[r] = id;
        id += static_cast<std::uint32_t>(w.prefix[r].size() + w.block[r].size() * win.T + w.suffix[r].size());
    }
    auto block_id = [&](int r, int i, int j) {
        if (j < 0 || j >= win.T) reject(step, fmt::format("block {} of rank {} is not in G_{}", j, r, win.T));
        return rank_start[r] + static_cast<std::uint32_t>(w.prefix[r].size() + w.block[r].size() * j + i);
    };
    std::vector<WindowPair> pairs;
    for (int k = win.k0 - d.lag + 1; k <= win.k0; ++k)
        for (int r = 0; r < static_cast<int>(w.block.size()); ++r)
            for (int i = 0; i < static_cast<int>(w.block[r].size()); ++i) {
                const int j = k - p.sigma[r];
                pairs.push_back({r, i, j, block_id(r, i, j), block_id(r, i, j + win.cycle)});
            }
    return pairs;
}

std::string check_window(const Certificate& c, const Placement& base, const Derived& d, int& t_periodic) {
    const CertificateWindow& win = *c.window;
    const CertificateWord& w = *c.word;
    const std::string step = "window";
    const std::vector<WindowPair> pairs = window_pairs(c, d, step);
    const Schedule s = word_instance(c, base, win.T);
    const Graph g = timing_graph(c, s, step);
    const Timing timing = simulate(s, g, *c.costs, step);
    const Rational shift = win.lambda * Rational(win.cycle);
    for (const WindowPair& pair : pairs) {
        const Rational a = timing.end[pair.at], b = timing.end[pair.later];
        if (b - a != shift)
            reject(step, fmt::format("rank {}, block slot {} of block {}: it ends at {} and {} blocks later at {}, "
                                     "not {} later",
                                     pair.rank, pair.index, pair.block, format_rational(a), win.cycle, format_rational(b),
                                     format_rational(shift)));
    }
    t_periodic = std::max(d.T0, win.k0 + 1 - d.tau);
    return fmt::format("G_{} simulated exactly ({} slots): each of the {} slots of super-steps {}..{} ends {} later in "
                       "block j + {} than in block j (c = {}, lambda = {}); so every rank's idle time repeats with period "
                       "{} from t = {} (M = {})",
                       win.T, g.rank.size(), pairs.size(), win.k0 - d.lag + 1, win.k0, format_rational(shift), win.cycle,
                       win.cycle, format_rational(win.lambda), win.cycle, t_periodic, w.m_origin + w.step * t_periodic);
}

std::string check_bubble(const Certificate& c, const Placement& base, int t_periodic) {
    const CertificateWord& w = *c.word;
    const CertificateWindow& win = *c.window;
    const CertificateBubble& b = *c.bubble;
    const std::string step = "bubble";
    // Slope 0: a block takes lambda, and every rank works exactly lambda in it.
    const Schedule first = generate(c, w.m_origin);
    for (size_t r = 0; r < w.block.size(); ++r) {
        Rational work(0);
        for (const Slot& slot : w.block[r]) work += slot_duration(slot, first.placement, *c.costs);
        if (work != win.lambda)
            reject(step, fmt::format("rank {} works {} per block but a block takes {}: its idle time changes by {} per block",
                                     r, format_rational(work), format_rational(win.lambda), format_rational(win.lambda - work)));
    }
    // Every admissible M up to the end of the first period, simulated from the generator.
    const int last_m = w.m_origin + w.step * (t_periodic + win.cycle - 1);
    std::map<int, Rational> bubble;
    for (int m = c.family_m0; m <= last_m; m += c.family_step) {
        const Schedule s = instance_at(c, base, m);
        bubble[m] = simulate(s, timing_graph(c, s, step), *c.costs, step).bubble;
    }
    if (b.from_m > last_m) reject(step, fmt::format("from_m = {} is beyond the first period (it ends at M = {})", b.from_m, last_m));
    for (const auto& [m, value] : bubble) {
        if (m >= b.from_m && value != b.value)
            reject(step, fmt::format("bubble({}) = {}, not {}", m, format_rational(value), format_rational(b.value)));
    }
    // The least M0: the admissible M just below from_m has another bubble, and the values below are as listed.
    std::vector<std::pair<int, Rational>> early;
    for (const auto& [m, value] : bubble)
        if (m < b.from_m) early.emplace_back(m, value);
    if (!early.empty() && early.back().second == b.value)
        reject(step, fmt::format("bubble({}) = {} already: from_m = {} is not the least", early.back().first,
                                 format_rational(b.value), b.from_m));
    if (early != b.early) reject(step, "the bubbles listed below from_m are not the simulated ones");
    if ((b.from_m - c.family_m0) % c.family_step != 0 || b.from_m < c.family_m0)
        reject(step, fmt::format("from_m = {} is not an admissible M", b.from_m));
    return fmt::format("bubble = {} at every admissible M from {} through {} (exact simulation of the generator's "
                       "instances; {} below), and every rank works lambda per block: slope 0, so by the window the "
                       "bubble is {} for every admissible M >= {}",
                       format_rational(b.value), b.from_m, last_m, early.size(), format_rational(b.value), b.from_m);
}

// Live activations along one part of a rank's order, from 0: the peak reached inside it and the net change. An F
// allocates at its start, I frees its share at its end, W the rest, B all (a pair's F first); each stash at its
// stage's scale (uneven stages: the certificate's stage_scale).
LiveProfile live_profile(const std::vector<Slot>& part, const ActivationModel& a) {
    LiveProfile out;
    auto scale = [&](const Op& op) {
        if (a.stage_scale.empty()) return Rational(1);
        if (static_cast<size_t>(op.pipeline) >= a.stage_scale.size() ||
            static_cast<size_t>(op.stage) >= a.stage_scale[op.pipeline].size())
            reject("memory", fmt::format("stage_scale has no entry for pipeline {} stage {}", op.pipeline, op.stage));
        return a.stage_scale[op.pipeline][op.stage];
    };
    for (const Slot& slot : part) {
        for (const Op& op : slot)
            if (op.kind == OpKind::F) out.net += a.forward_alloc * scale(op);
        out.peak = out.any ? std::max(out.peak, out.net) : out.net;
        out.any = true;
        for (const Op& op : slot) {
            if (op.kind == OpKind::I) out.net -= a.input_grad_free * scale(op);
            if (op.kind == OpKind::W) out.net -= (a.forward_alloc - a.input_grad_free) * scale(op);
            if (op.kind == OpKind::B) out.net -= a.forward_alloc * scale(op);
        }
    }
    return out;
}


std::string check_memory(const Certificate& c) {
    const CertificateWord& w = *c.word;
    const CertificateMemory& mem = *c.memory;
    const std::string step = "memory";
    const size_t P = w.block.size();
    if (mem.peaks.size() != P || mem.peaks_at_origin.size() != P) reject(step, "one peak per rank is expected");
    for (size_t r = 0; r < P; ++r) {
        const LiveProfile u = live_profile(w.prefix[r], c.activations), v = live_profile(w.block[r], c.activations),
                          s = live_profile(w.suffix[r], c.activations);
        if (v.net != Rational(0))
            reject(step, fmt::format("rank {}'s block changes the live activations by {}: the peak grows with M", r,
                                     format_rational(v.net)));
        Rational at_origin = u.any ? u.peak : Rational(0);
        if (s.any) at_origin = std::max(at_origin, u.net + s.peak);
        Rational later = at_origin;
        if (v.any) later = std::max(later, u.net + v.peak);
        if (at_origin != mem.peaks_at_origin[r] || later != mem.peaks[r])
            reject(step, fmt::format("rank {}: the peaks are {} (at the word's first instance) and {} (after), the "
                                     "certificate says {} and {}",
                                     r, format_rational(at_origin), format_rational(later),
                                     format_rational(mem.peaks_at_origin[r]), format_rational(mem.peaks[r])));
        if (mem.bound && std::max(at_origin, later) > *mem.bound)
            reject(step, fmt::format("rank {} holds {} activations, above the bound {}", r,
                                     format_rational(std::max(at_origin, later)), format_rational(*mem.bound)));
    }
    // Instances below the word's origin (a family that becomes periodic later) are counted one by one; the peaks the
    // certificate states for them must be theirs, one entry per instance in order, or none at all.
    size_t below = 0;
    if (!mem.early.empty() && mem.early.front().first != c.family_m0)
        reject(step, fmt::format("the early peaks start at M = {}, the family at M = {}", mem.early.front().first, c.family_m0));
    for (int m = c.family_m0; m < w.m_origin; m += c.family_step, ++below) {
        const Schedule s = generate(c, m);
        const std::vector<Rational>* stated = below < mem.early.size() ? &mem.early[below].second : nullptr;
        if (stated && (mem.early[below].first != m || stated->size() != P))
            reject(step, fmt::format("early peaks entry {} is not M = {} with one peak per rank", below, m));
        for (size_t r = 0; r < P; ++r) {
            const Rational peak = live_profile(s.ranks[r], c.activations).peak;
            if (mem.bound && peak > *mem.bound)
                reject(step, fmt::format("at M = {} rank {} holds {} activations, above the bound {}", m, r,
                                         format_rational(peak), format_rational(*mem.bound)));
            if (stated && (*stated)[r] != peak)
                reject(step, fmt::format("at M = {} rank {} holds {} activations, the certificate says {}", m, r,
                                         format_rational(peak), format_rational((*stated)[r])));
        }
    }
    if (!mem.early.empty() && mem.early.size() != below)
        reject(step, fmt::format("{} early peak entries for the {} instance(s) below the word's origin", mem.early.size(), below));
    return fmt::format("every rank's block frees what it allocates; the peak per rank is the largest over prefix, one "
                       "block and suffix{}{}",
                       mem.bound ? ", at most " + format_rational(*mem.bound) : std::string(),
                       below ? fmt::format("; {} instance(s) below the word's origin counted one by one", below) : "");
}

}  // namespace pp::check
