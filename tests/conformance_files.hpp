#pragma once
// The reference schedule files in ../shared/conformance, read byte for byte.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace pp::test {

inline std::string read_conformance(const std::string& relative) {
    std::ifstream in(std::string(PP_SHARED_DIR) + "/conformance/" + relative, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// The shared copies have LF line ends; PyTorch's csv writer ends lines with CRLF.
inline std::string to_crlf(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

}  // namespace pp::test
