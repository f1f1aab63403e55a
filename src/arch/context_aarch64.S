/* AArch64 (AAPCS64) context switch. See context.h for the contract.
 * Saved frame, 176 bytes from the saved stack pointer upward:
 *   +0   x19 x20 x21 x22 x23 x24 x25 x26 x27 x28   (callee-saved)
 *   +80  x29 (frame pointer), x30 (return address)
 *   +96  d8 .. d15                                   (low halves of v8-v15: callee-saved)
 *   +160 FPCR (rounding mode and traps: preserved across calls), padding
 * A fresh context (context.c) fakes this frame with x19 = entry and
 * x30 = herd__ctx_trampoline; herd__ctx_call leaves it on the caller's
 * stack. */
#if defined(__aarch64__)
    /* The frame above, at sp (already lowered by 176). */
    .macro save_frame
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    .endm

    .text
    .globl herd__ctx_swap
    .hidden herd__ctx_swap
    .type herd__ctx_swap, %function
    .p2align 4
herd__ctx_swap:
    .cfi_startproc
    sub sp, sp, #176
    save_frame
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldr x9, [sp, #160]
    msr fpcr, x9
    add sp, sp, #176
    mov x0, x2
    ret
    .cfi_endproc
    .size herd__ctx_swap, .-herd__ctx_swap

    /* herd__ctx_call(save, sp, fn, arg): save the caller's context in
     * *save as herd__ctx_swap does, then call fn(arg) on the stack whose
     * top is sp. A switch to *save returns from this call (x30 in the
     * saved frame is the caller's return address), and so does fn's
     * return, which needs no switch: x19 keeps the frame's address across
     * fn, and of the saved registers only x19, x29 and x30 have to come
     * back (fn preserves the others, FPCR included, as AAPCS64 has it
     * do). The CFA follows x19 while fn runs, so debuggers unwind from
     * fn's stack into the caller's. */
    .globl herd__ctx_call
    .hidden herd__ctx_call
    .type herd__ctx_call, %function
    .p2align 4
herd__ctx_call:
    .cfi_startproc
    sub sp, sp, #176
    .cfi_def_cfa_offset 176
    save_frame
    .cfi_offset x19, -176
    .cfi_offset x20, -168
    .cfi_offset x21, -160
    .cfi_offset x22, -152
    .cfi_offset x23, -144
    .cfi_offset x24, -136
    .cfi_offset x25, -128
    .cfi_offset x26, -120
    .cfi_offset x27, -112
    .cfi_offset x28, -104
    .cfi_offset x29, -96
    .cfi_offset x30, -88
    mov x9, sp
    str x9, [x0]
    mov x19, sp
    .cfi_def_cfa x19, 176
    mov sp, x1
    mov x0, x3
    blr x2
    mov sp, x19
    .cfi_def_cfa sp, 176
    ldp x19, x20, [sp, #0]
    ldp x29, x30, [sp, #80]
    add sp, sp, #176
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .size herd__ctx_call, .-herd__ctx_call

    .globl herd__ctx_trampoline
    .hidden herd__ctx_trampoline
    .type herd__ctx_trampoline, %function
    .p2align 4
herd__ctx_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    /* x0 holds the transfer value; entry(transfer) must not return. */
    blr x19
    brk #0
    .cfi_endproc
    .size herd__ctx_trampoline, .-herd__ctx_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
