#pragma once
// The warm-up of every rank at once: a lower bound that sees the exchange between ranks.
//
// Why: in the Zero Bubble table's 2p cells each rank's warm-up leaves a fraction of a forward idle before
// its first input gradient comes back. A rank can close that gap by running one more forward, but then its
// first I starts later, and so does every earlier stage's: the idle moves to another rank. No bound on one
// rank sees this; their certificate was the bare work, M(F+I+W).
//
// Setting: one pipeline, one stage per rank, no pairs. For stage s on rank r let b_s be the start of the
// first I of s (of any micro-batch).
//  before b_s  r runs only forwards: a W follows an I of its own stage, so none has run and nothing has
//              been released, and at most K_s = floor(cap / alloc) forwards start (all M without a cap).
//              Each forward that runs there ends by b_s, so its head + duration <= b_s: r is busy at most
//              busy_s(b_s) = min(b_s - h_r, the K_s longest such forwards) in [h_r, b_s) and idles the rest.
//  the chain   b_s >= the least head of an I of s; for s < P-1 the first I of s waits for the I of the same
//              micro-batch on s+1, which starts at b_{s+1} or later: b_s >= b_{s+1} + d_s, d_s the least
//              duration + lag over the edges I(s+1, m) -> I(s, m).
//  after       r's cool-down idle (rank_memory_idle, after its last forward) when r has more than K_s
//              forwards: its last forward then starts at b_s or later, so the two intervals are disjoint.
// So objective >= min over chains b of max over ranks of o_r + load_r + idle_r(b_s) + cool_r, with o_r = h_r
// for the makespan and 0 for the span. For a target T, the least b_s that keeps its rank within T, taken
// from the last stage down, is the best choice for every earlier stage (their lower limits only fall with
// it), so whether some chain meets T is decided greedily, and the bound is the least integer T that passes
// (bisection; feasibility only grows with T).
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

namespace pp {

// Raises best when the chain bound exceeds it; nothing when the setting above does not hold.
void warm_up_chain_bound(const Instance& inst, const TaskBounds& bounds, LowerBound& best);

}  // namespace pp
