#pragma once
// Claims over chunk quantities (issue 11; `refute --chunk-costs symbolic`), e.g. "exposed_comm == 0".
// Grammar: proofs/claim.hpp's comparisons, + - * /, &&, ||, !, without function calls:
//   or := and ("||" and)* ; and := not ("&&" not)* ; not := "!" not | cmp
//   cmp := sum [("==" | "!=" | "<=" | ">=" | "<" | ">") sum] ; sum := prod (("+" | "-") prod)*
//   prod := unary (("*" | "/") unary)* ; unary := "-" unary | NUMBER | NAME | "(" or ")"
// Names: chunk_claim_names() (the quantities refute_chunk_claim computes, P, M and the component costs).
// Kept apart from claim_parse.cpp because the names differ and nothing here calls a function.
#include "model/rational.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pp {

struct ChunkClaimNode {
    enum Kind { Number, Name, Neg, Add, Sub, Mul, Div, Eq, Ne, Le, Ge, Lt, Gt, And, Or, Not } kind = Number;
    Rational value{0};
    std::string name;
    std::vector<std::shared_ptr<ChunkClaimNode>> args;
};
using ChunkClaimPtr = std::shared_ptr<ChunkClaimNode>;

// Throws ClaimError (proofs/claim.hpp) with a 0-based offset: a syntax error, more than kMaxClaimLength
// characters or kMaxClaimDepth levels of nesting (the parser recurses: deeper would overflow the stack), a
// name outside chunk_claim_names(), or a claim that is not a truth value (a comparison where a number is
// expected, or the reverse) -- all found here, before any schedule is timed.
ChunkClaimPtr parse_chunk_claim(const std::string& text);
const std::vector<std::string>& chunk_claim_names();
// The names a claim uses, each once, in order of first use.
std::vector<std::string> chunk_claim_names_used(const ChunkClaimPtr& claim);

// Exact evaluation; `values` holds every name the claim uses. Throws ClaimError on a division by zero.
bool chunk_claim_holds(const ChunkClaimPtr& claim, const std::map<std::string, Rational>& values);

}  // namespace pp
