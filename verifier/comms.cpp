#include "verifier/comms.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_set>

namespace pp {
namespace {

// What a rank has done so far, as PyTorch's prev_actions sets: compute ops and comm actions by identity.
enum class Tag : std::uint8_t { F, I, W, B, SendF, RecvF, SendB, RecvB, Other };

Tag tag_of(OpKind kind) {
    switch (kind) {
        case OpKind::F: return Tag::F;
        case OpKind::I: return Tag::I;
        case OpKind::W: return Tag::W;
        case OpKind::B: return Tag::B;
    }
    return Tag::Other;
}

Tag tag_of(CommKind kind) {
    switch (kind) {
        case CommKind::SendF: return Tag::SendF;
        case CommKind::RecvF: return Tag::RecvF;
        case CommKind::SendB: return Tag::SendB;
        case CommKind::RecvB: return Tag::RecvB;
        default: return Tag::Other;
    }
}

std::uint64_t key(Tag tag, int stage, int microbatch) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stage)) << 32 |
            static_cast<std::uint32_t>(microbatch)) * 16 + static_cast<std::uint64_t>(tag);
}

using DoneSet = std::unordered_set<std::uint64_t>;

bool has(const DoneSet& done, Tag tag, int stage, int microbatch) { return done.count(key(tag, stage, microbatch)) > 0; }

// The stage -> rank map of the single pipeline PyTorch schedules have.
struct StageMap {
    const std::vector<int>& stage_rank;
    int stages() const { return static_cast<int>(stage_rank.size()); }
    bool valid(int stage) const { return stage >= 0 && stage < stages(); }
    int rank(int stage) const { return stage_rank[stage]; }
};

StageMap stage_map(const Schedule& schedule) {
    if (schedule.placement.pipeline_count() != 1)
        throw std::invalid_argument("PyTorch's communication passes need exactly one pipeline, this schedule has " +
                                    std::to_string(schedule.placement.pipeline_count()));
    return StageMap{schedule.placement.pipelines[0].stage_rank};
}

int rank_count(const Schedule& schedule) {
    size_t rows = schedule.actions ? schedule.actions->size() : schedule.ranks.size();
    return static_cast<int>(std::max<size_t>(rows, static_cast<size_t>(std::max(schedule.placement.ranks, 0))));
}

// Does this op's result travel to another rank (PyTorch's _has_comms)?
bool sends_to_other_rank(const Op& op, const StageMap& map) {
    if (!map.valid(op.stage)) return false;
    if (op.kind == OpKind::F) return op.stage + 1 < map.stages() && map.rank(op.stage + 1) != map.rank(op.stage);
    if (is_backward(op.kind)) return op.stage > 0 && map.rank(op.stage - 1) != map.rank(op.stage);
    return false;
}

// Has this op's input arrived on the rank that holds `done`: by RECV, or from the neighbouring stage's op
// that ran on the same rank? W and ops at the ends of the pipeline need nothing.
bool input_available(const Op& op, const DoneSet& done, const StageMap& map) {
    if (op.kind == OpKind::F) {
        if (op.stage == 0) return true;
        return has(done, Tag::RecvF, op.stage, op.microbatch) || has(done, Tag::F, op.stage - 1, op.microbatch);
    }
    if (is_backward(op.kind)) {
        if (op.stage == map.stages() - 1) return true;
        return has(done, Tag::RecvB, op.stage, op.microbatch) || has(done, Tag::I, op.stage + 1, op.microbatch) ||
               has(done, Tag::B, op.stage + 1, op.microbatch);
    }
    return true;
}

bool slot_ready(const Slot& slot, const DoneSet& done, const StageMap& map) {
    return std::all_of(slot.begin(), slot.end(), [&](const Op& op) { return input_available(op, done, map); });
}

void mark_done(const Slot& slot, DoneSet& done) {
    for (const Op& op : slot) done.insert(key(tag_of(op.kind), op.stage, op.microbatch));
}

RankAction compute_action(const Slot& slot, int index) {
    RankAction action;
    action.is_compute = true;
    action.slot = index;
    action.loc = slot.loc;
    return action;
}

RankAction comm_action(CommKind kind, int stage, int microbatch) {
    RankAction action;
    action.is_compute = false;
    action.comm = kind;
    action.stage = stage;
    action.microbatch = microbatch;
    return action;
}

std::string comm_text(const RankAction& action) {
    std::string text = std::to_string(action.stage) + comm_kind_name(action.comm);
    if (action.microbatch >= 0) text += std::to_string(action.microbatch);
    return text;
}

std::string action_text(const Schedule& schedule, int rank, const RankAction& action) {
    return action.is_compute ? format_slot(schedule.ranks[rank][action.slot]) : comm_text(action);
}

// ---- lowering ----

// Per rank: slot indices in order, -1 for a bubble (the gaps PyTorch keeps as None).
std::vector<std::vector<int>> lowering_queues(const Schedule& schedule, int ranks) {
    std::vector<std::vector<int>> queues(ranks);
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const std::vector<int>* gaps = r < schedule.gaps.size() ? &schedule.gaps[r] : nullptr;
        for (size_t k = 0; k <= schedule.ranks[r].size(); ++k) {
            if (gaps && k < gaps->size()) queues[r].insert(queues[r].end(), (*gaps)[k], -1);
            if (k < schedule.ranks[r].size()) queues[r].push_back(static_cast<int>(k));
        }
    }
    return queues;
}

class Lowering {
public:
    explicit Lowering(const Schedule& schedule)
        : schedule_(schedule), map_(stage_map(schedule)), ranks_(rank_count(schedule)),
          queues_(lowering_queues(schedule, ranks_)), heads_(ranks_, 0), out_(ranks_), done_(ranks_) {}

    std::vector<std::vector<RankAction>> run() {
        while (!finished()) {
            bool progress = false;
            for (int r = 0; r < ranks_; ++r) progress = try_head(r) || progress;
            if (!progress) throw std::runtime_error("Malformed compute schedule, can't schedule sends/recvs: " + blocked());
        }
        return std::move(out_);
    }

private:
    const Schedule& schedule_;
    StageMap map_;
    int ranks_;
    std::vector<std::vector<int>> queues_;
    std::vector<size_t> heads_;
    std::vector<std::vector<RankAction>> out_;
    std::vector<DoneSet> done_;

    bool finished() const {
        for (int r = 0; r < ranks_; ++r)
            if (heads_[r] < queues_[r].size()) return false;
        return true;
    }

    bool try_head(int r) {
        if (heads_[r] >= queues_[r].size()) return false;
        int index = queues_[r][heads_[r]];
        if (index >= 0) {
            const Slot& slot = schedule_.ranks[r][index];
            if (!slot_ready(slot, done_[r], map_)) return false;
            emit(r, slot, index);
        }
        ++heads_[r];  // a bubble is consumed without output: it delays this rank by one round
        return true;
    }

    // The slot, then per half that feeds another rank its SEND here and the matching RECV at the peer's end.
    void emit(int r, const Slot& slot, int index) {
        out_[r].push_back(compute_action(slot, index));
        mark_done(slot, done_[r]);
        for (const Op& op : slot) {
            if (!sends_to_other_rank(op, map_)) continue;
            bool forward = op.kind == OpKind::F;
            int peer_stage = forward ? op.stage + 1 : op.stage - 1;
            post(r, comm_action(forward ? CommKind::SendF : CommKind::SendB, op.stage, op.microbatch));
            post(map_.rank(peer_stage), comm_action(forward ? CommKind::RecvF : CommKind::RecvB, peer_stage, op.microbatch));
        }
    }

    void post(int r, const RankAction& action) {
        out_[r].push_back(action);
        done_[r].insert(key(tag_of(action.comm), action.stage, action.microbatch));
    }

    std::string blocked() const {
        std::string text;
        for (int r = 0; r < ranks_; ++r) {
            if (heads_[r] >= queues_[r].size()) continue;
            if (!text.empty()) text += "; ";
            text += "rank " + std::to_string(r) + " waits at " + format_slot(schedule_.ranks[r][queues_[r][heads_[r]]]);
        }
        return text;
    }
};

// ---- lock-step dry run ----

class LockStep {
public:
    explicit LockStep(const Schedule& schedule)
        : schedule_(schedule), actions_(require_actions(schedule)), map_(stage_map(schedule)),
          ranks_(rank_count(schedule)), heads_(ranks_, 0), timeline_(ranks_, 0), done_(ranks_) {}

    LockStepResult run() {
        while (!finished()) {
            std::vector<char> idle(ranks_, 0);
            bool progress = false;
            for (int r = 0; r < ranks_; ++r) {
                if (!remaining(r)) continue;
                ++timeline_[r];
                if (try_head(r)) progress = true;
                else idle[r] = 1;
            }
            // PyTorch's second pass: a rank that idled may use what a higher rank did in this same step.
            for (int r = 0; r < ranks_; ++r)
                if (idle[r] && remaining(r)) try_head(r);
            if (!progress) return stuck();
        }
        return LockStepResult{true, steps(), std::vector<int>(ranks_, -1), {}};
    }

    // Why rank r's head cannot run: "rank 1, position 0: 1RECV_F0 waits for 0SEND_F0 on rank 0".
    std::string describe_blocked(int r) const {
        const RankAction& action = head(r);
        return "rank " + std::to_string(r) + ", position " + std::to_string(heads_[r]) + ": " +
               action_text(schedule_, r, action) + " waits for " + awaited(r, action);
    }

    int head_position(int r) const { return remaining(r) ? static_cast<int>(heads_[r]) : -1; }

private:
    const Schedule& schedule_;
    const std::vector<std::vector<RankAction>>& actions_;
    StageMap map_;
    int ranks_;
    std::vector<size_t> heads_;
    std::vector<int> timeline_;
    std::vector<DoneSet> done_;

    static const std::vector<std::vector<RankAction>>& require_actions(const Schedule& schedule) {
        if (!schedule.actions) throw std::invalid_argument("the lock-step dry run needs a compute_comms action list");
        return *schedule.actions;
    }

    bool remaining(int r) const { return r < static_cast<int>(actions_.size()) && heads_[r] < actions_[r].size(); }
    bool finished() const {
        for (int r = 0; r < ranks_; ++r)
            if (remaining(r)) return false;
        return true;
    }
    const RankAction& head(int r) const { return actions_[r][heads_[r]]; }
    int steps() const { return timeline_.empty() ? 0 : *std::max_element(timeline_.begin(), timeline_.end()); }

    // A RECV completes once the peer has run the matching SEND (PyTorch: the send is already "done").
    bool peer_sent(const RankAction& recv) const {
        bool forward = recv.comm == CommKind::RecvF;
        int sender_stage = forward ? recv.stage - 1 : recv.stage + 1;
        if (!map_.valid(sender_stage)) return false;
        int peer = map_.rank(sender_stage);
        if (peer < 0 || peer >= ranks_) return false;
        return has(done_[peer], forward ? Tag::SendF : Tag::SendB, sender_stage, recv.microbatch);
    }

    bool ready(int r, const RankAction& action) const {
        if (action.is_compute) return slot_ready(schedule_.ranks[r][action.slot], done_[r], map_);
        switch (action.comm) {
            case CommKind::SendF: return has(done_[r], Tag::F, action.stage, action.microbatch);
            case CommKind::SendB:
                return has(done_[r], Tag::I, action.stage, action.microbatch) ||
                       has(done_[r], Tag::B, action.stage, action.microbatch);
            case CommKind::RecvF:
            case CommKind::RecvB: return peer_sent(action);
            default: return true;  // UNSHARD / RESHARD / REDUCE_GRAD: local, never wait for a peer
        }
    }

    bool try_head(int r) {
        const RankAction& action = head(r);
        if (!ready(r, action)) return false;
        if (action.is_compute) mark_done(schedule_.ranks[r][action.slot], done_[r]);
        else done_[r].insert(key(tag_of(action.comm), action.stage, action.microbatch));
        ++heads_[r];
        return true;
    }

    std::string awaited(int r, const RankAction& action) const {
        if (!action.is_compute) {
            std::string mb = std::to_string(action.microbatch);
            switch (action.comm) {
                case CommKind::SendF: return std::to_string(action.stage) + "F" + mb + " on this rank";
                case CommKind::SendB: return std::to_string(action.stage) + "I" + mb + " or " + std::to_string(action.stage) + "B" + mb + " on this rank";
                case CommKind::RecvF:
                case CommKind::RecvB: {
                    bool forward = action.comm == CommKind::RecvF;
                    int sender = forward ? action.stage - 1 : action.stage + 1;
                    std::string send = std::to_string(sender) + (forward ? "SEND_F" : "SEND_B") + mb;
                    if (!map_.valid(sender)) return send + ", but stage " + std::to_string(sender) + " does not exist";
                    return send + " on rank " + std::to_string(map_.rank(sender));
                }
                default: return "nothing";
            }
        }
        std::string what;
        for (const Op& op : schedule_.ranks[r][action.slot]) {
            if (input_available(op, done_[r], map_)) continue;
            if (!what.empty()) what += " and ";
            bool forward = op.kind == OpKind::F;
            what += std::to_string(op.stage) + (forward ? "RECV_F" : "RECV_B") + std::to_string(op.microbatch);
        }
        return what;
    }

    LockStepResult stuck() const {
        LockStepResult result{false, steps(), {}, "Schedule is not progressing after " + std::to_string(steps()) + " steps"};
        for (int r = 0; r < ranks_; ++r) {
            result.blocked_position_per_rank.push_back(head_position(r));
            if (remaining(r)) result.message += "; " + describe_blocked(r);
        }
        return result;
    }
};

// ---- checks ----

// One point-to-point message, named by the op whose result it carries.
struct Message {
    bool forward = true;
    int stage = 0;  // the sender's stage
    int microbatch = 0;
    int position = 0;  // action index on its rank
    friend bool same_message(const Message& a, const Message& b) {
        return a.forward == b.forward && a.stage == b.stage && a.microbatch == b.microbatch;
    }
};

// Sender stage and the peer rank (receiver for a SEND, sender for a RECV); peer -1 when the stage has no
// such neighbour.
struct Route {
    Message message;
    int peer = -1;
};

Route route_of(const RankAction& action, int position, const StageMap& map) {
    Route route;
    bool is_send = action.comm == CommKind::SendF || action.comm == CommKind::SendB;
    route.message.forward = action.comm == CommKind::SendF || action.comm == CommKind::RecvF;
    route.message.microbatch = action.microbatch;
    route.message.position = position;
    // SEND_F s goes to s+1, SEND_B s to s-1; RECV_F s comes from s-1, RECV_B s from s+1.
    int step = route.message.forward ? 1 : -1;
    route.message.stage = is_send ? action.stage : action.stage - step;
    int peer_stage = is_send ? action.stage + step : action.stage - step;
    if (map.valid(peer_stage) && map.valid(route.message.stage)) route.peer = map.rank(peer_stage);
    return route;
}

bool is_p2p(CommKind kind) {
    return kind == CommKind::SendF || kind == CommKind::RecvF || kind == CommKind::SendB || kind == CommKind::RecvB;
}

class CommChecker {
public:
    explicit CommChecker(const Schedule& schedule)
        : schedule_(schedule), actions_(*schedule.actions), map_(stage_map(schedule)), ranks_(rank_count(schedule)) {}

    std::vector<Violation> run() {
        check_sequences();
        check_missing_recvs();
        if (violations_.empty()) check_deadlock();
        return std::move(violations_);
    }

private:
    const Schedule& schedule_;
    const std::vector<std::vector<RankAction>>& actions_;
    StageMap map_;
    int ranks_;
    std::vector<Violation> violations_;

    std::string text(int rank, int position) const { return action_text(schedule_, rank, actions_[rank][position]); }

    // The compute op whose result a message carries: the forward, or whichever backward the sender runs.
    Op carried_op(const Message& m, int sender) const {
        OpKind kind = m.forward ? OpKind::F : OpKind::B;
        if (!m.forward && sender < static_cast<int>(schedule_.ranks.size()))
            for (const Slot& slot : schedule_.ranks[sender])
                for (const Op& op : slot)
                    if (is_backward(op.kind) && op.stage == m.stage && op.microbatch == m.microbatch) kind = op.kind;
        return Op{kind, 0, m.stage, m.microbatch};
    }

    void add(ViolationKind kind, int rank, int position, std::optional<Op> op, std::string message) {
        Violation v;
        v.kind = kind;
        v.rank = rank;
        v.position = position;
        v.op = op;
        v.loc = actions_[rank][position].loc;
        v.message = std::move(message);
        violations_.push_back(std::move(v));
    }

    std::string where(int rank, int position) const {
        return text(rank, position) + " (rank " + std::to_string(rank) + ", position " + std::to_string(position) + ")";
    }

    // sends[a][b] / recvs[b][a]: the messages from rank a to rank b in each side's program order.
    void check_sequences() {
        std::vector<std::vector<std::vector<Message>>> sends(ranks_, std::vector<std::vector<Message>>(ranks_));
        auto recvs = sends;
        for (int r = 0; r < static_cast<int>(actions_.size()); ++r)
            for (int k = 0; k < static_cast<int>(actions_[r].size()); ++k) {
                const RankAction& action = actions_[r][k];
                if (action.is_compute || !is_p2p(action.comm)) continue;
                Route route = route_of(action, k, map_);
                bool is_send = action.comm == CommKind::SendF || action.comm == CommKind::SendB;
                if (route.peer < 0 || route.peer >= ranks_) {
                    add(ViolationKind::CommMismatch, r, k, std::nullopt,
                        where(r, k) + (is_send ? " sends to" : " receives from") + " stage " +
                            std::to_string(is_send ? action.stage + (route.message.forward ? 1 : -1) : route.message.stage) +
                            ", which does not exist");
                    continue;
                }
                (is_send ? sends[r][route.peer] : recvs[route.peer][r]).push_back(route.message);
            }
        for (int a = 0; a < ranks_; ++a)
            for (int b = 0; b < ranks_; ++b) compare_pair(a, b, sends[a][b], recvs[a][b]);
    }

    // NCCL matches point-to-point messages between two ranks in posting order, so the k-th SEND from a to b
    // must be the k-th RECV on b from a. Only the first divergence is reported: later ones follow from it.
    void compare_pair(int a, int b, const std::vector<Message>& sends, const std::vector<Message>& recvs) {
        for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
            std::string nth = "message " + std::to_string(i + 1) + " from rank " + std::to_string(a) + " to rank " +
                              std::to_string(b);
            if (i >= recvs.size()) {
                add(ViolationKind::CommMismatch, a, sends[i].position, carried_op(sends[i], a),
                    nth + ": " + where(a, sends[i].position) + " has no matching receive; rank " + std::to_string(b) +
                        " posts only " + std::to_string(recvs.size()) + " receive(s) from rank " + std::to_string(a));
                return;
            }
            if (i >= sends.size()) {
                add(ViolationKind::CommMismatch, b, recvs[i].position, carried_op(recvs[i], a),
                    nth + ": " + where(b, recvs[i].position) + " has no matching send; rank " + std::to_string(a) +
                        " posts only " + std::to_string(sends.size()) + " send(s) to rank " + std::to_string(b));
                return;
            }
            if (!same_message(sends[i], recvs[i])) {
                add(ViolationKind::CommMismatch, a, sends[i].position, carried_op(sends[i], a),
                    nth + " is sent as " + where(a, sends[i].position) + " but received as " +
                        where(b, recvs[i].position) + " (point-to-point messages pair up in posting order)");
                return;
            }
        }
    }

    // The runtime refuses to compute before the input has been received ("Computing ... before receiving input").
    void check_missing_recvs() {
        for (int r = 0; r < static_cast<int>(actions_.size()); ++r) {
            DoneSet received;
            for (int k = 0; k < static_cast<int>(actions_[r].size()); ++k) {
                const RankAction& action = actions_[r][k];
                if (!action.is_compute) {
                    if (action.comm == CommKind::RecvF || action.comm == CommKind::RecvB)
                        received.insert(key(tag_of(action.comm), action.stage, action.microbatch));
                    continue;
                }
                for (const Op& op : schedule_.ranks[r][action.slot]) check_input_received(r, k, op, received);
            }
        }
    }

    void check_input_received(int r, int k, const Op& op, const DoneSet& received) {
        if (!map_.valid(op.stage) || op.kind == OpKind::W) return;
        bool forward = op.kind == OpKind::F;
        int source_stage = forward ? op.stage - 1 : op.stage + 1;
        if (!map_.valid(source_stage) || map_.rank(source_stage) == r) return;
        if (has(received, forward ? Tag::RecvF : Tag::RecvB, op.stage, op.microbatch)) return;
        std::string recv = std::to_string(op.stage) + (forward ? "RECV_F" : "RECV_B") + std::to_string(op.microbatch);
        add(ViolationKind::CommMissing, r, k, op,
            format_op(op) + " on rank " + std::to_string(r) + " (position " + std::to_string(k) + ") needs the " +
                (forward ? "activation" : "gradient") + " of stage " + std::to_string(source_stage) + " from rank " +
                std::to_string(map_.rank(source_stage)) + ", but no " + recv + " comes before it");
    }

    void check_deadlock() {
        LockStep sim(schedule_);
        LockStepResult result = sim.run();
        if (result.completed) return;
        Violation v;
        v.kind = ViolationKind::CommDeadlock;
        for (int r = 0; r < ranks_; ++r) {
            int position = result.blocked_position_per_rank[r];
            if (position < 0) continue;
            v.witness.push_back(sim.describe_blocked(r));
            if (v.rank >= 0) continue;
            v.rank = r;
            v.position = position;
            v.loc = actions_[r][position].loc;
            const RankAction& action = actions_[r][position];
            if (action.is_compute) v.op = schedule_.ranks[r][action.slot].ops[0];
        }
        v.message = "SEND/RECV deadlock after " + std::to_string(result.steps) + " lock-step step(s): none of the " +
                    std::to_string(v.witness.size()) + " unfinished ranks can run its next action";
        violations_.push_back(std::move(v));
    }
};

}  // namespace

Schedule merge_bw(const Schedule& schedule) {
    Schedule merged = schedule;
    merged.gaps.clear();  // PyTorch's _merge_bw drops the Nones
    merged.actions.reset();
    for (auto& rank : merged.ranks) {
        std::vector<Slot> out;
        for (size_t k = 0; k < rank.size(); ++k) {
            const Slot& slot = rank[k];
            bool fuse = !slot.is_pair() && slot.ops[0].kind == OpKind::I && k + 1 < rank.size() &&
                        !rank[k + 1].is_pair() && rank[k + 1].ops[0].kind == OpKind::W &&
                        rank[k + 1].ops[0].stage == slot.ops[0].stage &&
                        rank[k + 1].ops[0].microbatch == slot.ops[0].microbatch &&
                        rank[k + 1].ops[0].pipeline == slot.ops[0].pipeline;
            if (!fuse) {
                out.push_back(slot);
                continue;
            }
            Op full = slot.ops[0];
            full.kind = OpKind::B;
            out.push_back(Slot::single(full, slot.loc));
            ++k;
        }
        rank = std::move(out);
    }
    return merged;
}

std::vector<std::vector<RankAction>> lower_send_recv(const Schedule& schedule) { return Lowering(schedule).run(); }

LockStepResult simulate_comms_lockstep(const Schedule& schedule_with_actions) {
    return LockStep(schedule_with_actions).run();
}

std::vector<Violation> check_comms(const Schedule& schedule) {
    if (!schedule.actions) return {};
    return CommChecker(schedule).run();
}

}  // namespace pp
