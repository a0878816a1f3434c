#include "formats/native.hpp"

#include "formats/input_error.hpp"
#include "formats/text_lines.hpp"
#include "model/size_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace pp {
namespace {

constexpr int kMaxCount = 1'000'000;  // ranks, stages, micro-batches: larger is a typo, not a schedule

class NativeReader {
public:
    NativeReader(std::string_view text, std::string file) : file_(std::move(file)), lines_(text, file_) {}

    Schedule read() {
        TextLine line;
        while (lines_.next(line)) read_line(line);
        finish();
        return std::move(schedule_);
    }

private:
    std::string file_;
    LineCursor lines_;  // one line at a time: blank lines cost nothing
    bool any_words_ = false;
    Schedule schedule_;
    int line_ = 0;
    std::set<std::string> seen_directives_;
    // Header state, fixed once the first rank line arrives.
    std::optional<int> ranks_, microbatches_, stages_;
    int ranks_line_ = 0;
    std::optional<std::vector<int>> stage_map_;
    bool bidirectional_ = false;
    std::map<int, Pipeline> pipelines_;
    std::optional<Costs> costs_;
    bool placement_ready_ = false;
    std::vector<bool> rank_seen_;

    [[noreturn]] void fail(int column, const std::string& message) const {
        throw InputError(file_, line_, column, message);
    }

    int parse_count(const Word& word, const char* what, int minimum) const {
        int value = 0;
        auto [end, error] = std::from_chars(word.text.data(), word.text.data() + word.text.size(), value);
        if (word.text.empty() || word.text[0] == '-' || word.text[0] == '+')
            fail(word.column, fmt::format("expected {} as a whole number >= {}, got '{}'", what, minimum, word.text));
        if (error == std::errc::result_out_of_range || (error == std::errc{} && value > kMaxCount))
            fail(word.column, fmt::format("{} {} is too large (at most {})", what, word.text, kMaxCount));
        if (error != std::errc{} || end != word.text.data() + word.text.size())
            fail(word.column, fmt::format("expected {} as a whole number, got '{}'", what, word.text));
        if (value < minimum) fail(word.column, fmt::format("{} must be at least {}, got {}", what, minimum, value));
        return value;
    }

    void read_line(const TextLine& line) {
        line_ = line.number;
        WordCursor cursor(line.text);
        Word first;
        if (!cursor.next(first)) return;
        any_words_ = true;
        if (first.text == "rank") return read_rank_line(first, cursor);  // its ops, one at a time
        words_.assign(1, first);  // a header line: all its words, into one reused buffer
        for (Word word; cursor.next(word);) words_.push_back(word);
        const std::vector<Word>& words = words_;
        const std::string_view head = first.text;
        if (placement_ready_) fail(words[0].column, fmt::format("'{}' must come before the first rank line", head));
        if (!seen_directives_.insert(std::string(head)).second && head != "pipeline" && head != "stage-costs")
            fail(words[0].column, fmt::format("'{}' is given twice", head));
        if (head == "ranks") {
            ranks_ = read_count_directive(words, "the number of ranks", 1);
            ranks_line_ = line_;
            return;
        }
        if (head == "microbatches") {
            microbatches_ = read_count_directive(words, "the number of micro-batches", 1);
            size_at_ = {line_, words[1].column};
            return;
        }
        if (head == "segments") {
            segments_ = read_count_directive(words, "the number of sequence segments per micro-batch", 1);
            segments_at_ = {line_, words[1].column};
            return;
        }
        if (head == "segment-costs") {
            expect_words(words, 2);
            segment_costs_ = {std::string(words[1].text), SourceLoc{line_, words[1].column}};
            return;
        }
        if (head == "stages") {
            stages_ = read_count_directive(words, "the number of stages", 1);
            if (*stages_ > kMaxStagesPerPipeline)
                fail(words[1].column, fmt::format("{} stages: a pipeline holds at most {}", *stages_, kMaxStagesPerPipeline));
            return;
        }
        if (head == "placement") return read_placement(words);
        if (head == "pipeline") return read_pipeline(words);
        if (head == "chunks") return read_chunks(line, words);
        if (head == "chunk-pattern") return read_chunk_pattern(line, words);
        if (head == "costs") {
            if (words.size() < 2)
                fail(words[0].column + static_cast<int>(head.size()),
                     "'costs' needs KEY=VALUE items, e.g. 'costs F=1 I=1 W=1 comm=0'");
            return read_costs(line, words, std::nullopt);
        }
        if (head == "stage-costs") {
            if (words.size() < 3) fail(words[0].column, "expected 'stage-costs BLOCK KEY=VALUE ...'");
            return read_costs(line, {words.begin() + 1, words.end()}, parse_count(words[1], "a block number", 0));
        }
        if (head == "memory-limit") {
            expect_words(words, 2);
            auto limit = parse_rational(words[1].text);
            if (!limit) fail(words[1].column, fmt::format("expected a non-negative number, got '{}'", words[1].text));
            schedule_.memory_limit = *limit;
            return;
        }
        if (head == "activation-sizes") {
            if (words.size() < 2) fail(words[0].column, "expected 'activation-sizes F=.. I=..'");
            const size_t from = static_cast<size_t>(words[1].column - 1);
            const std::string_view items = line.text.substr(from);
            try {
                schedule_.activation_sizes = parse_activation_sizes(items.substr(0, items.find('#')));
            } catch (const CostSyntaxError& e) {
                fail(static_cast<int>(from + e.offset) + 1, e.message);
            }
            return;
        }
        fail(words[0].column, fmt::format("unknown directive '{}' (expected ranks, microbatches, stages, placement, "
                                          "pipeline, segments, segment-costs, costs, stage-costs, chunks, chunk-pattern, memory-limit, activation-sizes or rank)",
                                          head));
    }

    void expect_words(const std::vector<Word>& words, size_t count) const {
        if (words.size() < count)
            fail(words.back().column + static_cast<int>(words.back().text.size()),
                 fmt::format("'{}' needs a value", words[0].text));
        if (words.size() > count)
            fail(words[count].column, fmt::format("unexpected '{}' after '{}'", words[count].text, words[0].text));
    }

    int read_count_directive(const std::vector<Word>& words, const char* what, int minimum) const {
        expect_words(words, 2);
        return parse_count(words[1], what, minimum);
    }

    void read_placement(const std::vector<Word>& words) {
        if (words.size() < 2) expect_words(words, 2);
        placement_line_ = line_;
        if (words.size() == 2 && (words[1].text == "loop" || words[1].text == "v" || words[1].text == "bidirectional")) {
            if (words[1].text == "bidirectional") bidirectional_ = true;
            else stage_map_ = std::vector<int>{words[1].text == "v" ? -2 : -1};  // resolved in finish_header
            return;
        }
        std::vector<int> map;
        for (size_t k = 1; k < words.size(); ++k) map.push_back(parse_count(words[k], "a rank number", 0));
        stage_map_ = map;
        placement_columns_.assign(words.begin() + 1, words.end());
    }
    std::vector<Word> placement_columns_;
    std::vector<Word> words_;  // the current line's words

    // pipeline K microbatches N ranks r0 r1 ... [blocks b0 b1 ...]
    void read_pipeline(const std::vector<Word>& words) {
        if (words.size() < 6 || words[2].text != "microbatches" || words[4].text != "ranks")
            fail(words[0].column, "expected 'pipeline K microbatches N ranks R0 R1 ... [blocks B0 B1 ...]'");
        const int k = parse_count(words[1], "a pipeline number", 0);
        if (k != static_cast<int>(pipelines_.size()))
            fail(words[1].column, fmt::format("pipelines must be numbered 0, 1, ... in order; expected {}", pipelines_.size()));
        if (k >= kMaxPipelines) fail(words[1].column, fmt::format("pipeline {}: a schedule holds at most {} pipelines", k, kMaxPipelines));
        Pipeline p;
        p.microbatches = parse_count(words[3], "the number of micro-batches", 1);
        size_t i = 5;
        for (; i < words.size() && words[i].text != "blocks"; ++i) {
            if (p.stage_rank.size() == static_cast<size_t>(kMaxStagesPerPipeline))
                fail(words[i].column, fmt::format("pipeline {} lists more than {} stages, the most a pipeline holds", k, kMaxStagesPerPipeline));
            int r = parse_count(words[i], "a rank number", 0);
            if (ranks_ && r >= *ranks_) fail(words[i].column, fmt::format("rank {} is not in 0..{}", r, *ranks_ - 1));
            p.stage_rank.push_back(r);
        }
        if (i < words.size()) {
            for (++i; i < words.size(); ++i) p.stage_block.push_back(parse_count(words[i], "a block number", 0));
            if (p.stage_block.size() != p.stage_rank.size())
                fail(words.back().column, fmt::format("pipeline {} lists {} ranks but {} blocks", k, p.stage_rank.size(),
                                                      p.stage_block.size()));
        } else {
            for (int s = 0; s < p.stages(); ++s) p.stage_block.push_back(s);
        }
        pipelines_[k] = p;
        size_at_ = {line_, words[3].column};
    }

    // Issue 11: `chunks KEY=VALUE ...` (model/chunk_costs.hpp) and `chunk-pattern NAME|compute: ... / network: ...`.
    // The op costs are then derived, so a file gives either `costs`/`stage-costs` or `chunks`.
    std::optional<ChunkSpec> chunks_;
    std::optional<PatternSpec> chunk_pattern_;
    int chunk_pattern_line_ = 0;

    void read_chunks(const TextLine& line, const std::vector<Word>& words) {
        if (costs_) fail(words[0].column, "a file gives either 'costs'/'stage-costs' or 'chunks' (chunk costs derive the op costs)");
        if (words.size() < 2) expect_words(words, 2);
        const size_t from = static_cast<size_t>(words[1].column - 1);
        const std::string_view items = line.text.substr(from);
        try {
            chunks_ = ChunkSpec{parse_chunk_costs(items.substr(0, items.find('#'))), std::nullopt, {line_, words[0].column}};
        } catch (const ChunkCostError& e) {
            fail(static_cast<int>(from + e.offset) + 1, e.message);
        }
    }

    void read_chunk_pattern(const TextLine& line, const std::vector<Word>& words) {
        if (words.size() < 2) expect_words(words, 2);
        const size_t from = static_cast<size_t>(words[1].column - 1);
        const std::string_view text = line.text.substr(from);
        try {
            chunk_pattern_ = parse_pattern(text.substr(0, text.find('#')));
        } catch (const PatternSyntaxError& e) {
            fail(static_cast<int>(from + e.offset) + 1, e.message);
        }
        for (auto& list : chunk_pattern_->lists)
            for (auto& entry : list) entry.line = line_, entry.column += static_cast<int>(from);
        chunk_pattern_->origin = file_;
        chunk_pattern_line_ = line_;
    }

    void finish_chunks() {
        if (chunk_pattern_ && !chunks_) {
            line_ = chunk_pattern_line_;
            fail(1, "'chunk-pattern' orders chunk components, but the file has no 'chunks' line");
        }
        if (!chunks_) return;
        if (chunk_pattern_ && chunk_pattern_->kind == PatternKind::Custom) {
            try {
                check_custom_pattern(*chunk_pattern_, chunks_->costs);
            } catch (const PatternError& e) {
                line_ = e.at ? e.at->line : chunk_pattern_line_;
                fail(e.at ? e.at->column : 1, e.message);
            }
        }
        chunks_->pattern = chunk_pattern_;
        schedule_.chunks = chunks_;
    }

    void read_costs(const TextLine& line, const std::vector<Word>& words, std::optional<int> block) {
        if (chunks_) fail(words[0].column, "a file gives either 'costs'/'stage-costs' or 'chunks' (chunk costs derive the op costs)");
        if (!costs_) costs_ = Costs{};
        const size_t from = static_cast<size_t>(words[1].column - 1);
        const std::string_view items = line.text.substr(from);
        try {
            if (block) {
                OpCosts c = costs_->base;
                apply_cost_items(items.substr(0, items.find('#')), c, nullptr);
                costs_->per_block[*block] = c;
            } else {
                apply_cost_items(items.substr(0, items.find('#')), costs_->base, &costs_->comm);
            }
        } catch (const CostSyntaxError& e) {
            fail(static_cast<int>(from + e.offset) + 1, e.message);
        }
    }

    void finish_header(int column) {
        if (!ranks_) fail(column, "a 'ranks N' line must come before the first rank line");
        const int P = *ranks_;
        Placement placement;
        placement.ranks = P;
        if (!pipelines_.empty()) {
            if (microbatches_ || stages_ || stage_map_ || bidirectional_)
                fail(column, "give either 'pipeline' lines or microbatches/stages/placement, not both");
            for (auto& [k, p] : pipelines_) {
                for (int r : p.stage_rank)
                    if (r >= P) fail(column, fmt::format("pipeline {} places a stage on rank {}, but there are {} ranks", k, r, P));
                placement.pipelines.push_back(p);
            }
        } else {
            if (!microbatches_) fail(column, "a 'microbatches N' line must come before the first rank line");
            if (bidirectional_) {
                if (stages_ && *stages_ != P) fail(column, "a bidirectional placement has one stage per rank in each direction");
                if (*microbatches_ % 2 != 0)
                    fail(column, fmt::format("a bidirectional placement splits the micro-batches in two halves; {} is odd",
                                             *microbatches_));
                placement = Placement::bidirectional(P, *microbatches_ / 2);
            } else {
                const int S = stages_.value_or(stage_map_ && (*stage_map_)[0] >= 0 ? static_cast<int>(stage_map_->size()) : P);
                std::vector<int> map;
                if (!stage_map_ || (*stage_map_)[0] == -1) map = loop_stage_map(P, S);
                else if ((*stage_map_)[0] == -2) {
                    if (S % P != 0) fail(column, fmt::format("the V placement needs stages ({}) to be a multiple of ranks ({})", S, P));
                    map = v_stage_map(P, S);
                } else {
                    map = *stage_map_;
                    if (static_cast<int>(map.size()) != S)
                        fail(column, fmt::format("the placement lists {} stages but 'stages' says {}", map.size(), S));
                    for (size_t s = 0; s < map.size(); ++s)
                        if (map[s] >= P) {
                            line_ = line_of_placement();
                            fail(placement_columns_[s].column, fmt::format("rank {} is not in 0..{}", map[s], P - 1));
                        }
                }
                placement = Placement::single(P, map, *microbatches_);
            }
        }
        if (segments_ > 1) split_into_segments(placement);
        // Nothing proportional to the declared size is allocated before this check (model/size_budget.hpp).
        try {
            require_placement_size(placement);
        } catch (const SizeLimitError& e) {
            if (size_at_.known()) line_ = size_at_.line;
            fail(size_at_.known() ? size_at_.column : column, e.what());
        }
        read_segment_costs();  // k shares: after the size check, which counts the k x M units
        try {
            placement.validate();  // what the checks above leave: the stages a pipeline holds (model/op.hpp)
        } catch (const std::invalid_argument& e) {
            if (placement_line_ > 0) line_ = placement_line_, column = 1;  // the line that declares the stages
            fail(column, e.what());
        }
        schedule_.placement = placement;
        schedule_.ranks.assign(P, {});
        rank_seen_.assign(P, false);
        placement_ready_ = true;
    }
    // `segments k`: each pipeline's micro-batches become k segment units (ops number units, Schedule::segments).
    void split_into_segments(Placement& placement) {
        for (Pipeline& p : placement.pipelines) {
            const long long units = static_cast<long long>(p.microbatches) * segments_;
            if (units > std::numeric_limits<std::int32_t>::max()) {
                line_ = segments_at_.line;
                fail(segments_at_.column, fmt::format("{} micro-batches x {} segments pass the largest micro-batch number {}",
                                                      p.microbatches, segments_, std::numeric_limits<std::int32_t>::max()));
            }
            p.microbatches = static_cast<int>(units);
        }
        schedule_.segments = segments_;
    }
    // `segment-costs 1/4,3/4` (or attention=A): each segment's share of the costs, read once `segments` is known.
    void read_segment_costs() {
        if (!segment_costs_) return;
        const auto& [text, at] = *segment_costs_;
        const int here = line_;
        line_ = at.line;
        if (segments_ < 2) fail(at.column, "'segment-costs' needs a 'segments K' line with K >= 2");
        try {
            schedule_.segment_cost_shares = parse_segment_cost_shares(text, segments_);
        } catch (const CostSyntaxError& e) {
            fail(at.column + static_cast<int>(e.offset), e.message);
        }
        line_ = here;
    }
    std::optional<std::pair<std::string, SourceLoc>> segment_costs_;
    int segments_ = 1;
    SourceLoc segments_at_{};
    int placement_line_ = 0;
    SourceLoc size_at_{};  // the micro-batch count (or last pipeline line) that sets the size, for the size check
    int line_of_placement() const { return placement_line_; }

    void read_rank_line(const Word& head, WordCursor& words) {
        if (!placement_ready_) {
            const int here = line_;
            finish_header(head.column);
            line_ = here;
        }
        Word number;
        if (!words.next(number)) fail(head.column + 4, "expected 'rank N:' followed by the rank's ops");
        // The colon after the number, or in a word of its own; an op may follow it without a blank
        // ("rank 0:0F0", "rank 0 :0F0").
        std::optional<Word> glued;
        const size_t colon_at = number.text.find(':');
        if (colon_at != std::string_view::npos) {
            if (colon_at + 1 < number.text.size())
                glued = Word{number.text.substr(colon_at + 1), number.column + static_cast<int>(colon_at) + 1};
            number.text = number.text.substr(0, colon_at);
        }
        const int r = parse_count(number, "a rank number", 0);
        if (r >= *ranks_) fail(number.column, fmt::format("rank {} is not in 0..{}", r, *ranks_ - 1));
        auto& slots = schedule_.ranks[r];
        if (colon_at == std::string_view::npos) {
            Word colon;
            if (!words.next(colon) || colon.text.substr(0, 1) != ":")
                fail(number.column + static_cast<int>(number.text.size()), "expected ':' after the rank number");
            if (colon.text.size() > 1) glued = Word{colon.text.substr(1), colon.column + 1};
        }
        if (rank_seen_[r]) fail(head.column, fmt::format("rank {} has a second line", r));
        rank_seen_[r] = true;
        if (glued) read_token(r, *glued);
        slots.reserve(slots.size() + words.words_left());  // one growth, not log(n) copies of a long rank
        read_ops(r, words.line(), words.position());
        if (slots.capacity() > slots.size() + slots.size() / 4 + 16) slots.shrink_to_fit();  // wide spacing
    }

    void read_token(int rank, const Word& word) {
        if (word.text == ".") return note_gap(rank);
        Slot slot = word.text.front() == '(' ? read_pair(word) : Slot::single(read_op(word.text, word.column));
        slot.loc = {line_, word.column};
        schedule_.ranks[rank].push_back(slot);
    }

    void note_gap(int rank) {
        auto& gaps = schedule_.gaps;
        if (gaps.empty()) gaps.assign(*ranks_, {});
        auto& g = gaps[rank];
        g.resize(schedule_.ranks[rank].size() + 1, 0);
        ++g.back();
    }

    Slot read_pair(const Word& word) {
        std::string_view text = word.text;
        const size_t close = text.find(')');
        if (close == std::string_view::npos)
            fail(word.column + static_cast<int>(text.size()), "expected ')' to close the overlapped pair");
        std::string_view inner = text.substr(1, close - 1);
        if (inner.find('(') != std::string_view::npos) fail(word.column + 1, "pairs cannot be nested");
        std::string_view tail = text.substr(close + 1);
        if (!tail.empty() && tail != "OVERLAP_F_B")
            fail(word.column + static_cast<int>(close) + 1,
                 fmt::format("unexpected '{}' after the pair (only OVERLAP_F_B may follow it)", tail));
        const size_t semi = inner.find(';');
        if (semi == std::string_view::npos || inner.find(';', semi + 1) != std::string_view::npos)
            fail(word.column + 1, "an overlapped pair holds exactly two ops: (F;B)");
        Op first = read_op(inner.substr(0, semi), word.column + 1);
        Op second = read_op(inner.substr(semi + 1), word.column + 2 + static_cast<int>(semi));
        if (first.kind != OpKind::F && second.kind == OpKind::F) std::swap(first, second);
        if (first.kind != OpKind::F || !is_backward(second.kind))
            fail(word.column, fmt::format("an overlapped pair is one F and one backward (B or I), got {}", text));
        return Slot::pair(first, second);
    }

    // An op's numbers as written, before checked_op has placed them within the schedule (and so within
    // what an Op can hold).
    struct WrittenOp {
        OpKind kind = OpKind::F;
        int pipeline = 0, stage = 0, microbatch = 0;
        std::string text() const { return format_op(kind, pipeline, stage, microbatch); }
    };

    // The common shape -- digits, F, I, W or B, digits -- scanned from p on; p stops after it. False when the
    // text there does not start with that shape (read_op's careful path accepts or explains everything).
    static bool scan_plain_op(const char*& p, const char* const end, WrittenOp& op) {
        auto digits = [&](int& value) {
            const char* const start = p;
            int v = 0;
            for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p)
                if ((v = v * 10 + (*p - '0')) > kMaxCount) return false;
            value = v;
            return p != start;
        };
        if (!digits(op.stage) || p == end) return false;
        switch (*p++) {
            case 'F': op.kind = OpKind::F; break;
            case 'I': op.kind = OpKind::I; break;
            case 'W': op.kind = OpKind::W; break;
            case 'B': op.kind = OpKind::B; break;
            default: return false;
        }
        return digits(op.microbatch);
    }

    static bool read_plain_op(std::string_view text, WrittenOp& op) {
        const char* p = text.data();
        return scan_plain_op(p, text.data() + text.size(), op) && p == text.data() + text.size();
    }

    static bool ends_word(const char* p, const char* end) { return p == end || *p == ' ' || *p == '\t' || *p == '#'; }

    // The ops of a rank line from `from` on, as WordCursor would split them: an op of the common shape is read
    // where it stands (most of a large file), any other word goes through read_token.
    void read_ops(int rank, std::string_view line, size_t from) {
        auto& slots = schedule_.ranks[rank];
        const char* const begin = line.data();
        const char* const end = begin + line.size();
        for (const char* p = begin + from;;) {
            while (p < end && (*p == ' ' || *p == '\t')) ++p;
            if (p == end || *p == '#') return;
            const char* const start = p;
            const int column = static_cast<int>(start - begin) + 1;
            if (WrittenOp op; scan_plain_op(p, end, op) && ends_word(p, end)) {
                slots.push_back(Slot::single(checked_op(op, column), {line_, column}));
                continue;
            }
            for (p = start; !ends_word(p, end);) ++p;
            read_token(rank, {std::string_view(start, static_cast<size_t>(p - start)), column});
        }
    }

    // The whole character at text[i] (a message never quotes half of one).
    static std::string_view character_at(std::string_view text, size_t i) {
        return text.substr(i, std::max<size_t>(1, utf8_sequence_length(text, i)));
    }

    // <stage><F|I|W|B><micro-batch>[@<pipeline>]
    Op read_op(std::string_view text, int column) {
        if (WrittenOp plain; read_plain_op(text, plain)) return checked_op(plain, column);
        size_t i = 0;
        auto number = [&](const char* what) {
            const size_t start = i;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
            if (start == i) {
                if (i < text.size())
                    fail(column + static_cast<int>(i), fmt::format("expected {} (digits), got '{}'", what, character_at(text, i)));
                fail(column + static_cast<int>(i), fmt::format("expected {} after '{}'", what, text));
            }
            return parse_count({text.substr(start, i - start), column + static_cast<int>(start)}, what, 0);
        };
        WrittenOp op;
        op.stage = number("a stage number");
        if (i >= text.size()) fail(column + static_cast<int>(i), fmt::format("expected an op letter F, I, W or B after '{}'", text));
        switch (text[i]) {
            case 'F': op.kind = OpKind::F; break;
            case 'I': op.kind = OpKind::I; break;
            case 'W': op.kind = OpKind::W; break;
            case 'B': op.kind = OpKind::B; break;
            default:
                fail(column + static_cast<int>(i), fmt::format("unknown op letter '{}' in '{}' (expected F, I, W or B)", character_at(text, i), text));
        }
        ++i;
        if (op.kind == OpKind::B && i < text.size() && text[i] == 'W')
            fail(column + static_cast<int>(i) - 1,
                 "'BW' is PyTorch's 2024 letter for the full backward; this format uses B (and I for the input-gradient part)");
        op.microbatch = number("a micro-batch number");
        if (i < text.size() && text[i] == '@') {
            ++i;
            op.pipeline = number("a pipeline number");
        }
        if (i < text.size())
            fail(column + static_cast<int>(i), fmt::format("unexpected '{}' after '{}'", text.substr(i), text.substr(0, i)));
        return checked_op(op, column);
    }

    Op checked_op(const WrittenOp& op, int column) {
        const auto& pipelines = schedule_.placement.pipelines;
        if (op.pipeline >= static_cast<int>(pipelines.size()) || op.stage >= pipelines[op.pipeline].stages() ||
            op.microbatch >= pipelines[op.pipeline].microbatches)
            out_of_range(op, column);
        return Op{op.kind, op.pipeline, op.stage, op.microbatch};
    }

    [[noreturn, gnu::cold, gnu::noinline]] void out_of_range(const WrittenOp& op, int column) const {
        const auto& placement = schedule_.placement;
        if (op.pipeline >= placement.pipeline_count())
            fail(column, fmt::format("{}: pipeline {} does not exist (the schedule has {})", op.text(), op.pipeline,
                                     placement.pipeline_count()));
        const auto& p = placement.pipelines[op.pipeline];
        if (op.stage >= p.stages())
            fail(column, fmt::format("{}: stage {} is not in 0..{}", op.text(), op.stage, p.stages() - 1));
        if (segments_ > 1)
            fail(column, fmt::format("{}: segment unit {} is not in 0..{} ({} micro-batches x {} segments)", op.text(),
                                     op.microbatch, p.microbatches - 1, p.microbatches / segments_, segments_));
        fail(column, fmt::format("{}: micro-batch {} is not in 0..{}", op.text(), op.microbatch, p.microbatches - 1));
    }

    void finish() {
        line_ = std::max(lines_.last_number(), 1);
        if (!placement_ready_) {
            if (!any_words_) throw InputError(file_, 1, 1, "empty schedule: expected a 'ranks N' line and one 'rank R:' line per rank");
            fail(1, "no rank lines: expected one 'rank R:' line per rank");
        }
        for (int r = 0; r < *ranks_; ++r)
            if (!rank_seen_[r]) {
                line_ = ranks_line_;
                fail(1, fmt::format("rank {} has no 'rank {}:' line ({} ranks are declared here)", r, r, *ranks_));
            }
        if (!schedule_.gaps.empty())
            for (int r = 0; r < *ranks_; ++r) schedule_.gaps[r].resize(schedule_.ranks[r].size() + 1, 0);
        schedule_.costs = costs_;
        schedule_.source = file_;
        finish_chunks();
    }
};

std::string pipelines_header(const Placement& placement) {
    std::string text;
    for (int k = 0; k < placement.pipeline_count(); ++k) {
        const auto& p = placement.pipelines[k];
        text += fmt::format("pipeline {} microbatches {} ranks {}", k, p.microbatches, fmt::join(p.stage_rank, " "));
        bool identity = true;
        for (int s = 0; s < p.stages(); ++s) identity = identity && p.stage_block[s] == s;
        if (!identity) text += fmt::format(" blocks {}", fmt::join(p.stage_block, " "));
        text += "\n";
    }
    return text;
}

std::string placement_header(const Placement& placement) {
    const bool bidirectional = placement.pipeline_count() == 2 &&
                               [&] {
                                   auto expected = Placement::bidirectional(placement.ranks, placement.pipelines[0].microbatches);
                                   return expected.pipelines[0].stage_rank == placement.pipelines[0].stage_rank &&
                                          expected.pipelines[1].stage_rank == placement.pipelines[1].stage_rank &&
                                          expected.pipelines[0].stage_block == placement.pipelines[0].stage_block &&
                                          expected.pipelines[1].stage_block == placement.pipelines[1].stage_block &&
                                          placement.pipelines[1].microbatches == placement.pipelines[0].microbatches;
                               }();
    if (bidirectional)
        return fmt::format("microbatches {}\nplacement bidirectional\n", placement.total_microbatches());
    if (placement.pipeline_count() != 1) return pipelines_header(placement);
    const auto& p = placement.pipelines[0];
    for (int s = 0; s < p.stages(); ++s)
        if (p.stage_block[s] != s) return pipelines_header(placement);
    std::string text = fmt::format("microbatches {}\nstages {}\n", p.microbatches, p.stages());
    if (p.stage_rank == loop_stage_map(placement.ranks, p.stages())) return text + "placement loop\n";
    if (p.stages() % placement.ranks == 0 && p.stage_rank == v_stage_map(placement.ranks, p.stages()))
        return text + "placement v\n";
    return text + fmt::format("placement {}\n", fmt::join(p.stage_rank, " "));
}

}  // namespace

Schedule read_native(std::string_view text, const std::string& file_name) {
    return NativeReader(text, file_name).read();
}

std::string write_native(const Schedule& schedule) {
    std::string text = "# pipeproof schedule\n";
    if (!schedule.source.empty()) text += fmt::format("# from {}\n", schedule.source);
    text += fmt::format("ranks {}\n", schedule.placement.ranks);
    if (schedule.segments > 1) {
        Placement per_microbatch = schedule.placement;  // the header counts micro-batches; ops number segment units
        for (Pipeline& p : per_microbatch.pipelines) p.microbatches /= schedule.segments;
        text += placement_header(per_microbatch);
        text += fmt::format("segments {}\n", schedule.segments);
        if (!schedule.segment_cost_shares.empty())
            text += "segment-costs " + format_segment_cost_shares(schedule.segment_cost_shares) + "\n";
    } else {
        text += placement_header(schedule.placement);
    }
    if (schedule.costs) {
        text += "costs " + format_costs(*schedule.costs) + "\n";
        for (const auto& [block, c] : schedule.costs->per_block) {
            Costs one;
            one.base = c;
            auto items = format_costs(one);
            text += fmt::format("stage-costs {} {}\n", block, items.substr(0, items.rfind(",comm=")));
        }
    }
    if (schedule.chunks) {
        text += "chunks " + format_chunk_costs(schedule.chunks->costs) + "\n";
        if (schedule.chunks->pattern) text += "chunk-pattern " + format_pattern(*schedule.chunks->pattern) + "\n";
    }
    if (schedule.memory_limit) text += "memory-limit " + format_rational(*schedule.memory_limit) + "\n";
    if (schedule.activation_sizes) text += "activation-sizes " + format_activation_sizes(*schedule.activation_sizes) + "\n";
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        text += fmt::format("rank {}:", r);
        const auto* gaps = schedule.gaps.empty() ? nullptr : &schedule.gaps[r];
        for (size_t k = 0; k <= schedule.ranks[r].size(); ++k) {
            if (gaps && k < gaps->size())
                for (int g = 0; g < (*gaps)[k]; ++g) text += " .";
            if (k < schedule.ranks[r].size()) text += " " + format_slot(schedule.ranks[r][k]);
        }
        text += "\n";
    }
    return text;
}

}  // namespace pp
