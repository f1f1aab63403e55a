/* x86-64 System V context switch. See context.h for the contract.
 * Saved frame, from the saved stack pointer upward:
 *   +0  MXCSR (4 bytes), x87 control word (2 bytes), padding
 *   +8  r15, +16 r14, +24 r13, +32 r12, +40 rbx, +48 rbp, +56 return address
 * A fresh context (context.c) fakes this frame with r12 = entry and the
 * return address = herd__ctx_trampoline; herd__ctx_call leaves it on the
 * caller's stack. */
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

    /* herd__ctx_call(save, sp, fn, arg): save the caller's context in
     * *save as herd__ctx_swap does, then call fn(arg) on the stack whose
     * top is sp. A switch to *save returns from this call, and so does
     * fn's return, which needs no switch: rbx keeps the frame's address
     * across fn, the pops restore the caller's registers, and the control
     * words need no reload (fn preserves them, as the ABI has it do). The
     * call and the returns pair up for the CPU's return prediction. The
     * CFA follows rbx while fn runs, so debuggers unwind from fn's stack
     * into the caller's. */
    .globl herd__ctx_call
    .hidden herd__ctx_call
    .type herd__ctx_call, @function
    .p2align 4
herd__ctx_call:
    .cfi_startproc
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbp, 0
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset rbx, 0
    pushq %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset r12, 0
    pushq %r13
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset r13, 0
    pushq %r14
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset r14, 0
    pushq %r15
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset r15, 0
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsp, %rbx
    .cfi_def_cfa_register rbx
    movq %rsi, %rsp
    movq %rcx, %rdi
    callq *%rdx
    leaq 8(%rbx), %rsp
    .cfi_def_cfa rsp, 56
    popq %r15
    .cfi_adjust_cfa_offset -8
    .cfi_restore r15
    popq %r14
    .cfi_adjust_cfa_offset -8
    .cfi_restore r14
    popq %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore r13
    popq %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore r12
    popq %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore rbx
    popq %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore rbp
    ret
    .cfi_endproc
    .size herd__ctx_call, .-herd__ctx_call

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
