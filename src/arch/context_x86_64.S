/* x86-64 System V context switch. See context.h for the contract.
 * Saved frame, from the saved stack pointer upward:
 *   +0  MXCSR (4 bytes), x87 control word (2 bytes), padding
 *   +8  r15, +16 r14, +24 r13, +32 r12, +40 rbx, +48 rbp, +56 return address
 * A fresh context (context.c) fakes this frame with r12 = entry and the
 * return address = herd__ctx_trampoline. */
#if defined(__x86_64__)
    .text
    .globl herd__ctx_swap
    .hidden herd__ctx_swap
    .type herd__ctx_swap, @function
    .p2align 4
herd__ctx_swap:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    movq %rdx, %rax
    ret
    .cfi_endproc
    .size herd__ctx_swap, .-herd__ctx_swap

    .globl herd__ctx_trampoline
    .hidden herd__ctx_trampoline
    .type herd__ctx_trampoline, @function
    .p2align 4
herd__ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    /* rsp is 16-byte aligned here; entry(transfer) must not return. */
    movq %rax, %rdi
    callq *%r12
    ud2
    .cfi_endproc
    .size herd__ctx_trampoline, .-herd__ctx_trampoline
#endif
    .section .note.GNU-stack,"",@progbits
