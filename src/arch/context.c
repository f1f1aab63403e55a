/* Fresh contexts for herd__ctx_swap(): build the frame the switch pops. */
#include "arch/context.h"

#include <stdint.h>

#if defined(__x86_64__)
void herd__ctx_trampoline(void);

void *herd__ctx_make(void *stack_top, herd__ctx_entry entry) {
    /* x = the stack pointer after `ret` into the trampoline: 16-byte aligned,
     * as the ABI wants just before the trampoline's call. */
    uintptr_t x = ((uintptr_t)stack_top & ~(uintptr_t)15) - 16;
    uint64_t *f = (uint64_t *)(x - 64);
    uint32_t mxcsr;
    uint16_t fpucw;
    /* New contexts inherit the creator's floating-point control state. */
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    f[0] = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
    f[1] = 0;                                         /* r15 */
    f[2] = 0;                                         /* r14 */
    f[3] = 0;                                         /* r13 */
    f[4] = (uint64_t)(uintptr_t)entry;                /* r12: called by the trampoline */
    f[5] = 0;                                         /* rbx */
    f[6] = 0;                                         /* rbp: ends frame-pointer walks */
    f[7] = (uint64_t)(uintptr_t)herd__ctx_trampoline; /* return address */
    return f;
}
#elif defined(__aarch64__)
void herd__ctx_trampoline(void);

void *herd__ctx_make(void *stack_top, herd__ctx_entry entry) {
    /* The frame context_aarch64.S pops: 176 bytes, the stack pointer after
     * the pop 16-byte aligned as AAPCS64 requires. */
    uintptr_t top = (uintptr_t)stack_top & ~(uintptr_t)15;
    uint64_t *f = (uint64_t *)(top - 176);
    for (int i = 0; i < 22; i++)
        f[i] = 0;
    f[0] = (uint64_t)(uintptr_t)entry;                 /* x19: called by the trampoline */
    f[10] = 0;                                         /* x29: ends frame-pointer walks */
    f[11] = (uint64_t)(uintptr_t)herd__ctx_trampoline; /* x30: where `ret` goes */
    uint64_t fpcr;
    /* New contexts inherit the creator's floating-point control state. */
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    f[20] = fpcr;
    return f;
}
#else
#error "herd: no context switch for this ISA yet (src/arch/context_<isa>.S)"
#endif
