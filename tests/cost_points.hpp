#pragma once
// A cost point for prover tests: F, I, W, the F&B pair cost and comm; B = I + W.
#include "model/costs.hpp"

namespace pp::test {

inline Costs cost_point(Rational F, Rational I, Rational W, Rational FB, Rational comm = 0) {
    Costs c;
    c.base.F = F;
    c.base.I = I;
    c.base.W = W;
    c.base.B = I + W;
    c.base.FB = FB;
    c.comm = comm;
    return c;
}

}  // namespace pp::test
