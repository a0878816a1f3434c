// The pieces behind the input guarantees, tested directly: the size budget and its estimates, the line
// cursor, the readers' limits with exact positions, and the bounds of the claim and grid parsers.
#include "formats/json_schedule.hpp"
#include "formats/native.hpp"
#include "formats/text_lines.hpp"
#include "formats/torch_csv.hpp"
#include "model/placement.hpp"
#include "model/size_budget.hpp"
#include "proofs/chunk_claim.hpp"
#include "proofs/claim.hpp"
#include "schedules/registry.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace pp;

namespace {

// Restores the process-wide limit when a test changes it.
struct BudgetGuard {
    std::uint64_t saved = max_ops();
    ~BudgetGuard() { set_max_ops(saved); }
};

template <typename F>
std::string input_error(F read) {
    try {
        read();
    } catch (const InputError& e) {
        return e.where() + ": " + e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("size budget: counts and estimates", "[hardening][budget]") {
    CHECK(format_count(0) == "0");
    CHECK(format_count(9'999'999) == "9999999");
    CHECK(format_count(10'000'000) == "10^7");
    CHECK(format_count(1'000'000'000'000) == "10^12");
    CHECK(format_count(2'000'001'000) == "2 x 10^9");
    CHECK(format_count(12'345'678'901) == "1.2 x 10^10");  // rounded down: never more than the truth
    CHECK(format_count(std::numeric_limits<std::uint64_t>::max()) == "more than 1.8 x 10^19");
    CHECK(format_bytes(999) == "about 999 bytes");
    CHECK(format_bytes(4'000'020'000'000) == "about 4.0 TB");
    CHECK(format_bytes(123'000'000'000) == "about 123 GB");
    CHECK(saturating_mul(1ULL << 40, 1ULL << 40) == std::numeric_limits<std::uint64_t>::max());
    CHECK(saturating_add(std::numeric_limits<std::uint64_t>::max(), 1) == std::numeric_limits<std::uint64_t>::max());
    // 2 ops per (stage, micro-batch) and 1 per rank: 1F1B P=4 M=8 needs 2*4*8 + 4 = 68.
    const Placement p = Placement::single(4, loop_stage_map(4, 4), 8);
    CHECK(placement_ops(p) == 68);
    CHECK(placement_ops(Placement::bidirectional(4, 4)) == 2 * (4 * 4 + 4 * 4) + 4);
    BudgetGuard guard;
    set_max_ops(68);
    CHECK_NOTHROW(require_placement_size(p));
    set_max_ops(67);
    CHECK_THROWS_WITH(require_placement_size(p), "4 stages x 8 micro-batches need at least 68 ops, about 8.7 KB of "
                                                 "memory: over the limit of 67 ops (--max-ops raises it)");
    set_max_ops(0);
    CHECK(max_ops() == kDefaultMaxOps);
}

TEST_CASE("size budget: generators refuse before allocating", "[hardening][budget]") {
    BudgetGuard guard;
    set_max_ops(1000);
    const ScheduleFamily* zbv = find_family("zbv");
    REQUIRE(zbv);
    // zbv holds 2 stages per rank: 4 x 2 x 100 pairs, 2 ops each, + 4 ranks = 1604 ops, plus its lock-step
    // rows' 4 x 4 x 2 = 32 idle cells: 1636 > 1000.
    CHECK_THROWS_AS(zbv->generate({4, 100, std::nullopt}), SizeLimitError);
    CHECK_THROWS_WITH(zbv->generate({4, 100, std::nullopt}),
                      Catch::StartsWith("zbv with 4 ranks x 2 stages per rank x 100 micro-batches, plus PyTorch's "
                                        "lock-step rows (ranks x ranks x stages per rank idle cells) need at least 1636 ops"));
    CHECK(zbv->generate({4, 8, std::nullopt}).op_count() == 4 * 2 * 8 * 3);
}

TEST_CASE("line cursor: one line at a time, numbered, without line ends", "[hardening][native]") {
    auto lines_of = [](std::string_view text) {
        std::vector<std::pair<int, std::string>> out;
        LineCursor cursor(text, "t");
        for (TextLine line; cursor.next(line);) out.emplace_back(line.number, std::string(line.text));
        return out;
    };
    using L = std::vector<std::pair<int, std::string>>;
    CHECK(lines_of("") == L{{1, ""}});
    CHECK(lines_of("a") == L{{1, "a"}});
    CHECK(lines_of("a\n") == L{{1, "a"}});
    CHECK(lines_of("a\r\n\nb") == L{{1, "a"}, {2, ""}, {3, "b"}});
    CHECK(lines_of("\xEF\xBB\xBFx\n\n") == L{{1, "x"}, {2, ""}});
    CHECK(input_error([] { LineCursor("ok\nb\xff", "t"); }) == "t:2:2: invalid UTF-8: this is not a text file");
}

TEST_CASE("text: UTF-8 is checked the same in every reader, overlong forms and surrogates included", "[hardening][native]") {
    // Each is refused by the CSV and JSON readers; the native reader accepted them in a comment.
    for (const std::string bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF5\x80\x80\x80", "\xF4\x90\x80\x80"}) {
        INFO(bad.size());
        CHECK(utf8_sequence_length(bad, 0) == 0);
        CHECK(input_error([&] { read_native("ranks 1\nmicrobatches 1\n# x" + bad + "y\nrank 0: 0F0 0B0\n", "n.txt"); })
                  .rfind("n.txt:3:4: invalid UTF-8", 0) == 0);
    }
    CHECK(utf8_sequence_length("\xC3\xA9", 0) == 2);          // é
    CHECK(utf8_sequence_length("\xED\x9F\xBF", 0) == 3);      // U+D7FF, the last before the surrogates
    CHECK(utf8_sequence_length("\xF4\x8F\xBF\xBF", 0) == 4);  // U+10FFFF
}

TEST_CASE("native reader: a message quotes whole characters, never half of one", "[hardening][native]") {
    // "é" is two bytes; quoting its first alone made the message invalid UTF-8 (and --json abort).
    CHECK(input_error([] { read_native("ranks 1\nmicrobatches 1\nrank 0: 0F0 \xC3\xA9 0B0\n", "n.txt"); }) ==
          "n.txt:3:13: expected a stage number (digits), got '\xC3\xA9'");
    CHECK(input_error([] { read_native("ranks 1\nmicrobatches 1\nrank 0: 0\xC3\xA9""0\n", "n.txt"); }) ==
          "n.txt:3:10: unknown op letter '\xC3\xA9' in '0\xC3\xA9""0' (expected F, I, W or B)");
}

TEST_CASE("readers: the spellings one reader takes, the others take too", "[hardening][native][json]") {
    auto ops_of = [](const Schedule& s) {
        std::string text;
        for (const auto& rank : s.ranks)
            for (const Slot& slot : rank) text += format_slot(slot) + " ";
        return text;
    };
    // A colon glued to the rank number and to the first op, as "rank 0 :0F0" already was.
    const std::string spaced = ops_of(read_native("ranks 1\nmicrobatches 1\nrank 0: 0F0 0B0\n", "n.txt"));
    CHECK(spaced == "0F0 0B0 ");
    CHECK(ops_of(read_native("ranks 1\nmicrobatches 1\nrank 0:0F0 0B0\n", "n.txt")) == spaced);
    CHECK(ops_of(read_native("ranks 1\nmicrobatches 1\nrank 0 :0F0 0B0\n", "n.txt")) == spaced);
    // "rank 0:0X0": the X is column 9 (r=1 ... 0=6, :=7, 0=8).
    CHECK(input_error([] { read_native("ranks 1\nmicrobatches 1\nrank 0:0X0\n", "n.txt"); })
              .rfind("n.txt:3:9: unknown op letter 'X'", 0) == 0);
    // A pair with its backward first: native and CSV take it (F stored first); so does JSON now.
    const std::string native_pair = ops_of(read_native("ranks 1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0)\n", "n.txt"));
    CHECK(native_pair == ops_of(read_native("ranks 1\nmicrobatches 2\nrank 0: 0F0 (0B0;0F1)\n", "n.txt")));
    const std::string json = R"({"format": "pipeproof-schedule", "version": 1, "ranks": 1,
        "pipelines": [{"microbatches": 2, "stage_ranks": [0]}],
        "schedule": [{"rank": 0, "ops": [{"kind": "F", "stage": 0, "microbatch": 0},
                                         {"overlap": [{"kind": "B", "stage": 0, "microbatch": 0},
                                                      {"kind": "F", "stage": 0, "microbatch": 1}]}]}]})";
    CHECK(ops_of(read_json(json, "j.json")).rfind("0F0 (0F1;0B0) ", 0) == 0);
    // A placement list past the stage limit is blamed on the placement line, not the first rank line.
    std::string zeros;
    for (int k = 0; k <= kMaxStagesPerPipeline; ++k) zeros += " 0";
    CHECK(input_error([&] { read_native("ranks 1\nmicrobatches 1\nplacement" + zeros + "\nrank 0: 0F0\n", "n.txt"); })
              .rfind("n.txt:3:1: ", 0) == 0);
}

TEST_CASE("word cursor: the words left are counted, not the blanks between them", "[hardening][native]") {
    // A rank line reserves a slot per word left: 10^6 tabs between two ops are two words, not 10^6 + 1.
    const std::string line = "0F0" + std::string(1'000'000, '\t') + "0B0  # 1F1 2F2";
    WordCursor cursor(line);
    CHECK(cursor.words_left() == 2);
    Word word;
    REQUIRE(cursor.next(word));
    CHECK(word.text == "0F0");
    CHECK(cursor.words_left() == 1);
    REQUIRE(cursor.next(word));
    CHECK(word.column == 1'000'004);
    CHECK(cursor.words_left() == 0);
    CHECK_FALSE(cursor.next(word));
    CHECK(WordCursor("").words_left() == 0);
    CHECK(WordCursor(" \t a b\tc ").words_left() == 3);
}

TEST_CASE("size budget: PyTorch's lock-step rows are counted with their idle cells", "[hardening][budget]") {
    // zb1p, interleaved-1f1b, looped-bfs and zbv build P rows of cells in lock-step, rank r waiting r cells
    // and more: P^2 V cells for M = 1, which the op count alone (2PVM + P) does not see.
    BudgetGuard guard;
    set_max_ops(100'000);
    const ScheduleFamily* zb1p = find_family("zb1p");
    REQUIRE(zb1p);
    // P = 256, V = 1, M = 1: 512 + 256 ops, but 65536 idle cells: 66304 <= 10^5, generated.
    CHECK(zb1p->generate({256, 1, 1}).op_count() == 256 * 3);
    // P = 512: 1024 + 512 + 262144 > 10^5, refused before allocating.
    CHECK_THROWS_WITH(zb1p->generate({512, 1, 1}),
                      Catch::StartsWith("zb1p with 512 ranks x 1 micro-batches, plus PyTorch's lock-step rows"));
    for (const char* name : {"interleaved-1f1b", "looped-bfs", "zbv"}) {
        INFO(name);
        const ScheduleFamily* family = find_family(name);
        REQUIRE(family);
        CHECK_THROWS_AS(family->generate({512, 1, std::nullopt}), SizeLimitError);
    }
    // A family that writes its order directly is not charged for cells it does not build.
    CHECK(find_family("gpipe")->generate({4096, 1, std::nullopt}).op_count() == 4096 * 2);
}

TEST_CASE("native reader: size and position of declared counts", "[hardening][native]") {
    BudgetGuard guard;
    set_max_ops(100);
    // 4 ranks x 13 micro-batches = 2*52 + 4 = 108 ops > 100: reported at the micro-batch count (line 3, column 14).
    CHECK(input_error([] { read_native("ranks 4\n\nmicrobatches 13\nrank 0: 0F0\n", "n.txt"); }) ==
          "n.txt:3:14: 4 stages x 13 micro-batches need at least 108 ops, about 14 KB of memory: over the limit of "
          "100 ops (--max-ops raises it)");
    CHECK(input_error([] { read_native("ranks 2\ncosts\n", "n.txt"); }).rfind("n.txt:2:6: 'costs' needs KEY=VALUE", 0) == 0);
    // A pipeline line sets the size: the count on that line is blamed.
    CHECK(input_error([] { read_native("ranks 2\npipeline 0 microbatches 60 ranks 0 1\nrank 0:\n", "n.txt"); })
              .rfind("n.txt:2:25: 2 stages x 60 micro-batches need at least 242 ops", 0) == 0);
}

TEST_CASE("CSV reader: inferred counts within the actions, rows within the budget", "[hardening][csv]") {
    CHECK(input_error([] { read_torch_csv("0F0,9999W9999", "t.csv"); })
              .rfind("t.csv:1:5: stage 9999 implies 10000 stages x 10000 micro-batches = 10^8", 0) == 0);
    // Counts given by the caller are taken as given (the verifier then reports the missing ops).
    TorchCsvOptions given;
    given.stages = 1;
    given.microbatches = 3;
    CHECK(read_torch_csv("0F0,0B0\n", "t.csv", given).placement.pipelines[0].microbatches == 3);
    // Blank rows in the middle are ranks without actions; at the end they are nothing.
    const Schedule s = read_torch_csv("0F0,0B0\n\n1F0\n\n\n", "t.csv");
    CHECK(s.placement.ranks == 3);
    CHECK(s.ranks[1].empty());
    CHECK(s.ranks[2].size() == 1);
    BudgetGuard guard;
    set_max_ops(5);
    CHECK(input_error([] { read_torch_csv("0F0\n\n\n\n\n\n\n0B0\n", "t.csv"); })
              .rfind("t.csv:6:1: row 6: 6 ranks need at least 6 ops", 0) == 0);
}

TEST_CASE("JSON reader: numbers out of range and sizes name their pointer", "[hardening][json]") {
    CHECK(input_error([] { read_json(R"({"a": [1, 2, {"b~/c": 1e999}]})", "j.json"); }) ==
          "j.json: at /a/2/b~0~1c: invalid JSON: number overflow parsing '1e999' (out of range)");
    CHECK(input_error([] { read_json("[[], [[]], 1e309]", "j.json"); }) ==
          "j.json: at /2: invalid JSON: number overflow parsing '1e309' (out of range)");
}

TEST_CASE("claim parsers: nesting, length and grid size are bounded", "[hardening][claims]") {
    auto claim_error = [](auto parse) -> std::string {
        try {
            parse();
        } catch (const ClaimError& e) {
            return e.message;
        }
        return "no error";
    };
    // 100 levels are fine; deeper is an error, not a stack overflow.
    CHECK_NOTHROW(parse_claim(std::string(30, '(') + "P" + std::string(30, ')')));
    CHECK_THAT(claim_error([] { parse_claim(std::string(5000, '(') + "P"); }),
               Catch::Contains("characters; at most 4096"));
    CHECK_THAT(claim_error([] { parse_claim(std::string(4000, '(') + "P"); }), Catch::StartsWith("nested more than 100"));
    CHECK_THAT(claim_error([] { parse_claim(std::string(4000, '-') + "P"); }), Catch::StartsWith("nested more than 100"));
    CHECK_THAT(claim_error([] { parse_claim(std::string(4000, '!') + "P"); }), Catch::StartsWith("nested more than 100"));
    // Grids: counted before they are made.
    CHECK(parse_cost_grid("F=1..2@1/2").size() == 3);
    CHECK(parse_cost_grid("F=1..3,I=1|2").size() == 6);
    CHECK_THAT(claim_error([] { parse_cost_grid("F=0..1000000000@1/1000"); }), Catch::Contains("more than 100000 points"));
    CHECK_THAT(claim_error([] { parse_cost_grid("F=0..99,I=0..99,W=0..99"); }), Catch::Contains("more than 100000 points"));
    CHECK_THAT(claim_error([] { parse_cost_grid("F=3..2"); }), Catch::StartsWith("empty grid range"));
}

// The chunk claim parser of `refute --chunk-costs symbolic` had neither bound: 10^5 unary minus signs overflowed
// the stack (exit 139). Names and types are now checked when the claim is read, not when the first
// schedule has been timed (an unknown name behind a true '||' used to pass unnoticed).
TEST_CASE("chunk claim parser: nesting, length, names and types are checked before any timing", "[hardening][claims][chunk]") {
    auto claim_error = [](const std::string& text) -> std::string {
        try {
            parse_chunk_claim(text);
        } catch (const ClaimError& e) {
            return e.message;
        }
        return "no error";
    };
    CHECK(claim_error(std::string(30, '(') + "exposed_comm == 0" + std::string(30, ')')) == "no error");
    CHECK(claim_error(std::string(100000, '-') + "1 == 1") == "the claim has 100006 characters; at most 4096 are read");
    CHECK_THAT(claim_error(std::string(4000, '-') + "1 == 1"), Catch::StartsWith("nested more than 100 levels deep at character 101"));
    CHECK_THAT(claim_error(std::string(4000, '(') + "P"), Catch::StartsWith("nested more than 100"));
    CHECK_THAT(claim_error(std::string(4000, '!') + "P == 1"), Catch::StartsWith("nested more than 100"));
    CHECK_THAT(claim_error("P == 2 || exposed_com == 0"),
               Catch::StartsWith("unknown name 'exposed_com' (did you mean 'exposed_comm'?)") && Catch::Contains("at character 11"));
    CHECK(claim_error("exposed_comm + 1") == "expected a comparison such as 'exposed_comm == 0'");
    CHECK(claim_error("(P == 1) + 1 > 0") == "expected a number, got a comparison or a logical operator");
    CHECK(claim_error("!(P == 1) && M >= 1/2 && attn_f * 2 != -mlp_w") == "no error");
    // Exact evaluation; the names a claim uses, once each, in order.
    const ChunkClaimPtr claim = parse_chunk_claim("exposed_comm <= 1/3 * network_comm || P - M > exposed_comm");
    CHECK(chunk_claim_names_used(claim) == std::vector<std::string>{"exposed_comm", "network_comm", "P", "M"});
    std::map<std::string, Rational> v{{"exposed_comm", Rational(1)}, {"network_comm", Rational(3)}, {"P", Rational(2)}, {"M", Rational(4)}};
    CHECK(chunk_claim_holds(claim, v));                 // 1 <= 1/3 * 3
    v["network_comm"] = Rational(2999, 1000);           // 1 > 0.9997 and 2 - 4 < 1
    CHECK_FALSE(chunk_claim_holds(claim, v));
    CHECK_THROWS_AS(chunk_claim_holds(parse_chunk_claim("P / (M - 4) == 0"), v), ClaimError);
}

TEST_CASE("op limits: 256 pipelines, 65536 stages each, refused with the reason, never wrapped", "[hardening][limits]") {
    // An Op is 8 bytes (model/op.hpp): storing an index past what it holds throws instead of wrapping.
    Op op;
    op.stage = 65535;
    CHECK(op.stage == 65535);
    CHECK_THROWS_AS(op.stage = 65536, SizeLimitError);
    CHECK_THROWS_WITH(op.stage = 70000, "stage 70000 is past the limit: at most 65536 stages, numbered 0..65535");
    CHECK_THROWS_AS(op.stage = -1, SizeLimitError);
    op.pipeline = 255;
    CHECK(op.pipeline == 255);
    CHECK_THROWS_AS(op.pipeline = 256, SizeLimitError);
    CHECK(op.stage == 65535);  // a refused store leaves the old value
    CHECK(sizeof(Op) == 8);

    // The largest placement it admits reads and its last stage is there: 1 rank, 65536 stages, 1 micro-batch.
    const Schedule widest = read_native("ranks 1\nstages 65536\nmicrobatches 1\nrank 0: 65535F0\n", "w.txt");
    CHECK(widest.placement.pipelines[0].stages() == 65536);
    CHECK(widest.ranks[0][0].ops[0].stage == 65535);
    // One more is refused where it is declared, in every reader and by the generators.
    CHECK(input_error([] { read_native("ranks 1\nstages 65537\nmicrobatches 1\nrank 0:\n", "n.txt"); }) ==
          "n.txt:2:8: 65537 stages: a pipeline holds at most 65536");
    CHECK(input_error([] { read_native("ranks 70000\nmicrobatches 1\nrank 0:\n", "n.txt"); }) ==
          "n.txt:3:1: pipeline 0 has 70000 stages: at most 65536 are supported");  // one stage per rank
    CHECK(input_error([] { read_native("ranks 70000\nmicrobatches 2\nplacement bidirectional\nrank 0:\n", "n.txt"); }) ==
          "n.txt:3:1: pipeline 0 has 70000 stages: at most 65536 are supported");
    CHECK(input_error([] { read_torch_csv("0F0,65536B0", "t.csv"); }) ==
          "t.csv:1:5: stage 65536 is past the limit: a pipeline has at most 65536 stages (0..65535)");
    std::string json = R"({"format": "pipeproof-schedule", "ranks": 1, "pipelines": [{"microbatches": 1, "stage_ranks": [)";
    for (int s = 0; s < 65537; ++s) json += s ? ",0" : "0";
    json += R"(]}], "schedule": []})";
    CHECK(input_error([&] { read_json(json, "j.json"); }).find("65537 stages: at most 65536 are supported") != std::string::npos);
    CHECK_THROWS_WITH(find_family("interleaved-1f1b")->generate({40000, 1, 2}),
                      "interleaved-1f1b with 40000 ranks x 2 stages per rank = 80000 stages: a pipeline holds at most 65536");
}
