// Z3 loaded on first use (CMake option PP_LAZY_Z3, on by default on x86-64 Linux).
//
// Loading libz3 (23 MB, 18,600 relocations, its static constructors) cost every pipeproof process about
// 4.5 ms of CPU at start-up on the 2-core VM -- a third of `verify` of a 131k-op file -- although only the
// search, the prover and the chunk optimiser call it. With PP_LAZY_Z3 the executables do not link libz3:
// every function libz3 exports (listed at configure time by `nm -D`, generated into z3_lazy_table.cpp) is
// a two-instruction stub here, `Z3_x: mov $index, %r11d; jmp *pp_z3_table[index]`. Each table entry starts at
// pp_z3_resolve, which keeps the argument registers, dlopens libz3 once, looks the function up, stores its
// address in the table and jumps to it; from then on a call costs one indirect jump, as through the PLT.
// The stubs take no frame, so unwinding and the caller's view are those of a direct call.
#ifdef PP_Z3_LAZY

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
extern const char* const pp_z3_names[];  // z3_lazy_table.cpp, generated
extern const std::size_t pp_z3_count;
extern void* pp_z3_table[];
void* pp_z3_bind(std::size_t index) noexcept;
}

namespace {

void* open_z3() noexcept {
    // The soname first (the dynamic linker's search, as a linked libz3 would be found), then the file found at
    // configure time.
    void* library = dlopen(PP_Z3_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen(PP_Z3_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        std::fprintf(stderr, "pipeproof: cannot load the Z3 library (%s): %s\n", PP_Z3_SONAME, dlerror());
        std::fflush(stderr);
        std::_Exit(2);
    }
    return library;
}

}  // namespace

// The address of function `index`, stored in the table for the next calls. Called by pp_z3_resolve, with the
// caller's arguments saved; thread-safe (a second thread binding the same index stores the same address).
void* pp_z3_bind(std::size_t index) noexcept {
    static void* const library = open_z3();
    void* address = index < pp_z3_count ? dlsym(library, pp_z3_names[index]) : nullptr;
    if (!address) {
        std::fprintf(stderr, "pipeproof: the Z3 library (%s) has no function %s\n", PP_Z3_SONAME,
                     index < pp_z3_count ? pp_z3_names[index] : "?");
        std::fflush(stderr);
        std::_Exit(2);
    }
    __atomic_store_n(&pp_z3_table[index], address, __ATOMIC_RELEASE);
    return address;
}

// Entered by a stub with the function's index in %r11 and the stack as the caller left it (return address on
// top). Saves every register that can carry an argument (integer, %al for varargs, xmm0-7), binds, restores,
// and jumps to the function, which returns straight to the caller.
asm(R"(
    .text
    .globl pp_z3_resolve
    .hidden pp_z3_resolve
    .type pp_z3_resolve, @function
pp_z3_resolve:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    pushq %rdi
    pushq %rsi
    pushq %rdx
    pushq %rcx
    pushq %r8
    pushq %r9
    pushq %rax
    pushq %r11
    subq $128, %rsp
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
    movq %r11, %rdi
    call pp_z3_bind
    movq %rax, %r11
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movdqu 32(%rsp), %xmm2
    movdqu 48(%rsp), %xmm3
    movdqu 64(%rsp), %xmm4
    movdqu 80(%rsp), %xmm5
    movdqu 96(%rsp), %xmm6
    movdqu 112(%rsp), %xmm7
    addq $136, %rsp
    popq %rax
    popq %r9
    popq %r8
    popq %rcx
    popq %rdx
    popq %rsi
    popq %rdi
    popq %rbp
    .cfi_def_cfa %rsp, 8
    jmp *%r11
    .cfi_endproc
    .size pp_z3_resolve, .-pp_z3_resolve
)");

#endif  // PP_Z3_LAZY
