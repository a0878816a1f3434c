// How the pipeproof executable allocates memory. Three measures for large schedules, where verify of a 3.1M-op
// file spent 26-36 % of its CPU in page faults of freshly allocated arrays (one fault per 4 KiB page, expensive
// under a virtualised MMU: about 4 us each on the 2-core VM) and much of its user time in TLB misses on them:
//
// - The global operator new asks for transparent huge pages on the 2 MiB-aligned interior of every block of
//   8 MiB or more (the per-op arrays). Debian's default THP mode is "madvise", so without the hint every
//   page is a 4 KiB page. madvise is only a hint: where THP is off it fails and nothing changes.
// - configure_allocation() fixes glibc's mmap threshold at 1 MiB. By default the threshold rises to the
//   size of the largest block freed so far (up to 32 MiB): after the file text is freed, the next arrays
//   come from the heap, whose freed space is not returned, and simulate's peak grew by a fifth.
// - The heap (blocks under 1 MiB: a 131k-op file's text, its rank rows of a few hundred KiB each) is on
//   transparent huge pages too: glibc grows it by kHeapPad more than it needs (address space only, nothing
//   is touched), and each growth is advised at once, so that a fresh 2 MiB of heap costs one fault instead
//   of 512. On a 131k-op PyTorch CSV this took `verify` from 1585 page faults to about 540 and halved its
//   CPU time (docs/benchmarks.md, "Against PyTorch's dry run"). Under an address-space limit that the pad
//   would overshoot, the pad is dropped and the allocation tried again.
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
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAdviseFrom = 4 * kHugePage;
constexpr int kMmapThreshold = 1 << 20;
// Heap blocks from here up are faulted in at once too: glibc writes the top chunk's header into a fresh growth
// before advise_heap() can mark it, so the 2 MiB around that header stays on 4 KiB pages, and whether a file's
// rank rows (a few hundred KiB each) fell there depended on how much start-up had allocated: one trap per page
// then (500 on a 131k-op CSV) instead of one call per row.
constexpr std::size_t kPopulateFrom = 64 << 10;

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

constexpr int kHeapPad = 16 << 20;
std::atomic<bool> g_heap_padded{false};
std::atomic<std::uintptr_t> g_heap_advised{0};  // the heap's end when last advised (0: not configured)

// Advises the heap's growth since the last call: glibc's main arena grows with brk, and every growth is a new
// mapping without the hint. Cheap when nothing grew (sbrk(0) reads a variable).
void advise_heap() {
    const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
    std::uintptr_t advised = g_heap_advised.load(std::memory_order_relaxed);
    if (end == advised) return;
    if (end > advised) {
        const std::uintptr_t begin = (advised + kHugePage - 1) & ~(kHugePage - 1);
        if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
    g_heap_advised.store(end, std::memory_order_relaxed);  // lower too: the heap was trimmed, regrowth is new
}

void* allocate(std::size_t bytes) noexcept {
    void* block = std::malloc(bytes == 0 ? 1 : bytes);
    if (!block && g_heap_padded.exchange(false)) {  // the pad may be what does not fit: without it
        mallopt(M_TOP_PAD, 0);
        block = std::malloc(bytes == 0 ? 1 : bytes);
    }
    if (block && bytes >= kAdviseFrom) advise_huge_pages(block, bytes);
    else if (block && bytes >= kMmapThreshold) populate(block, bytes);
    else if (block && bytes >= 512 && g_heap_advised.load(std::memory_order_relaxed)) {
        advise_heap();
        if (bytes >= kPopulateFrom) populate(block, bytes);
    }
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
    if (mallopt(M_TOP_PAD, kHeapPad)) {
        g_heap_padded.store(true);
        g_heap_advised.store(reinterpret_cast<std::uintptr_t>(sbrk(0)));
    }
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
