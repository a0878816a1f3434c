#pragma once
// Claims about schedule families, and the search for counterexamples (`pipeproof refute`).
//
// Grammar (usual precedence; comparisons do not chain):
//   claim  := or ;  or := and ("||" and)* ;  and := not ("&&" not)* ;  not := "!" not | cmp
//   cmp    := sum [("==" | "!=" | "<=" | ">=" | "<" | ">") sum]
//   sum    := prod (("+" | "-") prod)* ;  prod := unary (("*" | "/") unary)* ;  unary := "-" unary | atom
//   atom   := NUMBER | NAME | NAME "(" sum ["," sum] ")" | "(" claim ")"
// Names:
//   costs      F I W B FB (also F&B) comm (also c)          -- B is the full backward (= I + W by default)
//   instance   P M
//   timing     bubble [ (M') ]       largest idle time of a rank (idle = makespan - busy)
//              idle (r [, M'])       idle time of rank r;  plain `idle` = bubble
//              makespan [ (M') ]     span [ (M') ]  (largest per-rank span: last end - first start)
//              bubble_fraction [ (M') ]   total idle / (P * makespan)
//   memory     peak [ (r) ]          activation peak (of rank r, or the largest)
//   parameters copies                largest number of ranks holding one model block (DualPipe 2, DualPipeV 1)
//              blocks_per_rank       largest number of model blocks one rank holds
//              param_share           largest fraction of the model's blocks one rank holds
// M' is an expression in M and P (bubble(M+2)); an instance whose M' is not admissible does not count.
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "proofs/prove.hpp"
#include "proofs/symbolic.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pp {

struct ClaimError {
    std::string message;
    size_t offset = 0;
};

struct ClaimNode {
    enum Kind { Number, Name, Call, Neg, Not, Add, Sub, Mul, Div, Eq, Ne, Le, Ge, Lt, Gt, And, Or } kind = Number;
    Rational value{0};
    std::string name;
    std::vector<std::shared_ptr<ClaimNode>> args;
    std::string text;  // source text of this node
    size_t offset = 0; // where it starts in the claim
};
using ClaimPtr = std::shared_ptr<ClaimNode>;

// Input bounds (exceeded: ClaimError): a claim's length (each node keeps its source text, so memory grows
// with length x depth), nesting (parentheses, '!', unary '-': the parser recurses) and a grid's points.
inline constexpr size_t kMaxClaimLength = 4096;
inline constexpr int kMaxClaimDepth = 100;
inline constexpr size_t kMaxGridPoints = 100000;

ClaimPtr parse_claim(const std::string& text);  // an expression of either sort; throws ClaimError
// A claim proper: a condition (comparisons joined by &&, ||, !) whose every operand has the right sort --
// "bubble" alone, "F && 1" or "(W < 1) + 1" are ClaimErrors naming the offset.
ClaimPtr parse_condition(const std::string& text);
// A claim, an --assume or a cost grid written in `basis`' letters, rewritten into the letters the parser reads
// (PyTorch's F, I, W, B = full backward, FB). DeepSeek's read the same; in the Zero Bubble paper's B is the input
// gradient, so the name B becomes I. A text there that uses both B and I is ambiguous (did B mean the full
// backward?) and refused with a ClaimError, never guessed.
std::string in_parser_letters(const std::string& text, Basis basis);
// The names a claim may use (listed in errors): P (ranks), PP (pipeline stages: P, or 2P for DualPipeV,
// P x V interleaved), M, the costs, the measured quantities; and those that take an M' argument.
const std::vector<std::string>& claim_names();
const std::vector<std::string>& claim_function_names();
// Linear cost constraints joined by "&&" (for --assume): "FB >= B && I == F".
std::vector<CostConstraint> parse_constraints(const std::string& text);
// The points of a cost grid "F=1,I=1..2@0.5,W=0.5|1,FB=2..3@0.5,comm=0" (unset: F=I=W=1, B=I+W, FB=F+B,
// comm=0); throws ClaimError.
std::vector<CostPoint> parse_cost_grid(const std::string& text);

struct RefuteOptions {
    int p_lo = 0, p_hi = 0;
    std::optional<std::pair<int, int>> m_range;  // nullopt: every admissible M
    std::optional<int> stages_per_rank;          // V, for the families that take it
    std::optional<int> group_size;               // Megatron's G, for the families that take it
    // Seq1F1B's sequence segments per micro-batch (family_spec's K): the instances' ops are segment units, so the
    // caller folds 1/k into rank_share (a unit runs at 1/k of a micro-batch's costs and stash).
    std::optional<int> segments;
    bool symbolic = true;
    std::string grid;            // costs grid when !symbolic: "F=1,I=1..2@0.5,W=0.5|1,FB=2..3@0.5,comm=0"
    CostRegion region = CostRegion::standard(false);
    ActivationModel activations{};
    TimingModel model = TimingModel::Dataflow;
    int default_steps = 3;       // M values per P when M is unbounded and no proof extends the search
    // --units rank: the claim, the grid and the assumptions are written in rank units, where a stage runs at
    // `rank_share` (P / model blocks: 1/2 on the V map) of the rank's costs and holds that share of a rank's stash.
    // So the claim's F, I, W, B, FB are a rank's costs (a stage's / rank_share), its peaks count 1/P-of-the-model
    // stashes (a stage's count x rank_share), comm is unchanged; the counterexample is reported in the same units.
    Rational rank_share{1};
    // What the instances are timed at, at a cost point of the grid (in a stage's units): costs_at(point) when empty.
    // Uneven stages (--layout) give each block its layers' costs, the point being one decoder layer's.
    std::function<Costs(const CostPoint&)> point_costs;
    // What `pipeproof prove` needs besides the family's flags and a grid point's costs to re-run a proof refute relies
    // on (the notes cite it): the layout's flags, or the region's assumptions as prove reads them. Set by the CLI.
    std::string prove_flags;
};

struct ClaimValue {
    std::string text;  // the sub-expression
    std::string value;
};

struct RefuteResult {
    enum Status { Refuted, Holds, Undecided } status = Undecided;
    std::string family;
    std::string claim;
    // Counterexample
    int P = 0, M = 0;
    std::optional<CostPoint> costs;
    std::vector<ClaimValue> values;
    std::optional<Schedule> schedule;
    std::optional<Costs> schedule_costs;
    // Search report
    std::vector<std::string> notes;
    size_t instances = 0, cost_points = 0, solver_calls = 0;
    // Symbolic costs: the bubble the periodicity proof found at the largest P searched (for every M >= bubble_from_m),
    // with the region it holds on, so that the CLI can show it readably.
    std::optional<MaxPoly> bubble;
    int bubble_P = 0, bubble_from_m = 0;
    std::optional<CostRegion> bubble_region;
};

RefuteResult refute(const std::string& family, const std::string& claim_text, const RefuteOptions& options);
const char* refute_status_name(RefuteResult::Status status);

// Exact evaluation of a claim at one instance and cost point (used by tests and for re-checks).
struct ClaimContext {
    const FamilySpec* family = nullptr;
    int M = 0;
    Costs costs;
    ActivationModel activations{};
    TimingModel model = TimingModel::Dataflow;
    Rational rank_share{1};  // as RefuteOptions::rank_share; `costs` are then a stage's
};
// nullopt when an M' in the claim is not admissible.
std::optional<bool> evaluate_claim(const ClaimPtr& claim, const ClaimContext& context,
                                   std::vector<ClaimValue>* values = nullptr);

}  // namespace pp
