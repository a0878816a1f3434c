#include "verifier/batched.hpp"

#include "verifier/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace pp {

const char* comm_model_name(CommModel model) { return model == CommModel::Batched ? "batched" : "dataflow"; }

std::optional<CommModel> parse_comm_model(std::string_view name) {
    if (name == "dataflow") return CommModel::Dataflow;
    if (name == "batched") return CommModel::Batched;
    return std::nullopt;
}

std::string format_p2p(const P2POp& op) {
    std::string text = op.is_send ? "s" : "r";
    text += op.activation ? "A" : "G";
    text += std::to_string(op.stage);
    if (op.pipeline == 1) text += "r";
    if (op.pipeline > 1) text += "@" + std::to_string(op.pipeline);
    text += "." + std::to_string(op.microbatch);
    text += op.is_send ? ">" : "<";
    text += std::to_string(op.peer);
    return text;
}

std::string format_batch(const std::vector<P2POp>& batch) {
    std::string text = "{";
    for (size_t i = 0; i < batch.size(); ++i) text += (i ? "," : "") + format_p2p(batch[i]);
    return text + "}";
}

namespace {

// A message by name: which tensor (activation or gradient) of which producing op.
using MessageKey = std::tuple<bool, int, int, int>;  // activation, pipeline, producer stage, micro-batch
MessageKey key_of(const P2POp& op) { return {op.activation, op.pipeline, op.stage, op.microbatch}; }

bool stage_exists(const Placement& placement, int pipeline, int stage) {
    return pipeline >= 0 && pipeline < placement.pipeline_count() && stage >= 0 &&
           stage < placement.pipelines[pipeline].stages();
}

// The receive an op needs on `rank`, if its input comes from another rank.
std::optional<P2POp> input_receive(const Op& op, int rank, const Placement& placement) {
    if (op.kind == OpKind::W || !stage_exists(placement, op.pipeline, op.stage)) return std::nullopt;
    const bool forward = op.kind == OpKind::F;
    const int source = forward ? op.stage - 1 : op.stage + 1;
    if (!stage_exists(placement, op.pipeline, source)) return std::nullopt;
    const int peer = placement.rank_of(op.pipeline, source);
    if (peer == rank) return std::nullopt;
    return P2POp{false, forward, op.pipeline, source, op.microbatch, peer};
}

// The send of an op's result from `rank`, if the consumer lives on another rank.
std::optional<P2POp> output_send(const Op& op, int rank, const Placement& placement) {
    if (op.kind == OpKind::W || !stage_exists(placement, op.pipeline, op.stage)) return std::nullopt;
    const bool forward = op.kind == OpKind::F;
    const int target = forward ? op.stage + 1 : op.stage - 1;
    if (!stage_exists(placement, op.pipeline, target)) return std::nullopt;
    const int peer = placement.rank_of(op.pipeline, target);
    if (peer == rank) return std::nullopt;
    return P2POp{true, forward, op.pipeline, op.stage, op.microbatch, peer};
}

std::string message_text(const P2POp& op) {
    return fmt::format("the {} of {}", op.activation ? "activation" : "gradient",
                       format_op(Op{op.activation ? OpKind::F : OpKind::I, op.pipeline, op.stage, op.microbatch}));
}

// Where each P2P op of a program sits, and its counterpart on the peer rank (matched in posting order).
struct Posted {
    int rank = 0, step = 0, index = 0;
};

class ProgramChecker {
public:
    ProgramChecker(const Schedule& schedule, const CommProgram& program)
        : s_(schedule), program_(program), ranks_(static_cast<int>(schedule.ranks.size())) {}

    std::vector<Violation> run() {
        if (!check_structure()) return std::move(out_);
        check_routes_and_inputs();
        check_channels();
        return std::move(out_);
    }

private:
    const Schedule& s_;
    const CommProgram& program_;
    int ranks_;
    std::vector<Violation> out_;

    void add(ViolationKind kind, int rank, int step, std::optional<Op> op, std::string message) {
        Violation v;
        v.kind = kind;
        v.rank = rank;
        v.position = step;
        v.op = op;
        const int slot = rank >= 0 && step >= 0 ? program_[rank][step].slot : -1;
        if (slot >= 0 && slot < static_cast<int>(s_.ranks[rank].size())) v.loc = s_.ranks[rank][slot].loc;
        v.message = std::move(message);
        out_.push_back(std::move(v));
    }

    std::string where(int rank, int step) const {
        const int slot = program_[rank][step].slot;
        return fmt::format("rank {}, batch {} ({})", rank, step,
                           slot >= 0 ? "before " + format_slot(s_.ranks[rank][slot]) : std::string("final commit"));
    }

    // Steps list the rank's slots in order, each once; slot -1 only after the last slot.
    bool check_structure() {
        if (static_cast<int>(program_.size()) != ranks_) {
            add(ViolationKind::CommMismatch, -1, -1, std::nullopt,
                fmt::format("the communication program has {} rank(s), the schedule {}", program_.size(), ranks_));
            return false;
        }
        bool ok = true;
        for (int r = 0; r < ranks_; ++r) {
            const int slots = static_cast<int>(s_.ranks[r].size());
            int next = 0;
            for (int k = 0; k < static_cast<int>(program_[r].size()); ++k) {
                const int slot = program_[r][k].slot;
                if (slot == -1 && next == slots) continue;
                if (slot != next) {
                    add(ViolationKind::CommMismatch, r, k, std::nullopt,
                        fmt::format("rank {}, batch {}: the communication program runs slot {} where the rank's "
                                    "order has {}",
                                    r, k, slot, next < slots ? fmt::format("slot {}", next) : std::string("no slot left")));
                    ok = false;
                    break;
                }
                ++next;
            }
            if (ok && next != slots) {
                add(ViolationKind::CommMismatch, r, -1, std::nullopt,
                    fmt::format("rank {}: the communication program runs {} of the rank's {} slots", r, next, slots));
                ok = false;
            }
        }
        return ok;
    }

    // Every op is addressed between the ranks that hold the two stages; a send carries a tensor already
    // computed on this rank; each message is sent and received at most once; and every compute has its
    // cross-rank input from a receive in this or an earlier batch. Messages and computed tensors are
    // numbered by OpIndex (an activation as its F, a gradient as the I of the same stage and micro-batch).
    void check_routes_and_inputs() {
        const Placement& pl = s_.placement;
        const OpIndex index(pl);
        std::vector<int> computed_by(index.size(), -1), sent(index.size(), 0), received_by(index.size(), -1);
        for (int r = 0; r < ranks_; ++r) {
            for (int k = 0; k < static_cast<int>(program_[r].size()); ++k) {
                const CommStep& step = program_[r][k];
                for (const P2POp& op : step.batch) check_op(r, k, op, index, computed_by, sent, received_by);
                if (step.slot < 0) continue;
                for (const Op& op : s_.ranks[r][step.slot]) {
                    if (!index.in_range(op)) continue;  // the verifier reports it
                    if (auto need = input_receive(op, r, pl); need && received_by[tensor_id(index, *need)] != r)
                        add(ViolationKind::CommMissing, r, k, op,
                            fmt::format("{} on rank {} needs {} from rank {}, but no batch up to {} receives it",
                                        format_op(op), r, message_text(*need), need->peer, where(r, k)));
                    if (op.kind != OpKind::W) {
                        Op tensor = op;
                        tensor.kind = op.kind == OpKind::F ? OpKind::F : OpKind::I;
                        computed_by[index.id(tensor)] = r;
                    }
                }
            }
        }
    }

    static size_t tensor_id(const OpIndex& index, const P2POp& op) {
        return index.id(Op{op.activation ? OpKind::F : OpKind::I, op.pipeline, op.stage, op.microbatch});
    }

    std::string op_text(int r, int k, const P2POp& op) const {
        return fmt::format("{}: {} ({}{} {})", where(r, k), format_p2p(op), op.is_send ? "send " : "receive ",
                           message_text(op), op.is_send ? "to rank " + std::to_string(op.peer) : "from rank " + std::to_string(op.peer));
    }

    void check_op(int r, int k, const P2POp& op, const OpIndex& index, const std::vector<int>& computed_by,
                  std::vector<int>& sent, std::vector<int>& received_by) {
        const Placement& pl = s_.placement;
        const int consumer = op.activation ? op.stage + 1 : op.stage - 1;
        if (!stage_exists(pl, op.pipeline, op.stage) || !stage_exists(pl, op.pipeline, consumer) || op.microbatch < 0 ||
            op.microbatch >= pl.pipelines[op.pipeline].microbatches) {
            add(ViolationKind::CommMismatch, r, k, std::nullopt, op_text(r, k, op) + ": no such transfer in the placement");
            return;
        }
        const int producer_rank = pl.rank_of(op.pipeline, op.stage), consumer_rank = pl.rank_of(op.pipeline, consumer);
        const int self = op.is_send ? producer_rank : consumer_rank, other = op.is_send ? consumer_rank : producer_rank;
        if (self != r || other != op.peer || op.peer == r) {
            add(ViolationKind::CommMismatch, r, k, std::nullopt,
                op_text(r, k, op) + fmt::format(": that tensor travels from rank {} to rank {}", producer_rank, consumer_rank));
            return;
        }
        const size_t id = tensor_id(index, op);
        if (op.is_send ? sent[id]++ > 0 : received_by[id] >= 0) {
            add(ViolationKind::CommMismatch, r, k, std::nullopt,
                op_text(r, k, op) + (op.is_send ? ": sent a second time" : ": received a second time"));
            return;
        }
        if (op.is_send && computed_by[id] != r)
            add(ViolationKind::CommMismatch, r, k, std::nullopt, op_text(r, k, op) + ": the tensor has not been computed yet");
        if (!op.is_send) received_by[id] = r;
    }

    // Per ordered rank pair, the k-th send must be the k-th receive (NCCL pairs them by order only).
    void check_channels() {
        // Indexed by from * ranks + to.
        std::vector<std::vector<Posted>> sends(static_cast<size_t>(ranks_) * ranks_), recvs(sends.size());
        for (int r = 0; r < ranks_; ++r)
            for (int k = 0; k < static_cast<int>(program_[r].size()); ++k)
                for (int i = 0; i < static_cast<int>(program_[r][k].batch.size()); ++i) {
                    const P2POp& op = program_[r][k].batch[i];
                    if (op.peer < 0 || op.peer >= ranks_ || op.peer == r) continue;  // reported above
                    if (op.is_send) sends[r * ranks_ + op.peer].push_back({r, k, i});
                    else recvs[op.peer * ranks_ + r].push_back({r, k, i});
                }
        for (int a = 0; a < ranks_; ++a)
            for (int b = 0; b < ranks_; ++b) compare_channel(a, b, sends[a * ranks_ + b], recvs[a * ranks_ + b]);
    }

    const P2POp& at(const Posted& p) const { return program_[p.rank][p.step].batch[p.index]; }

    void compare_channel(int a, int b, const std::vector<Posted>& sends, const std::vector<Posted>& recvs) {
        for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
            const std::string nth = fmt::format("message {} from rank {} to rank {}", i + 1, a, b);
            if (i >= recvs.size()) {
                add(ViolationKind::CommMismatch, a, sends[i].step, std::nullopt,
                    fmt::format("{}: {} in {} has no matching receive; rank {} posts only {} receive(s) from rank {}", nth,
                                format_p2p(at(sends[i])), where(a, sends[i].step), b, recvs.size(), a));
                return;
            }
            if (i >= sends.size()) {
                add(ViolationKind::CommMismatch, b, recvs[i].step, std::nullopt,
                    fmt::format("{}: {} in {} has no matching send; rank {} posts only {} send(s) to rank {}", nth,
                                format_p2p(at(recvs[i])), where(b, recvs[i].step), a, sends.size(), b));
                return;
            }
            if (key_of(at(sends[i])) != key_of(at(recvs[i]))) {
                add(ViolationKind::CommMismatch, a, sends[i].step, std::nullopt,
                    fmt::format("{} is sent as {} ({}) but received as {} ({}): messages between two ranks pair up in "
                                "posting order, so the receiver would get the wrong tensor",
                                nth, format_p2p(at(sends[i])), where(a, sends[i].step), format_p2p(at(recvs[i])),
                                where(b, recvs[i].step)));
                return;
            }
        }
    }
};

// The rendezvous run: times every step of a consistent program, or says where it gets stuck.
struct Run {
    bool completed = false;
    std::vector<std::vector<Ticks>> done;  // per rank, per step: when the batch completes (slot start)
    std::vector<std::vector<Ticks>> end;   // per rank, per step: when the slot ends (= done for slot -1)
    std::vector<std::vector<std::int64_t>> pred;  // per rank, per step: global id of the slot that set the start
    Violation deadlock;
};

class Rendezvous {
public:
    // rank_begin: the global id of each rank's first slot (ScheduleGraph numbering), and the total at the end.
    Rendezvous(const Schedule& schedule, const std::vector<std::uint32_t>& rank_begin, const CommProgram& program,
               std::vector<Ticks> duration, Ticks comm)
        : s_(schedule), rank_begin_(rank_begin), program_(program), duration_(std::move(duration)), comm_(comm),
          ranks_(static_cast<int>(program.size())) {}

    Run run() {
        match();
        // Node (r, k) = the completion of rank r's batch k. It needs (r, k-1) (the rank posts k when the
        // previous slot ends) and, per op, the peer's node before the batch holding the counterpart.
        std::vector<size_t> base(ranks_ + 1, 0);
        for (int r = 0; r < ranks_; ++r) base[r + 1] = base[r] + program_[r].size();
        const size_t n = base[ranks_];
        std::vector<std::pair<size_t, size_t>> edges;  // (from, to)
        std::vector<int> indegree(n, 0);
        for (int r = 0; r < ranks_; ++r)
            for (size_t k = 0; k < program_[r].size(); ++k) {
                if (k > 0) edges.emplace_back(base[r] + k - 1, base[r] + k);
                for (size_t i = 0; i < program_[r][k].batch.size(); ++i) {
                    const int j = counterpart_[r][k][i];
                    if (j > 0) edges.emplace_back(base[program_[r][k].batch[i].peer] + j - 1, base[r] + k);
                }
            }
        // Compressed adjacency: the successors of v are next[first[v] .. first[v+1]).
        std::vector<size_t> first(n + 1, 0), next(edges.size());
        for (const auto& e : edges) ++first[e.first + 1], ++indegree[e.second];
        for (size_t v = 0; v < n; ++v) first[v + 1] += first[v];
        {
            std::vector<size_t> fill(first.begin(), first.end() - 1);
            for (const auto& e : edges) next[fill[e.first]++] = e.second;
        }

        Run out;
        out.done.resize(ranks_), out.end.resize(ranks_), out.pred.resize(ranks_);
        for (int r = 0; r < ranks_; ++r) {
            out.done[r].assign(program_[r].size(), 0);
            out.end[r].assign(program_[r].size(), 0);
            out.pred[r].assign(program_[r].size(), -1);
        }
        std::vector<int> rank_of_node(n);
        for (int r = 0; r < ranks_; ++r)
            for (size_t v = base[r]; v < base[r + 1]; ++v) rank_of_node[v] = r;
        std::vector<size_t> ready;
        for (size_t v = 0; v < n; ++v)
            if (indegree[v] == 0) ready.push_back(v);
        std::vector<char> finished(n, 0);
        for (size_t head = 0; head < ready.size(); ++head) {
            const size_t v = ready[head];
            const int r = rank_of_node[v];
            const int k = static_cast<int>(v - base[r]);
            settle(out, r, k);
            finished[v] = 1;
            for (size_t e = first[v]; e < first[v + 1]; ++e)
                if (--indegree[next[e]] == 0) ready.push_back(next[e]);
        }
        out.completed = ready.size() == n;
        if (!out.completed) out.deadlock = describe_deadlock(base, finished);
        return out;
    }

private:
    const Schedule& s_;
    const std::vector<std::uint32_t>& rank_begin_;
    const CommProgram& program_;
    std::vector<Ticks> duration_;  // per global slot id
    Ticks comm_;
    int ranks_;
    std::vector<std::vector<std::vector<int>>> counterpart_;

    void match() {
        std::vector<std::vector<Posted>> sends(static_cast<size_t>(ranks_) * ranks_), recvs(sends.size());
        counterpart_.resize(ranks_);
        for (int r = 0; r < ranks_; ++r) {
            counterpart_[r].resize(program_[r].size());
            for (int k = 0; k < static_cast<int>(program_[r].size()); ++k) {
                counterpart_[r][k].assign(program_[r][k].batch.size(), -1);
                for (int i = 0; i < static_cast<int>(program_[r][k].batch.size()); ++i) {
                    const P2POp& op = program_[r][k].batch[i];
                    if (op.is_send) sends[r * ranks_ + op.peer].push_back({r, k, i});
                    else recvs[op.peer * ranks_ + r].push_back({r, k, i});
                }
            }
        }
        for (size_t pair = 0; pair < sends.size(); ++pair) {
            const auto& list = sends[pair];
            const auto& other = recvs[pair];
            for (size_t i = 0; i < list.size() && i < other.size(); ++i) {
                counterpart_[list[i].rank][list[i].step][list[i].index] = other[i].step;
                counterpart_[other[i].rank][other[i].step][other[i].index] = list[i].step;
            }
        }
    }

    // When rank q posts batch j: the end of its previous step (time 0 for the first batch).
    static Ticks post_time(const Run& out, int q, int j) { return j == 0 ? 0 : out.end[q][j - 1]; }
    // The global slot id whose end is that post time (the latest slot before step j), -1 if none.
    std::int64_t post_slot(int q, int j) const {
        for (int k = j - 1; k >= 0; --k)
            if (program_[q][k].slot >= 0) return rank_begin_[q] + program_[q][k].slot;
        return -1;
    }

    void settle(Run& out, int r, int k) {
        const CommStep& step = program_[r][k];
        Ticks start = post_time(out, r, k);
        std::int64_t pred = post_slot(r, k);
        if (!step.batch.empty()) {
            Ticks latest = start;
            for (size_t i = 0; i < step.batch.size(); ++i) {
                const int q = step.batch[i].peer, j = counterpart_[r][k][i];
                const Ticks peer_post = post_time(out, q, j);
                if (peer_post > latest) latest = peer_post, pred = post_slot(q, j);
            }
            start = latest + comm_;
        }
        out.done[r][k] = start;
        out.pred[r][k] = pred;
        out.end[r][k] = start + (step.slot >= 0 ? duration_[rank_begin_[r] + step.slot] : 0);
    }

    // "in its batch before 1F3" / "in its final commit": where a rank posts its k-th batch, in ops.
    std::string where_posted(int r, int k) const {
        const int slot = program_[r][k].slot;
        return slot >= 0 ? "in its batch before " + format_slot(s_.ranks[r][slot]) : std::string("in its final commit");
    }
    std::string where_stuck(int r, int k) const {
        const int slot = program_[r][k].slot;
        return slot >= 0 ? "before " + format_slot(s_.ranks[r][slot]) : std::string("in its final commit");
    }

    Violation describe_deadlock(const std::vector<size_t>& base, const std::vector<char>& finished) const {
        Violation v;
        v.kind = ViolationKind::CommDeadlock;
        std::vector<int> stuck(ranks_, -1);
        for (int r = 0; r < ranks_; ++r)
            for (size_t k = 0; k < program_[r].size(); ++k)
                if (!finished[base[r] + k]) {
                    stuck[r] = static_cast<int>(k);
                    break;
                }
        for (int r = 0; r < ranks_; ++r) {
            const int k = stuck[r];
            if (k < 0) continue;
            const CommStep& step = program_[r][k];
            std::string line = step.slot >= 0 ? fmt::format("rank {} cannot start {}", r, format_slot(s_.ranks[r][step.slot]))
                                              : fmt::format("rank {} cannot finish", r);
            for (size_t i = 0; i < step.batch.size(); ++i) {
                const int q = step.batch[i].peer, j = counterpart_[r][k][i];
                if (j <= 0 || finished[base[q] + j - 1]) continue;
                const P2POp& op = step.batch[i];
                line += fmt::format(": {} {} {} {} rank {}, which rank {} {} only {} -- but rank {} is stuck {} [{}]",
                                    step.slot >= 0 ? "the batch before it" : "its final commit",
                                    op.is_send ? "sends" : "receives", message_text(op), op.is_send ? "to" : "from", q, q,
                                    op.is_send ? "receives" : "sends", where_posted(q, j), q,
                                    stuck[q] >= 0 ? where_stuck(q, stuck[q]) : std::string("(?)"), format_p2p(op));
                break;
            }
            v.witness.push_back(line);
            if (v.rank < 0) {
                v.rank = r;
                v.position = k;
                if (step.slot >= 0) v.op = s_.ranks[r][step.slot].ops[0], v.loc = s_.ranks[r][step.slot].loc;
            }
        }
        v.message = fmt::format("rendezvous deadlock of the blocking P2P batches: each of these {} ranks waits for a peer "
                                "that is itself waiting (a batch completes only when every send and receive in it has "
                                "its counterpart posted)",
                                v.witness.size());
        return v;
    }
};

}  // namespace

CommProgram generic_comm_program(const Schedule& schedule) {
    const Placement& pl = schedule.placement;
    CommProgram program(schedule.ranks.size());
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        const int rank = static_cast<int>(r);
        std::vector<P2POp> queued;  // sends of the previous slot's outputs
        for (size_t k = 0; k < schedule.ranks[r].size(); ++k) {
            const Slot& slot = schedule.ranks[r][k];
            for (const Op& op : slot)
                if (auto recv = input_receive(op, rank, pl)) queued.push_back(*recv);
            program[r].push_back(CommStep{std::move(queued), static_cast<int>(k)});
            queued.clear();
            for (const Op& op : slot)
                if (auto send = output_send(op, rank, pl)) queued.push_back(*send);
        }
        if (!queued.empty()) program[r].push_back(CommStep{std::move(queued), -1});
    }
    return program;
}

bool uses_attached_program(const Schedule& schedule, const BatchedOptions& options) {
    return options.use_attached_program && schedule.comm_program.has_value();
}

CommProgram batched_program(const Schedule& schedule, const BatchedOptions& options) {
    return uses_attached_program(schedule, options) ? *schedule.comm_program : generic_comm_program(schedule);
}

std::vector<Violation> check_comm_program(const Schedule& schedule, const CommProgram& program) {
    std::vector<Violation> violations = ProgramChecker(schedule, program).run();
    if (!violations.empty()) return violations;
    std::vector<std::uint32_t> rank_begin{0};
    for (const auto& slots : schedule.ranks) rank_begin.push_back(rank_begin.back() + static_cast<std::uint32_t>(slots.size()));
    Run run = Rendezvous(schedule, rank_begin, program, std::vector<Ticks>(rank_begin.back(), 0), 0).run();
    if (!run.completed) violations.push_back(std::move(run.deadlock));
    return violations;
}

Simulation simulate_batched(const Schedule& schedule, const ScheduleGraph& graph, const CommProgram& program,
                            const Costs& costs, const ActivationModel& activations) {
    const SegmentCosts per_segment(schedule, costs);
    const std::vector<Violation> problems = ProgramChecker(schedule, program).run();
    if (!problems.empty())
        throw SimulationError("the communication program is not consistent, so it has no batched timing: " +
                              problems.front().message);
    Simulation sim;
    sim.scale = time_scale_for(per_segment.layers());
    const std::vector<Ticks> duration = SlotDurations(schedule.placement, per_segment.layers(), sim.scale).of_slots(schedule);
    const Run run = Rendezvous(schedule, graph.rank_begin, program, duration, sim.scale.to_ticks(costs.comm)).run();
    if (!run.completed)
        throw SimulationError(run.deadlock.message + (run.deadlock.witness.empty() ? "" : "; " + run.deadlock.witness.front()));

    const std::uint32_t n = graph.slot_count();
    sim.start.assign(n, 0);
    sim.end.assign(n, 0);
    std::vector<std::int64_t> pred(n, -1);
    for (size_t r = 0; r < program.size(); ++r)
        for (size_t k = 0; k < program[r].size(); ++k) {
            const int slot = program[r][k].slot;
            if (slot < 0) continue;
            const std::uint32_t id = graph.rank_begin[r] + static_cast<std::uint32_t>(slot);
            sim.start[id] = run.done[r][k];
            sim.end[id] = run.end[r][k];
            pred[id] = run.pred[r][k];
        }

    const size_t ranks = schedule.ranks.size();
    sim.ranks.resize(ranks);
    std::uint32_t last_slot = 0;
    for (std::uint32_t s = 0; s < n; ++s)
        if (sim.end[s] > sim.makespan) sim.makespan = sim.end[s], last_slot = s;
    const auto peaks = peak_activations(schedule, activations);
    Ticks total_idle = 0;
    for (size_t r = 0; r < ranks; ++r) {
        RankTiming& t = sim.ranks[r];
        const std::uint32_t first = graph.rank_begin[r], stop = graph.rank_begin[r + 1];
        for (std::uint32_t s = first; s < stop; ++s) t.busy += duration[s];
        if (first < stop) t.first_start = sim.start[first], t.last_end = sim.end[stop - 1];
        t.idle = sim.makespan - t.busy;
        t.peak_activations = peaks[r];
        sim.bubble = std::max(sim.bubble, t.idle);
        total_idle += t.idle;
    }
    if (sim.makespan > 0) sim.bubble_fraction = Rational(total_idle, sim.makespan * static_cast<Ticks>(ranks));
    if (n > 0) {
        for (std::int64_t s = last_slot; s >= 0; s = pred[s]) sim.critical_path.push_back(static_cast<std::uint32_t>(s));
        std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    }
    record_path_times(sim);
    sim.ops = schedule.op_count();
    return sim;
}

Simulation simulate_batched(const Schedule& schedule, const Costs& costs, const ActivationModel& activations,
                            const BatchedOptions& options) {
    return simulate_batched(schedule, build_schedule_graph(schedule), batched_program(schedule, options), costs,
                            activations);
}

Simulation simulate_model(CommModel model, const Schedule& schedule, const ScheduleGraph& graph, const Costs& costs,
                          const ActivationModel& activations, const BatchedOptions& options) {
    if (model == CommModel::Dataflow) return simulate(schedule, graph, costs, activations);
    return simulate_batched(schedule, graph, batched_program(schedule, options), costs, activations);
}

}  // namespace pp
