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
    f[1] = 0;                                /* r15 */
    f[2] = 0;                                /* r14 */
    f[3] = 0;                                /* r13 */
    f[4] = (uint64_t)(uintptr_t)entry;       /* r12: called by the trampoline */
    f[5] = 0;                                /* rbx */
    f[6] = 0;                                /* rbp: ends frame-pointer walks */
    f[7] = (uint64_t)(uintptr_t)herd__ctx_trampoline; /* return address */
    return f;
}
#else
#error "herd: no context switch for this ISA yet (src/arch/context_<isa>.S)"
#endif
