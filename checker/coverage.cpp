// Op coverage for every M, in the checker's own SMT-LIB2: for each pipeline and stage, the number of times micro-batch
// x occurs as an F (and as a backward, and as a W) in the word's instance with t blocks, written with t and x free,
// must be 1 exactly for 0 <= x < M_p(t), W as often as I; a model of the negation would be a missing or doubled op.
#include "checker/internal.hpp"

#include <fmt/format.h>

#include <map>

namespace pp::check {
namespace {

struct Terms {
    std::vector<std::string> F, backward, I, W;
};

// "is x this op's micro-batch in the instance with t blocks" for an op of the prefix, of block j (any 0 <= j < t)
// or of the suffix.
std::string hit(Part part, long long m, long long delta) {
    switch (part) {
        case Part::Prefix: return fmt::format("(= x {})", m);
        case Part::Suffix: return fmt::format("(= x (+ {} (* {} t)))", m, delta);
        case Part::Block:
            return fmt::format("(and (>= x {0}) (< x (+ {0} (* {1} t))) (= (mod (- x {0}) {1}) 0))", m, delta);
    }
    return "false";
}

std::string count(const std::vector<std::string>& hits) {
    if (hits.empty()) return "0";
    std::string out = "(+ 0";
    for (const auto& h : hits) out += " (ite " + h + " 1 0)";
    return out + ")";
}

}  // namespace

std::string coverage_smt2(const CertificateWord& w, const Placement& base, int& queries) {
    std::map<std::pair<int, int>, Terms> terms;  // (pipeline, stage)
    for (int p = 0; p < base.pipeline_count(); ++p)
        for (int s = 0; s < base.pipelines[p].stages(); ++s) terms[{p, s}];
    auto add = [&](const std::vector<std::vector<Slot>>& part, Part kind) {
        for (const auto& rank : part)
            for (const Slot& slot : rank)
                for (const Op& op : slot) {
                    auto it = terms.find({op.pipeline, op.stage});
                    if (it == terms.end()) reject("coverage", format_op(op) + " names a stage the placement does not have");
                    const std::string h = hit(kind, op.microbatch, w.delta[op.pipeline]);
                    switch (op.kind) {
                        case OpKind::F: it->second.F.push_back(h); break;
                        case OpKind::B: it->second.backward.push_back(h); break;
                        case OpKind::I: it->second.backward.push_back(h), it->second.I.push_back(h); break;
                        case OpKind::W: it->second.W.push_back(h); break;
                    }
                }
    };
    add(w.prefix, Part::Prefix);
    add(w.block, Part::Block);
    add(w.suffix, Part::Suffix);
    std::string out = "; pipeproof-check: op coverage of the word for every t (each check-sat must be unsat)\n"
                      "(set-logic QF_LIA)\n(declare-fun t () Int)\n(declare-fun x () Int)\n(assert (>= t 0))\n";
    queries = 0;
    for (const auto& [key, tm] : terms) {
        const auto [p, s] = key;
        const std::string inside =
            fmt::format("(and (>= x 0) (< x (+ {} (* {} t))))", base.pipelines[p].microbatches, w.delta[p]);
        out += fmt::format("; pipeline {}, stage {}\n(push 1)\n(assert (or (not (= {} (ite {} 1 0))) (not (= {} (ite {} 1 0))) "
                           "(not (= {} {}))))\n(check-sat)\n(pop 1)\n",
                           p, s, count(tm.F), inside, count(tm.backward), inside, count(tm.W), count(tm.I));
        ++queries;
    }
    return out;
}

}  // namespace pp::check
