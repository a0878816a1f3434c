// The chunk claim language (grammar in proofs/chunk_claim.hpp): parser with input bounds, name and type
// check, exact evaluation.
#include "proofs/chunk_claim.hpp"

#include "model/chunk_costs.hpp"
#include "model/spelling.hpp"
#include "proofs/claim.hpp"

#include <algorithm>
#include <cctype>

namespace pp {
namespace {

using Node = ChunkClaimNode;
using NodePtr = ChunkClaimPtr;

class Parser {
public:
    explicit Parser(const std::string& text) : t_(text) {}
    NodePtr parse() {
        if (t_.size() > kMaxClaimLength)
            throw ClaimError{"the claim has " + std::to_string(t_.size()) + " characters; at most " + std::to_string(kMaxClaimLength) +
                                 " are read",
                             kMaxClaimLength};
        NodePtr n = disjunction();
        skip();
        if (i_ != t_.size()) fail("unexpected '" + t_.substr(i_, 1) + "'");
        return n;
    }

private:
    const std::string& t_;
    size_t i_ = 0;
    int depth_ = 0;

    // Every recursion that does not consume a binary operator first -- '!', unary '-', '(' -- passes through
    // here, so deeper than kMaxClaimDepth is an error and not a stack overflow ("------1" 10^5 times was one).
    struct Nested {
        Parser& parser;
        Nested(Parser& p, size_t at) : parser(p) {  // at: the '!', '-' or '(' that opens the level
            if (++parser.depth_ > kMaxClaimDepth) parser.fail_at(at, "nested more than " + std::to_string(kMaxClaimDepth) + " levels deep");
        }
        ~Nested() { --parser.depth_; }
        Nested(const Nested&) = delete;
        Nested& operator=(const Nested&) = delete;
    };

    [[noreturn]] void fail(const std::string& m) const { fail_at(i_, m); }
    [[noreturn]] void fail_at(size_t at, const std::string& m) const {
        throw ClaimError{m + " at character " + std::to_string(at + 1), at};
    }
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
        skip();
        const size_t at = i_;
        if (eat("!")) {
            const Nested nested(*this, at);
            return make(Node::Not, negation());
        }
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
        skip();
        const size_t at = i_;
        if (eat("-")) {
            const Nested nested(*this, at);
            return make(Node::Neg, unary());
        }
        if (eat("(")) {
            const Nested nested(*this, at);
            NodePtr n = disjunction();
            if (!eat(")")) fail("expected ')'");
            return n;
        }
        auto n = std::make_shared<Node>();
        const size_t start = i_;
        if (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) {
            while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) ++i_;
            const auto v = parse_rational(t_.substr(start, i_ - start));
            if (!v) fail_at(start, "bad number '" + t_.substr(start, i_ - start) + "'");
            n->value = *v;
            return n;
        }
        while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) ++i_;
        if (i_ == start) fail("expected a number or a name");
        n->kind = Node::Name;
        n->name = t_.substr(start, i_ - start);
        const auto& names = chunk_claim_names();
        if (std::find(names.begin(), names.end(), n->name) == names.end()) {
            std::string message = "unknown name '" + n->name + "'";
            if (auto nearest = nearest_spelling(n->name, names)) message += " (did you mean '" + *nearest + "'?)";
            fail_at(start, message + "; chunk claims use exposed_comm, exposed_comm_max, network_comm, pair_exposed, pair_time, "
                                     "makespan, bubble, P, M and the component costs");
        }
        return n;
    }
};

bool is_truth(Node::Kind k) { return k >= Node::Eq; }

// A truth value where one is wanted (the claim, operands of && || !), a number everywhere else. Recursion
// depth is the tree's height: bounded by kMaxClaimLength for chains of binary operators.
void check_types(const NodePtr& node, bool want_truth) {
    if (is_truth(node->kind) != want_truth)
        throw ClaimError{want_truth ? "expected a comparison such as 'exposed_comm == 0'" : "expected a number, got a comparison or a logical operator", 0};
    const bool operands_truth = node->kind == Node::And || node->kind == Node::Or || node->kind == Node::Not;
    for (const auto& a : node->args) check_types(a, operands_truth);
}

using Values = std::map<std::string, Rational>;

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
            auto it = v.find(node->name);
            if (it == v.end()) throw ClaimError{"no value for '" + node->name + "'", 0};
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

void collect_names(const NodePtr& node, std::vector<std::string>& out) {
    if (node->kind == Node::Name && std::find(out.begin(), out.end(), node->name) == out.end()) out.push_back(node->name);
    for (const auto& a : node->args) collect_names(a, out);
}

}  // namespace

const std::vector<std::string>& chunk_claim_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n{"exposed_comm", "network_comm", "exposed_comm_max", "pair_exposed", "pair_time",
                                   "makespan",     "bubble",       "P",                "M"};
        for (int k = 0; k < kComponents; ++k) n.emplace_back(component_key(static_cast<Component>(k)));
        return n;
    }();
    return names;
}

ChunkClaimPtr parse_chunk_claim(const std::string& text) {
    NodePtr claim = Parser(text).parse();
    check_types(claim, true);
    return claim;
}

std::vector<std::string> chunk_claim_names_used(const ChunkClaimPtr& claim) {
    std::vector<std::string> names;
    collect_names(claim, names);
    return names;
}

bool chunk_claim_holds(const ChunkClaimPtr& claim, const std::map<std::string, Rational>& values) { return truth(claim, values); }

}  // namespace pp
