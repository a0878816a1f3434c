// Issue 14 item 3: each field of a --json document has one JSON type whatever its value. A quantity is
// always a JSON number (an approximation when it is not a short decimal) and its exact text is under the
// "exact" object next to it, with the same key -- never a number for 33 and a string for "77/3".
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <regex>
#include <string>
#include <vector>

using pp::test::run_cli;

namespace {

// JSON's own types: an integer and a float are both a number.
std::string type_of(const nlohmann::json& j) {
    if (j.is_number()) return "number";
    return j.type_name();
}

// Walks two documents of the same command side by side: every key both have has the same JSON type in both,
// and every element of an array the type of the other document's first element (arrays are homogeneous).
void same_types(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, int& compared) {
    INFO(path << ": " << a.dump().substr(0, 200) << " vs " << b.dump().substr(0, 200));
    REQUIRE(type_of(a) == type_of(b));
    ++compared;
    if (a.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it)
            if (b.contains(it.key())) same_types(it.value(), b.at(it.key()), path + "/" + it.key(), compared);
    } else if (a.is_array() && !a.empty() && !b.empty()) {
        for (size_t k = 0; k < a.size(); ++k) same_types(a[k], b[k < b.size() ? k : 0], path + "/" + std::to_string(k), compared);
    }
}

// Outside "exact" objects no string is an exact number ("7/3", "0.5", "12"): quantities are numbers. A
// refute counterexample's "values" are the claim's sub-expressions as evaluated (exact text, always a string).
void no_number_strings(const nlohmann::json& j, const std::string& path) {
    static const std::regex number_text(R"(-?[0-9]+(\.[0-9]+)?(/[0-9]+)?)");
    if (j.is_string()) {
        INFO(path << " = " << j.get<std::string>());
        CHECK_FALSE(std::regex_match(j.get<std::string>(), number_text));
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "exact" || it.key() == "values") {
                continue;
            }
            no_number_strings(it.value(), path + "/" + it.key());
        }
        // Each number with an exact twin: the twin is a string that reads as the same value.
        if (j.contains("exact") && j.at("exact").is_object())
            for (auto it = j.at("exact").begin(); it != j.at("exact").end(); ++it) {
                INFO(path << "/exact/" << it.key());
                CHECK(j.contains(it.key()));
                if (it.value().is_string()) CHECK(j.at(it.key()).is_number());
            }
    } else if (j.is_array()) {
        for (size_t k = 0; k < j.size(); ++k) no_number_strings(j[k], path + "/" + std::to_string(k));
    }
}

nlohmann::json document(const std::string& command) {
    const auto r = run_cli(command);
    INFO(command << "\n" << r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("json types: the same fields have the same types with whole and with non-terminating costs", "[cli][json]") {
    const std::string whole = "F=1,I=2,W=1", thirds = "F=1/3,I=2/7,W=1/11";
    const std::vector<std::string> commands = {
        "simulate 1f1b -P 4 -M 8 --ops --json --costs ",
        "show zb-h1 -P 4 -M 8 --json --costs ",
        "compare 1f1b zb-h1 dualpipe -P 4 -M 8 --tokens-per-microbatch 4096 --time-unit 0.01 --json --costs ",
        "search -P 2 -M 2 --placement 1f1b --json --costs ",
        "prove 1f1b -P 3 --json --costs ",
        "refute --claim 'bubble <= (P-1)*F' 1f1b -P 2..3 -M 4 --json --costs ",
    };
    for (const auto& command : commands) {
        INFO(command);
        const auto a = document(command + whole), b = document(command + thirds);
        int compared = 0;
        same_types(a, b, "", compared);
        CHECK(compared > 10);
        no_number_strings(a, "");
        no_number_strings(b, "");
    }
}

TEST_CASE("json types: a non-terminating value is a number, its exact text under exact", "[cli][json]") {
    // 1F1B P = 4, M = 8, F = 1/3, B = 2: makespan (M + P - 1)(F + B) = 11 x 7/3 = 77/3, bubble fraction
    // (P - 1) / (M + P - 1) = 3/11 (each rank idles (P - 1)(F + B)).
    const auto j = document("simulate 1f1b -P 4 -M 8 --costs F=1/3,B=2 --json");
    CHECK(j["makespan"].is_number_float());
    CHECK(j["makespan"].get<double>() == Approx(77.0 / 3));
    CHECK(j["exact"]["makespan"] == "77/3");
    CHECK(j["bubble_fraction"].get<double>() == Approx(3.0 / 11));
    CHECK(j["exact"]["bubble_fraction"] == "3/11");
    CHECK(j["per_rank"][0]["exact"]["idle"] == "7");  // (P - 1)(F + B) = 3 x 7/3
    CHECK(j["per_rank"][0]["idle"] == 7);
}
