#include "proofs/chunk_refute.hpp"

#include "proofs/claim.hpp"
#include "schedules/registry.hpp"
#include "verifier/chunk_derive.hpp"
#include "verifier/simulate.hpp"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <memory>

namespace pp {
namespace {

struct Values {
    std::map<std::string, Rational> named;
};

// A claim over chunk quantities, parsed here (proofs/claim.hpp's grammar without function calls; its parser
// knows only the schedule-level names):
//   or := and ("||" and)* ; and := not ("&&" not)* ; not := "!" not | cmp
//   cmp := sum [("==" | "!=" | "<=" | ">=" | "<" | ">") sum] ; sum := prod (("+" | "-") prod)*
//   prod := unary (("*" | "/") unary)* ; unary := "-" unary | NUMBER | NAME | "(" or ")"
struct Node {
    enum Kind { Number, Name, Neg, Add, Sub, Mul, Div, Eq, Ne, Le, Ge, Lt, Gt, And, Or, Not } kind = Number;
    Rational value{0};
    std::string name;
    std::vector<std::shared_ptr<Node>> args;
};
using NodePtr = std::shared_ptr<Node>;

class Parser {
public:
    explicit Parser(const std::string& text) : t_(text) {}
    NodePtr parse() {
        NodePtr n = disjunction();
        skip();
        if (i_ != t_.size()) fail("unexpected '" + t_.substr(i_, 1) + "'");
        return n;
    }

private:
    const std::string& t_;
    size_t i_ = 0;
    [[noreturn]] void fail(const std::string& m) const { throw ClaimError{m + " at character " + std::to_string(i_ + 1), i_}; }
    void skip() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
    }
    bool eat(const char* token) {
        skip();
        const std::string tok(token);
        if (t_.compare(i_, tok.size(), tok) != 0) return false;
        // '<' must not eat the '<' of '<=', '!' not the '!' of '!='
        if ((tok == "<" || tok == ">" || tok == "!") && i_ + 1 < t_.size() && t_[i_ + 1] == '=') return false;
        i_ += tok.size();
        return true;
    }
    static NodePtr make(Node::Kind k, NodePtr a, NodePtr b = nullptr) {
        auto n = std::make_shared<Node>();
        n->kind = k;
        n->args.push_back(std::move(a));
        if (b) n->args.push_back(std::move(b));
        return n;
    }
    NodePtr disjunction() {
        NodePtr n = conjunction();
        while (eat("||")) n = make(Node::Or, n, conjunction());
        return n;
    }
    NodePtr conjunction() {
        NodePtr n = negation();
        while (eat("&&")) n = make(Node::And, n, negation());
        return n;
    }
    NodePtr negation() {
        if (eat("!")) return make(Node::Not, negation());
        return comparison();
    }
    NodePtr comparison() {
        NodePtr a = sum();
        const std::pair<const char*, Node::Kind> ops[] = {{"==", Node::Eq}, {"!=", Node::Ne}, {"<=", Node::Le},
                                                          {">=", Node::Ge}, {"<", Node::Lt},  {">", Node::Gt}};
        for (const auto& [tok, kind] : ops)
            if (eat(tok)) return make(kind, a, sum());
        return a;
    }
    NodePtr sum() {
        NodePtr n = product();
        for (;;) {
            if (eat("+")) n = make(Node::Add, n, product());
            else if (eat("-")) n = make(Node::Sub, n, product());
            else return n;
        }
    }
    NodePtr product() {
        NodePtr n = unary();
        for (;;) {
            if (eat("*")) n = make(Node::Mul, n, unary());
            else if (eat("/")) n = make(Node::Div, n, unary());
            else return n;
        }
    }
    NodePtr unary() {
        if (eat("-")) return make(Node::Neg, unary());
        skip();
        if (eat("(")) {
            NodePtr n = disjunction();
            if (!eat(")")) fail("expected ')'");
            return n;
        }
        auto n = std::make_shared<Node>();
        const size_t start = i_;
        if (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) {
            while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) ++i_;
            const auto v = parse_rational(t_.substr(start, i_ - start));
            if (!v) fail("bad number");
            n->value = *v;
            return n;
        }
        while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) ++i_;
        if (i_ == start) fail("expected a number or a name");
        n->kind = Node::Name;
        n->name = t_.substr(start, i_ - start);
        return n;
    }
};

Rational number(const NodePtr& node, const Values& v);

bool truth(const NodePtr& node, const Values& v) {
    switch (node->kind) {
        case Node::Not: return !truth(node->args[0], v);
        case Node::And: return truth(node->args[0], v) && truth(node->args[1], v);
        case Node::Or: return truth(node->args[0], v) || truth(node->args[1], v);
        case Node::Eq: return number(node->args[0], v) == number(node->args[1], v);
        case Node::Ne: return !(number(node->args[0], v) == number(node->args[1], v));
        case Node::Le: return number(node->args[0], v) <= number(node->args[1], v);
        case Node::Ge: return number(node->args[0], v) >= number(node->args[1], v);
        case Node::Lt: return number(node->args[0], v) < number(node->args[1], v);
        case Node::Gt: return number(node->args[0], v) > number(node->args[1], v);
        default: throw ClaimError{"expected a comparison such as 'exposed_comm == 0'", 0};
    }
}

Rational number(const NodePtr& node, const Values& v) {
    switch (node->kind) {
        case Node::Number: return node->value;
        case Node::Name: {
            auto it = v.named.find(node->name);
            if (it == v.named.end())
                throw ClaimError{"unknown name '" + node->name + "' (chunk claims use exposed_comm, exposed_comm_max, network_comm, "
                                 "pair_exposed, pair_time, makespan, bubble, P, M and the component costs)", 0};
            return it->second;
        }
        case Node::Neg: return -number(node->args[0], v);
        case Node::Add: return number(node->args[0], v) + number(node->args[1], v);
        case Node::Sub: return number(node->args[0], v) - number(node->args[1], v);
        case Node::Mul: return number(node->args[0], v) * number(node->args[1], v);
        case Node::Div: {
            const Rational d = number(node->args[1], v);
            if (d == Rational(0)) throw ClaimError{"division by zero", 0};
            return number(node->args[0], v) / d;
        }
        default: throw ClaimError{"expected a number, got a comparison", 0};
    }
}

void names_of(const NodePtr& node, std::vector<std::string>& out) {
    if (node->kind == Node::Name && std::find(out.begin(), out.end(), node->name) == out.end()) out.push_back(node->name);
    for (const auto& a : node->args) names_of(a, out);
}

std::optional<int> stages_per_rank(const std::string& family) {
    if (family == "interleaved-1f1b" || family == "zb1p" || family == "looped-bfs" || family == "combined-1f1b") return 2;
    return std::nullopt;
}

}  // namespace

ChunkRefuteResult refute_chunk_claim(const std::string& family, const std::string& claim_text, const ChunkRefuteOptions& o) {
    const ScheduleFamily* generator = find_family(family);
    if (!generator) throw std::invalid_argument("not a schedule family: " + family + " (see `pipeproof list`)");
    const NodePtr claim = Parser(claim_text).parse();
    std::vector<std::string> names;
    names_of(claim, names);
    ChunkRefuteResult r;
    r.claim = claim_text;
    r.family = family;

    // Candidate cost points, one value per component type.
    std::vector<std::array<Rational, kComponents>> points;
    std::array<Rational, kComponents> ones{};
    for (int k = 0; k < kComponents; ++k) {
        const auto c = static_cast<Component>(k);
        const bool is_shared = c == Component::SharedF || c == Component::SharedI || c == Component::SharedW;
        ones[static_cast<size_t>(k)] = is_shared && !o.shared ? Rational(0) : Rational(1);
    }
    points.push_back(ones);
    const ChunkFormula pair = derive_chunk_formula(SlotKind::PairFB, o.pattern, o.layers, o.shared, false);
    if (auto outside = exposing_point(pair)) points.push_back(*outside);
    auto heavy = ones;
    for (int k = 0; k < kComponents; ++k)
        if (stream_of(static_cast<Component>(k)) == Stream::Compute && !(heavy[static_cast<size_t>(k)] == Rational(0))) heavy[static_cast<size_t>(k)] = 4;
    points.push_back(heavy);

    for (int P = o.p_lo; P <= o.p_hi; ++P) {
        std::vector<int> ms;
        if (o.m_range) {
            for (int M = o.m_range->first; M <= o.m_range->second; ++M) ms.push_back(M);
        } else {
            for (int M = 1; M <= 8 * P + 8 && static_cast<int>(ms.size()) < o.steps; ++M) {
                try {
                    (void)generator->generate({P, M, stages_per_rank(family)});
                    ms.push_back(M);
                } catch (const std::exception&) {
                }
            }
        }
        for (const int M : ms) {
            Schedule schedule;
            try {
                schedule = generator->generate({P, M, stages_per_rank(family)});
            } catch (const std::exception&) {
                continue;
            }
            ++r.instances;
            for (const auto& point : points) {
                ++r.points;
                const ChunkCosts costs = uniform_chunk_costs(o.layers, point);
                const ChunkTable table = derive_chunk_table(costs, o.pattern);
                const Simulation sim = simulate(schedule, table.costs());
                const ChunkExposure e = exposure_per_rank(schedule, table);
                Values v;
                v.named["exposed_comm"] = e.total_exposed();
                v.named["network_comm"] = e.total_network();
                Rational worst{0};
                for (const auto& x : e.exposed) worst = std::max(worst, x);
                v.named["exposed_comm_max"] = worst;
                v.named["pair_exposed"] = table.of(SlotKind::PairFB).timeline.exposed_comm;
                v.named["pair_time"] = table.of(SlotKind::PairFB).timeline.duration;
                v.named["makespan"] = sim.scale.to_units(sim.makespan);
                v.named["bubble"] = sim.scale.to_units(sim.bubble);
                v.named["P"] = Rational(P);
                v.named["M"] = Rational(M);
                for (int k = 0; k < kComponents; ++k) v.named[component_key(static_cast<Component>(k))] = point[static_cast<size_t>(k)];
                if (truth(claim, v)) continue;
                r.refuted = true;
                r.P = P;
                r.M = M;
                r.costs = costs;
                for (const auto& name : names) r.values.emplace_back(name, format_rational(v.named.at(name)));
                for (const char* extra : {"exposed_comm", "network_comm", "pair_exposed", "pair_time"})
                    if (std::find(names.begin(), names.end(), extra) == names.end()) r.values.emplace_back(extra, format_rational(v.named.at(extra)));
                r.schedule = schedule;
                return r;
            }
        }
    }
    if (r.instances == 0) throw std::invalid_argument(fmt::format("{} generates no schedule for P in {}..{}", family, o.p_lo, o.p_hi));
    r.notes.push_back(fmt::format("no counterexample among {} instance(s) x {} candidate cost point(s): not a proof", r.instances, points.size()));
    return r;
}

}  // namespace pp
