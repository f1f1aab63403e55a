/* libomp's GOMP_* compatibility, as libomp exports it: every GOMP_* entry
 * point of the libgomp front end is also at LLVM's version node (VERSION).
 * A clang or flang program that calls a GOMP_* routine itself, or links an
 * object gcc compiled, is linked against libomp and asks for
 * GOMP_name@VERSION; herd's GOMP_name is at libgomp's node (libgomp.map).
 *
 * A symbol can have one version of its own, and a .symver alias must be
 * defined in the routine's own file; so each name gets a thunk here that
 * jumps to the routine (a tail jump keeps every argument and the return
 * value as they are, whatever the signature) under the name@VERSION. The
 * names come from libgomp.map, the one list (CMakeLists.txt writes
 * gomp_names.h from it). The extra jump is on no path that gcc's binaries
 * take: they ask for libgomp's nodes. */

#if defined(__x86_64__)
#define HERD_TAIL_JUMP(sym) "jmp " sym "@PLT"
#elif defined(__aarch64__)
#define HERD_TAIL_JUMP(sym) "b " sym
#else
#error "a tail jump for this architecture (src/omp/kmp/gomp.c)"
#endif

/* One line of assembly a line: */
/* clang-format off */
#define GOMP_AT_VERSION(name)                                                                      \
    __asm__(".text\n\t"                                                                            \
            ".globl herd__llvm_" #name "\n\t"                                                      \
            ".type herd__llvm_" #name ", %function\n"                                              \
            "herd__llvm_" #name ":\n\t"                                                            \
            HERD_TAIL_JUMP(#name) "\n\t"                                                           \
            ".size herd__llvm_" #name ", . - herd__llvm_" #name "\n\t"                             \
            ".symver herd__llvm_" #name ", " #name "@VERSION");
/* clang-format on */

#include "gomp_names.h"
