// The claim of a certificate and the obligations it names (model/certificate.hpp): the phases fill the word, the
// potentials, the window and the peaks as they establish them; what the proof as a whole proved is added here.
#include "proofs/prove.hpp"
#include "proofs/prover.hpp"
#include "proofs/smt.hpp"
#include "schedules/registry.hpp"

#include <filesystem>

namespace pp {
namespace {

std::vector<CertificateConstraint> constraints_of(const CostRegion& region) {
    std::vector<CertificateConstraint> out;
    for (const CostConstraint& k : region.constraints)
        out.push_back({k.a, k.b, k.rel == CostConstraint::Eq ? "=" : k.rel == CostConstraint::Gt ? ">" : ">="});
    return out;
}

std::vector<CertificateForm> forms_of(const MaxPoly& poly) {
    std::vector<CertificateForm> out;
    for (const LinForm& f : poly.forms) out.push_back(f.c);
    return out;
}

// The bubble at symbolic costs: its forms, the early ones, and a point where the bubble just below M0 differs
// from it (Z3: the two are not equal on the region), which shows to the checker that M0 is the least.
std::optional<CertificateBubble> symbolic_bubble_of(const ProofResult& result, const FamilySpec& family) {
    CertificateBubble b;
    b.value_forms = forms_of(*result.bubble_symbolic);
    b.from_m = result.constant_from_m;
    for (size_t k = 0; k < result.early_symbolic.size(); ++k)
        b.early_forms.emplace_back(family.m0 + family.step * static_cast<int>(k), forms_of(result.early_symbolic[k]));
    if (!result.early_symbolic.empty()) {
        const auto out = smt::equal_on_region(result.early_symbolic.back(), *result.bubble_symbolic, LinForm{},
                                              *result.region, "the bubble below M0");
        if (out.result == z3::sat && out.witness) b.differs_at = *out.witness;
    }
    return b;
}

}  // namespace

Certificate finish_certificate(const ProofResult& result, const FamilySpec& family, const ProveOptions& options,
                               const std::string& dir) {
    Certificate c = result.certificate;
    c.family = family.name;
    c.ranks = family.ranks;
    c.stages_per_rank = family.stages_per_rank;
    c.group_size = family.group_size;
    if (family_takes_segments(family.name)) c.segments = family.segments;  // k = 1 too: the generator's default is 2
    c.family_m0 = family.m0;
    c.family_step = family.step;
    c.property = property_name(options.property);
    // Only a bubble statement is timed; the others are about the dependency graph whatever --model says.
    c.timing_model = timing_model_name(options.property == Property::BubbleConstant ? options.model : TimingModel::Dataflow);
    c.costs = options.costs;
    if (!options.costs) {
        const CostRegion region = options.region ? *options.region : CostRegion::standard(false);
        c.region = region.describe();
        c.region_constraints = constraints_of(region);
        CostRegion finished = region;
        if (finished.rays.empty()) finished.finish();
        if (const auto inside = region_point(finished, {})) c.region_point = *inside;
    }
    c.activations = options.activations;
    const ScheduleFamily* generator = find_family(family.name);
    c.ordered_for_costs = generator && generator->orders_for_costs && options.costs;
    // Without --costs such a family is ordered for its default costs (v-zb: F = I = W = 1, comm = 0); a statement
    // that does not time (memory, deadlock, dependencies) records them, so that the checker generates that order.
    if (generator && generator->orders_for_costs && !options.costs && options.property != Property::BubbleConstant) {
        c.costs = Costs{};
        c.ordered_for_costs = true;
    }
    if (c.ordered_for_costs && !(options.activations == ActivationModel{})) c.ordered_for_sizes = options.activations;
    c.verdict = verdict_name(result.verdict);
    c.statement = result.summary;
    if (c.structure_lemma.empty()) c.structure_lemma = family.structure_lemma;
    if (options.property == Property::BubbleConstant && result.bubble_exact) {
        CertificateBubble b;
        b.value = *result.bubble_exact;
        b.from_m = result.constant_from_m;
        for (size_t k = 0; k < result.early_exact.size(); ++k)
            b.early.emplace_back(family.m0 + family.step * static_cast<int>(k), result.early_exact[k]);
        c.bubble = std::move(b);
    }
    if (options.property == Property::BubbleConstant && result.bubble_symbolic && result.region)
        c.bubble = symbolic_bubble_of(result, family);
    // At exact costs the checker re-derives the window by its own simulation: the longest-path equations of it
    // (window.smt2, for a stock z3) would only repeat that, at a solver's cost.
    for (const Obligation& o : result.obligations)
        if (!o.file.empty() && !(options.costs && o.name == "periodic-window")) {
            const std::filesystem::path file(o.file);
            c.obligations.push_back({o.name, o.statement, file.lexically_relative(dir).generic_string()});
        }
    return c;
}

}  // namespace pp
