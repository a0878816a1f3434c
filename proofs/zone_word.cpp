#include "proofs/zone_word.hpp"

#include <stdexcept>

namespace pp {

namespace {

Slot raised(Slot slot, const std::vector<int>& delta, int k) {
    for (int i = 0; i < slot.count; ++i) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * k;
    slot.loc = {};
    return slot;
}

Slot raised_fixed(const ZoneSlot& z, const std::vector<int>& delta, int t) {
    Slot slot = z.slot;
    for (int i = 0; i < slot.count; ++i)
        if (z.end_anchored[i]) slot.ops[i].microbatch += delta[slot.ops[i].pipeline] * t;
    slot.loc = {};
    return slot;
}

}  // namespace

Schedule ZoneWord::instantiate(int t) const {
    Schedule s;
    s.placement = base;
    for (size_t p = 0; p < s.placement.pipelines.size(); ++p) s.placement.pipelines[p].microbatches += delta[p] * t;
    s.ranks.resize(base.ranks);
    for (int r = 0; r < base.ranks; ++r) {
        auto& out = s.ranks[r];
        for (int k = 0; k <= zones(); ++k) {
            for (const ZoneSlot& z : fixed[r][k]) out.push_back(raised_fixed(z, delta, t));
            if (k == zones()) break;
            for (int j = 0; j < t; ++j) {
                const int raise = direction[k] > 0 ? j : t - 1 - j;
                for (const Slot& slot : block[r][k]) out.push_back(raised(slot, delta, raise));
            }
        }
    }
    s.source = "zone word, t=" + std::to_string(t);
    return s;
}

std::vector<ZonePlace> ZoneWord::places(int t) const {
    std::vector<ZonePlace> out;
    for (int r = 0; r < ranks(); ++r)
        for (int k = 0; k <= zones(); ++k) {
            for (size_t i = 0; i < fixed[r][k].size(); ++i) out.push_back({-1, k, static_cast<int>(i), 0});
            if (k == zones()) break;
            for (int j = 0; j < t; ++j)
                for (size_t i = 0; i < block[r][k].size(); ++i) out.push_back({k, k, static_cast<int>(i), j});
        }
    return out;
}

std::uint32_t ZoneWord::block_slot_id(int t, int rank, int zone, int index, int j) const {
    std::uint32_t id = 0;
    for (int r = 0; r <= rank; ++r)
        for (int k = 0; k <= zones(); ++k) {
            if (r == rank && k == zone) return id + static_cast<std::uint32_t>(fixed[r][k].size() + block[r][k].size() * j + index);
            id += static_cast<std::uint32_t>(fixed[r][k].size());
            if (k < zones()) id += static_cast<std::uint32_t>(block[r][k].size() * t);
        }
    throw std::logic_error("block_slot_id: no such zone");
}

std::string zone_word_mismatch(const ZoneWord& word, int t, const Schedule& s) {
    const Schedule expected = word.instantiate(t);
    if (!same_placement_shape(expected.placement, s.placement)) return "placement differs";
    for (size_t p = 0; p < expected.placement.pipelines.size(); ++p)
        if (expected.placement.pipelines[p].microbatches != s.placement.pipelines[p].microbatches)
            return "micro-batches of pipeline " + std::to_string(p) + " differ";
    for (int r = 0; r < word.ranks(); ++r) {
        const auto& a = expected.ranks[r];
        const auto& b = s.ranks[r];
        for (size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
            bool same = k < a.size() && k < b.size() && a[k].count == b[k].count;
            for (int i = 0; same && i < a[k].count; ++i) same = a[k].ops[i] == b[k].ops[i];
            if (!same)
                return "rank " + std::to_string(r) + " slot " + std::to_string(k) + ": word has " +
                       (k < a.size() ? format_slot(a[k]) : std::string("nothing")) + ", schedule has " +
                       (k < b.size() ? format_slot(b[k]) : std::string("nothing"));
        }
    }
    return "";
}

namespace {

Slot op_slot(OpKind kind, int stage, int microbatch) { return Slot::single(Op{kind, 0, stage, microbatch}); }

// GPipe (schedules/gpipe.cpp): rank r runs `for mb < M: F(r, mb)` then `for mb < M: B(r, mb)`. With M = 1 + t:
// F(r,0), then F(r, 1+j) for j < t, then B(r,0), then B(r, 1+j) for j < t.
FamilyZoneWord gpipe_word(int P) {
    FamilyZoneWord f;
    ZoneWord& w = f.word;
    w.base = Placement::single(P, loop_stage_map(P, P), 1);
    w.delta = {1};
    w.direction = {1, 1};
    w.fixed.assign(P, std::vector<std::vector<ZoneSlot>>(3));
    w.block.assign(P, std::vector<std::vector<Slot>>(2));
    for (int r = 0; r < P; ++r) {
        w.fixed[r][0] = {{op_slot(OpKind::F, r, 0), {}}};
        w.block[r][0] = {op_slot(OpKind::F, r, 1)};
        w.fixed[r][1] = {{op_slot(OpKind::B, r, 0), {}}};
        w.block[r][1] = {op_slot(OpKind::B, r, 1)};
    }
    f.lemma = "schedules/gpipe.cpp emits, on every rank r, `for mb < M: F(r, mb)` and then `for mb < M: B(r, mb)` "
              "(two loops whose bodies do not depend on M): with M = 1 + t that is F(r,0), F(r,1+j) for j < t, "
              "B(r,0), B(r,1+j) for j < t -- this zone word, for every t";
    return f;
}

// Looped BFS (schedules/looped_bfs.cpp): rank r runs, for local = 0..V-1, `for mb < M: F(local*P + r, mb)`, then,
// for local = V-1..0, `for mb = M-1..0: B(local*P + r, mb)` (idle cells do not enter the order). With M = 1 + t:
// F(s, 0), F(s, 1+j) ascending; B(s, t) (end-anchored), B(s, t-1-j) descending.
FamilyZoneWord looped_bfs_word(int P, int V) {
    FamilyZoneWord f;
    ZoneWord& w = f.word;
    w.base = Placement::single(P, loop_stage_map(P, P * V), 1);
    w.delta = {1};
    for (int k = 0; k < V; ++k) w.direction.push_back(1);
    for (int k = 0; k < V; ++k) w.direction.push_back(-1);
    w.fixed.assign(P, std::vector<std::vector<ZoneSlot>>(2 * V + 1));
    w.block.assign(P, std::vector<std::vector<Slot>>(2 * V));
    for (int r = 0; r < P; ++r) {
        for (int local = 0; local < V; ++local) {
            w.fixed[r][local] = {{op_slot(OpKind::F, local * P + r, 0), {}}};
            w.block[r][local] = {op_slot(OpKind::F, local * P + r, 1)};
        }
        for (int k = 0; k < V; ++k) {
            const int local = V - 1 - k;
            ZoneSlot last{op_slot(OpKind::B, local * P + r, 0), {}};
            last.end_anchored[0] = true;
            w.fixed[r][V + k] = {last};
            w.block[r][V + k] = {op_slot(OpKind::B, local * P + r, 0)};
        }
    }
    f.lemma = "schedules/looped_bfs.cpp emits, on every rank r, `for local < V: for mb < M: F(local*P + r, mb)` "
              "and then `for local = V-1..0: for mb = M-1..0: B(local*P + r, mb)` (loops whose bodies do not depend "
              "on M; the idle cells it inserts do not enter the order): with M = 1 + t these are the 2V zones of "
              "this word, ascending then descending, for every t";
    return f;
}

}  // namespace

std::optional<FamilyZoneWord> family_zone_word(const std::string& family, int P, std::optional<int> V) {
    if (family == "gpipe") return gpipe_word(P);
    if (family == "looped-bfs") return looped_bfs_word(P, V.value_or(2));
    return std::nullopt;
}

}  // namespace pp
