#include "model/schedule.hpp"

namespace pp {

const char* comm_kind_name(CommKind kind) {
    switch (kind) {
        case CommKind::SendF: return "SEND_F";
        case CommKind::RecvF: return "RECV_F";
        case CommKind::SendB: return "SEND_B";
        case CommKind::RecvB: return "RECV_B";
        case CommKind::Unshard: return "UNSHARD";
        case CommKind::Reshard: return "RESHARD";
        case CommKind::ReduceGrad: return "REDUCE_GRAD";
    }
    return "?";
}

size_t Schedule::op_count() const {
    size_t n = 0;
    for (const auto& rank : ranks)
        for (const auto& slot : rank) n += slot.count;
    return n;
}

Costs costs_per_unit(const Schedule& schedule, const Costs& costs) {
    if (schedule.segments <= 1) return costs;
    return scaled_op_costs(costs, Rational(Integer(1), Integer(schedule.segments)));
}

ActivationModel sizes_per_unit(const Schedule& schedule, const ActivationModel& sizes) {
    if (schedule.segments <= 1) return sizes;
    return scaled_sizes(sizes, Rational(Integer(1), Integer(schedule.segments)));
}

size_t Schedule::slot_count() const {
    size_t n = 0;
    for (const auto& rank : ranks) n += rank.size();
    return n;
}

OpIndex::OpIndex(const Placement& placement) {
    size_t cells = 0;
    for (const auto& p : placement.pipelines) {
        base_.push_back(cells);
        mbs_.push_back(p.microbatches);
        stages_.push_back(p.stages());
        cells += static_cast<size_t>(p.stages()) * p.microbatches;
    }
    total_ = cells * kOpKinds;
}

Op OpIndex::op(size_t id) const {
    Op op;
    op.kind = static_cast<OpKind>(id % kOpKinds);
    size_t cell = id / kOpKinds;
    int p = static_cast<int>(base_.size()) - 1;
    while (p > 0 && base_[p] > cell) --p;
    op.pipeline = p;
    cell -= base_[p];
    op.stage = static_cast<int>(cell / mbs_[p]);
    op.microbatch = static_cast<int>(cell % mbs_[p]);
    return op;
}

}  // namespace pp
