#include "solver/search_certificate.hpp"

#include <algorithm>
#include <vector>

namespace pp {
namespace {

std::string start_symbol(const Instance& inst, int task) { return "|start " + describe_op(inst.tasks[task].op) + "|"; }

const char* edge_reason(const PrecedenceEdge& edge) {
    switch (edge.why) {
    case Why::Dependency: return edge.lag != 0 ? "dependency across ranks (+ comm)" : "dependency";
    case Why::Fifo: return "micro-batch order within a class (symmetry breaking)";
    case Why::Memory: return "memory cap (with the micro-batch order)";
    }
    return "";
}

// The edges of the longest path ending at `task` (head side) followed by those starting at it (tail).
std::vector<int> chain_edges(const Instance& inst, const TaskBounds& plain, int task) {
    std::vector<int> head;
    for (int t = task; plain.head_edge[t] >= 0; t = inst.edges[plain.head_edge[t]].from) head.push_back(plain.head_edge[t]);
    std::reverse(head.begin(), head.end());
    for (int t = task; plain.tail_edge[t] >= 0; t = inst.edges[plain.tail_edge[t]].to) head.push_back(plain.tail_edge[t]);
    return head;
}

}  // namespace

std::optional<std::string> critical_path_smt2(const Instance& inst, const TaskBounds& plain, int task, Ticks bound) {
    if (inst.problem.objective != Objective::Makespan || inst.pairs_allowed() || plain.strengthened) return std::nullopt;
    if (plain.head[task] + inst.tasks[task].duration + plain.tail[task] <= bound) return std::nullopt;
    const std::vector<int> edges = chain_edges(inst, plain, task);
    std::vector<int> tasks{edges.empty() ? task : inst.edges[edges.front()].from};
    for (int e : edges) tasks.push_back(inst.edges[e].to);

    std::string out = "; The longest path through " + describe_op(inst.tasks[task].op) + ": " + std::to_string(tasks.size()) +
                      " ops; each start is an integer in the formula's time unit.\n(set-logic QF_IDL)\n";
    for (int t : tasks) out += "(declare-fun " + start_symbol(inst, t) + " () Int)\n";
    out += "; every op starts at or after time 0\n";
    for (int t : tasks) out += "(assert (>= " + start_symbol(inst, t) + " 0))\n";
    for (int e : edges) {
        const PrecedenceEdge& edge = inst.edges[e];
        const Ticks gap = inst.tasks[edge.from].duration + edge.lag;
        out += "; " + std::string(edge_reason(edge)) + "\n(assert (>= (- " + start_symbol(inst, edge.to) + " " +
               start_symbol(inst, edge.from) + ") " + to_string(gap) + "))\n";
    }
    out += "; the last op of the chain ends by the bound\n(assert (<= " + start_symbol(inst, tasks.back()) + " " +
           to_string(bound - inst.tasks[tasks.back()].duration) + "))\n(check-sat)\n";
    return out;
}

}  // namespace pp
