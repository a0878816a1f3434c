#pragma once
// Max-plus periodicity of a schedule family at a fixed number of ranks P.
//
// A family is handled as a *periodic word*: for t = 0, 1, 2, ... blocks, rank r runs
//     prefix_r . block_r(0) . block_r(1) ... block_r(t-1) . suffix_r(t)
// where block_r(j) is block_r with every micro-batch index of pipeline p raised by j * delta[p], and
// suffix_r(t) is suffix_r raised by t * delta[p]. The instance with t blocks is the family at
// M = M_origin + step * t. fit_word() finds the word from the family's instances at t = 0, 1, 2.
//
// The instances G_t are then one periodic graph. analyse_structure() assigns every slot a *super-step*
// (block slots: j + sigma[r]; prefix slots: alpha; suffix slots: t + beta) such that every edge of every
// G_t, t >= T0, goes from a super-step to the same or a later one (integer difference constraints solved by
// Bellman-Ford). Then (proofs/method.md):
//   * every cycle of G_t lies inside one super-step, and the super-steps of G_t are, up to translation,
//     the head ones, sub-sets of one middle one, and the tail ones, all present in G_{T_struct}; so G_t is
//     acyclic for every t >= T_struct iff G_{T_struct} is (deadlock-freedom for all t);
//   * the times of the middle super-steps follow x(k) = Psi(x(k-1), ..., x(k-L)) with one homogeneous
//     max-plus map Psi (translation-invariant for k >= k_inv), so if the window W(k0+c) of L super-steps
//     equals W(k0) shifted by c*lambda, the same holds for every later window (induction), and the tail's
//     times, a homogeneous translation-invariant function of the window before it, shift by c*lambda too.
#include "model/costs.hpp"
#include "model/schedule.hpp"
#include "proofs/symbolic.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pp {

// Which timing semantics a proof is about. Dataflow: verifier/simulate.hpp. Batched: DeepSeek's blocking
// P2P batches, timed by the graph of proofs/batched_graph.hpp.
enum class TimingModel { Dataflow, Batched };
// The timing graph of the word's instance with t blocks, in build_schedule_graph's slot numbering; edges whose
// EdgeInfo::cross_rank is set pay comm. Empty: the dataflow graph (build_schedule_graph).
using TimingGraphOf = std::function<ScheduleGraph(const Schedule& instance, int t)>;
ScheduleGraph timing_graph(const TimingGraphOf& graph_of, const Schedule& instance, int t);
const char* timing_model_name(TimingModel model);

Slot shift_slot(Slot slot, const std::vector<int>& delta, int k);
bool same_slot(const Slot& a, const Slot& b);

struct PeriodicWord {
    Placement base;  // the placement at t = 0
    std::vector<int> delta;
    std::vector<std::vector<Slot>> prefix, block, suffix;  // per rank; block at j = 0, suffix at t = 0

    int ranks() const { return base.ranks; }
    Schedule instantiate(int t) const;
    size_t block_slots() const;
};

enum class Region : std::uint8_t { Prefix, Block, Suffix };
struct SlotPlace {
    Region region = Region::Prefix;
    int index = 0;  // position inside prefix, block or suffix
    int block = 0;  // j, for block slots
};
// The place of every slot of instantiate(t), indexed by global slot id (ScheduleGraph numbering).
std::vector<SlotPlace> slot_places(const PeriodicWord& word, int t);
// Global slot id of block slot (rank, index) in block j of instantiate(t).
std::uint32_t block_slot_id(const PeriodicWord& word, int t, int rank, int index, int j);

struct WordFit {
    std::optional<PeriodicWord> word;
    std::string failure;
};
// The word whose instances at t = 0 and 1 are s0 and s1 (s2, when given, chooses among several fits).
WordFit fit_word(const Schedule& s0, const Schedule& s1, const Schedule* s2);
// Empty when instantiate(t) equals s op for op (placement, order, pairs); else the first difference.
// "" when `s` is slot for slot the `expected` schedule, else where they first differ.
std::string schedule_mismatch(const Schedule& expected, const Schedule& s);
std::string word_mismatch(const PeriodicWord& word, int t, const Schedule& s);

// The first t from which the edges of G_t, written in block coordinates (prefix index; block index and j;
// suffix index and t - j), no longer depend on t: all edges relate slots of one micro-batch or rank
// neighbours, and block/suffix indices are affine in j/t with the same slope (proofs/method.md §2).
struct Stability {
    int T0 = 1;
    std::string failure;  // a pipeline with a growing suffix but no growth (delta 0)
};
Stability stable_from(const PeriodicWord& word);

struct PeriodicStructure {
    bool feasible = false;
    std::string failure;
    int T0 = 1;
    int T = 0;  // the instance the potentials were computed on
    std::vector<int> sigma;
    std::vector<std::vector<int>> alpha, beta;
    int head_end = 0;
    int k_inv = 0;
    int tau = 0;
    int lag = 1;
    int T_struct = 0;
    size_t edges = 0;
    std::vector<std::uint32_t> negative_cycle_ranks;  // when infeasible: ranks of a backward-going cycle
};
PeriodicStructure analyse_structure(const PeriodicWord& word, int T, const TimingGraphOf& graph_of = {});
// The super-step of a slot of G_t under the potentials: prefix alpha, block j + sigma_r, suffix t + beta.
int super_step(const PeriodicStructure& structure, const SlotPlace& place, int rank, int t);
// Re-checks the potentials found on G_T against G_t for another t: every edge goes to the same or a later
// super-step and, past the head, at most `lag` later. "" when they hold, else the first offending edge.
// (The potentials come from one instance; this guards the claim that its edge classes are all of them.)
std::string check_potentials(const PeriodicWord& word, const PeriodicStructure& structure, int t,
                             const TimingGraphOf& graph_of = {});

// Exact periodic window under concrete costs.
struct PeriodicTiming {
    bool found = false;
    std::string failure;
    int k0 = 0, cycle = 1;
    Rational lambda{0};  // time per super-step (= per block)
    int t_periodic = 0;  // for every t >= t_periodic: makespan(t + cycle) = makespan(t) + cycle * lambda
    size_t window_slots = 0;
    int T = 0;           // instance simulated
    std::vector<Rational> block_busy;  // per rank: busy time of one block
};
PeriodicTiming find_periodic_window(const PeriodicWord& word, const PeriodicStructure& structure, const Costs& costs,
                                    int max_cycle = 4, const TimingGraphOf& graph_of = {});

// The window of super-steps k-L+1..k as (rank, index, j) triples (every rank's block present).
struct WindowSlot {
    int rank, index, j;
};
std::vector<WindowSlot> window_slots(const PeriodicWord& word, const PeriodicStructure& structure, int k);

}  // namespace pp
