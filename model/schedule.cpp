#include "model/schedule.hpp"

#include <algorithm>

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

Rational Schedule::segment_cost_share(int segment) const {
    if (segment_cost_shares.empty()) return Rational(Integer(1), Integer(segments));
    return segment_cost_shares.at(static_cast<size_t>(segment));
}

std::vector<Rational> parse_segment_cost_shares(std::string_view text, int segments) {
    std::vector<Rational> shares;
    const std::string_view attention = "attention=";
    if (text.substr(0, attention.size()) == attention) {
        const auto a = parse_rational(text.substr(attention.size()));
        if (!a || *a > Rational(1))
            throw CostSyntaxError{"attention=A expects A between 0 and 1 (attention's share of the costs)", attention.size()};
        const Rational k(segments), one(1);
        for (int j = 0; j < segments; ++j) shares.push_back((one - *a) / k + *a * Rational(2 * j + 1) / (k * k));
        return shares;
    }
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t end = std::min(text.find(',', pos), text.size());
        const auto share = parse_rational(text.substr(pos, end - pos));
        if (!share || *share <= Rational(0))
            throw CostSyntaxError{"expected a positive share of a micro-batch's costs, got '" + std::string(text.substr(pos, end - pos)) + "'", pos};
        shares.push_back(*share);
        pos = end + 1;
    }
    if (static_cast<int>(shares.size()) != segments)
        throw CostSyntaxError{"expected " + std::to_string(segments) + " shares (one per segment), got " + std::to_string(shares.size()), 0};
    Rational sum(0);
    for (const Rational& s : shares) sum += s;
    if (sum != Rational(1)) throw CostSyntaxError{"the shares sum to " + format_rational(sum) + ", not 1", 0};
    return shares;
}

std::string format_segment_cost_shares(const std::vector<Rational>& shares) {
    std::string text;
    for (const Rational& s : shares) text += (text.empty() ? "" : ",") + format_rational(s);
    return text;
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
