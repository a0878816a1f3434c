// pipeproof formula FAMILY -P p: each rank's idle time as a piecewise-linear function of the costs, valid for
// every admissible M from M0 on, with the region of cost space of each piece (proofs/formula.hpp).
// Exit: 0 formula derived (periodicity proved), 3 no formula / not proved, 2 bad input.
#include "cli/commands.hpp"
#include "cli/chunk_point.hpp"
#include "cli/common.hpp"
#include "proofs/claim.hpp"
#include "proofs/formula.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct FormulaCommand {
    std::string family;
    int ranks = 0;
    std::vector<std::string> assume;
    bool symbolic_comm = false;
    bool zb_basis = false;
    ChunkInput chunks;
    int chunk_layers = 1;
    bool shared_expert = false;
    std::string op = "pair";
    std::string emit;

    int run() {
        std::string why;
        const auto spec = family_spec(family, ranks, &why);
        if (!spec) throw UsageError(why);
        if (chunks.chunk_costs && *chunks.chunk_costs == "symbolic")
            return run_chunk_formula(family, ranks, chunks.pattern, chunk_layers, shared_expert, op, emit);
        CostRegion region = CostRegion::standard(symbolic_comm);
        if (chunks.given()) {
            // Issue 11: the costs derived from chunk costs, as the ray through that point (cli/chunk_point.hpp).
            const Costs c = chunks.resolve(Schedule{}, false)->costs();
            require_one_pair_cost(family, ranks, ranks, c, "formula");
            region = derived_point_region(c);
        }
        try {
            for (const auto& text : assume)
                for (auto& c : parse_constraints(text)) region.add(std::move(c));
            region.finish();
        } catch (const ClaimError& e) {
            throw UsageError("--assume: " + e.message);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("cost region: ") + e.what());
        }
        const FormulaResult result = derive_formula(*spec, region);
        std::cout << format_formula(result, !zb_basis && region.b_is_i_plus_w);  // I = B - W only where it holds
        return result.missing.empty() && result.proof.verdict == Verdict::Proved ? kOk : kUndecided;
    }
};

}  // namespace

Runner add_formula(CLI::App& app) {
    auto cmd = std::make_shared<FormulaCommand>();
    auto* sub = app.add_subcommand("formula", "each rank's idle time as a piecewise-linear formula in the costs, for every M");
    sub->add_option("family", cmd->family, "schedule family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->required();
    sub->add_option("--assume", cmd->assume, "extra linear assumption on the costs, e.g. 'FB >= B' (repeatable)");
    sub->add_flag("--symbolic-comm", cmd->symbolic_comm, "let comm range over comm >= 0 (default: comm = 0)");
    sub->add_flag("--pytorch-basis", cmd->zb_basis, "write formulas in F, I, W (default: DeepSeek's F, B, W, FB)");
    cmd->chunks.add_options(*sub);
    sub->add_option("--chunk-layers", cmd->chunk_layers, "--chunk-costs symbolic: layers per chunk (default 1)");
    sub->add_flag("--shared-expert", cmd->shared_expert, "--chunk-costs symbolic: include the shared expert's costs");
    sub->add_option("--op", cmd->op, "--chunk-costs symbolic: the slot, F, I, W, B, pair (default) or pair-fi");
    sub->add_option("--emit", cmd->emit, "--chunk-costs symbolic: write the Z3 obligations as SMT-LIB2 here");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
