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
#include "schedules/families.hpp"
#include "schedules/v_families.hpp"

#include "limits/deadline.hpp"

#include <array>
#include <stdexcept>
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

// clear_invalid_index: keep M copies of each letter on each rank, the first at a cursor that advances along the
// dependency chain.
void keep_m_copies(Rows& rows, int M) {
    const int P = static_cast<int>(rows.size());
    long cursor = kPattern;
    for (const char letter : std::string_view("FfBb")) {
        const bool forward_ranks = letter == 'F' || letter == 'B';
        for (int n = 0; n < P; ++n) {
            const int i = forward_ranks ? n : P - 1 - n;
            std::vector<char>& row = rows[i];
            for (int j = 0; j < kPattern; ++j) {
                if (row.at(cursor) != letter) {
                    ++cursor;
                    continue;
                }
                clear_from(row, cursor - kPattern, -kPattern);
                clear_from(row, cursor + static_cast<long>(kPattern) * M, kPattern);
                ++cursor;
                if (letter == 'B' || letter == 'b') {
                    const char hold = letter == 'B' ? 'W' : 'w';
                    for (int k = 0; k < kPattern; ++k)
                        if (row.at(cursor + k) == hold) {
                            clear_from(row, cursor + k - kPattern, -kPattern);
                            clear_from(row, cursor + k + static_cast<long>(kPattern) * M, kPattern);
                            break;
                        }
                }
                break;
            }
        }
    }
}

// process_warmup_without_increasing_peak_mem: one pass left to right (ranks in order at each position) moving
// each op to the earliest free cell after its inputs; backwards need two free cells; a forward moves only
// through cells where the rank's running memory (+1 per F or f, -1 per W or w) is below the peak of all rows.
void compact(Rows& rows, int M) {
    const int P = static_cast<int>(rows.size());
    const size_t length = rows[0].size();
    int peak = 0;
    std::vector<std::vector<int>> mem(P, std::vector<int>(length));
    for (int s = 0; s < P; ++s) {
        int current = 0;
        for (size_t x = 0; x < length; ++x) {
            if (rows[s][x] == 'F' || rows[s][x] == 'f') ++current;
            if (rows[s][x] == 'W' || rows[s][x] == 'w') --current;
            mem[s][x] = current;
            peak = std::max(peak, current);
        }
    }
    // loc[s][n][letter]: the position of the n-th occurrence (1-based) once visited, else -1.
    std::vector<std::vector<std::array<long, 6>>> loc(P, std::vector<std::array<long, 6>>(M + 2));
    for (auto& rank : loc)
        for (auto& entry : rank) entry.fill(-1);
    std::vector<std::array<int, 6>> seen(P, std::array<int, 6>{});
    auto where = [&](int s, int n, char letter) { return loc.at(s).at(n)[letter_index(letter)]; };

    for (size_t x = 0; x < length; ++x)
        for (int s = 0; s < P; ++s) {
            limits::poll("generating 1f1b-v");  // a run's time limit (search's warm starts) stops it
            std::vector<char>& row = rows[s];
            const char c = row[x];
            if (c == ' ') continue;
            const int n = ++seen[s][letter_index(c)];
            long pos = n > 1 ? where(s, n - 1, c) : -1;
            if (c == 'W') pos = std::max(pos, where(s, n, 'B'));
            if (c == 'w') pos = std::max(pos, where(s, n, 'b'));
            if (c == 'F' && s > 0) pos = std::max(pos, where(s - 1, n, 'F'));
            if (c == 'f') pos = std::max(pos, s != P - 1 ? where(s + 1, n, 'f') : where(s, n, 'F'));
            if (c == 'B') pos = std::max(pos, s != 0 ? where(s - 1, n, 'W') : where(s, n, 'f'));  // ends at its W cell
            if (c == 'b') pos = std::max(pos, s != P - 1 ? where(s + 1, n, 'w') : where(s, n, 'W'));
            ++pos;
            const long here = static_cast<long>(x);
            while (row.at(pos) != ' ' && pos < here) ++pos;
            if (c == 'B' || c == 'b')
                while (pos < here && (row.at(pos) != ' ' || row.at(pos + 1) != ' ')) ++pos;
            auto& mine = loc[s].at(n)[letter_index(c)];
            if (pos == here) {
                mine = here;
                continue;
            }
            if (c != 'F' && c != 'f') {  // B, b, W, w move to pos
                row.at(pos) = c;
                row[x] = ' ';
                if (c == 'W' || c == 'w')
                    for (long j = pos; j < here; ++j) mem[s][j] -= 1;
                mine = pos;
                continue;
            }
            long place = here;
            while (place > pos && mem[s][place - 1] < peak) --place;
            while (place < here && row[place] != ' ') ++place;
            if (place == here) {
                mine = here;
                continue;
            }
            row[place] = c;
            row[x] = ' ';
            for (long j = place; j < here; ++j) mem[s][j] += 1;
            mine = place;
        }
}

}  // namespace

Schedule generate_1f1b_v(const GenerateParams& params) {
    check_v_family(params, "1f1b-v");
    const int P = params.ranks, M = params.microbatches;
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
    keep_m_copies(rows, M);
    compact(rows, M);

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

}  // namespace pp
