#pragma once
// How large a schedule pipeproof agrees to hold. Readers, generators and the CLI ask here before they
// allocate anything proportional to a declared or inferred size, so that an input which cannot fit is
// rejected up front with an estimate ("ranks x micro-batches = 10^12 ops, about N GB") and exit 2, never
// by std::bad_alloc or by the machine running out of memory.
//
// The unit is ops: a placement admits 2 ops per (stage, micro-batch) at the least (its F and a backward),
// so its size is 2 x sum over pipelines of stages x micro-batches, plus one per rank (a rank costs memory
// even when it runs nothing). The limit is process-wide: kDefaultMaxOps unless the CLI's --max-ops says
// otherwise.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pp {

struct Placement;

// 5 x 10^7 ops: 16x the largest schedule in the bench (zbv P=64 M=8192, 3.1M ops) and, at the measured
// kBytesPerOp, about 6.4 GB of peak memory for `simulate`.
inline constexpr std::uint64_t kDefaultMaxOps = 50'000'000;
// Peak resident memory per op of the schedule a command reads, rounded up with margin; used only to print an
// estimate. Measured on zbv P=64, M = 2048..8192, native text and PyTorch CSV (docs/benchmarks.md, "Reading
// speed against awk"):
// verify and simulate of a valid file 42-53 bytes, an invalid one (the graph is built to explain it) about 73,
// simulate --ops (every slot's times kept) about 84.
inline constexpr std::uint64_t kBytesPerOp = 128;

// Thrown when a size is over the limit; readers turn it into an InputError at the declaration's position.
struct SizeLimitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::uint64_t max_ops();
void set_max_ops(std::uint64_t ops);  // 0 restores the default

// a * b and a + b, saturating at UINT64_MAX instead of wrapping.
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);

// The ops a placement admits at the least (see above), saturating.
std::uint64_t placement_ops(const Placement& placement);

// "10^12" for powers of ten, "1200000" below 10^7, "1.2 x 10^12" otherwise.
std::string format_count(std::uint64_t count);
// "about 190 GB", "about 12 MB".
std::string format_bytes(std::uint64_t bytes);

// Empty when `ops` is within the limit; otherwise the reason, e.g.
// "1000000 stages x 1000000 micro-batches = 2 x 10^12 ops, about 256 TB: over the limit of 5 x 10^7 ops
//  (--max-ops raises it)". `what` describes how the count arises ("1000000 stages x 1000000 micro-batches").
std::string size_problem(std::uint64_t ops, const std::string& what);
// Throws SizeLimitError with size_problem's text when over the limit.
void require_size(std::uint64_t ops, const std::string& what);
// The same for a placement; `what` is built from its pipelines.
void require_placement_size(const Placement& placement);
std::string placement_size_text(const Placement& placement);

}  // namespace pp
