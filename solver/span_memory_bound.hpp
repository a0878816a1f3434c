#pragma once
// A memory-aware bound on one rank's span (issue 32), for the Zero Bubble paper's objective and its size
// model (whole stashes are the special case alloc = kept = 1).
//
// Setting: rank r holds one stage s of a single pipeline; a = h_r, the earliest start of its first op;
// its span is end_r - a. Memory is counted as MemoryCounter does: F takes alloc at its start, I releases
// alloc - kept, W the remaining kept; at every F's start the rank holds at most cap.
//  warm-up   No I or W of r starts before h_I, the least head of an I of r, so nothing is released before
//            h_I and at most K = floor(cap / alloc) forwards start in [a, h_I): r idles there at least
//            h_I - a - (its K longest forwards).
//  cool-down Let f be r's last F, ending at t. Its own I(s, m_f) cannot start before t + rho, rho = the
//            longest dependency path from the end of f (the round trip through the later stages). In
//            [t, t + rho) r runs only I and W of the stashes it held at f's start other than f's own: by
//            the cap, x of them with their I still to run (alloc each, I + W of work) and y with only
//            their W (kept each, W of work), x alloc + y kept <= cap - alloc. So r idles there at least
//            rho - max over such x, y of x (I + W) + y W.
//  together  r's last forward ends after h_I when r has more than K forwards (the (K+1)-th cannot start
//            before h_I) or when a + (all of r's forwards) >= h_I; then the two intervals are disjoint and
//            end_r >= a + load(r) + both idles; otherwise only the larger idle counts.
// Every quantity is a relaxation of the true schedule (heads are valid earliest starts; the live set at
// f's start is one of the (x, y) enumerated), so the result is a lower bound on span_r.
#include "solver/lower_bound.hpp"
#include "solver/search_instance.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace pp {

// The two idles above for one rank, with what they are made of (the warm-up chain over several ranks,
// warm_up_chain_bound.hpp, reuses the cool-down). nullopt when the bound does not apply (no cap, pairs,
// a rank holding several stages or pipelines, several pipelines).
struct RankMemoryIdle {
    Ticks a = 0;                 // h_r
    Ticks load = 0;              // the rank's work
    Ticks h_input = 0;           // the least head of an I of r
    int first_input = -1;        // the I with that head
    std::int64_t K = 0;          // forwards that fit under the cap before anything is released
    std::size_t forwards = 0;    // the rank's forwards
    Ticks fill = 0, warm = 0;    // the K longest forwards; the warm-up idle
    int last_forward = -1;       // F(s, M-1)
    Ticks rho = 0, most = 0;     // its round trip; the most backward work the other stashes bring
    std::int64_t x = 0, y = 0;   // stashes with I and W, with W only, that bring `most`
    Ticks cool = 0;              // the cool-down idle
    bool disjoint = false;       // the two intervals cannot overlap
};
std::optional<RankMemoryIdle> rank_memory_idle(const Instance& inst, const TaskBounds& bounds, int rank);

// Raises best (and per_rank[rank]) when the bound for `rank` is larger; nothing when it does not apply.
void span_memory_bound(const Instance& inst, const TaskBounds& bounds, int rank, LowerBound& best,
                       std::vector<Ticks>& per_rank);

}  // namespace pp
