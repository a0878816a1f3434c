#pragma once
// V-ZB's order for every M from a finite check (schedules/v_zb.cpp): the greedy's whole state repeats.
//
// The greedy is deterministic, and what it does next depends only on its state: counts per rank and lane, clocks,
// memory, bubbles, owed W's and the end times it can still read, and on M only through comparisons of a count with
// M. Suppose that in a run at M (i) every comparison with M up to round k + 2e came out as it would for every
// larger M, and (ii) the state after round k + 2e is the state after round k shifted by one period: counts e higher,
// clocks and readable end times one lambda later, everything else equal. Then the run at M + e is the run at M with
// rounds k .. k+2e-1 inserted: by (i) it is the same run up to round k + 2e; there its state, read relative to M
// (counts as M - count) and to the clock, is the state at round k of the run at M, so what follows is that run's
// rest, e micro-batches and lambda later. Both runs then end with the same bubbles, so the reference's retries
// (which start from a run's bubbles) and its choice among four variants are made alike; each of those runs is
// checked the same way. (i) and (ii) are statements about rounds that the run at M + e repeats, so they hold
// there too, and by induction the order at every M + t*e is prefix . block^t . suffix(t). Checked for each
// residue class of M modulo e from `from_m`.
#include "schedules/greedy_recurrence.hpp"
#include "schedules/registry.hpp"

namespace pp {

// Tries M = first_m .. last_m (costs, sizes and limit from params; its microbatches ignored) and periods 1 and 2;
// runs_checked counts the four variants and their retries.
GreedyRecurrence check_v_zb_recurrence(const GenerateParams& params, int first_m, int last_m);

}  // namespace pp
