#include "cli/errors.hpp"

#include "cli/common.hpp"
#include "cli/report.hpp"
#include "formats/input_error.hpp"
#include "formats/json_text.hpp"
#include "model/costs.hpp"
#include "model/size_budget.hpp"
#include "planner/plan_spec.hpp"
#include "proofs/budget.hpp"
#include "proofs/claim.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>

namespace pp::cli {

namespace {
bool g_json_errors = false;
}  // namespace

bool wants_json(int argc, char** argv) {
    bool subcommand_seen = false;
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--") == 0) return false;  // what follows is a positional, not a flag
        if (std::strcmp(argv[k], "--json") == 0) return true;
        if (std::strcmp(argv[k], "--max-ops") == 0) {  // the one top-level option with a value
            ++k;
            continue;
        }
        if (argv[k][0] == '-' || subcommand_seen) continue;
        subcommand_seen = true;  // the first word is the subcommand: sweep always writes JSON
        if (std::strcmp(argv[k], "sweep") == 0) return true;
    }
    return false;
}

void set_json_errors(bool on) { g_json_errors = on; }
bool json_errors() { return g_json_errors; }

nlohmann::json error_json(int exit_code, const std::vector<ErrorEntry>& errors) {
    const char* status = exit_code == kViolations ? "invalid" : exit_code == kUndecided ? "unknown" : "error";
    nlohmann::json list = nlohmann::json::array();
    for (const auto& e : errors) {
        nlohmann::json j = e.extra;
        j["kind"] = e.kind;
        j["message"] = e.message;
        j["file"] = e.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.file);
        j["line"] = e.line > 0 ? nlohmann::json(e.line) : nlohmann::json(nullptr);
        j["column"] = e.column > 0 ? nlohmann::json(e.column) : nlohmann::json(nullptr);
        list.push_back(std::move(j));
    }
    // An invalid schedule's findings sit where `verify --json` puts them; "errors" is for what kept a command from
    // answering (bad input, or an undecided one).
    if (exit_code == kViolations)
        return {{"status", status}, {"exit_code", exit_code}, {"valid", false}, {"violations", list}, {"violation_count", list.size()}};
    return {{"status", status}, {"exit_code", exit_code}, {"errors", list}};
}

void print_error(int exit_code, const std::vector<ErrorEntry>& errors, const std::string& text) {
    std::cerr << text;
    if (!g_json_errors) return;
    // Whatever a command printed before it failed is flushed first; the document is the last thing on stdout.
    std::cout << json_text(error_json(exit_code, errors), 2) << "\n" << std::flush;
}

namespace {

int say(int code, const std::string& kind, const std::string& message) {
    print_error(code, {{kind, message}}, "pipeproof: error: " + message + "\n");
    return code;
}

}  // namespace

int report_exception(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (const InputError& e) {
        print_error(kBadInput, {{"input", e.what(), e.file, e.line, e.column}}, e.where() + ": error: " + e.what() + "\n");
        return kBadInput;
    } catch (const UsageError& e) {
        return say(kBadInput, "usage", e.what());
    } catch (const SizeLimitError& e) {
        return say(kBadInput, "size-limit", e.what());
    } catch (const GenerateError& e) {
        return say(kBadInput, "generate", e.what());
    } catch (const plan::PlanSpecError& e) {
        return say(kBadInput, "plan", e.what());
    } catch (const CostSyntaxError& e) {
        return say(kBadInput, "costs", "costs: " + e.message);
    } catch (const ClaimError& e) {
        return say(kBadInput, "claim", e.message);
    } catch (const InvalidScheduleError& e) {
        // A schedule that is not valid has no timing: the verdict of `verify`, with its violations.
        std::vector<ErrorEntry> entries;
        for (const auto& v : e.violations) {
            ErrorEntry entry{v.value("kind", "violation"), v.value("message", ""), e.file, v.value("line", 0), v.value("column", 0), v};
            for (const char* key : {"kind", "message", "line", "column"}) entry.extra.erase(key);
            entries.push_back(std::move(entry));
        }
        if (entries.empty()) entries.push_back({"invalid", e.what(), e.file});
        print_error(kViolations, entries, std::string("pipeproof: error: ") + e.what() + "\n");
        return kViolations;
    } catch (const SimulationError& e) {
        // A schedule that cannot be timed (or whose communication cannot run): the verdict of `verify`.
        return say(kViolations, "invalid", e.what());
    } catch (const UndecidedError& e) {
        print_error(kUndecided, {{"undecided", e.what()}}, std::string("pipeproof: undecided: ") + e.what() + "\n");
        return kUndecided;
    } catch (const ChunkBestUndecided& e) {
        // --chunk-costs with the best-order pattern ran out of search budget (issue 11): no order, no timing.
        print_error(kUndecided, {{"undecided", e.what()}}, std::string("pipeproof: undecided: ") + e.what() + "\n");
        return kUndecided;
    } catch (const budget::Exhausted& e) {
        // prove and refute answer UNKNOWN themselves; this is the net for any other path that checks the budget.
        return say(kUndecided, "undecided", "undecided: " + e.what);
    } catch (const std::bad_alloc&) {
        return say(kBadInput, "out-of-memory", "out of memory: the input is too large for this machine (see --max-ops, README \"Input limits\")");
    } catch (const nlohmann::json::exception& e) {
        return say(kBadInput, "input", std::string("invalid JSON: ") + e.what());
    } catch (const std::exception& e) {
        // Not foreseen by the code that threw it: still an answer, never a crash (exit 134).
        return say(kBadInput, "internal", std::string("internal error: ") + e.what() + " (please report this input)");
    } catch (...) {
        return say(kBadInput, "internal", "internal error: unknown exception (please report this input)");
    }
}

}  // namespace pp::cli
