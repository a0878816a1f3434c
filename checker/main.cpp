// pipeproof-check DIR: re-derives a certificate written by `pipeproof prove --certificate DIR` (checker/check.hpp).
// Exit 0: CHECKED; 1: a step failed or the certificate does not carry the whole proof; 2: unreadable certificate
// or bad usage.
#include "checker/check.hpp"
#include "formats/certificate_json.hpp"
#include "formats/input_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>
#include <string>

namespace {

int usage(const std::string& why) {
    fmt::print(stderr,
               "pipeproof-check: {}\nusage: pipeproof-check DIR [--solver-seconds S] [--solvers z3,cvc5] [--no-fifo]\n"
               "  DIR holds certificate.json and the SMT-LIB2 files it names (pipeproof prove --certificate DIR),\n"
               "  or search.json and the schedule it names (pipeproof search --certificate DIR; --no-fifo: model every\n"
               "  order of a class's micro-batches, not only the ascending one)\n",
               why);
    return 2;
}

// "pipeproof-check DIR/v, pipeproof-check DIR/1f1b, ..." for the subdirectories that hold a search certificate.
std::string search_certificates_below(const std::string& dir) {
    std::vector<std::string> found;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error))
        if (entry.is_directory() && pp::check::is_search_certificate(entry.path()))
            found.push_back("pipeproof-check " + entry.path().string());
    std::sort(found.begin(), found.end());
    std::string out;
    for (const std::string& line : found) out += (out.empty() ? "" : ", ") + line;
    return out;
}

// One line per step run: ok or FAILED, its time, what it re-derived or why it failed.
void print_steps(const pp::check::CheckReport& report) {
    for (const auto& step : report.steps)
        fmt::print("{} {} ({:.2f} s): {}\n", step.ok ? "ok    " : "FAILED", step.name, step.seconds, step.detail);
}

// A search certificate (DIR/search.json): the schedule and the lower bound, re-derived.
int check_search(const std::string& dir, const pp::check::CheckOptions& options) {
    pp::check::SearchClaim claim;
    try {
        claim = pp::check::read_search_claim(dir);
    } catch (const pp::InputError& e) {
        fmt::print(stderr, "{}: error: {}\n", e.where(), e.what());
        return 2;
    }
    const pp::check::CheckReport report = pp::check::check_search_certificate(claim, dir, options);
    print_steps(report);
    if (report.checked()) {
        fmt::print("CHECKED: {}\n", pp::check::verified_search_claim(claim, options));
        return 0;
    }
    fmt::print("NOT CHECKED: {}\n", report.first_failure());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir;
    pp::check::CheckOptions options;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--solver-seconds" && k + 1 < argc) {
            char* end = nullptr;
            options.solver_seconds = std::strtod(argv[++k], &end);
            if (*end || !(options.solver_seconds > 0 && options.solver_seconds <= 86400))
                return usage("--solver-seconds expects a number of seconds in (0, 86400]");
        } else if (arg == "--solvers" && k + 1 < argc) {
            options.solvers.clear();
            std::string list = argv[++k];
            for (size_t at = 0; at <= list.size();) {
                const size_t comma = std::min(list.find(',', at), list.size());
                const std::string name = list.substr(at, comma - at);
                if (name != "z3" && name != "cvc5") return usage("--solvers takes z3 and/or cvc5, got '" + name + "'");
                options.solvers.push_back(name);
                at = comma + 1;
            }
        } else if (arg == "--no-fifo") {
            options.fifo = false;
        } else if (arg == "-h" || arg == "--help") {
            usage("re-derives a proof certificate");
            return 0;
        } else if (!arg.empty() && arg[0] == '-') {
            return usage("unknown option '" + arg + "'");
        } else if (dir.empty()) {
            dir = arg;
        } else {
            return usage("one certificate directory at a time");
        }
    }
    if (dir.empty()) return usage("no certificate directory given");
    if (pp::check::is_search_certificate(dir)) return check_search(dir, options);
    if (const std::string list = search_certificates_below(dir); !list.empty()) {
        // search --placement any|LIST --certificate DIR writes one certificate per placement.
        fmt::print(stderr, "pipeproof-check: {} holds one search certificate per placement; check each: {}\n", dir, list);
        return 2;
    }
    pp::Certificate certificate;
    try {
        certificate = pp::read_certificate(dir);
    } catch (const pp::InputError& e) {
        fmt::print(stderr, "{}: error: {}\n", e.where(), e.what());
        return 2;
    }
    const pp::check::CheckReport report = pp::check::check_certificate(certificate, dir, options);
    print_steps(report);
    if (report.checked()) {
        fmt::print("CHECKED: {}\n", pp::check::verified_claim(certificate));
        fmt::print("as the certificate words it (not checked): {}\n", certificate.statement);
        // Where the structure lemma was a finite check, the step "structure" re-ran it; elsewhere the word's tie to
        // the generator beyond Lemma 1's horizon rests on the family's structure lemma, argued in prose
        // (proofs/method.md A1).
        if (certificate.structure_check || pp::check::has_step_program(certificate))
            fmt::print("structure: machine-checked above (step structure); assuming only the general lemmas of "
                       "proofs/method.md ({})\n",
                       pp::check::has_step_program(certificate)
                           ? "Lemmas 1-3; Lemma 2 for the one step-program interpreter, schedules/step_program.cpp, "
                             "which the generator runs"
                           : "Lemmas 1-3 and the state-recurrence induction of schedules/greedy_recurrence.hpp");
        else
            fmt::print("assuming: the generator's order is a periodic word for every M (structure lemma, argued: {})\n",
                       certificate.structure_lemma.empty() ? "none recorded" : certificate.structure_lemma);
        if (certificate.timing_model == "batched")
            fmt::print("timing: batched (blocking P2P batches); assuming also that the communication program is a periodic "
                       "word for every M, as its fitted word is up to Lemma 1's horizon (argued: the generic rule reads "
                       "only slots k-1 and k; an attached program is queued by the generator's step loops; proofs/method.md "
                       "§2b)\n");
        return 0;
    }
    fmt::print("NOT CHECKED: {}\n", report.first_failure());
    return 1;
}
