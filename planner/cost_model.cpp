#include "planner/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace pp::plan {
namespace {

constexpr double kActivationBytes = 2;  // BF16 activations and gradients on the wire

double flops_per_second(const ClusterSpec& cluster, int tp) { return cluster.gpu_tflops * 1e12 * cluster.mfu * tp; }

double link_bytes_per_second(const ClusterSpec& cluster, bool crosses_nodes) {
    return (crosses_nodes ? cluster.inter_node_gbps : cluster.intra_node_gbps) * 1e9;
}

// An op gets at least 0.1 us so that no op is free; a latency may be zero.
Rational micros(double seconds, bool at_least_a_tick = true) {
    const long long tenths = std::llround(seconds * 1e7);
    return Rational(at_least_a_tick ? std::max<long long>(1, tenths) : tenths, 10);
}

}  // namespace

ChunkCosts chunk_costs(const PlanRequest& request, int pp, int blocks_total) {
    const ModelSpec& m = request.model;
    const TrainingSpec& t = request.training;
    const double layers = static_cast<double>(m.layers) / blocks_total;
    const double moe_layers = static_cast<double>(m.moe_layer_count()) / blocks_total;
    const double tokens = static_cast<double>(t.microbatch_size) * t.sequence_length;
    ChunkCosts c;
    if (t.chunk) {
        const double scale = layers / t.chunk->layers / 1000.0;  // ms per measured chunk -> s per block
        c.F = t.chunk->F * scale;
        c.I = t.chunk->I * scale;
        c.W = t.chunk->W * scale;
        if (t.chunk->FB) c.measured_pair = *t.chunk->FB * scale;
        c.measured = true;
    } else {
        const double matmul = 2.0 * m.active() / m.layers;
        const double attention = 2.0 * t.sequence_length * m.hidden;
        const double rate = flops_per_second(request.cluster, t.tp);
        c.F = tokens * layers * (matmul + attention) / rate;
        c.I = tokens * layers * (matmul + 2 * attention) / rate;
        c.W = tokens * layers * matmul / rate;
    }
    if (t.ep > 1 && moe_layers > 0) {
        const double bytes = 2.0 * tokens * m.top_k * m.hidden * kActivationBytes * (t.ep - 1) / t.ep;
        c.all_to_all = moe_layers * bytes / link_bytes_per_second(request.cluster, t.ep > request.cluster.gpus_per_node);
    }
    if (pp > 1) {
        const int gpus_per_stage = request.cluster.gpus / pp;
        c.p2p = tokens * m.hidden * kActivationBytes / link_bytes_per_second(request.cluster, gpus_per_stage >= request.cluster.gpus_per_node);
    }
    return c;
}

ChunkCosts per_layer_costs(const PlanRequest& request) { return chunk_costs(request, 1, request.model.layers); }

GradientReduce gradient_reduce(const PlanRequest& request, const ParameterMemory& params, int data_parallel,
                               const ChunkCosts& chunk, int segments) {
    const TrainingSpec& t = request.training;
    const auto ring = [&](double parameters, int replicas) {
        if (replicas <= 1) return 0.0;
        const bool crosses_nodes = replicas * t.tp > request.cluster.gpus_per_node;
        const double bytes = parameters * t.grad_bytes_per_param;
        return 2.0 * (replicas - 1) / replicas * bytes / link_bytes_per_second(request.cluster, crosses_nodes);
    };
    GradientReduce reduce;
    reduce.seconds = ring(params.dense, data_parallel) + ring(params.experts, std::max(1, data_parallel * t.tp / t.ep));
    reduce.hidden = std::min(reduce.seconds, (chunk.I + chunk.W) / std::max(segments, 1));
    return reduce;
}

Costs simulator_costs(const ChunkCosts& c, bool overlapped_pairs) {
    Costs costs;
    costs.base.F = micros(c.F + c.all_to_all);
    costs.base.I = micros(c.I + c.all_to_all);
    costs.base.W = micros(c.W);
    if (overlapped_pairs)
        costs.base.FB = micros(c.measured_pair ? *c.measured_pair : std::max(c.F + c.I + c.W, 2 * c.all_to_all));
    costs.comm = micros(c.p2p, false);
    return costs;
}

}  // namespace pp::plan
