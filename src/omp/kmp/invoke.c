/* Calling a microtask with the shared variables the compiler handed
 * __kmpc_fork_call as varargs: microtask(&gtid, &tid, a0, ..., an-1).
 * The count is known only at run time, so on x86-64 a small routine lays
 * the arguments out as the System V ABI wants them (six in registers, the
 * rest on a 16-byte aligned stack); elsewhere a switch covers up to 16. */
#include "omp/kmp/kmp.h"

#if defined(__x86_64__)
/* herd__kmp_invoke(fn=rdi, gtid=rsi, tid=rdx, argc=ecx, argv=r8).
 * rbx keeps fn, r12 argv, r13 argc across the pushes; rbp frames it. */
__asm__(".text\n"
        ".globl herd__kmp_invoke\n"
        ".hidden herd__kmp_invoke\n"
        ".type herd__kmp_invoke,@function\n"
        "herd__kmp_invoke:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n" /* rsp is 16-byte aligned here */
        "  movq %rdi, %rbx\n"
        "  movq %rsi, %r14\n" /* gtid */
        "  movq %rdx, %r11\n" /* tid */
        "  movslq %ecx, %r13\n"
        "  movq %r8, %r12\n"
        "  movq %r13, %rax\n" /* stack args: argc - 4 when argc > 4 */
        "  subq $4, %rax\n"
        "  jle 2f\n"
        "  testq $1, %rax\n" /* an odd count: pad to keep the alignment */
        "  jz 1f\n"
        "  subq $8, %rsp\n"
        "1:\n"
        "  movq -8(%r12,%r13,8), %r10\n" /* push argv[argc-1] .. argv[4] */
        "  pushq %r10\n"
        "  decq %r13\n"
        "  cmpq $4, %r13\n"
        "  jg 1b\n"
        "2:\n"
        "  movq %r14, %rdi\n"
        "  movq %r11, %rsi\n"
        "  movq 0(%r12), %rdx\n" /* argv has at least 4 slots (fork.c) */
        "  movq 8(%r12), %rcx\n"
        "  movq 16(%r12), %r8\n"
        "  movq 24(%r12), %r9\n"
        "  xorl %eax, %eax\n" /* a variadic callee reads al */
        "  callq *%rbx\n"
        "  leaq -32(%rbp), %rsp\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size herd__kmp_invoke, .-herd__kmp_invoke\n");
#else
void herd__kmp_invoke(kmpc_micro fn, kmp_int32 *g, kmp_int32 *t, int argc, void **a) {
    switch (argc) {
#define A4 a[0], a[1], a[2], a[3]
#define A8 A4, a[4], a[5], a[6], a[7]
#define A12 A8, a[8], a[9], a[10], a[11]
    case 0:
        fn(g, t);
        return;
    case 1:
        fn(g, t, a[0]);
        return;
    case 2:
        fn(g, t, a[0], a[1]);
        return;
    case 3:
        fn(g, t, a[0], a[1], a[2]);
        return;
    case 4:
        fn(g, t, A4);
        return;
    case 5:
        fn(g, t, A4, a[4]);
        return;
    case 6:
        fn(g, t, A4, a[4], a[5]);
        return;
    case 7:
        fn(g, t, A4, a[4], a[5], a[6]);
        return;
    case 8:
        fn(g, t, A8);
        return;
    case 9:
        fn(g, t, A8, a[8]);
        return;
    case 10:
        fn(g, t, A8, a[8], a[9]);
        return;
    case 11:
        fn(g, t, A8, a[8], a[9], a[10]);
        return;
    case 12:
        fn(g, t, A12);
        return;
    case 13:
        fn(g, t, A12, a[12]);
        return;
    case 14:
        fn(g, t, A12, a[12], a[13]);
        return;
    case 15:
        fn(g, t, A12, a[12], a[13], a[14]);
        return;
    case 16:
        fn(g, t, A12, a[12], a[13], a[14], a[15]);
        return;
    default:
        herd__omp_fatal("a parallel region with %d shared variables: this build handles 16 "
                        "(x86-64 handles any number)",
                        argc);
    }
}
#endif
