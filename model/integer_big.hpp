#pragma once
// The arbitrary-precision view of an Integer, for the few .cpp files that compute on big values directly
// (model/integer.cpp, model/rational.cpp). Everything else uses Integer's operators.
#include "model/integer.hpp"

#include <boost/multiprecision/cpp_int.hpp>

namespace pp {

using BigInt = boost::multiprecision::cpp_int;

struct IntegerAccess {
    static BigInt to_big(const Integer& value);        // the value as a cpp_int (a copy)
    static Integer from_big(const BigInt& value);      // canonical: inline when it fits
    static const BigInt* big_ptr(const Integer& value);  // nullptr when the value is inline
};

inline BigInt to_big(const Integer& value) { return IntegerAccess::to_big(value); }
inline Integer from_big(const BigInt& value) { return IntegerAccess::from_big(value); }

}  // namespace pp
