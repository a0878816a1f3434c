// Claims as text: the expression parser (grammar in proofs/claim.hpp), linear cost constraints for --assume,
// and cost grids for `refute --costs GRID`.
#include "proofs/claim.hpp"

#include "model/spelling.hpp"

#include <cctype>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <functional>

namespace pp {

namespace {

class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    ClaimPtr parse() {
        if (s_.size() > kMaxClaimLength)
            throw ClaimError{"the claim has " + std::to_string(s_.size()) + " characters; at most " +
                                 std::to_string(kMaxClaimLength) + " are read",
                             kMaxClaimLength};
        ClaimPtr e = parse_or();
        skip();
        if (pos_ < s_.size()) fail("unexpected '" + s_.substr(pos_, 1) + "'");
        return e;
    }

private:
    const std::string& s_;
    size_t pos_ = 0;
    int depth_ = 0;

    // Each level of nesting -- an atom (parentheses, call arguments), a '!' or a unary '-' -- passes through
    // here: deeper than kMaxClaimDepth is an error, not a stack overflow.
    struct Nested {
        Parser& parser;
        explicit Nested(Parser& p) : parser(p) {
            if (++parser.depth_ > kMaxClaimDepth)
                parser.fail("nested more than " + std::to_string(kMaxClaimDepth) + " levels deep");
        }
        ~Nested() { --parser.depth_; }
        Nested(const Nested&) = delete;
        Nested& operator=(const Nested&) = delete;
    };

    [[noreturn]] void fail(const std::string& message) const { throw ClaimError{message + " at offset " + std::to_string(pos_), pos_}; }
    void skip() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool eat(const std::string& token) {
        skip();
        if (s_.compare(pos_, token.size(), token) == 0) {
            pos_ += token.size();
            return true;
        }
        return false;
    }
    ClaimPtr node(ClaimNode::Kind kind, std::vector<ClaimPtr> args, size_t from) {
        auto n = std::make_shared<ClaimNode>();
        n->kind = kind;
        n->args = std::move(args);
        n->text = trim(s_.substr(from, pos_ - from));
        n->offset = from;
        return n;
    }
    static std::string trim(std::string t) {
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
        size_t k = 0;
        while (k < t.size() && std::isspace(static_cast<unsigned char>(t[k]))) ++k;
        return t.substr(k);
    }
    ClaimPtr parse_or() {
        skip();
        const size_t from = pos_;
        ClaimPtr a = parse_and();
        while (eat("||")) a = node(ClaimNode::Or, {a, parse_and()}, from);
        return a;
    }
    ClaimPtr parse_and() {
        skip();
        const size_t from = pos_;
        ClaimPtr a = parse_not();
        while (eat("&&")) a = node(ClaimNode::And, {a, parse_not()}, from);
        return a;
    }
    ClaimPtr parse_not() {
        skip();
        const size_t from = pos_;
        if (s_.compare(pos_, 1, "!") == 0 && s_.compare(pos_, 2, "!=") != 0) {
            const Nested nested(*this);
            ++pos_;
            return node(ClaimNode::Not, {parse_not()}, from);
        }
        return parse_cmp();
    }
    ClaimPtr parse_cmp() {
        skip();
        const size_t from = pos_;
        ClaimPtr a = parse_sum();
        static const std::vector<std::pair<std::string, ClaimNode::Kind>> ops = {
            {"==", ClaimNode::Eq}, {"!=", ClaimNode::Ne}, {"<=", ClaimNode::Le},
            {">=", ClaimNode::Ge}, {"<", ClaimNode::Lt},  {">", ClaimNode::Gt}};
        for (const auto& [tok, kind] : ops)
            if (eat(tok)) return node(kind, {a, parse_sum()}, from);
        if (eat("=")) return node(ClaimNode::Eq, {a, parse_sum()}, from);
        return a;
    }
    ClaimPtr parse_sum() {
        skip();
        const size_t from = pos_;
        ClaimPtr a = parse_prod();
        while (true) {
            if (eat("+")) a = node(ClaimNode::Add, {a, parse_prod()}, from);
            else if (peek_minus()) a = node(ClaimNode::Sub, {a, parse_prod()}, from);
            else return a;
        }
    }
    bool peek_minus() {
        skip();
        if (pos_ < s_.size() && s_[pos_] == '-') {
            ++pos_;
            return true;
        }
        return false;
    }
    ClaimPtr parse_prod() {
        skip();
        const size_t from = pos_;
        ClaimPtr a = parse_unary();
        while (true) {
            if (eat("*")) a = node(ClaimNode::Mul, {a, parse_unary()}, from);
            else if (eat("/")) a = node(ClaimNode::Div, {a, parse_unary()}, from);
            else if (juxtaposed()) a = node(ClaimNode::Mul, {a, parse_unary()}, from);
            else return a;
        }
    }
    // Papers write products by juxtaposition: "3W", "(PP/2-1)(F&B+B-3W)", "2(P-1)".
    bool juxtaposed() {
        skip();
        if (pos_ >= s_.size()) return false;
        const unsigned char c = static_cast<unsigned char>(s_[pos_]);
        return std::isalpha(c) || c == '_' || c == '(';
    }
    ClaimPtr parse_unary() {
        skip();
        const size_t from = pos_;
        if (peek_minus()) {
            const Nested nested(*this);
            return node(ClaimNode::Neg, {parse_unary()}, from);
        }
        return parse_atom();
    }
    ClaimPtr parse_atom() {
        const Nested nested(*this);  // parentheses and call arguments nest through here
        skip();
        const size_t from = pos_;
        if (pos_ >= s_.size()) fail("unexpected end of the claim");
        if (eat("(")) {
            ClaimPtr e = parse_or();
            if (!eat(")")) fail("expected ')'");
            return e;
        }
        const char c = s_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            size_t end = pos_;
            while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '.')) ++end;
            auto value = parse_rational(s_.substr(pos_, end - pos_));
            if (!value) fail("bad number");
            pos_ = end;
            auto n = node(ClaimNode::Number, {}, from);
            n->value = *value;
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t end = pos_;
            while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_' || ampersand_in_name(end)))
                ++end;
            const std::string name = s_.substr(pos_, end - pos_);
            pos_ = end;
            if (eat("(")) {
                std::vector<ClaimPtr> args{parse_sum()};
                if (eat(",")) args.push_back(parse_sum());
                if (!eat(")")) fail("expected ')' after the arguments of " + name);
                auto n = node(ClaimNode::Call, std::move(args), from);
                n->name = name;
                check_name(name, true);
                return n;
            }
            auto n = node(ClaimNode::Name, {}, from);
            n->name = name;
            check_name(name, false);
            return n;
        }
        fail("unexpected '" + std::string(1, c) + "'");
    }
    // DeepSeek's "F&B" is one name; "&&" is the conjunction.
    bool ampersand_in_name(size_t at) const {
        return s_[at] == '&' && at + 1 < s_.size() && std::isalpha(static_cast<unsigned char>(s_[at + 1])) && at > pos_ &&
               s_[at - 1] != '&';
    }
    void check_name(const std::string& name, bool call) const {
        const auto& names = call ? claim_function_names() : claim_names();
        if (std::find(names.begin(), names.end(), name) != names.end()) return;
        std::string message = "unknown name '" + name + "'" + (call ? " (not a function)" : "");
        if (auto nearest = nearest_spelling(name, names)) message += " (did you mean '" + *nearest + "'?)";
        message += call ? "; functions: " : "; names: ";
        for (size_t k = 0; k < names.size(); ++k) message += (k ? ", " : "") + names[k];
        if (!call) message += " (costs as in --costs; PP = pipeline stages, as DeepSeek's table)";
        throw ClaimError{message, pos_};
    }
};

}  // namespace

ClaimPtr parse_claim(const std::string& text) { return Parser(text).parse(); }

namespace {

bool is_condition(ClaimNode::Kind kind) {
    switch (kind) {
        case ClaimNode::Not: case ClaimNode::Eq: case ClaimNode::Ne: case ClaimNode::Le: case ClaimNode::Ge:
        case ClaimNode::Lt: case ClaimNode::Gt: case ClaimNode::And: case ClaimNode::Or: return true;
        default: return false;
    }
}

// Every node has the sort its parent needs: conditions under !, &&, || and at the top, numbers elsewhere.
void check_sorts(const ClaimNode& n, bool condition_expected) {
    if (is_condition(n.kind) != condition_expected) {
        const std::string message =
            condition_expected
                ? "expected a condition (a comparison such as 'bubble <= 3', joined by &&, || or !), got the number '" +
                      n.text + "'"
                : "expected a number, got the condition '" + n.text + "'";
        throw ClaimError{message + " at offset " + std::to_string(n.offset), n.offset};
    }
    const bool children_are_conditions = n.kind == ClaimNode::Not || n.kind == ClaimNode::And || n.kind == ClaimNode::Or;
    for (const auto& child : n.args) check_sorts(*child, children_are_conditions);
}

}  // namespace

ClaimPtr parse_condition(const std::string& text) {
    ClaimPtr claim = parse_claim(text);
    check_sorts(*claim, true);
    return claim;
}

std::string in_parser_letters(const std::string& text, Basis basis) {
    if (basis != Basis::ZeroBubble) return text;
    // The names as the parser reads them: a letter or '_' starts one, letters, digits, '_' and the '&' of
    // "F&B" continue it; a number ("3" in "3W") ends before a letter.
    std::string out;
    bool saw_b = false, saw_i = false;
    for (size_t k = 0; k < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[k]);
        if (std::isdigit(c) || c == '.') {
            while (k < text.size() && (std::isdigit(static_cast<unsigned char>(text[k])) || text[k] == '.')) out += text[k++];
            continue;
        }
        if (!std::isalpha(c) && c != '_') {
            out += text[k++];
            continue;
        }
        const size_t from = k;
        while (k < text.size()) {
            const unsigned char d = static_cast<unsigned char>(text[k]);
            const bool ampersand = d == '&' && k + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[k + 1])) &&
                                   text[k - 1] != '&';
            if (!std::isalnum(d) && d != '_' && !ampersand) break;
            ++k;
        }
        const std::string name = text.substr(from, k - from);
        saw_b |= name == "B";
        saw_i |= name == "I";
        out += name == "B" ? "I" : name;
    }
    if (saw_b && saw_i)
        throw ClaimError{"'" + text + "' uses both B and I, but in the Zero Bubble paper's letters B is the input-gradient "
                         "backward (PyTorch's I): write it with B, W (and no I), or pass --basis pytorch or --basis "
                         "deepseek to read B as the full backward",
                         0};
    return out;
}

const std::vector<std::string>& claim_names() {
    static const std::vector<std::string> names = {
        "P", "PP", "M", "F", "I", "W", "B", "FB", "F&B", "comm", "c", "bubble", "idle", "makespan", "span", "bubble_fraction",
        "peak", "copies", "blocks_per_rank", "param_share"};
    return names;
}

const std::vector<std::string>& claim_function_names() {
    static const std::vector<std::string> names = {"bubble", "idle", "makespan", "span", "bubble_fraction", "peak"};
    return names;
}

namespace {

// A linear form with a constant over the cost variables, or nullopt if the expression is not linear.
std::optional<RatForm> linear(const ClaimPtr& n) {
    RatForm f;
    switch (n->kind) {
        case ClaimNode::Number: f.constant = n->value; return f;
        case ClaimNode::Name: {
            const int v = cost_var_index(n->name);
            if (v < 0) return std::nullopt;
            f.c[v] = Rational(1);
            return f;
        }
        case ClaimNode::Neg: {
            auto a = linear(n->args[0]);
            if (!a) return std::nullopt;
            for (auto& x : a->c) x = -x;
            a->constant = -a->constant;
            return a;
        }
        case ClaimNode::Add:
        case ClaimNode::Sub: {
            auto a = linear(n->args[0]), b = linear(n->args[1]);
            if (!a || !b) return std::nullopt;
            const Rational sign = n->kind == ClaimNode::Add ? Rational(1) : Rational(-1);
            for (int i = 0; i < kCostVars; ++i) a->c[i] += sign * b->c[i];
            a->constant += sign * b->constant;
            return a;
        }
        case ClaimNode::Mul: {
            auto a = linear(n->args[0]), b = linear(n->args[1]);
            if (!a || !b) return std::nullopt;
            auto is_const = [](const RatForm& x) {
                for (const auto& c : x.c)
                    if (!(c == Rational(0))) return false;
                return true;
            };
            if (!is_const(*a) && !is_const(*b)) return std::nullopt;
            if (!is_const(*a)) std::swap(a, b);
            const Rational k = a->constant;
            for (auto& x : b->c) x *= k;
            b->constant *= k;
            return b;
        }
        case ClaimNode::Div: {
            auto a = linear(n->args[0]), b = linear(n->args[1]);
            if (!a || !b) return std::nullopt;
            for (const auto& c : b->c)
                if (!(c == Rational(0))) return std::nullopt;
            if (b->constant == Rational(0)) return std::nullopt;
            for (auto& x : a->c) x /= b->constant;
            a->constant /= b->constant;
            return a;
        }
        default: return std::nullopt;
    }
}

void collect_constraints(const ClaimPtr& n, std::vector<CostConstraint>& out) {
    if (n->kind == ClaimNode::And) {
        collect_constraints(n->args[0], out);
        collect_constraints(n->args[1], out);
        return;
    }
    auto rel_of = [](ClaimNode::Kind k) -> std::optional<std::pair<CostConstraint::Rel, bool>> {
        switch (k) {
            case ClaimNode::Eq: return std::pair{CostConstraint::Eq, false};
            case ClaimNode::Ge: return std::pair{CostConstraint::Ge, false};
            case ClaimNode::Gt: return std::pair{CostConstraint::Gt, false};
            case ClaimNode::Le: return std::pair{CostConstraint::Ge, true};
            case ClaimNode::Lt: return std::pair{CostConstraint::Gt, true};
            default: return std::nullopt;
        }
    };
    auto rel = rel_of(n->kind);
    if (!rel) throw ClaimError{"an assumption is a comparison of linear cost expressions ('==', '<=', '<', '>=', '>'), "
                               "joined by '&&': " + n->text, 0};
    auto a = linear(n->args[0]), b = linear(n->args[1]);
    if (!a || !b) throw ClaimError{"not linear in the costs: " + n->text, 0};
    CostConstraint c;
    const Rational sign = rel->second ? Rational(-1) : Rational(1);
    for (int i = 0; i < kCostVars; ++i) c.a[i] = sign * (a->c[i] - b->c[i]);
    c.b = sign * (b->constant - a->constant);
    c.rel = rel->first;
    c.text = n->text;
    out.push_back(c);
}

}  // namespace

std::vector<CostConstraint> parse_constraints(const std::string& text) {
    std::vector<CostConstraint> out;
    collect_constraints(parse_condition(text), out);
    return out;
}

// Grid of cost points.
std::vector<CostPoint> parse_cost_grid(const std::string& text) {
    std::array<std::vector<Rational>, kCostVars> values;
    std::array<bool, kCostVars> given{};
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) throw ClaimError{"grid item without '=': " + item, 0};
        const int v = cost_var_index(item.substr(0, eq));
        if (v < 0) throw ClaimError{"unknown cost in the grid: " + item.substr(0, eq), 0};
        const std::string spec = item.substr(eq + 1);
        given[v] = true;
        auto number = [&](const std::string& t) {
            auto r = parse_rational(t);
            if (!r) throw ClaimError{"bad number in the grid: " + t, 0};
            return *r;
        };
        if (spec.find("..") != std::string::npos) {
            const size_t dots = spec.find("..");
            const size_t at = spec.find('@');
            const Rational lo = number(spec.substr(0, dots));
            const Rational hi = number(spec.substr(dots + 2, at == std::string::npos ? std::string::npos : at - dots - 2));
            const Rational step = at == std::string::npos ? Rational(1) : number(spec.substr(at + 1));
            if (step <= Rational(0)) throw ClaimError{"grid step must be positive: " + item, 0};
            if (hi < lo) throw ClaimError{"empty grid range (the end is below the start): " + item, 0};
            // Count the points before making them: "0..10^9@1/1000" is refused, not enumerated.
            const Rational steps = (hi - lo) / step;  // exact at any size
            const Integer count = steps.numerator() / steps.denominator() + Integer(1);
            if (count > Integer(static_cast<std::int64_t>(kMaxGridPoints)))
                throw ClaimError{"the grid range " + item + " has more than " + std::to_string(kMaxGridPoints) + " points", 0};
            for (Rational x = lo; x <= hi; x += step) values[v].push_back(x);
        } else {
            size_t p = 0;
            while (p <= spec.size()) {
                size_t bar = spec.find('|', p);
                if (bar == std::string::npos) bar = spec.size();
                values[v].push_back(number(spec.substr(p, bar - p)));
                p = bar + 1;
            }
        }
    }
    const int F = 0, I = 1, W = 2, B = 3, FB = 4, comm = 5;
    size_t total = 1;
    for (const auto& list : values)
        if (!list.empty() && (total *= list.size()) > kMaxGridPoints)
            throw ClaimError{"the grid has more than " + std::to_string(kMaxGridPoints) + " points", 0};
    if (!given[F]) values[F] = {Rational(1)};
    if (!given[I]) values[I] = {Rational(1)};
    if (!given[W]) values[W] = {Rational(1)};
    if (!given[comm]) values[comm] = {Rational(0)};
    std::vector<CostPoint> points;
    std::array<size_t, kCostVars> idx{};
    std::vector<int> dims;
    for (int v : {F, I, W, B, FB, comm})
        if (!values[v].empty()) dims.push_back(v);
    while (true) {
        CostPoint p{};
        for (int v : dims) p[v] = values[v][idx[v]];
        if (!given[B]) p[B] = p[I] + p[W];
        if (!given[FB]) p[FB] = p[F] + p[B];
        points.push_back(p);
        int k = static_cast<int>(dims.size()) - 1;
        while (k >= 0 && ++idx[dims[k]] == values[dims[k]].size()) idx[dims[k]] = 0, --k;
        if (k < 0) break;
    }
    return points;
}

}  // namespace pp
