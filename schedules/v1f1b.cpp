// 1F1B-V: 1F1B on the V placement with a fused backward, as sail-sg/zero-bubble-pipeline-parallelism@39f2c186
// builds it for `--enable-1f1b-v`: megatron/core/pipeline_parallel/zerobubble/scheduler/v1f1b.py,
// create_schedule(GraphConfig.basic_config(f, b, w, P, M, max_chunks=2)) with create_whole_pattern (L237-267),
// init_repeated_schedule (L90-99), clear_invalid_index (L109-132), process_warmup_without_increasing_peak_mem
// (L135-216) and transform_schedule (L8-74). Written from tests/data/v-families/ALGORITHMS.md ("1F1B-V");
// conformance: tests/test_v_families.cpp against the reference's own orders in tests/data/v-families/.
//
// Ops: F c0, F c1 and one fused backward per chunk -- our B (input and weight gradients in one op, the reference's
// BW, run by its schedule_bw). The reference reserves the fused backward two cells (B then a placeholder W).
//
// Algorithm: one offset mod 6 per rank for F, f (F c1), B (backward c1), b (backward c0) and their placeholders,
// laid out along the dependency chain F(0..P-1), f(P-1..0), B(0..P-1), b(P-1..0) with a pause of 3 cells after
// every third backward; each rank's row repeats it; M copies of each letter are kept, starting at increasing
// positions along the chain; then a left-to-right pass moves every op to the earliest free cell(s) after its
// inputs -- a forward only as far as the rank's running memory stays below the peak. The order does not depend on
// the costs.
//
// Preconditions: P >= 1, M >= 1, V unset or 2: what the scheduler accepts (the runtime's --enable-1f1b-v needs
// P > 1 and excludes the zero-bubble flags). Timing note: the reference's own send/recv placement times a fused
// backward at B's cost only (passes.py add_time joins two cost lists); pipeproof times it at B = I + W unless
// --costs gives B.
#include "schedules/v1f1b.hpp"

#include "schedules/families.hpp"
#include "schedules/v_families.hpp"

#include "limits/deadline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pp {
namespace {

constexpr std::string_view kLetters = "FfBbWw";  // the reference's letters; W, w hold a fused backward's second cell
constexpr int kPattern = 6;

int letter_index(char c) { return static_cast<int>(kLetters.find(c)); }

// create_whole_pattern: the offset mod 6 of each letter on each rank.
std::vector<std::array<int, 6>> whole_pattern(int P) {
    std::vector<std::array<int, 6>> at(P);
    int now = 0;
    for (int i = 0; i < P; ++i) at[i][0] = ++now;
    for (int i = 0; i < P; ++i) at[P - 1 - i][1] = ++now;
    ++now;
    if (P % 3 == 0) now += 3;
    int cycle = (3 - (P + 2) % 3) % 3;
    auto backward = [&](int rank, int letter, int hold) {
        at[rank][letter] = now;
        at[rank][hold] = now + 1;
        now += 2;
        if (++cycle == 3) {
            cycle = 0;
            now += 3;
        }
    };
    for (int i = 0; i < P; ++i) backward(i, 2, 4);
    for (int i = 0; i < P; ++i) backward(P - 1 - i, 3, 5);
    for (auto& rank : at)
        for (int& offset : rank) offset %= kPattern;
    return at;
}

using Rows = std::vector<std::vector<char>>;

// Blank the cells pos, pos + step, pos + 2 step, ... that are on the row.
void clear_from(std::vector<char>& row, long pos, long step) {
    for (; pos >= 0 && pos < static_cast<long>(row.size()); pos += step) row[pos] = ' ';
}

// clear_invalid_index, split in two so that what depends on M is visible: the cursor that advances along the
// dependency chain finds, per rank and letter, the first cell kept (kept_starts, no M), and M copies are kept from
// there (keep_m_copies). -1: the letter is not on the rank's row (a later letter took its offset).
using Starts = std::vector<std::array<long, 6>>;

Starts kept_starts(const Rows& rows) {
    const int P = static_cast<int>(rows.size());
    Starts starts(P);
    for (auto& rank : starts) rank.fill(-1);
    long cursor = kPattern;
    for (const char letter : std::string_view("FfBb")) {
        const bool forward_ranks = letter == 'F' || letter == 'B';
        for (int n = 0; n < P; ++n) {
            const int i = forward_ranks ? n : P - 1 - n;
            const std::vector<char>& row = rows[i];
            for (int j = 0; j < kPattern; ++j) {
                if (row.at(cursor) != letter) {
                    ++cursor;
                    continue;
                }
                starts[i][letter_index(letter)] = cursor;
                ++cursor;
                if (letter == 'B' || letter == 'b') {
                    const char hold = letter == 'B' ? 'W' : 'w';
                    for (int k = 0; k < kPattern; ++k)
                        if (row.at(cursor + k) == hold) {
                            starts[i][letter_index(hold)] = cursor + k;
                            break;
                        }
                }
                break;
            }
        }
    }
    return starts;
}

// The rows are 6-periodic, so clearing a letter's cells before its start and from 6M cells after it keeps exactly
// the copies at start + 6j, j < M. (The reference clears as its cursor advances; each clear touches only the
// letter found, which its cursor does not look for again on that rank, so the two agree.)
void keep_m_copies(Rows& rows, const Starts& starts, int M) {
    for (size_t s = 0; s < rows.size(); ++s)
        for (int letter = 0; letter < 6; ++letter)
            if (const long start = starts[s][letter]; start >= 0) {
                clear_from(rows[s], start - kPattern, -kPattern);
                clear_from(rows[s], start + static_cast<long>(kPattern) * M, kPattern);
            }
}

// The rows for M before compaction: the pattern repeated, M copies of each letter kept.
Rows kept_rows(int P, int M) {
    const auto pattern = whole_pattern(P);
    Rows rows(P);
    const size_t length = static_cast<size_t>(kPattern) * (4 * static_cast<size_t>(P) + M + 1);
    for (int s = 0; s < P; ++s) {
        std::array<char, kPattern> cells;
        cells.fill(' ');
        for (int letter = 0; letter < 6; ++letter) cells[pattern[s][letter]] = kLetters[letter];  // a later letter wins
        rows[s].resize(length);
        for (size_t x = 0; x < length; ++x) rows[s][x] = cells[x % kPattern];
    }
    keep_m_copies(rows, kept_starts(rows), M);
    return rows;
}

// What the recurrence check (check_1f1b_v_recurrence) watches of a sweep. First run: per column, the lowest cell
// it reads and the lowest occurrence it looks up, relative to the looked-up letter's count at the column's start.
// Second run: the state at the start of each column x in [first, last], D cells back and `lowest` occurrences
// back, compared with the state `period` columns before it (the last `period` states are kept); `repeats_at` is the
// first column k whose state the one at k + period repeats, counts e higher.
struct SweepProbe {
    std::vector<long> lowest_cell;
    std::vector<int> lowest_occurrence;
    long window = 0;
    int lowest = 0;
    long first = 0, last = -1;
    long period = 0;
    int e = 0;
    std::deque<std::pair<std::vector<long>, std::vector<long>>> recent;  // (counts, state), oldest first
    long repeats_at = -1;
};

// process_warmup_without_increasing_peak_mem: one pass left to right (ranks in order at each position) moving
// each op to the earliest free cell after its inputs; backwards need two free cells; a forward moves only
// through cells where the rank's running memory (+1 per F or f, -1 per W or w) is below the peak of all rows.
class Compaction {
public:
    Compaction(Rows& rows, int M, SweepProbe* probe = nullptr)
        : rows_(rows), P_(static_cast<int>(rows.size())), length_(rows[0].size()), probe_(probe) {
        mem_.assign(P_, std::vector<int>(length_));
        for (int s = 0; s < P_; ++s) {
            int current = 0;
            for (size_t x = 0; x < length_; ++x) {
                if (rows[s][x] == 'F' || rows[s][x] == 'f') ++current;
                if (rows[s][x] == 'W' || rows[s][x] == 'w') --current;
                mem_[s][x] = current;
                peak_ = std::max(peak_, current);
            }
        }
        loc_.assign(P_, std::vector<std::array<long, 6>>(M + 2));
        for (auto& rank : loc_)
            for (auto& entry : rank) entry.fill(-1);
        seen_.assign(P_, std::array<int, 6>{});
        if (probe_) {
            probe_->lowest_cell.assign(length_, std::numeric_limits<long>::max());
            probe_->lowest_occurrence.assign(length_, 0);
        }
    }

    int peak() const { return peak_; }

    void run() {
        for (size_t x = 0; x < length_; ++x) {
            if (probe_) observe(static_cast<long>(x));
            for (int s = 0; s < P_; ++s) {
                limits::poll("generating 1f1b-v");  // a run's time limit (search's warm starts) stops it
                place(static_cast<long>(x), s);
            }
        }
    }

private:
    // The position of the n-th occurrence (1-based) of `letter` on rank s once swept, else -1. Every lookup is at
    // the reader's own count n or n - 1 (its previous occurrence): the recurrence check's shift of counts rests on
    // it, so it is enforced here, not only read off the code.
    long where(long x, int s, int n, char letter) {
        if (n != reader_count_ && n != reader_count_ - 1)
            throw std::logic_error("1f1b-v compaction: a lookup at an occurrence other than the reader's own or previous");
        const int l = letter_index(letter);
        if (probe_) probe_->lowest_occurrence[x] = std::min(probe_->lowest_occurrence[x], n - column_seen_[s][l]);
        return loc_.at(s).at(n)[l];
    }

    void place(long here, int s) {
        std::vector<char>& row = rows_[s];
        const char c = row[here];
        if (c == ' ') return;
        const int n = ++seen_[s][letter_index(c)];
        reader_count_ = n;
        long pos = n > 1 ? where(here, s, n - 1, c) : -1;
        if (c == 'W') pos = std::max(pos, where(here, s, n, 'B'));
        if (c == 'w') pos = std::max(pos, where(here, s, n, 'b'));
        if (c == 'F' && s > 0) pos = std::max(pos, where(here, s - 1, n, 'F'));
        if (c == 'f') pos = std::max(pos, s != P_ - 1 ? where(here, s + 1, n, 'f') : where(here, s, n, 'F'));
        if (c == 'B') pos = std::max(pos, s != 0 ? where(here, s - 1, n, 'W') : where(here, s, n, 'f'));  // ends at its W cell
        if (c == 'b') pos = std::max(pos, s != P_ - 1 ? where(here, s + 1, n, 'w') : where(here, s, n, 'W'));
        ++pos;
        // The inputs of an op come before it along the rows (kept_starts' cursor follows the dependency chain), so
        // nothing at or past the sweep's column is read but the op itself; the check's induction rests on it.
        if (pos > here) throw std::logic_error("1f1b-v compaction: an op's input lies at or after its own cell");
        if (probe_) probe_->lowest_cell[here] = std::min(probe_->lowest_cell[here], pos);  // nothing below is read
        while (row.at(pos) != ' ' && pos < here) ++pos;
        if (c == 'B' || c == 'b')
            while (pos < here && (row.at(pos) != ' ' || row.at(pos + 1) != ' ')) ++pos;
        auto& mine = loc_[s].at(n)[letter_index(c)];
        if (pos == here) {
            mine = here;
            return;
        }
        if (c != 'F' && c != 'f') {  // B, b, W, w move to pos
            row.at(pos) = c;
            row[here] = ' ';
            if (c == 'W' || c == 'w')
                for (long j = pos; j < here; ++j) mem_[s][j] -= 1;
            mine = pos;
            return;
        }
        long cell = here;
        while (cell > pos && mem_[s][cell - 1] < peak_) --cell;
        while (cell < here && row[cell] != ' ') ++cell;
        if (cell == here) {
            mine = here;
            return;
        }
        row[cell] = c;
        row[here] = ' ';
        for (long j = cell; j < here; ++j) mem_[s][j] += 1;
        mine = cell;
    }

    // Before column x: the counts, and the state relative to x -- per rank the D cells and running memory behind
    // the sweep, then per letter the positions of the occurrences from `lowest` behind its count up to it.
    void observe(long x) {
        column_seen_ = seen_;
        if (x < probe_->first || x > probe_->last || probe_->repeats_at >= 0 || probe_->period <= 0) return;
        std::vector<long> counts, state;
        for (int s = 0; s < P_; ++s) {
            for (long j = x - probe_->window; j < x; ++j) {
                state.push_back(j < 0 ? ' ' : rows_[s][j]);
                state.push_back(j < 0 ? 0 : mem_[s][j]);
            }
            for (int l = 0; l < 6; ++l) {
                counts.push_back(seen_[s][l]);
                const int from = std::max(1, seen_[s][l] + probe_->lowest);
                state.push_back(seen_[s][l] - from);
                for (int n = from; n <= seen_[s][l]; ++n) state.push_back(loc_[s].at(n)[l] - x);
            }
        }
        auto& recent = probe_->recent;
        if (static_cast<long>(recent.size()) == probe_->period) {
            const auto& [old_counts, old_state] = recent.front();
            bool repeats = old_state == state;
            for (size_t i = 0; i < counts.size() && repeats; ++i) repeats = counts[i] == old_counts[i] + probe_->e;
            if (repeats) probe_->repeats_at = x - probe_->period;
            recent.pop_front();
        }
        recent.emplace_back(std::move(counts), std::move(state));
    }

    Rows& rows_;
    int P_;
    size_t length_;
    int peak_ = 0;
    std::vector<std::vector<int>> mem_;
    std::vector<std::vector<std::array<long, 6>>> loc_;  // [rank][occurrence][letter]
    std::vector<std::array<int, 6>> seen_, column_seen_;
    int reader_count_ = 0;  // the count of the op being placed
    SweepProbe* probe_;
};

// Whether the sweep at M repeats with a period of e micro-batches (6e columns) as v1f1b.hpp states it; the column
// where it does, or a reason.
std::string sweep_repeats(int P, int M, int e) {
    const long period = static_cast<long>(kPattern) * e;
    const Rows input = kept_rows(P, M);
    const Starts starts = kept_starts(input);
    long first = 0, end = std::numeric_limits<long>::max();
    for (const auto& rank : starts)
        for (const long start : rank) {
            if (start < 0) return "a letter is missing from a rank's row";
            first = std::max(first, start + 1);  // past every start: no first occurrence is swept from here
            end = std::min(end, start + static_cast<long>(kPattern) * M);
        }
    Rows grown = kept_rows(P, M + e), rows = input;
    if (Compaction(grown, M + e).peak() != Compaction(rows, M).peak())
        return fmt::format("the rows' peak differs at M = {} and M = {}", M, M + e);

    SweepProbe reads;
    Compaction(rows, M, &reads).run();
    long window = 1;
    int lowest = 0;
    for (size_t x = first; x < reads.lowest_cell.size(); ++x) {
        if (reads.lowest_cell[x] != std::numeric_limits<long>::max())
            window = std::max(window, static_cast<long>(x) - reads.lowest_cell[x]);
        lowest = std::min(lowest, reads.lowest_occurrence[x]);
    }
    SweepProbe states;
    states.window = window;
    states.lowest = lowest;
    states.first = std::max(first, window + 1);  // D < k: no read reaches cell 0, whose position does not shift
    states.last = end;  // k + 6e <= end
    states.period = period;
    states.e = e;
    rows = input;
    Compaction(rows, M, &states).run();
    if (states.repeats_at >= 0) return {};
    return fmt::format("at M = {}, period {} micro-batch(es): the sweep's state (the {} cells and running memory behind "
                       "it, the counts, the positions up to {} occurrences back) never repeats between column {} and "
                       "the first end, column {}",
                       M, e, window, -lowest, states.first, end);
}

}  // namespace

Schedule generate_1f1b_v(const GenerateParams& params) {
    check_v_family(params, "1f1b-v");
    const int P = params.ranks, M = params.microbatches;
    Rows rows = kept_rows(P, M);
    Compaction(rows, M).run();

    VOrder order(P);
    for (int s = 0; s < P; ++s) {
        std::array<int, 6> seen{};
        for (const char c : rows[s]) {
            if (c == ' ' || c == 'W' || c == 'w') continue;
            const int n = seen[letter_index(c)]++;
            if (n >= M) continue;  // the reference drops copies past the M-th (none are left by then)
            switch (c) {
                case 'F': order[s].push_back({OpKind::F, 0, n}); break;
                case 'f': order[s].push_back({OpKind::F, 1, n}); break;
                case 'B': order[s].push_back({OpKind::B, 1, n}); break;
                default: order[s].push_back({OpKind::B, 0, n}); break;
            }
        }
    }
    return v_family_schedule(P, M, order, "1f1b-v(P=" + std::to_string(P) + ",M=" + std::to_string(M) + ")");
}

GreedyRecurrence check_1f1b_v_recurrence(int ranks, int first_m, int last_m) {
    GreedyRecurrence answer;
    std::string last_failure = "no M tried";
    first_m = std::max(first_m, 1);
    // Every residue class of M modulo e from m, or the first failure.
    auto failure_at = [&](int m, int e) {
        for (int r = 0; r < e; ++r) {
            check_v_family(GenerateParams{ranks, m + r, 2}, "1f1b-v");
            if (std::string why = sweep_repeats(ranks, m + r, e); !why.empty()) return why;
        }
        return std::string();
    };
    auto found = [&](int m, int e) {
        answer.holds = true;
        answer.from_m = m;
        answer.period_m = e;
        answer.runs_checked = e;
        return answer;
    };
    // Holding at M implies holding at M + e (schedules/v1f1b.hpp: the run at M + e repeats the run at M's state at
    // the same column), so gallop (first_m, first_m + 1, first_m + 3, ...) to an M where period 1 or 2 holds and
    // bisect back to the least such M; any M found to hold is a proof on its own.
    int below = first_m - 1;
    auto least = [&](int above, int e) {
        while (above - below > 1) {
            const int mid = below + (above - below) / 2;
            if (failure_at(mid, e).empty()) above = mid; else below = mid;
        }
        return found(above, e);
    };
    for (long step = 1, m = first_m;; m = std::min<long>(first_m + 2 * step - 1, last_m), step *= 2) {
        for (int e : {1, 2}) {
            if (m + e - 1 > last_m) continue;
            last_failure = failure_at(static_cast<int>(m), e);
            if (last_failure.empty()) return least(static_cast<int>(m), e);
        }
        below = static_cast<int>(m);
        if (m >= last_m) break;
    }
    answer.failure = last_failure + fmt::format(" (M = {}..{} tried)", first_m, last_m);
    return answer;
}

}  // namespace pp
