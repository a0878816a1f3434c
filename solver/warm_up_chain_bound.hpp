#pragma once
// The warm-up of every rank at once: a lower bound that sees the exchange between ranks.
//
// Why: in the Zero Bubble table's 2p cells each rank's warm-up leaves a fraction of a forward idle before
// its first input gradient comes back. A rank can close that gap by running one more forward, but then its
// first I starts later, and so does every earlier stage's: the idle moves to another rank. No bound on one
// rank sees this; their certificate was the bare work, M(F+I+W).
//
// Setting: no pairs; any placement (one stage per rank, a V, interleaved, DualPipe's two pipelines). For a rank r
// let b_r be the start of its first I (of any stage and micro-batch).
//  before b_r  r runs only forwards: a W follows an I of its own stage, so none has run and nothing has been
//              released, and at most K = floor(cap / alloc) forwards start (no cap: all of them). Each forward
//              that runs there ends by b_r, so its head + duration <= b_r: r is busy at most busy_r(b_r) =
//              min(b_r - h_r, the K longest such forwards) in [h_r, b_r) and idles the rest.
//  the chain   the first I of r is the I of one of its stages s: no earlier than the least head of an I of s,
//              and unless s is its pipeline's last stage, no earlier than the I of stage s+1 of the same
//              micro-batch, which starts at b_q or later (q the rank of s+1), plus the least duration + lag
//              of those edges. So b_r >= min over r's stages of that limit.
//  after       r's cool-down idle (rank_memory_idle, one stage per rank only) when r has more than K forwards:
//              its last forward then starts at b_r or later, so the two intervals are disjoint.
// So objective >= min over such b of max over ranks of o_r + load_r + idle_r(b_r) + cool_r, with o_r = h_r for
// the makespan and 0 for the span. For a target T, raising every b_r to the least admissible time at or above
// its chain limit, until nothing moves, stays below the first-I times of any schedule that meets T (every step
// is monotone); a rank left without an admissible time proves that none does. The bound is the least integer T
// that passes (bisection; passing only grows with T).
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

namespace pp {

// Raises best when the chain bound exceeds it; nothing when the setting above does not hold.
void warm_up_chain_bound(const Instance& inst, const TaskBounds& bounds, LowerBound& best);

}  // namespace pp
