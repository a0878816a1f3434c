// Issue 10, input hardening: no input crashes the tool, sizes that cannot fit are refused up front with
// an estimate, counts inferred from a file stay within what the file holds, and every command gives the
// verdict of `verify`. Each case below was a crash, a wrong answer or unbounded work before (the issue
// lists them); expected positions and counts are derived by hand from the input text.
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <sstream>

using pp::test::run_cli;
using pp::test::write_temp;

namespace {

// Peak resident memory (KiB) of one pipeproof run, output discarded, and its exit code.
struct Measured {
    int exit_code = -1;
    long max_rss_kib = 0;
};
Measured run_measured(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    std::string cli = PP_CLI_PATH;
    argv.push_back(cli.data());
    std::vector<std::string> copies = args;
    for (auto& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

// The last "N violation(s)" a command printed (its summary line), or -1.
long printed_violations(const std::string& text) {
    const std::regex count(R"((\d+) violations?\b)");
    long last = -1;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), count); it != std::sregex_iterator(); ++it)
        last = std::stol((*it)[1]);
    return last;
}

// Peak memory bounds are for the Release build; AddressSanitizer's shadow memory and quarantine add to them.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kSmallRssKib = 700'000;
#else
constexpr long kSmallRssKib = 150'000;
#endif

const char* kCommsSwap =  // rank 1 receives micro-batch 1 before 0: NCCL pairs messages in posting order
    "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
    "1RECV_F1,1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n";

// 1F1B, P=2, M=2 with a memory limit of 1: rank 0 runs F0 F1 before B0, holding 2 activations.
const char* kOverMemory =
    "ranks 2\nmicrobatches 2\nmemory-limit 1\n"
    "rank 0: 0F0 0F1 0B0 0B1\n"
    "rank 1: 1F0 1B0 1F1 1B1\n";

}  // namespace

TEST_CASE("hardening: a native 'costs' line without items is an error at its end, not a buffer overrun",
          "[hardening][native]") {
    for (const std::string line : {"costs", "costs # x", "costs\t"}) {
        INFO(line);
        const std::string path = write_temp("bare_costs.txt", "ranks 1\nmicrobatches 1\n" + line + "\nrank 0: 0F0 0B0\n");
        const auto r = run_cli("verify " + path);
        CHECK(r.exit_code == 2);
        // Line 3; "costs" ends at column 5, so the missing items are at column 6.
        CHECK_THAT(r.err, Catch::StartsWith(path + ":3:6: error: 'costs' needs KEY=VALUE items"));
    }
}

TEST_CASE("hardening: simulate, show, compare and report give verify's verdict on a send/recv mismatch",
          "[hardening][verdict]") {
    const std::string path = write_temp("swap.csv", kCommsSwap);
    const auto verified = run_cli("verify " + path);
    REQUIRE(verified.exit_code == 1);
    CHECK_THAT(verified.out, Catch::Contains("[comm-mismatch]"));
    const long count = printed_violations(verified.out);
    CHECK(count == 1);
    for (const std::string command : {"simulate", "show", "compare", "report -o /dev/null"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains("[comm-mismatch]"));
        CHECK(printed_violations(r.err) == count);
        CHECK_THAT(r.out, !Catch::Contains("makespan"));  // a schedule that cannot run gets no timing
    }
}

TEST_CASE("hardening: a schedule over its memory limit is timed but marked, and exits 1 everywhere",
          "[hardening][verdict]") {
    const std::string path = write_temp("over_memory.txt", kOverMemory);
    const auto verified = run_cli("verify " + path);
    REQUIRE(verified.exit_code == 1);
    const long count = printed_violations(verified.out);
    CHECK(count == 1);
    // simulate and show still time it (it runs, with more memory), under an INVALID banner.
    for (const std::string command : {"simulate", "show"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.out, Catch::StartsWith("INVALID: 1 violation") && Catch::Contains("[memory-limit]"));
        CHECK(printed_violations(r.out) == count);
        // Hand-timed with F=I=W=1 (B=2): 0F0 0-1, 0F1 1-2, 1F0 1-2, 1B0 2-4, 1F1 4-5, 0B0 4-6, 1B1 5-7,
        // 0B1 7-9.
        CHECK_THAT(r.out, Catch::Contains("makespan 9 "));
    }
    for (const std::string command : {"simulate --json ", "show --json "}) {
        INFO(command);
        const auto json = run_cli(command + path);
        CHECK(json.exit_code == 1);
        const auto j = nlohmann::json::parse(json.out);
        CHECK(j["valid"] == false);
        CHECK(j["violation_count"] == count);
        CHECK(j["violations"][0]["kind"] == "memory-limit");
    }
    for (const std::string command : {"compare", "report -o /dev/null"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path);
        CHECK(r.exit_code == 1);
        CHECK(printed_violations(r.err) == count);
    }
}

TEST_CASE("hardening: violation counts agree between verify and the timing commands", "[hardening][verdict]") {
    // 1F1B P=2 M=40 with rank 1's line emptied: its 40 forwards and 40 backwards are missing (80
    // violations, of which verify lists 20 per kind), and rank 0's 40 backwards wait for them.
    std::string text = "ranks 2\nmicrobatches 40\nrank 0:";
    for (int m = 0; m < 40; ++m) text += " 0F" + std::to_string(m);
    for (int m = 0; m < 40; ++m) text += " 0B" + std::to_string(m);
    text += "\nrank 1:\n";
    const std::string path = write_temp("rank1_empty.txt", text);
    const auto verified = run_cli("verify " + path);
    REQUIRE(verified.exit_code == 1);
    const long count = printed_violations(verified.out);
    CHECK(count >= 80);
    const auto json = run_cli("verify --json " + path);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(static_cast<long>(j["violations"].size() + j["suppressed"].get<size_t>()) == count);
    for (const std::string command : {"simulate", "show", "compare", "report -o /dev/null"}) {
        INFO(command);
        const auto r = run_cli(command + " " + path);
        CHECK(r.exit_code == 1);
        CHECK(printed_violations(r.err) == count);
    }
}

TEST_CASE("hardening: a CSV's inferred counts are bounded by the actions it holds", "[hardening][csv]") {
    // 13 bytes used to mean 10^4 stages x 10^4 micro-batches (20 s, 1.6 GB). Stage 9999 starts at byte 5.
    const std::string path = write_temp("tiny.csv", "0F0,9999W9999");
    const auto r = run_cli("verify " + path);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith(path + ":1:5: error: stage 9999 implies 10000 stages x 10000 micro-batches = "
                                               "10^8 (stage, micro-batch) pairs, but the file has 2 compute actions"));
    // The largest micro-batch is blamed when it dominates: 0F0,0B9999 -> 1 stage x 10000 micro-batches.
    const std::string mb = write_temp("mb.csv", "0F0,0B9999\n");
    const auto m = run_cli("verify " + mb);
    CHECK(m.exit_code == 2);
    CHECK_THAT(m.err, Catch::StartsWith(mb + ":1:7: error: micro-batch 9999 implies 1 stages x 10000 micro-batches"));
    // Fragments up to 1024 pairs read as before: 0F0,0B999 is 1000 pairs, verify reports the missing ops.
    const std::string fragment = write_temp("fragment.csv", "0F0,0B999\n");
    const auto f = run_cli("verify " + fragment);
    CHECK(f.exit_code == 1);
    CHECK_THAT(f.out, Catch::Contains("[missing]"));
    // A cell such as 999999F999999 (was std::bad_alloc, exit 134): past the 65536 stages a pipeline can hold
    // (model/op.hpp), said where the number is; within it, 65535F999999 is still bounded by its actions.
    const std::string big = write_temp("big_cell.csv", "999999F999999\n");
    const auto b = run_cli("simulate " + big);
    CHECK(b.exit_code == 2);
    CHECK_THAT(b.err, Catch::StartsWith(big + ":1:1: error: stage 999999 is past the limit: a pipeline has at most 65536 "
                                              "stages (0..65535)"));
    const std::string wide = write_temp("wide_cell.csv", "65535F999999\n");
    const auto w = run_cli("simulate " + wide);
    CHECK(w.exit_code == 2);
    CHECK_THAT(w.err, Catch::StartsWith(wide + ":1:7: error: micro-batch 999999 implies 65536 stages x 1000000 micro-batches"));
    // At most two pairs per compute action (above 1024): 0F0..0F999, 1F0..1F999 and 0F1999 are 2001 actions
    // for 2 stages x 2000 micro-batches = 4000 pairs <= 4002: read, and verify reports what is missing.
    std::string row;
    for (int m = 0; m < 1000; ++m) row += (m ? "," : "") + std::string("0F") + std::to_string(m) + ",1F" + std::to_string(m);
    const auto p = run_cli("verify " + write_temp("partial.csv", row + ",0F1999\n"));
    CHECK(p.exit_code == 1);
    CHECK_THAT(p.out, Catch::Contains("[missing]"));
    // Without 0F999 and 1F999: 1999 actions for 4000 pairs > 3998.
    const std::string less = write_temp("partial2.csv", row.substr(0, row.rfind(",0F999")) + ",0F1999\n");
    const auto q = run_cli("verify " + less);
    CHECK(q.exit_code == 2);
    CHECK_THAT(q.err, Catch::Contains(":1:") && Catch::Contains("micro-batch 1999 implies 2 stages x 2000 micro-batches = 4000 "
                                                                 "(stage, micro-batch) pairs, but the file has 1999 compute actions"));
}

TEST_CASE("hardening: declared sizes beyond the budget are refused with an estimate", "[hardening][budget]") {
    // Native header: 10^6 ranks (one stage each) x 10^6 micro-batches = 2 x 10^12 ops (was std::bad_alloc).
    const std::string native = write_temp("huge.txt", "ranks 1000000\nmicrobatches 1000000\nrank 0: 0F0\n");
    const auto n = run_cli("verify " + native);
    CHECK(n.exit_code == 2);
    CHECK_THAT(n.err, Catch::StartsWith(native + ":2:14: error: 1000000 stages x 1000000 micro-batches need at least "
                                                 "2 x 10^12 ops, about 256 TB of memory: over the limit of 5 x 10^7 ops"));
    // JSON: the pointer of the micro-batch count.
    const std::string json = write_temp(
        "huge.json", R"({"ranks": 1000, "pipelines": [{"microbatches": 1000000, "stage_ranks": [)" + [] {
            std::string ranks;
            for (int s = 0; s < 1000; ++s) ranks += (s ? "," : "") + std::to_string(s);
            return ranks;
        }() + R"(]}], "schedule": []})");
    const auto j = run_cli("verify " + json);
    CHECK(j.exit_code == 2);
    CHECK_THAT(j.err, Catch::StartsWith(json + ": error: at /pipelines/0/microbatches: 1000 stages x 1000000 "
                                               "micro-batches need at least 2 x 10^9 ops"));
    // Generators: 10^5 x 10^5 was > 9 GB before it was stopped; -P now ends at 65536 (model/op.hpp), and
    // 50000 x 100000 is 5 x 10^9 (stage, micro-batch) pairs: 10^10 + 50000 ops, at 128 bytes each 1.28 TB.
    const auto g = run_cli("generate 1f1b -P 50000 -M 100000 -o /dev/null");
    CHECK(g.exit_code == 2);
    CHECK_THAT(g.err, Catch::Contains("1f1b with 50000 ranks x 100000 micro-batches need at least 1 x 10^10 ops, "
                                      "about 1.3 TB of memory"));
    const auto wide = run_cli("generate 1f1b -P 100000 -M 1 -o /dev/null");
    CHECK(wide.exit_code == 2);
    CHECK_THAT(wide.err, Catch::Contains("--ranks: Value 100000 not in range 1 to 65536"));
    // --max-ops moves the limit both ways, before or after the subcommand.
    CHECK(run_cli("generate 1f1b -P 4 -M 8 -o /dev/null").exit_code == 0);
    const auto tight = run_cli("generate 1f1b -P 4 -M 8 -o /dev/null --max-ops 50");
    CHECK(tight.exit_code == 2);
    CHECK_THAT(tight.err, Catch::Contains("need at least 68 ops") && Catch::Contains("over the limit of 50 ops"));
    CHECK(run_cli("--max-ops 68 generate 1f1b -P 4 -M 8 -o /dev/null").exit_code == 0);
    CHECK(run_cli("verify " + native + " --max-ops 0").exit_code == 2);  // not a limit: a usage error
}

TEST_CASE("hardening: JSON numbers out of range name their JSON pointer", "[hardening][json]") {
    const std::string head = R"({"format": "pipeproof-schedule", "version": 1, "ranks": 1,
 "pipelines": [{"microbatches": 1, "stage_ranks": [0]}], )";
    const std::string ops = R"("schedule": [{"rank": 0, "ops": [{"kind": "F", "stage": 0, "microbatch": 0},
                                  {"kind": "B", "stage": 0, "microbatch": 0}]}]})";
    // 1e400 overflows a double (was an uncaught nlohmann exception, exit 134).
    const std::string inf = write_temp("inf.json", head + R"("costs": {"F": "1", "I": 1e400}, )" + ops);
    const auto a = run_cli("verify " + inf);
    CHECK(a.exit_code == 2);
    CHECK_THAT(a.err, Catch::StartsWith(inf + ": error: at /costs/I: invalid JSON: number overflow parsing '1e400'"));
    // Inside arrays the pointer counts elements: the second op's micro-batch.
    const std::string deep = write_temp("deep.json", head + R"("schedule": [{"rank": 0, "ops": [{"kind": "F", "stage": 0,
        "microbatch": 0}, {"kind": "B", "stage": 0, "microbatch": -1e999}]}]})");
    const auto d = run_cli("verify " + deep);
    CHECK(d.exit_code == 2);
    CHECK_THAT(d.err, Catch::StartsWith(deep + ": error: at /schedule/0/ops/1/microbatch: invalid JSON: number overflow"));
    // 2^64 - 1 used to wrap to -1 and time the schedule with a negative forward (exit 0).
    const std::string wrap = write_temp("wrap.json", head + R"("costs": {"F": 18446744073709551615}, )" + ops);
    const auto w = run_cli("simulate " + wrap);
    CHECK(w.exit_code == 2);
    CHECK_THAT(w.err, Catch::StartsWith(wrap + ": error: at /costs/F: 18446744073709551615 is out of range"));
    // 2^63 - 1 is still a whole number the reader takes.
    const std::string max = write_temp("max.json", head + R"("costs": {"F": 9223372036854775807}, )" + ops);
    CHECK(run_cli("verify " + max).exit_code == 0);
}

TEST_CASE("hardening: bad counts on the command line are usage errors naming the flag", "[hardening][usage]") {
    for (const std::string args : {"simulate 1f1b -P 4 -M -5", "simulate 1f1b -P 0 -M 8", "show 1f1b -P 4 -M 8 -V 0",
                                   "compare 1f1b -P 4 -M 99999999999", "report 1f1b -P 4 -M -1 -o /dev/null",
                                   "sweep -P 4 -M 0", "verify x.csv --stages -2"}) {
        INFO(args);
        const auto r = run_cli(args);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Matches("(.|\n)*--(microbatches|ranks|stages-per-rank|stages)(.|\n)*"));
    }
    // A block number beyond int used to wrap and be accepted.
    const auto block = run_cli("simulate 1f1b -P 4 -M 8 --stage-costs 99999999999:F=1");
    CHECK(block.exit_code == 2);
    CHECK_THAT(block.err, Catch::Contains("--stage-costs: block 99999999999 is out of range"));
}

TEST_CASE("hardening: a --stage-costs block the placement does not have is an error, not ignored", "[hardening][errors]") {
    // 1F1B at P=4 has model blocks 0..3, DualPipeV at P=4 has 0..7.
    for (const std::string args : {"simulate 1f1b -P 4 -M 8 --stage-costs 4:F=2", "show 1f1b -P 4 -M 8 --stage-costs 9:F=2",
                                   "search -P 4 -M 8 --time-limit 5 --quiet --stage-costs 4:F=2",
                                   "compare 1f1b dualpipev -P 4 -M 8 --stage-costs 8:F=2"}) {
        INFO(args);
        const auto r = run_cli(args);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--stage-costs: block") && Catch::Contains("does not exist"));
    }
    // Block 3 exists in both; block 5 only in DualPipeV: compare takes it (1F1B has no such block to change).
    CHECK(run_cli("simulate 1f1b -P 4 -M 8 --stage-costs 3:F=2").exit_code == 0);
    CHECK(run_cli("compare 1f1b dualpipev -P 4 -M 8 --stage-costs 5:F=2").exit_code == 0);
    // The flag is named in a syntax error of a block's costs.
    const auto bad = run_cli("simulate 1f1b -P 4 -M 8 --stage-costs 1:F=-2");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--stage-costs: expected a non-negative number"));
}

TEST_CASE("hardening: every bad input exits 2 with a position from every reading command", "[hardening][errors]") {
    const std::vector<std::pair<std::string, std::string>> inputs = {
        {"bare_costs.txt", "ranks 1\nmicrobatches 1\ncosts\nrank 0: 0F0 0B0\n"},
        {"huge.txt", "ranks 1000000\nmicrobatches 1000000\nrank 0: 0F0\n"},
        {"tiny.csv", "0F0,9999W9999"},
        {"nul.csv", std::string("0F0,\0", 5)},
        {"inf.json", R"({"ranks": 1e400})"},
        {"trunc.json", R"({"ranks": 1, "pipelines": [)"},
    };
    for (const auto& [name, text] : inputs) {
        const std::string path = write_temp(name, text);
        for (const std::string command : {"verify", "simulate", "show", "convert", "compare", "report -o /dev/null"}) {
            INFO(command << " " << name);
            const auto r = run_cli(command + " " + path);
            CHECK(r.exit_code == 2);
            CHECK_THAT(r.err, Catch::StartsWith(path + ":"));
            CHECK_THAT(r.err, Catch::Contains("error:"));
        }
    }
}

TEST_CASE("hardening: a directory or an endless file is not read forever", "[hardening][errors]") {
    const std::string dir = pp::test::scratch_dir().string();
    const auto d = run_cli("verify " + dir);
    CHECK(d.exit_code == 2);
    CHECK_THAT(d.err, Catch::StartsWith(dir + ": error: is a directory"));
    // /dev/zero never ends: the reader stops at its first chunk (a NUL byte), and at 2 GiB for any file.
    const auto z = run_cli("verify --format native /dev/zero");
    CHECK(z.exit_code == 2);
    CHECK_THAT(z.err, Catch::StartsWith("/dev/zero:1:1: error: a NUL byte"));
}

TEST_CASE("hardening: a plan config file reports bad lines at their position", "[hardening][errors]") {
    const std::string bad_value = write_temp("plan.cfg", "preset = dense-70b\n\n# a comment\ngpus = lots\n");
    const auto v = run_cli("plan --config " + bad_value);
    CHECK(v.exit_code == 2);
    CHECK_THAT(v.err, Catch::StartsWith(bad_value + ":4:1: error: gpus: 'lots' is not"));
    const std::string no_equals = write_temp("plan2.cfg", "preset = dense-70b\ngpus 64\n");
    const auto e = run_cli("plan --config " + no_equals);
    CHECK(e.exit_code == 2);
    CHECK_THAT(e.err, Catch::StartsWith(no_equals + ":2:1: error: expected 'key = value'"));
}

TEST_CASE("hardening: blank lines cost no memory", "[hardening][memory]") {
    // 20 million blank lines (20 MB) before a valid schedule: the reader used to keep a 24-byte record per
    // line (about 0.8 GB peak). Now the text itself is most of the peak.
    std::string text(20'000'000, '\n');
    text += "ranks 1\nmicrobatches 1\nrank 0: 0F0 0B0\n";
    const std::string native = write_temp("blank.txt", text);
    const Measured n = run_measured({"verify", native});
    CHECK(n.exit_code == 0);
    CHECK(n.max_rss_kib < kSmallRssKib);
    // A CSV's trailing blank lines (an editor's final newlines) are not ranks and cost nothing either.
    const std::string csv = write_temp("blank.csv", "0F0,0B0" + std::string(20'000'000, '\n'));
    const Measured c = run_measured({"verify", csv});
    CHECK(c.exit_code == 0);
    CHECK(c.max_rss_kib < kSmallRssKib);
    // Line numbers after them are right: the error is on line 20,000,004.
    const std::string bad = write_temp("blank_bad.txt", std::string(20'000'000, '\n') + "ranks 1\nmicrobatches 1\ncosts\n");
    const auto r = run_cli("verify " + bad);
    CHECK_THAT(r.err, Catch::StartsWith(bad + ":20000003:6: error:"));
}

TEST_CASE("hardening: sweep --time-limit answers UNKNOWN for what it did not reach", "[hardening][sweep]") {
    const auto r = run_cli("sweep -P 2 -M 2,4,6,8,10,12 --time-limit 0.01 --mode compare");
    // compare needs no solver, but 10 ms is not enough for six instances' process of reading and timing all
    // the library's schedules... unless the machine is very fast: then every line is "ok" and exit 0.
    std::istringstream in(r.out);
    size_t lines = 0, unknown = 0;
    for (std::string line; std::getline(in, line); ++lines) {
        const auto j = nlohmann::json::parse(line);
        if (j["status"] == "unknown") {
            ++unknown;
            CHECK_THAT(j["reason"].get<std::string>(), Catch::Contains("not reached"));
        }
    }
    CHECK(lines == 6);
    CHECK(r.exit_code == (unknown ? 3 : 0));
    // A limit that has run out before the first instance: every instance is UNKNOWN, exit 3.
    const auto none = run_cli("sweep -P 2 -M 2,4 --time-limit 1e-9");
    CHECK(none.exit_code == 3);
    CHECK(std::count(none.out.begin(), none.out.end(), '\n') == 2);
    CHECK_THAT(none.out, Catch::Contains("\"status\":\"unknown\""));
    // Bad grid values are bad input: exit 2, with the line saying why.
    const auto bad = run_cli("sweep -P 2 -M 2 --costs F=x --time-limit 10");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.out, Catch::Contains("\"status\":\"error\""));
}

TEST_CASE("hardening: --json never aborts on bytes that are not UTF-8, and keeps the exit code", "[hardening][json]") {
    // Every one of these ended in std::terminate (exit 134): nlohmann's dump throws on invalid UTF-8, and the
    // error handler printing the document was where it threw. Invalid bytes are now written as U+FFFD.
    const std::string ok = write_temp("utf8_ok.txt", "ranks 1\nmicrobatches 1\nrank 0: 0F0 0B0\n");
    const std::string replacement = "\xEF\xBF\xBD";
    auto error_message = [](const std::string& out) {
        const auto doc = nlohmann::json::parse(out);  // throws, failing the test, if it is not JSON
        REQUIRE(doc["errors"].size() >= 1);
        return doc["errors"][0]["message"].get<std::string>();
    };
    {
        const auto r = run_cli("simulate " + ok + " --json --costs 'F=\xff'");
        CHECK(r.exit_code == 2);
        CHECK_THAT(error_message(r.out), Catch::Contains(replacement));
    }
    {
        const auto r = run_cli("verify --json '\xff'");  // an unknown family name, echoed
        CHECK(r.exit_code == 2);
        CHECK_THAT(error_message(r.out), Catch::Contains(replacement));
    }
    {
        // A half character from the input used to be quoted alone; the whole one is quoted now.
        const std::string bad = write_temp("utf8_half.txt", "ranks 1\nmicrobatches 1\nrank 0: 0F0 \xC3\xA9 0B0\n");
        const auto r = run_cli("verify --json " + bad);
        CHECK(r.exit_code == 2);
        CHECK(error_message(r.out) == "expected a stage number (digits), got '\xC3\xA9'");
    }
    {
        // A valid schedule under a file name that is not UTF-8: exit 0 with and without --json (was 2 with it).
        const std::string odd = write_temp("odd\xff.txt", "ranks 1\nmicrobatches 1\nrank 0: 0F0 0B0\n");
        CHECK(run_cli("verify '" + odd + "'").exit_code == 0);
        const auto r = run_cli("verify --json '" + odd + "'");
        CHECK(r.exit_code == 0);
        CHECK(nlohmann::json::parse(r.out)["valid"] == true);
    }
}

TEST_CASE("hardening: convert to PyTorch's CSV refuses to drop costs and memory limit unless --drop names them", "[hardening][csv][issue30]") {
    // The native file exceeds its memory limit (exit 1); its CSV alone, without a word, verified clean.
    const std::string native = write_temp("drops.txt",
                                          "ranks 2\nmicrobatches 2\ncosts F=2 I=1 W=1 comm=1/3\nmemory-limit 1\n"
                                          "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n");
    CHECK(run_cli("verify " + native).exit_code == 1);
    const std::string csv = (pp::test::scratch_dir() / "drops.csv").string();
    const auto refused = run_cli("convert " + native + " -o " + csv);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("would lose the costs (--drop costs); the memory limit 1 (--drop memory)"));
    CHECK_FALSE(std::filesystem::exists(csv));
    CHECK(run_cli("convert " + native + " -o " + csv + " --drop costs").exit_code == 2);  // the memory limit still
    const auto c = run_cli("convert " + native + " -o " + csv + " --drop costs,memory");
    CHECK(c.exit_code == 0);
    CHECK_THAT(c.err, Catch::Contains("warning: " + csv + ": the PyTorch CSV file does not keep the costs (--drop costs); the memory limit 1"));
    CHECK(run_cli("verify " + csv).exit_code == 0);             // what the warning is about
    CHECK(run_cli("verify " + csv + " --memory-limit 1").exit_code == 1);  // given again, the same verdict
    // Nothing to drop, nothing said; JSON keeps both.
    const auto g = run_cli("generate 1f1b -P 2 -M 2 -o " + csv);
    CHECK(g.exit_code == 0);
    CHECK(g.err.empty());
    const std::string json = (pp::test::scratch_dir() / "drops.json").string();
    const auto j = run_cli("convert " + native + " -o " + json);
    CHECK(j.err.empty());
    CHECK(run_cli("verify " + json).exit_code == 1);
}
