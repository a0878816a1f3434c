// The word's instances and the generator's: the certificate's word must be the generator's order for every t up to
// Lemma 1's horizon (proofs/method.md §1), recomputed here from the word itself.
#include "checker/internal.hpp"
#include "schedules/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pp::check {

// What one instance may hold: a certificate asking for more is refused, not followed until memory runs out.
constexpr long long kMaxInstanceSlots = 20'000'000;

Schedule generate(const Certificate& c, int microbatches) {
    // The generator's instance holds about 3 V ops per rank and micro-batch: bounded like an instance of the word.
    const long long ops = 3LL * c.ranks * std::max(1, c.stages_per_rank.value_or(2)) * microbatches;
    if (microbatches < 1 || ops > kMaxInstanceSlots)
        reject("word", fmt::format("the generator's instance at M = {} would hold about {} ops, more than the checker's "
                                   "limit of {}: refused",
                                   microbatches, ops, kMaxInstanceSlots));
    const ScheduleFamily* family = find_family(c.family);
    if (!family) reject("claim", "'" + c.family + "' is not a schedule family of this build");
    GenerateParams params{c.ranks, microbatches, c.stages_per_rank};
    params.group_size = c.group_size;
    params.segments = c.segments;  // its ops are then segment units; the certificate's costs and sizes are per unit
    if (c.ordered_for_costs) {
        if (!family->orders_for_costs) reject("claim", c.family + " does not order for costs, the certificate says it does");
        params.costs = c.costs;
        params.activation_sizes = c.ordered_for_sizes;
    } else if (family->orders_for_costs) {
        reject("claim", c.family + " orders for the costs it is timed at; the certificate does not say for which");
    }
    try {
        return family->generate(params);
    } catch (const std::exception& e) {
        reject("word", fmt::format("the generator refuses M = {}: {}", microbatches, e.what()));
    }
}

Schedule instance_at(const Certificate& c, const Placement& base, int microbatches) {
    const CertificateWord& w = *c.word;
    const int t = (microbatches - w.m_origin) / w.step;
    if (microbatches >= w.m_origin && (microbatches - w.m_origin) % w.step == 0 && t <= agreement_horizon(w))
        return word_instance(c, base, t);
    return generate(c, microbatches);
}

Schedule word_instance(const Certificate& c, const Placement& base, int t) {
    Schedule s = instantiate(*c.word, base, t);
    if (c.timing_model == "batched" && c.program) s.comm_program = program_instance(*c.program, *c.word, t);
    return s;
}

Slot shifted(Slot slot, const std::vector<int>& delta, int k) {
    for (int i = 0; i < slot.count; ++i) {
        Op& op = slot.ops[i];
        if (op.pipeline >= static_cast<int>(delta.size())) reject("word", "an op of pipeline " + std::to_string(op.pipeline) + " has no delta");
        const long long m = static_cast<long long>(op.microbatch) + static_cast<long long>(delta[op.pipeline]) * k;
        if (m > std::numeric_limits<std::int32_t>::max()) reject("word", "a micro-batch index overflows");
        op.microbatch = static_cast<std::int32_t>(m);
    }
    return slot;
}

namespace {

}  // namespace

namespace {

void require_room(const CertificateWord& w, int t) {
    if (t < 0) reject("word", fmt::format("an instance with {} blocks", t));
    long long slots = 0;
    for (size_t r = 0; r < w.block.size(); ++r)
        slots += static_cast<long long>(w.prefix[r].size() + w.suffix[r].size()) + static_cast<long long>(w.block[r].size()) * t;
    if (slots > kMaxInstanceSlots)
        reject("word", fmt::format("the instance with t = {} blocks would hold {} slots, more than the checker's limit of "
                                   "{}: refused",
                                   t, slots, kMaxInstanceSlots));
    for (int d : w.delta)
        if (static_cast<long long>(d) * t > (1LL << 30)) reject("word", fmt::format("micro-batch indices beyond 2^30 at t = {}", t));
}

}  // namespace

Schedule instantiate(const CertificateWord& w, const Placement& base, int t) {
    require_room(w, t);
    Schedule s;
    s.placement = base;
    if (static_cast<int>(w.delta.size()) != base.pipeline_count())
        reject("word", fmt::format("{} deltas for {} pipelines", w.delta.size(), base.pipeline_count()));
    for (int p = 0; p < base.pipeline_count(); ++p) s.placement.pipelines[p].microbatches += w.delta[p] * t;
    s.ranks.resize(base.ranks);
    for (int r = 0; r < base.ranks; ++r) {
        auto& out = s.ranks[r];
        out = w.prefix[r];
        for (int j = 0; j < t; ++j)
            for (const Slot& slot : w.block[r]) out.push_back(shifted(slot, w.delta, j));
        for (const Slot& slot : w.suffix[r]) out.push_back(shifted(slot, w.delta, t));
    }
    return s;
}

std::vector<Place> places(const CertificateWord& w, int t) {
    require_room(w, t);
    std::vector<Place> out;
    for (int r = 0; r < static_cast<int>(w.block.size()); ++r) {
        for (int i = 0; i < static_cast<int>(w.prefix[r].size()); ++i) out.push_back({Part::Prefix, r, i, 0});
        for (int j = 0; j < t; ++j)
            for (int i = 0; i < static_cast<int>(w.block[r].size()); ++i) out.push_back({Part::Block, r, i, j});
        for (int i = 0; i < static_cast<int>(w.suffix[r].size()); ++i) out.push_back({Part::Suffix, r, i, 0});
    }
    return out;
}

std::string first_difference(const Schedule& a, const Schedule& b) {
    if (a.placement.ranks != b.placement.ranks) return "a different number of ranks";
    if (a.placement.pipeline_count() != b.placement.pipeline_count()) return "a different number of pipelines";
    for (int p = 0; p < a.placement.pipeline_count(); ++p) {
        const Pipeline &x = a.placement.pipelines[p], &y = b.placement.pipelines[p];
        if (x.microbatches != y.microbatches || x.stage_rank != y.stage_rank || x.stage_block != y.stage_block)
            return fmt::format("pipeline {} is placed differently or has another number of micro-batches", p);
    }
    for (int r = 0; r < a.placement.ranks; ++r) {
        const auto &x = a.ranks[r], &y = b.ranks[r];
        for (size_t k = 0; k < std::max(x.size(), y.size()); ++k) {
            if (k >= x.size() || k >= y.size())
                return fmt::format("rank {} has {} slots in one and {} in the other", r, x.size(), y.size());
            bool same = x[k].count == y[k].count;
            for (int i = 0; same && i < x[k].count; ++i) same = x[k].ops[i] == y[k].ops[i];
            if (!same) return fmt::format("rank {}, slot {}: {} against {}", r, k, format_slot(x[k]), format_slot(y[k]));
        }
    }
    return "";
}

int agreement_horizon(const CertificateWord& w) {
    int horizon = 3;
    for (size_t r = 0; r < w.block.size(); ++r) {
        const long long n = static_cast<long long>(w.prefix[r].size() + w.suffix[r].size());
        const long long L = static_cast<long long>(w.block[r].size());
        if (L > 0) horizon = static_cast<int>(std::max<long long>(horizon, (n + L + L - 1) / L));
    }
    return horizon;
}

}  // namespace pp::check
