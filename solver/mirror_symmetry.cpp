#include "solver/mirror_symmetry.hpp"

#include <algorithm>
#include <tuple>

namespace pp {
namespace {

std::optional<MirrorMap> refuse(std::string* why_not, const std::string& reason) {
    if (why_not) *why_not = reason;
    return std::nullopt;
}

// mu on tasks: the same (stage, micro-batch, kind) in the other pipeline.
bool map_tasks(const Instance& inst, std::vector<int>& mu) {
    mu.assign(inst.size(), -1);
    for (size_t t = 0; t < inst.size(); ++t) {
        Op op = inst.tasks[t].op;
        if (op.pipeline > 1) return false;
        op.pipeline = 1 - op.pipeline;
        mu[t] = inst.task_of(op);
        if (mu[t] < 0) return false;
    }
    return true;
}

// The rank map induced by mu, if mu keeps ranks together and is an involution on them.
bool map_ranks(const Instance& inst, const std::vector<int>& mu, std::vector<int>& sigma) {
    sigma.assign(static_cast<size_t>(inst.ranks), -1);
    for (size_t t = 0; t < inst.size(); ++t) {
        int& image = sigma[inst.tasks[t].rank];
        const int r = inst.tasks[mu[t]].rank;
        if (image >= 0 && image != r) return false;
        image = r;
    }
    // A rank that is its own mirror would have to start two ops at once.
    for (int r = 0; r < inst.ranks; ++r)
        if (sigma[r] < 0 || sigma[sigma[r]] != r || sigma[r] == r) return false;
    return true;
}

bool keeps_edges(const Instance& inst, const std::vector<int>& mu) {
    using Key = std::tuple<int, int, Ticks, int>;
    std::vector<Key> edges;
    edges.reserve(inst.edges.size());
    for (const PrecedenceEdge& e : inst.edges) edges.emplace_back(e.from, e.to, e.lag, static_cast<int>(e.why));
    std::sort(edges.begin(), edges.end());
    for (const PrecedenceEdge& e : inst.edges)
        if (!std::binary_search(edges.begin(), edges.end(), Key{mu[e.from], mu[e.to], e.lag, static_cast<int>(e.why)}))
            return false;
    return true;
}

bool keeps_activations(const Instance& inst, const std::vector<int>& mu) {
    for (const Activation& a : inst.activations) {
        const int image = inst.tasks[mu[a.forward]].activation;
        if (image < 0 || inst.activations[image].weight != mu[a.weight]) return false;
    }
    return true;
}

}  // namespace

std::optional<MirrorMap> mirror_map(const Instance& inst, std::string* why_not) {
    if (inst.pairs_allowed()) return refuse(why_not, "overlapped pairs (the mirror query is disjunctive only)");
    MirrorMap m;
    if (!map_tasks(inst, m.task)) return refuse(why_not, "not two pipelines with the same stages and micro-batches");
    for (size_t t = 0; t < inst.size(); ++t)
        if (m.task[m.task[t]] != static_cast<int>(t) || inst.tasks[m.task[t]].duration != inst.tasks[t].duration)
            return refuse(why_not, "the two pipelines' costs differ (" + describe_op(inst.tasks[t].op) + ")");
    if (!map_ranks(inst, m.task, m.rank)) return refuse(why_not, "the pipelines' stages are not mirrored across the ranks (or a rank is its own mirror)");
    for (int r = 0; r < inst.ranks; ++r)
        if (inst.rank_needs_cardinality[r] != inst.rank_needs_cardinality[m.rank[r]] ||
            inst.earliest_rank_start[r] != inst.earliest_rank_start[m.rank[r]])
            return refuse(why_not, "rank " + std::to_string(r) + " and its mirror differ");
    if (!keeps_edges(inst, m.task)) return refuse(why_not, "a precedence edge has no mirror image");
    if (!keeps_activations(inst, m.task)) return refuse(why_not, "an activation has no mirror image");
    return m;
}

std::vector<int> tied_starts(const MirrorMap& mirror) {
    std::vector<int> tied(mirror.task.size(), -1);
    for (size_t t = 0; t < tied.size(); ++t)
        if (mirror.task[t] < static_cast<int>(t)) tied[t] = mirror.task[t];
    return tied;
}

}  // namespace pp
