// pipeproof formula FAMILY -P p: each rank's idle time as a piecewise-linear function of the costs, valid for
// every admissible M from M0 on, with the region of cost space of each piece (proofs/formula.hpp).
// Exit: 0 formula derived (periodicity proved), 3 no formula / not proved, 2 bad input.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "proofs/claim.hpp"
#include "proofs/formula.hpp"

#include <iostream>
#include <memory>

namespace pp::cli {
namespace {

struct FormulaCommand {
    std::string family;
    int ranks = 0;
    std::optional<int> stages_per_rank;
    std::vector<std::string> assume;
    bool symbolic_comm = false;
    bool zb_basis = false;

    int run() {
        std::string why;
        const auto spec = family_spec(family, ranks, &why, stages_per_rank);
        if (!spec) throw UsageError(why);
        CostRegion region = CostRegion::standard(symbolic_comm);
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
        std::cout << format_formula(result, !zb_basis);
        return result.missing.empty() && result.proof.verdict == Verdict::Proved ? kOk : kUndecided;
    }
};

}  // namespace

Runner add_formula(CLI::App& app) {
    auto cmd = std::make_shared<FormulaCommand>();
    auto* sub = app.add_subcommand("formula", "each rank's idle time as a piecewise-linear formula in the costs, for every M");
    sub->add_option("family", cmd->family, "schedule family (see `pipeproof list`)")->required();
    sub->add_option("-P,--ranks", cmd->ranks, "ranks")->required();
    sub->add_option("-V,--stages-per-rank", cmd->stages_per_rank,
                    "stages per rank (interleaved-1f1b, zb1p, looped-bfs; default 2)");
    sub->add_option("--assume", cmd->assume, "extra linear assumption on the costs, e.g. 'FB >= B' (repeatable)");
    sub->add_flag("--symbolic-comm", cmd->symbolic_comm, "let comm range over comm >= 0 (default: comm = 0)");
    sub->add_flag("--pytorch-basis", cmd->zb_basis, "write formulas in F, I, W (default: DeepSeek's F, B, W, FB)");
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
