// How the pipeproof executable allocates memory. Two measures, both for schedules of millions of ops, where
// verify of a 3.1M-op file spent 26-36 % of its CPU in page faults of freshly allocated arrays (one fault per
// 4 KiB page, expensive under a virtualised MMU) and much of its user time in TLB misses on them:
//
// - The global operator new asks for transparent huge pages on the 2 MiB-aligned interior of every block of
//   8 MiB or more (the per-op arrays). Debian's default THP mode is "madvise", so without the hint every
//   page is a 4 KiB page. madvise is only a hint: where THP is off it fails and nothing changes.
// - configure_allocation() fixes glibc's mmap threshold at 1 MiB. By default the threshold rises to the
//   size of the largest block freed so far (up to 32 MiB): after the file text is freed, the next arrays
//   come from the heap, whose freed space is not returned, and simulate's peak grew by a fifth.
//
// - A reserve of address space (kReserve, mapped, never touched) is given back when an allocation first fails,
//   and that allocation then throws std::bad_alloc as usual: the unwinding that follows (nlohmann's json
//   destructor allocates, for one) and the error document get room. Without it an address-space limit
//   (ulimit -v) ended `show --json` in std::terminate (exit 134) instead of exit 2 with an error document.
//
// Figures: docs/benchmarks.md, "Reading speed against awk".
#include "cli/memory_policy.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAdviseFrom = 4 * kHugePage;
constexpr int kMmapThreshold = 1 << 20;

void advise_huge_pages(void* block, std::size_t bytes) {
    const auto first = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
    const std::uintptr_t end = (first + bytes) & ~(kHugePage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Blocks from the mmap threshold up to kAdviseFrom are faulted in with one call instead of one trap per page.
void populate(void* block, std::size_t bytes) {
    constexpr std::uintptr_t kPage = 4096;
    const auto first = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t begin = (first + kPage - 1) & ~(kPage - 1);
    const std::uintptr_t end = (first + bytes) & ~(kPage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

void* allocate(std::size_t bytes) noexcept {
    void* block = std::malloc(bytes == 0 ? 1 : bytes);
    if (block && bytes >= kAdviseFrom) advise_huge_pages(block, bytes);
    else if (block && bytes >= kMmapThreshold) populate(block, bytes);
    return block;
}

constexpr std::size_t kReserve = std::size_t{32} << 20;
std::atomic<void*> g_reserve{nullptr};

void* allocate_or_throw(std::size_t bytes) {
    void* block = allocate(bytes);
    if (!block) {
        if (void* reserve = g_reserve.exchange(nullptr)) munmap(reserve, kReserve);
        throw std::bad_alloc();
    }
    return block;
}

}  // namespace

namespace pp::cli {

void configure_allocation() {
    mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
    void* reserve = mmap(nullptr, kReserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserve != MAP_FAILED) g_reserve.store(reserve);
}

}  // namespace pp::cli

// Under AddressSanitizer its own operator new stays (it checks new/delete pairing).
#ifndef __SANITIZE_ADDRESS__
void* operator new(std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new[](std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { std::free(block); }
void operator delete[](void* block, const std::nothrow_t&) noexcept { std::free(block); }
#endif
