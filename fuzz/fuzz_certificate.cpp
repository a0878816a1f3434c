// libFuzzer harness: the independent checker (`pipeproof-check`) under arbitrary certificates. Its reader
// (formats/certificate_json.hpp) either returns a certificate or throws InputError; every step of
// check_certificate (checker/check.hpp) then either passes or rejects -- a crash, a sanitizer report, a hang or an
// exception escaping the checker is a bug. The directory the certificate names its files in is empty, so the
// steps that read a file reject; no solver is started (a certificate that needs one fails at that step).
#include "checker/check.hpp"
#include "formats/certificate_json.hpp"
#include "formats/input_error.hpp"
#include "fuzz/fuzz_common.hpp"

#include <filesystem>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    Certificate certificate;
    try {
        certificate = parse_certificate(std::string(fuzz::as_text(data, size)), "certificate.json");
    } catch (const InputError&) {
        return 0;
    }
    static const std::filesystem::path dir = [] {
        const auto path = std::filesystem::temp_directory_path() / "pp-fuzz-certificate-empty";
        std::filesystem::create_directories(path);
        return path;
    }();
    check::CheckOptions options;
    options.solvers.clear();
    options.solver_seconds = 1;
    const check::CheckReport report = check::check_certificate(certificate, dir, options);
    if (report.checked() && report.steps.empty()) fuzz::bug("a certificate CHECKED without a single step", "");
    return 0;
}
