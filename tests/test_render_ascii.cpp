// The ASCII timeline: labels whole, a round scale, which instance it is and what lower case means
// (issue 14, item 8). Expectations are properties of the text, checked against the schedule.
#include "cli_runner.hpp"
#include "render/ascii_gantt.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cctype>
#include <sstream>

using namespace pp;

namespace {

std::string chart(const std::string& family, int P, int M, const char* costs, int width = 200) {
    const Schedule s = find_family(family)->generate({P, M, std::nullopt});
    GanttOptions options;
    options.max_width = width;
    return ascii_gantt(s, simulate(s, parse_costs(costs)), options);
}

std::string rank_row(const std::string& text, int rank) {
    std::istringstream in(text);
    std::string line;
    const std::string prefix = "rank " + std::to_string(rank);
    while (std::getline(in, line))
        if (line.rfind(prefix + " ", 0) == 0) return line;
    return "";
}

// The "1 column = X time units" value, as text.
std::string scale_of(const std::string& text) {
    const std::string key = "1 column = ";
    const auto at = text.find(key);
    if (at == std::string::npos) return "";
    const auto end = text.find(' ', at + key.size());
    return text.substr(at + key.size(), end - at - key.size());
}

bool is_round(const std::string& value) {
    // 1, 2, 25 or 5 after dropping the decimal point and leading/trailing zeros (0.25, 2.5, 0.002, 50, ...).
    std::string digits;
    for (char c : value)
        if (c != '.') digits += c;
    while (!digits.empty() && digits.front() == '0') digits.erase(digits.begin());
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    return digits == "1" || digits == "2" || digits == "25" || digits == "5";
}

}  // namespace

TEST_CASE("ascii: every DualPipe pair label is whole, and the scale is round", "[render][ascii]") {
    const Schedule s = find_family("dualpipe")->generate({4, 8, std::nullopt});
    const std::string text = chart("dualpipe", 4, 8, "F=1,I=1,W=1,FB=3");
    for (int r = 0; r < 4; ++r) {
        const std::string row = rank_row(text, r);
        for (const Slot& slot : s.ranks[r]) {
            if (!slot.is_pair()) continue;
            // Upper case for pipeline 0, lower case for pipeline 1 (DualPipe's reverse direction).
            auto label = [](const Op& op) {
                char letter = kind_letter(op.kind);
                if (op.pipeline == 1) letter = static_cast<char>(std::tolower(letter));
                return fmt::format("{}{}", letter, op.microbatch);
            };
            const std::string whole = fmt::format("{{{}+{}", label(slot.ops[0]), label(slot.ops[1]));
            INFO("rank " << r << " " << format_slot(slot) << " in " << row);
            CHECK(row.find(whole) != std::string::npos);
        }
    }
    CHECK(is_round(scale_of(text)));
    CHECK(text.find("only the op letter") == std::string::npos);
    CHECK(text.find("lower case = pipeline 1 (the reverse direction: it enters at rank 3)") != std::string::npos);
}

TEST_CASE("ascii: round scales at awkward costs, a V shape says what lower case is, 1F1B says nothing", "[render][ascii]") {
    for (const char* costs : {"F=1,I=1,W=1", "F=7/3,I=1.1,W=0.9", "F=1000,I=2000,W=3000", "F=0.001,I=0.002,W=0.001"}) {
        INFO(costs);
        CHECK(is_round(scale_of(chart("1f1b", 4, 8, costs))));
        CHECK(is_round(scale_of(chart("zbv", 4, 8, costs))));
    }
    CHECK(chart("zbv", 4, 8, "F=1,I=1,W=1").find("lower case = the rank's 2nd (4th, ...) stage") != std::string::npos);
    CHECK(chart("1f1b", 4, 8, "F=1,I=1,W=1").find("lower case") == std::string::npos);
}

TEST_CASE("ascii: too narrow a width cuts labels to their letter and says so", "[render][ascii]") {
    const std::string text = chart("dualpipe", 4, 8, "F=1,I=1,W=1,FB=3", 40);
    CHECK(text.find("boxes too narrow for their label show only the op letter") != std::string::npos);
    CHECK(is_round(scale_of(text)));
}

TEST_CASE("ascii: show and refute say which instance they draw", "[render][ascii][cli]") {
    const auto shown = pp::test::run_cli("show dualpipe -P 4 -M 8");
    REQUIRE(shown.exit_code == 0);
    CHECK(shown.out.find("dualpipe(P=4,M=8): 4 ranks, M = 8") != std::string::npos);
    const auto refuted = pp::test::run_cli("refute --claim 'bubble == (P-1)*F' 1f1b -P 2..3");
    REQUIRE(refuted.exit_code == 1);
    CHECK(refuted.out.find("counterexample timeline: 1f1b, P = 2, M = ") != std::string::npos);
}
