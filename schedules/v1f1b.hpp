#pragma once
// 1F1B-V's order for every M from a finite check of its sweep (schedules/v1f1b.cpp).
//
// The generator keeps, per rank and letter, the copies in the 6M cells from a start fixed by P (kept_starts never
// reads M), so the rows for M + e are the rows for M with 6e cells inserted anywhere past the last start and before
// the first end. The compaction then sweeps the cells left to right; each op reads only cells and running memory
// behind it, the positions of ops already swept, and the rows' peak (equal for M and M + e: the inserted cells hold
// one copy of each letter per 6 and leave the running memory where it was). Suppose that in the run at M, at
// column k past every start, (i) every read from column k on lies within D cells behind the sweep, D < k, and
// reaches positions of ops at most `lowest` occurrences behind their letter's count; (ii) the state at column
// k + 6e -- the D cells and running memory behind the sweep, the counts, and those positions -- is the state at
// column k with every count e higher and every position 6e later; and (iii) k + 6e is at most the first end. Then
// the run at M + e is the run at M up to column k + 6e (its input agrees there) and the run at M from column k
// shifted by 6e after that, so its final rows are the final rows at M with the cells [k - D, k - D + 6e) doubled:
// one more block per rank. By induction on t, the order at M + t*e is prefix . block^t . suffix(t).
#include "schedules/greedy_recurrence.hpp"

namespace pp {

// Tries M = first_m .. last_m and periods of 1 and 2 micro-batches, every residue class of M modulo e from M.
GreedyRecurrence check_1f1b_v_recurrence(int ranks, int first_m, int last_m);

}  // namespace pp
