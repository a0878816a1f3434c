#pragma once
// What the certificate tests share: a certificate's JSON, a corrupted copy of a certificate directory, and the
// checker's answer to it (tests/test_certificates.cpp, tests/test_certificate_batched.cpp).
#include "cli_runner.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace pp::test {

inline nlohmann::json certificate_of(const std::filesystem::path& dir) { return nlohmann::json::parse(slurp(dir / "certificate.json")); }

// A copy of `from` with certificate.json changed by `mutate` (and the obligations as they are, or changed too).
inline std::filesystem::path corrupted(const std::filesystem::path& from, const std::string& name,
                                       const std::function<void(nlohmann::json&)>& mutate,
                                       const std::function<void(const std::filesystem::path&)>& touch_files = {}) {
    const std::filesystem::path dir = fresh_dir(name);
    std::filesystem::copy(from, dir, std::filesystem::copy_options::recursive);
    nlohmann::json j = certificate_of(dir);
    mutate(j);
    std::ofstream(dir / "certificate.json", std::ios::binary) << j.dump(2);
    if (touch_files) touch_files(dir);
    return dir;
}

// The checker does not pass it: NOT CHECKED (exit 1) at `step`, or an unreadable certificate (exit 2).
inline void require_rejected(const std::filesystem::path& dir, const std::string& step) {
    const auto check = run_check(dir.string());
    INFO(dir.filename().string() << "\n" << check.out << check.err);
    CHECK(check.exit_code != 0);
    CHECK_THAT(check.out, !Catch::Contains("\nCHECKED: "));
    if (check.exit_code == 1) {
        CHECK_THAT(check.out, Catch::Contains("NOT CHECKED: " + step));
    } else {
        CHECK(check.exit_code == 2);
        CHECK_THAT(check.err, Catch::Contains(step));
    }
}

}  // namespace pp::test
