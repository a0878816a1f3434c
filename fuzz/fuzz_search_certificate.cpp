// libFuzzer harness: the independent checker on arbitrary search certificates (`search --certificate DIR`). The
// input is search.json, a line "---", then schedule.txt; both are written to a directory of their own and checked
// without solvers (checker/search.cpp). The reader either returns a claim or throws InputError; the check then
// rejects at some step or passes -- a crash, a sanitizer report, a hang or an exception escaping is a bug, and so is
// CHECKED without solvers unless the checker's arithmetic alone settled the bound.
#include "checker/check.hpp"
#include "formats/input_error.hpp"
#include "fuzz/fuzz_common.hpp"

#include <filesystem>
#include <fstream>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    const std::string_view text = fuzz::as_text(data, size);
    const std::size_t split = text.find("\n---\n");
    static const std::filesystem::path dir = [] {
        const auto path = std::filesystem::temp_directory_path() / "pp-fuzz-search-certificate";
        std::filesystem::create_directories(path);
        return path;
    }();
    std::ofstream(dir / "search.json", std::ios::binary) << text.substr(0, split);
    std::ofstream(dir / "schedule.txt", std::ios::binary)
        << (split == std::string_view::npos ? std::string_view() : text.substr(split + 5));
    check::SearchClaim claim;
    try {
        claim = check::read_search_claim(dir);
    } catch (const InputError&) {
        return 0;
    }
    check::CheckOptions options;
    options.solvers.clear();
    options.solver_seconds = 1;
    const check::CheckReport report = check::check_search_certificate(claim, dir, options);
    if (report.checked() && (report.steps.size() != 3 || report.steps.back().detail.find("arithmetic") == std::string::npos))
        fuzz::bug("a search certificate CHECKED without a solver and without the checker's arithmetic", "");
    return 0;
}
