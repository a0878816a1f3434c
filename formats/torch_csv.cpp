#include "formats/torch_csv.hpp"

#include "formats/input_error.hpp"
#include "formats/text_lines.hpp"
#include "model/size_budget.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace pp {
namespace {

constexpr int kMaxNumber = 1000000;  // beyond this a stage or micro-batch number is a typo, not a schedule

// Everything a cell can name: PyTorch's computation types plus the 2024-era "BW".
enum class Kind { F, I, W, B, BW, SendF, RecvF, SendB, RecvB, Unshard, Reshard, ReduceGrad, OverlapFB };

struct KindName {
    std::string_view text;
    Kind kind;
};
// Longest names first: a longest match is what keeps "BW" from reading as "B" followed by junk.
constexpr KindName kKindNames[] = {
    {"OVERLAP_F_B", Kind::OverlapFB}, {"REDUCE_GRAD", Kind::ReduceGrad}, {"UNSHARD", Kind::Unshard},
    {"RESHARD", Kind::Reshard},       {"SEND_F", Kind::SendF},           {"RECV_F", Kind::RecvF},
    {"SEND_B", Kind::SendB},          {"RECV_B", Kind::RecvB},           {"BW", Kind::BW},
    {"F", Kind::F},                   {"I", Kind::I},                    {"B", Kind::B},
    {"W", Kind::W},
};
constexpr std::string_view kKindList = "F, I, B, W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD";

bool is_compute(Kind kind) {
    return kind == Kind::F || kind == Kind::I || kind == Kind::W || kind == Kind::B || kind == Kind::BW;
}
bool takes_microbatch(Kind kind) {
    return is_compute(kind) || kind == Kind::SendF || kind == Kind::RecvF || kind == Kind::SendB ||
           kind == Kind::RecvB;
}
// The kinds whose presence makes a file compute_comms (REDUCE_GRAD may appear in both formats).
bool is_comms_only(Kind kind) {
    return kind == Kind::SendF || kind == Kind::RecvF || kind == Kind::SendB || kind == Kind::RecvB ||
           kind == Kind::Unshard || kind == Kind::Reshard;
}

std::optional<KindName> match_kind(std::string_view text) {
    for (const auto& name : kKindNames)
        if (text.substr(0, name.text.size()) == name.text) return name;
    return std::nullopt;
}

OpKind op_kind(Kind kind, TorchEra era) {
    switch (kind) {
        case Kind::F: return OpKind::F;
        case Kind::W: return OpKind::W;
        case Kind::I: return OpKind::I;
        case Kind::BW: return OpKind::B;
        case Kind::B: return era == TorchEra::Y2024 ? OpKind::I : OpKind::B;
        default: throw std::logic_error("op_kind: not a compute kind");
    }
}

CommKind comm_kind(Kind kind) {
    switch (kind) {
        case Kind::SendF: return CommKind::SendF;
        case Kind::RecvF: return CommKind::RecvF;
        case Kind::SendB: return CommKind::SendB;
        case Kind::RecvB: return CommKind::RecvB;
        case Kind::Unshard: return CommKind::Unshard;
        case Kind::Reshard: return CommKind::Reshard;
        case Kind::ReduceGrad: return CommKind::ReduceGrad;
        default: throw std::logic_error("comm_kind: not a communication kind");
    }
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Strips blanks; `offset` moves with the left edge so that columns stay exact.
std::string_view trim(std::string_view text, size_t& offset) {
    while (!text.empty() && is_blank(text.front())) {
        text.remove_prefix(1);
        ++offset;
    }
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// Where in the file we are, to throw InputError with exact positions.
struct Where {
    const std::string& file;
    int line;
    [[noreturn]] void fail(size_t offset, const std::string& message) const {
        throw InputError(file, line, static_cast<int>(offset) + 1, message);
    }
    SourceLoc loc(size_t offset) const { return SourceLoc{line, static_cast<int>(offset) + 1}; }
};

// ---- byte-level checks ----

// A schedule file is text; NUL or broken UTF-8 means someone passed a binary or a wrongly encoded file.
void check_text_bytes(std::string_view line, const Where& where) {
    for (size_t i = 0; i < line.size();) {
        i += plain_ascii_prefix(line.substr(i));
        if (i >= line.size()) break;
        if (line[i] == '\0') where.fail(i, "NUL byte: this looks like a binary file, expected a text CSV of actions");
        size_t length = utf8_sequence_length(line, i);
        if (length == 0) {
            static const char* hex = "0123456789abcdef";
            auto value = static_cast<unsigned char>(line[i]);
            where.fail(i, std::string("byte 0x") + hex[value >> 4] + hex[value & 15] +
                              " is not valid UTF-8: expected a text CSV of actions");
        }
        i += length;
    }
}

// ---- cell grammar ----

struct PlainAction {
    Kind kind = Kind::F;
    int stage = 0;
    int microbatch = -1;  // -1: none
    size_t offset = 0;    // token start in the line
    size_t stage_offset = 0;
    size_t microbatch_offset = 0;
};

struct ParsedCell {
    enum class Type { Empty, Single, Pair } type = Type::Empty;
    PlainAction first, second;  // for a pair: the forward, then the backward
    size_t offset = 0;          // token start in the line
};

class CellParser {
public:
    CellParser(const Where& where, TorchEra era) : where_(where), era_(era) {}

    ParsedCell parse(std::string_view raw, size_t raw_offset) const {
        ParsedCell cell;
        size_t offset = raw_offset;
        std::string_view text = trim(raw, offset);
        cell.offset = raw_offset;
        if (text.empty() || text == "\"\"") return cell;  // csv writes a lone empty cell as ""
        if (text.front() == '(') return parse_pair(text, offset);
        cell.type = ParsedCell::Type::Single;
        cell.offset = offset;
        cell.first = parse_plain(text, offset);
        if (cell.first.kind == Kind::OverlapFB)
            where_.fail(offset, "OVERLAP_F_B must be written as a pair, e.g. (0F1;3B0)OVERLAP_F_B, found " +
                                    in_quotes(text));
        return cell;
    }

    // The common cell -- digits, F, I, W or B, digits, nothing else -- read in one sweep, as parse_plain
    // reads it; false sends everything else (blanks, other kinds, a letter of the other era, numbers past
    // kMaxNumber) to parse_plain, which accepts or explains it.
    bool parse_common(std::string_view text, size_t base, PlainAction& action) const {
        return common_prefix(text.data(), text.data() + text.size(), base, action) == text.data() + text.size();
    }

    // The same, for a cell read where it stands in its line (no search for its end first): the common cell
    // starting at `line[start]`, which ends at a comma or at the line's end. Returns that end's position, or
    // npos when the cell is not a common one (then its end is still to be found).
    size_t parse_common_at(std::string_view line, size_t start, PlainAction& action) const {
        const char* const end = line.data() + line.size();
        const char* const after = common_prefix(line.data() + start, end, start, action);
        if (!after || (after != end && *after != ',')) return std::string_view::npos;
        return static_cast<size_t>(after - line.data());
    }

private:
    const Where& where_;
    TorchEra era_;

    // Digits, F, I, W or B, digits from `p` (the text starts at column `base` of its line): where they end,
    // or nullptr when the text does not start with them.
    const char* common_prefix(const char* p, const char* const end, size_t base, PlainAction& action) const {
        const char* const text = p;
        auto digits = [&](int& value) {
            const char* const start = p;
            int v = 0;
            for (; p < end && is_digit(*p); ++p)
                if ((v = v * 10 + (*p - '0')) > kMaxNumber) return false;
            value = v;
            return p != start;
        };
        if (!digits(action.stage) || p == end) return nullptr;
        switch (*p) {
            case 'F': action.kind = Kind::F; break;
            case 'W': action.kind = Kind::W; break;
            case 'B': action.kind = Kind::B; break;
            case 'I':
                if (era_ != TorchEra::Current) return nullptr;
                action.kind = Kind::I;
                break;
            default: return nullptr;
        }
        action.offset = action.stage_offset = base;
        action.microbatch_offset = base + static_cast<size_t>(++p - text);
        return digits(action.microbatch) ? p : nullptr;
    }


    int read_number(std::string_view text, size_t& pos, size_t base, const char* what) const {
        size_t start = pos;
        long value = 0;
        while (pos < text.size() && is_digit(text[pos])) {
            value = std::min<long>(value * 10 + (text[pos] - '0'), kMaxNumber + 1L);
            ++pos;
        }
        if (value > kMaxNumber)
            where_.fail(base + start, std::string(what) + " number " + std::string(text.substr(start, pos - start)) +
                                          " is too large (at most " + std::to_string(kMaxNumber) + ")");
        return static_cast<int>(value);
    }

    [[noreturn]] void unknown_kind(std::string_view text, size_t pos, size_t base) const {
        std::string rest(text.substr(pos));
        std::string message = "unknown action " + in_quotes(text) + ": after the stage number expected one of " +
                              std::string(kKindList);
        if (rest.empty()) message = "action " + in_quotes(text) + " has a stage number but no action type; expected one of " +
                                    std::string(kKindList);
        std::string upper = rest;
        for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
        if (!rest.empty() && match_kind(upper)) message += " (action types are upper case)";
        where_.fail(base, message);
    }

    void check_era(Kind kind, std::string_view text, size_t base) const {
        if (era_ == TorchEra::Current && kind == Kind::BW)
            where_.fail(base, "2024-era letter BW; rerun with --torch-era 2024 (found " + in_quotes(text) +
                                  "; current PyTorch writes the full backward as B)");
        if (era_ == TorchEra::Y2024 && kind == Kind::I)
            where_.fail(base, "letter I does not exist in 2024-era files (they write the input-gradient backward as "
                              "B); found " + in_quotes(text) + ", rerun with --torch-era current");
    }

    // [stage][type][micro-batch], nothing before or after.
    PlainAction parse_plain(std::string_view text, size_t base) const {
        PlainAction action;
        action.offset = action.stage_offset = base;
        if (text.front() == '-')
            where_.fail(base, "negative stage number in " + in_quotes(text) + ": stages are numbered from 0");
        if (!is_digit(text.front()))
            where_.fail(base, "expected an action such as 2F0, 1I3, 0SEND_F1 or (0F1;3B0)OVERLAP_F_B, found " +
                                  in_quotes(text));
        size_t pos = 0;
        action.stage = read_number(text, pos, base, "stage");
        auto kind = match_kind(text.substr(pos));
        if (!kind) unknown_kind(text, pos, base);
        action.kind = kind->kind;
        check_era(action.kind, text, base);
        pos += kind->text.size();
        if (pos < text.size() && text[pos] == '-' && takes_microbatch(action.kind))
            where_.fail(base + pos, "negative micro-batch number in " + in_quotes(text) + ": micro-batches are numbered from 0");
        if (pos < text.size() && is_digit(text[pos])) {
            if (!takes_microbatch(action.kind))
                where_.fail(base + pos, std::string(kind->text) + " takes no micro-batch number, found " + in_quotes(text));
            action.microbatch_offset = base + pos;
            action.microbatch = read_number(text, pos, base, "micro-batch");
        } else if (takes_microbatch(action.kind)) {
            where_.fail(base, "action " + in_quotes(text) + " has no micro-batch number; expected e.g. " +
                                  std::to_string(action.stage) + std::string(kind->text) + "0");
        }
        if (pos < text.size()) {
            std::string head(text.substr(0, pos));
            where_.fail(base + pos, "unexpected " + in_quotes(text.substr(pos)) + " after action " + in_quotes(head) +
                                        "; PyTorch's parser matches only a prefix and would silently read this cell as " +
                                        head);
        }
        return action;
    }

    bool is_forward(const PlainAction& a) const { return a.kind == Kind::F; }
    bool is_backward_half(const PlainAction& a) const {
        return is_compute(a.kind) && pp::is_backward(op_kind(a.kind, era_));
    }

    // (a;b)OVERLAP_F_B: PyTorch's container of one forward and one full (or input) backward.
    ParsedCell parse_pair(std::string_view text, size_t base) const {
        size_t close = text.find(')');
        if (close == std::string_view::npos)
            where_.fail(base, "unclosed parenthesis in " + in_quotes(text) + ": expected (forward;backward)OVERLAP_F_B");
        std::string_view inner = text.substr(1, close - 1);
        if (size_t nested = inner.find('('); nested != std::string_view::npos)
            where_.fail(base + 1 + nested, "nested parentheses in " + in_quotes(text) +
                                               ": a pair holds plain actions, e.g. (0F1;3B0)OVERLAP_F_B");
        std::vector<PlainAction> parts = parse_parts(inner, base + 1, text);
        check_pair_suffix(text, close, base);
        if (parts.size() != 2 || !((is_forward(parts[0]) && is_backward_half(parts[1])) ||
                                   (is_forward(parts[1]) && is_backward_half(parts[0]))))
            where_.fail(base, "a pair must be one forward plus one backward (I or B), found " + in_quotes(text));
        ParsedCell cell;
        cell.type = ParsedCell::Type::Pair;
        cell.offset = base;
        // Slot::pair keeps the forward first; both halves start together, so the written order carries no meaning.
        bool forward_first = is_forward(parts[0]);
        cell.first = parts[forward_first ? 0 : 1];
        cell.second = parts[forward_first ? 1 : 0];
        return cell;
    }

    std::vector<PlainAction> parse_parts(std::string_view inner, size_t base, std::string_view text) const {
        std::vector<PlainAction> parts;
        size_t start = 0;
        while (true) {
            size_t semi = inner.find(';', start);
            size_t offset = base + start;
            std::string_view part = trim(inner.substr(start, semi == std::string_view::npos ? semi : semi - start), offset);
            if (part.empty()) where_.fail(offset, "empty sub-action in " + in_quotes(text));
            parts.push_back(parse_plain(part, offset));
            if (semi == std::string_view::npos) break;
            start = semi + 1;
        }
        return parts;
    }

    void check_pair_suffix(std::string_view text, size_t close, size_t base) const {
        constexpr std::string_view kOverlap = "OVERLAP_F_B";
        std::string_view suffix = text.substr(close + 1);
        if (suffix == kOverlap) return;
        if (suffix.substr(0, kOverlap.size()) == kOverlap)
            where_.fail(base + close + 1 + kOverlap.size(),
                        "unexpected " + in_quotes(suffix.substr(kOverlap.size())) + " after " +
                            in_quotes(text.substr(0, close + 1 + kOverlap.size())) +
                            "; PyTorch's parser matches only a prefix and would silently ignore it");
        where_.fail(base + close + 1, "expected OVERLAP_F_B after ')' in " + in_quotes(text) + ", found " +
                                          (suffix.empty() ? std::string("nothing") : in_quotes(suffix)));
    }
};

// ---- rows ----

// One row as read: slots, the action list (compute and comm) and the empty cells before each slot.
struct Row {
    int rank = 0;
    std::vector<Slot> slots;
    // Kept only once the row has a comm action or an empty cell (compute_only files have neither on most
    // rows): until then they are implied by `slots` (complete_actions, complete_gaps).
    std::vector<RankAction> actions;
    std::vector<int> gaps;
    bool has_comm = false;

    // The action list of a row read so far without comm actions: its compute slots in order.
    void complete_actions() {
        if (has_comm) return;
        has_comm = true;
        actions.reserve(slots.capacity());
        for (size_t k = 0; k < slots.size(); ++k) actions.push_back(compute_action(static_cast<int>(k), slots[k].loc));
    }
    void complete_gaps() {
        if (!gaps.empty()) return;
        gaps.reserve(slots.capacity() + 1);  // capacity: the row's cells, so no regrowth
        gaps.assign(slots.size() + 1, 0);
    }
    static RankAction compute_action(int slot, SourceLoc loc) {
        RankAction action;
        action.is_compute = true;
        action.slot = slot;
        action.loc = loc;
        return action;
    }
};

std::uint64_t op_key(OpKind kind, int stage, int microbatch) {
    return (static_cast<std::uint64_t>(stage) << 24 | static_cast<std::uint64_t>(microbatch)) << 2 |
           static_cast<std::uint64_t>(kind);
}

class Reader {
public:
    Reader(const std::string& file, const TorchCsvOptions& options) : file_(file), options_(options) {
        if (options.stage_rank && options.stages && static_cast<int>(options.stage_rank->size()) != *options.stages)
            throw InputError(file, 0, 0,
                             "the stage->rank map has " + std::to_string(options.stage_rank->size()) +
                                 " entries but the number of stages is " + std::to_string(*options.stages));
    }

    // A new row (rank) starts at this line: within -P and within the size budget (a file of blank lines
    // is as many ranks, each counted, none stored).
    int next_rank(int line_number) {
        const Where where{file_, line_number};
        const int rank = row_count_;
        if (options_.ranks && rank >= *options_.ranks)
            where.fail(0, "row " + std::to_string(rank + 1) + " would be rank " + std::to_string(rank) +
                              ", but the schedule has " + std::to_string(*options_.ranks) +
                              " ranks; expected one row per rank");
        if (static_cast<std::uint64_t>(rank) >= max_ops())
            where.fail(0, "row " + std::to_string(rank + 1) + ": " +
                              size_problem(static_cast<std::uint64_t>(rank) + 1, std::to_string(rank + 1) + " ranks"));
        ++row_count_;
        return rank;
    }

    // A blank line: a rank without actions (csv reads it as a row without cells). Nothing is stored.
    void blank_row(int line_number) { next_rank(line_number); }

    void read_row(std::string_view line, int line_number) {
        Where where{file_, line_number};
        check_text_bytes(line, where);
        const int rank = next_rank(line_number);
        CellParser parser(where, options_.era);
        Row row;
        row.rank = rank;
        // One allocation, not log(n) copies of a long row; a blank line is a row without cells (as csv reads it).
        row.slots.reserve(static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1);
        for (size_t start = 0; !line.empty();) {
            // Most cells are read where they stand, in one sweep; the others are cut out first.
            size_t end;
            if (PlainAction common; (end = parser.parse_common_at(line, start, common)) != std::string_view::npos) {
                add_slot(row, Slot::single(compute_op(common, where, rank), where.loc(start)));
            } else {
                end = std::min(line.find(',', start), line.size());
                add_cell(row, parser, line.substr(start, end - start), start, where, rank);
            }
            if (end == line.size()) break;
            start = end + 1;
        }
        rows_.push_back(std::move(row));
    }

    Schedule finish() {
        check_rank_count();
        if (!any_compute_) throw InputError(file_, 1, 1, "no compute actions found: expected actions such as 0F0, 1I3");
        if (comms_format_ && first_gap_)
            throw InputError(file_, first_gap_->line, first_gap_->column,
                             "empty cell in a compute_comms file (it has SEND/RECV/UNSHARD/RESHARD actions): every "
                             "cell must hold an action, bubbles exist only in compute_only files");
        // Only a file with W and B and no I can be one (the reader noted which letters it met).
        if (options_.era == TorchEra::Current && !kinds_seen_[static_cast<int>(OpKind::I)] &&
            kinds_seen_[static_cast<int>(OpKind::W)] && kinds_seen_[static_cast<int>(OpKind::B)])
            check_not_2024_letters();
        return build();
    }

private:
    const std::string& file_;
    const TorchCsvOptions& options_;
    std::vector<Row> rows_;  // the rows that are not blank, in order
    int row_count_ = 0;      // rows read so far, blank ones included: the rank of the next row
    std::vector<int> first_rank_of_stage_;  // -1: not seen yet
    int max_stage_ = -1, max_microbatch_ = -1;
    SourceLoc max_stage_at_{}, max_microbatch_at_{};  // where the largest numbers are, for the size checks
    std::uint64_t compute_ops_ = 0;                   // compute ops read (a pair counts two)
    bool any_compute_ = false, comms_format_ = false, any_gap_ = false;
    std::array<bool, kOpKinds> kinds_seen_{};  // by OpKind: the letters of the compute ops read
    std::optional<SourceLoc> first_gap_;

    // Stage and micro-batch numbers from these on are refused (out_of_range says why).
    int stage_bound_ = std::min(stage_limit().value_or(kMaxStagesPerPipeline), kMaxStagesPerPipeline);
    int microbatch_bound_ = options_.microbatches.value_or(std::numeric_limits<int>::max());

    std::optional<int> stage_limit() const {
        if (options_.stages) return options_.stages;
        if (options_.stage_rank) return static_cast<int>(options_.stage_rank->size());
        return std::nullopt;
    }

    // Range checks that only apply when the caller fixed the range, and the PyTorch-style map inference.
    void note_stage_and_microbatch(const PlainAction& a, const Where& where, int rank) {
        if (a.stage >= stage_bound_ || a.microbatch >= microbatch_bound_) out_of_range(a, where);
        if (a.stage > max_stage_) max_stage_ = a.stage, max_stage_at_ = where.loc(a.stage_offset);
        if (a.microbatch > max_microbatch_) max_microbatch_ = a.microbatch, max_microbatch_at_ = where.loc(a.microbatch_offset);
        if (static_cast<int>(first_rank_of_stage_.size()) <= a.stage) first_rank_of_stage_.resize(a.stage + 1, -1);
        if (first_rank_of_stage_[a.stage] < 0) first_rank_of_stage_[a.stage] = rank;
    }

    [[noreturn, gnu::cold, gnu::noinline]] void out_of_range(const PlainAction& a, const Where& where) const {
        if (a.stage >= kMaxStagesPerPipeline)
            where.fail(a.stage_offset, "stage " + std::to_string(a.stage) + " is past the limit: a pipeline has at most " +
                                           std::to_string(kMaxStagesPerPipeline) + " stages (0.." +
                                           std::to_string(kMaxStagesPerPipeline - 1) + ")");
        if (auto limit = stage_limit(); limit && a.stage >= *limit)
            where.fail(a.stage_offset, "stage " + std::to_string(a.stage) + " is out of range: the schedule has " +
                                           std::to_string(*limit) + " stages (0.." + std::to_string(*limit - 1) + ")");
        where.fail(a.microbatch_offset, "micro-batch " + std::to_string(a.microbatch) +
                                            " is out of range: the schedule has " + std::to_string(*options_.microbatches) +
                                            " micro-batches (0.." + std::to_string(*options_.microbatches - 1) + ")");
    }

    Op compute_op(const PlainAction& a, const Where& where, int rank) {
        note_stage_and_microbatch(a, where, rank);
        Op op{op_kind(a.kind, options_.era), 0, a.stage, a.microbatch};
        any_compute_ = true;
        kinds_seen_[static_cast<int>(op.kind)] = true;
        ++compute_ops_;
        return op;
    }

    void add_cell(Row& row, const CellParser& parser, std::string_view text, size_t offset, const Where& where, int rank) {
        if (PlainAction common; parser.parse_common(text, offset, common)) {  // most cells: straight to a slot
            add_slot(row, Slot::single(compute_op(common, where, rank), where.loc(offset)));
            return;
        }
        add_cell(row, parser.parse(text, offset), where, rank);
    }

    void add_cell(Row& row, const ParsedCell& cell, const Where& where, int rank) {
        SourceLoc loc = where.loc(cell.offset);
        switch (cell.type) {
            case ParsedCell::Type::Empty:
                row.complete_gaps();
                ++row.gaps.back();
                any_gap_ = true;
                if (!first_gap_) first_gap_ = loc;
                return;
            case ParsedCell::Type::Pair: {
                // Two statements: the halves must be checked in file order (argument order is unspecified).
                Op forward = compute_op(cell.first, where, rank);
                Op backward = compute_op(cell.second, where, rank);
                add_slot(row, Slot::pair(forward, backward, loc));
                return;
            }
            case ParsedCell::Type::Single:
                if (is_compute(cell.first.kind)) {
                    add_slot(row, Slot::single(compute_op(cell.first, where, rank), loc));
                    return;
                }
                note_stage_and_microbatch(cell.first, where, rank);
                comms_format_ = comms_format_ || is_comms_only(cell.first.kind);
                RankAction action;
                action.is_compute = false;
                action.comm = comm_kind(cell.first.kind);
                action.stage = cell.first.stage;
                action.microbatch = cell.first.microbatch;
                action.loc = loc;
                row.complete_actions();
                row.actions.push_back(action);
                return;
        }
    }

    static void add_slot(Row& row, const Slot& slot) {
        if (row.has_comm) row.actions.push_back(Row::compute_action(static_cast<int>(row.slots.size()), slot.loc));
        if (!row.gaps.empty()) row.gaps.push_back(0);
        row.slots.push_back(slot);
    }

    void check_rank_count() const {
        const int rows = row_count_;
        if (options_.ranks && rows < *options_.ranks)
            throw InputError(file_, rows + 1, 1,
                             "missing rank " + std::to_string(rows) + ": expected " + std::to_string(*options_.ranks) +
                                 " rows (one per rank), found " + std::to_string(rows));
    }

    // Letters are never reinterpreted silently: B and W of the same (stage, micro-batch) with no I anywhere is
    // how a 2024-era file (B = input-gradient backward) looks when read with current letters.
    void check_not_2024_letters() const {
        std::unordered_set<std::uint64_t> full_backwards;
        for (const Row& row : rows_)
            for (const Slot& slot : row.slots)
                for (const Op& op : slot) {
                    if (op.kind == OpKind::I) return;
                    if (op.kind == OpKind::B) full_backwards.insert(op_key(OpKind::B, op.stage, op.microbatch));
                }
        for (const Row& row : rows_)
            for (const Slot& slot : row.slots)
                for (const Op& op : slot)
                    if (op.kind == OpKind::W && full_backwards.count(op_key(OpKind::B, op.stage, op.microbatch)))
                        throw InputError(
                            file_, slot.loc.line, slot.loc.column,
                            format_op(op) + " follows a full backward " + std::to_string(op.stage) + "B" +
                                std::to_string(op.microbatch) +
                                " and the file has no I: this only makes sense as a 2024-era file (B = input-gradient "
                                "backward); rerun with --torch-era 2024");
    }

    std::vector<int> stage_rank(int ranks, int stages) const {
        if (options_.stage_rank) return *options_.stage_rank;
        std::vector<int> map(stages);
        for (int s = 0; s < stages; ++s) {
            bool seen = s < static_cast<int>(first_rank_of_stage_.size()) && first_rank_of_stage_[s] >= 0;
            // A stage that never appears gets PyTorch's default loop placement; the verifier reports its ops missing.
            map[s] = seen ? first_rank_of_stage_[s] : s % ranks;
        }
        return map;
    }

    // Counts inferred from the largest numbers never exceed what the file holds: every (stage, micro-batch)
    // pair of a complete schedule has at least two compute ops (F and a backward), so a file implying more
    // than two pairs per compute action is missing three quarters of its schedule -- or has a typo such as
    // 9999W9999, which would otherwise cost 10^8 pairs of work. Small fragments (up to kFreePairs pairs)
    // read as before; counts given by the caller (--stages, -M) are taken as given, within the size budget.
    static constexpr std::uint64_t kFreePairs = 1024;
    void check_inferred_size(int stages, int microbatches) const {
        const bool inferred_stages = !stage_limit(), inferred_microbatches = !options_.microbatches;
        if (!inferred_stages && !inferred_microbatches) return;
        const std::uint64_t pairs = saturating_mul(static_cast<std::uint64_t>(stages), static_cast<std::uint64_t>(microbatches));
        if (pairs <= std::max(kFreePairs, saturating_mul(compute_ops_, 2))) return;
        // Point at the number that makes the product large: the larger of the two inferred counts.
        const bool blame_stage = inferred_stages && (!inferred_microbatches || stages >= microbatches);
        const SourceLoc at = blame_stage ? max_stage_at_ : max_microbatch_at_;
        throw InputError(file_, at.line, at.column,
                         (blame_stage ? "stage " + std::to_string(max_stage_) : "micro-batch " + std::to_string(max_microbatch_)) +
                             " implies " + std::to_string(stages) + " stages x " + std::to_string(microbatches) +
                             " micro-batches = " + format_count(pairs) + " (stage, micro-batch) pairs, but the file has " +
                             std::to_string(compute_ops_) + (compute_ops_ == 1 ? " compute action" : " compute actions") +
                             ": inferred counts may imply at most " + std::to_string(kFreePairs) +
                             " pairs or two per compute action; if the numbers are right, give " +
                             (inferred_stages && inferred_microbatches ? "the counts with --stages and -M"
                              : inferred_stages                        ? "the stage count with --stages"
                                                                       : "the micro-batch count with -M"));
    }

    Schedule build() {
        const int ranks = options_.ranks.value_or(row_count_);
        const int stages = stage_limit().value_or(max_stage_ + 1);
        const int microbatches = options_.microbatches.value_or(max_microbatch_ + 1);
        check_inferred_size(stages, microbatches);
        Schedule schedule;
        schedule.source = file_;
        schedule.placement = Placement::single(ranks, stage_rank(ranks, stages), microbatches);
        schedule.inferred = {!options_.ranks, !stage_limit(), !options_.microbatches, !options_.stage_rank};
        try {
            schedule.placement.validate();
            require_placement_size(schedule.placement);
        } catch (const std::invalid_argument& e) {
            throw InputError(file_, 0, 0, e.what());
        } catch (const SizeLimitError& e) {
            throw InputError(file_, 0, 0, e.what());
        }
        if (comms_format_) schedule.actions.emplace();
        schedule.ranks.resize(static_cast<size_t>(row_count_));
        if (any_gap_) schedule.gaps.assign(static_cast<size_t>(row_count_), std::vector<int>{0});
        if (comms_format_) schedule.actions->resize(static_cast<size_t>(row_count_));
        for (Row& row : rows_) {
            if (any_gap_) row.complete_gaps(), schedule.gaps[row.rank] = std::move(row.gaps);
            if (comms_format_) row.complete_actions(), (*schedule.actions)[row.rank] = std::move(row.actions);
            schedule.ranks[row.rank] = std::move(row.slots);
        }
        return schedule;
    }
};

std::string_view strip_bom(std::string_view text) {
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
    return text;
}

bool only_blank(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return is_blank(c) || c == '\n'; });
}

// ---- writer ----

std::string op_letter(OpKind kind, TorchEra era) {
    if (era == TorchEra::Y2024) {
        if (kind == OpKind::I) return "B";
        if (kind == OpKind::B) return "BW";
    }
    return std::string(1, kind_letter(kind));
}

std::string torch_op_text(const Op& op, TorchEra era) {
    return std::to_string(op.stage) + op_letter(op.kind, era) + std::to_string(op.microbatch);
}

std::string comm_text(const RankAction& action) {
    std::string text = std::to_string(action.stage) + comm_kind_name(action.comm);
    if (action.microbatch >= 0) text += std::to_string(action.microbatch);
    return text;
}

void check_single_pipeline(const Schedule& schedule) {
    if (schedule.placement.pipeline_count() > 1)
        throw std::invalid_argument("PyTorch's CSV format holds one pipeline; this schedule has " +
                                    std::to_string(schedule.placement.pipeline_count()));
    for (const auto& rank : schedule.ranks)
        for (const Slot& slot : rank)
            for (const Op& op : slot)
                if (op.pipeline != 0)
                    throw std::invalid_argument("PyTorch's CSV format holds one pipeline; found " + format_op(op));
}

std::vector<std::string> compute_cells(const Schedule& schedule, size_t rank, TorchEra era) {
    const auto& slots = schedule.ranks[rank];
    const std::vector<int>* gaps = rank < schedule.gaps.size() ? &schedule.gaps[rank] : nullptr;
    auto gap_before = [&](size_t k) { return gaps && k < gaps->size() ? (*gaps)[k] : 0; };
    std::vector<std::string> cells;
    for (size_t k = 0; k <= slots.size(); ++k) {
        cells.insert(cells.end(), gap_before(k), std::string());
        if (k < slots.size()) cells.push_back(torch_slot_text(slots[k], era));
    }
    return cells;
}

std::vector<std::string> comms_cells(const Schedule& schedule, size_t rank, TorchEra era) {
    std::vector<std::string> cells;
    for (const RankAction& action : (*schedule.actions)[rank])
        cells.push_back(action.is_compute ? torch_slot_text(schedule.ranks[rank].at(action.slot), era)
                                          : comm_text(action));
    return cells;
}

// As Python's csv.writer: a row whose only cell is empty is written as "" so that it is not a blank line.
std::string join_row(const std::vector<std::string>& cells) {
    if (cells.size() == 1 && cells[0].empty()) return "\"\"";
    std::string line;
    for (size_t k = 0; k < cells.size(); ++k) {
        if (k) line += ',';
        line += cells[k];
    }
    return line;
}

}  // namespace

Schedule read_torch_csv(std::string_view text, const std::string& file_name, const TorchCsvOptions& options) {
    check_text_size(text, file_name);
    text = strip_bom(text);
    if (only_blank(text)) throw InputError(file_name, 1, 1, "empty file: expected one row of actions per rank");
    Reader reader(file_name, options);
    // One line at a time. Blank lines are rows without cells (ranks without actions), except at the end,
    // where they are an editor's final newline(s): they are counted, and become ranks only when a row follows.
    int line_number = 0, blank_run = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++line_number;
        start = end + 1;
        if (line.empty()) {
            ++blank_run;
            continue;
        }
        for (int k = blank_run; k > 0; --k) reader.blank_row(line_number - k);
        blank_run = 0;
        reader.read_row(line, line_number);
    }
    return reader.finish();
}

TorchCsvFormat detect_torch_csv_format(const Schedule& schedule) {
    return schedule.actions ? TorchCsvFormat::ComputeComms : TorchCsvFormat::ComputeOnly;
}

std::string torch_slot_text(const Slot& slot, TorchEra era) {
    if (!slot.is_pair()) return torch_op_text(slot.ops[0], era);
    return "(" + torch_op_text(slot.ops[0], era) + ";" + torch_op_text(slot.ops[1], era) + ")OVERLAP_F_B";
}

std::string write_torch_csv(const Schedule& schedule, TorchCsvFormat format, TorchEra era) {
    check_single_pipeline(schedule);
    if (schedule.segments > 1)
        throw std::invalid_argument(
            "PyTorch's CSV has no sequence segments: this schedule splits each micro-batch into " +
            std::to_string(schedule.segments) + " (Seq1F1B), and its ops would read back as " +
            std::to_string(schedule.placement.total_microbatches()) + " micro-batches; write native text or JSON");
    bool comms = format == TorchCsvFormat::ComputeComms;
    if (comms && !schedule.actions)
        throw std::invalid_argument("compute_comms output needs the schedule's action list (lower it first)");
    size_t rows = comms ? schedule.actions->size() : schedule.ranks.size();
    std::string out;
    for (size_t r = 0; r < rows; ++r) {
        out += join_row(comms ? comms_cells(schedule, r, era) : compute_cells(schedule, r, era));
        out += "\r\n";
    }
    return out;
}

}  // namespace pp
