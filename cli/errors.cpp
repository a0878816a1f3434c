#include "cli/errors.hpp"

#include "cli/common.hpp"
#include "formats/input_error.hpp"
#include "model/costs.hpp"
#include "model/size_budget.hpp"
#include "planner/plan_spec.hpp"
#include "proofs/budget.hpp"
#include "proofs/claim.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <new>
#include <stdexcept>

namespace pp::cli {

int report_exception(std::exception_ptr error) {
    auto say = [](const std::string& where, const std::string& message) {
        std::cerr << where << ": error: " << message << "\n";
    };
    try {
        std::rethrow_exception(error);
    } catch (const InputError& e) {
        say(e.where(), e.what());
        return kBadInput;
    } catch (const UsageError& e) {
        say("pipeproof", e.what());
        return kBadInput;
    } catch (const SizeLimitError& e) {
        say("pipeproof", e.what());
        return kBadInput;
    } catch (const GenerateError& e) {
        say("pipeproof", e.what());
        return kBadInput;
    } catch (const plan::PlanSpecError& e) {
        say("pipeproof", e.what());
        return kBadInput;
    } catch (const CostSyntaxError& e) {
        say("pipeproof", "costs: " + e.message);
        return kBadInput;
    } catch (const ClaimError& e) {
        say("pipeproof", e.message);
        return kBadInput;
    } catch (const SimulationError& e) {
        // A schedule that is not valid (or whose communication cannot run) has no timing: the verdict of `verify`.
        say("pipeproof", e.what());
        return kViolations;
    } catch (const ChunkBestUndecided& e) {
        // --chunk-costs with the best-order pattern ran out of search budget (issue 11): no order, no timing.
        std::cerr << "pipeproof: undecided: " << e.what() << "\n";
        return kUndecided;
    } catch (const budget::Exhausted& e) {
        // prove and refute answer UNKNOWN themselves; this is the net for any other path that checks the budget.
        say("pipeproof", "undecided: " + e.what);
        return kUndecided;
    } catch (const std::bad_alloc&) {
        say("pipeproof", "out of memory: the input is too large for this machine (see --max-ops, README \"Limits\")");
        return kBadInput;
    } catch (const nlohmann::json::exception& e) {
        say("pipeproof", std::string("invalid JSON: ") + e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        // Not foreseen by the code that threw it: still an answer, never a crash (exit 134).
        say("pipeproof", std::string("internal error: ") + e.what() + " (please report this input)");
        return kBadInput;
    } catch (...) {
        say("pipeproof", "internal error: unknown exception (please report this input)");
        return kBadInput;
    }
}

}  // namespace pp::cli
