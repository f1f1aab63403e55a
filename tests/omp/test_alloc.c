/* OpenMP memory allocators: the predefined ones, omp_init_allocator's
 * traits (alignment, pool_size with each fallback, pinned), calloc and
 * realloc, the default allocator, allocations from many threads at once
 * against one pool, and the allocate clause. */
#include "check_omp.h"

#include <stdint.h>

static int aligned(const void *p, size_t a) {
    return ((uintptr_t)p & (a - 1)) == 0;
}

static void test_predefined(void) {
    char *p = omp_alloc(100, omp_default_mem_alloc);
    CHECK(p != NULL);
    memset(p, 7, 100);
    /* LLVM's libomp 14 answers NULL for omp_large_cap_mem_alloc without
     * libmemkind, though a predefined allocator falls back to the default
     * memory (default_mem_fb): there the default allocator serves. */
    omp_allocator_handle_t large =
        omp_test_on_llvm_libomp() ? omp_default_mem_alloc : omp_large_cap_mem_alloc;
    double *d = omp_aligned_alloc(128, 10 * sizeof(double), large);
    CHECK(d && aligned(d, 128));
    int *z = omp_calloc(1000, sizeof(int), omp_default_mem_alloc);
    CHECK(z != NULL);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(z[i], 0);
    p = omp_realloc(p, 5000, omp_default_mem_alloc, omp_default_mem_alloc);
    CHECK(p != NULL);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(p[i], 7);
    omp_free(p, omp_default_mem_alloc);
    omp_free(d, omp_null_allocator); /* the block knows its allocator */
    omp_free(z, omp_default_mem_alloc);
    omp_free(NULL, omp_default_mem_alloc);
}

static void test_traits(void) {
    omp_alloctrait_t al[] = {{omp_atk_alignment, 256}};
    omp_allocator_handle_t a256 = omp_init_allocator(omp_default_mem_space, 1, al);
    CHECK(a256 != omp_null_allocator);
    for (int i = 0; i < 20; i++) {
        void *p = omp_alloc(1 + i * 37, a256);
        CHECK(p && aligned(p, 256));
        omp_free(p, a256);
    }
    /* a pool of 1000 bytes: null_fb answers NULL past it */
    omp_alloctrait_t pool[] = {{omp_atk_pool_size, 1000}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t small = omp_init_allocator(omp_default_mem_space, 2, pool);
    CHECK(small != omp_null_allocator);
    void *a = omp_alloc(600, small);
    CHECK(a != NULL);
    CHECK(omp_alloc(600, small) == NULL);
    omp_free(a, small);
    a = omp_alloc(600, small); /* the pool has room again (libgomp counts its headers too) */
    CHECK(a != NULL);
    omp_free(a, small);
    /* a block counts with its header (libgomp, libomp, herd): two halves of
     * a pool do not both fit */
    omp_alloctrait_t half[] = {{omp_atk_pool_size, 2048}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t halves = omp_init_allocator(omp_default_mem_space, 2, half);
    CHECK(halves != omp_null_allocator);
    a = omp_alloc(1024, halves);
    CHECK(a != NULL);
    CHECK(omp_alloc(1024, halves) == NULL);
    omp_free(a, halves);
    omp_destroy_allocator(halves);
    /* allocator_fb: past the pool, the fallback allocator serves */
    omp_alloctrait_t chain[] = {{omp_atk_pool_size, 100},
                                {omp_atk_fallback, omp_atv_allocator_fb},
                                {omp_atk_fb_data, (omp_uintptr_t)a256}};
    omp_allocator_handle_t c = omp_init_allocator(omp_default_mem_space, 3, chain);
    CHECK(c != omp_null_allocator);
    void *b = omp_alloc(500, c);
    CHECK(b && aligned(b, 256));
    omp_free(b, c);
    /* default_mem_fb: past the pool, the default memory */
    omp_alloctrait_t dflt[] = {{omp_atk_pool_size, 10}};
    omp_allocator_handle_t dd = omp_init_allocator(omp_default_mem_space, 1, dflt);
    b = omp_alloc(100, dd);
    CHECK(b != NULL);
    omp_free(b, dd);
    /* values a trait does not take: no allocator (LLVM's libomp 14 stops
     * the program at an assertion of its own instead) */
    if (!omp_test_on_llvm_libomp()) {
        omp_alloctrait_t bad_align[] = {{omp_atk_alignment, 3}};
        CHECK(omp_init_allocator(omp_default_mem_space, 1, bad_align) == omp_null_allocator);
        omp_alloctrait_t bad_fb[] = {{omp_atk_fallback, omp_atv_blocked}};
        CHECK(omp_init_allocator(omp_default_mem_space, 1, bad_fb) == omp_null_allocator);
    }
    /* pinned (the system libgomp of GCC 12 makes no such allocator) */
    omp_alloctrait_t pin[] = {{omp_atk_pinned, omp_atv_true}};
    omp_allocator_handle_t pa = omp_init_allocator(omp_default_mem_space, 1, pin);
    if (pa != omp_null_allocator) {
        char *q = omp_alloc(10000, pa);
        CHECK(q != NULL); /* pinned, or from the default memory (default_mem_fb) */
        memset(q, 1, 10000);
        omp_free(q, pa);
        omp_destroy_allocator(pa);
    }
    omp_destroy_allocator(a256);
    omp_destroy_allocator(small);
    omp_destroy_allocator(c);
    omp_destroy_allocator(dd);
}

static void test_default_and_threads(void) {
    CHECK_EQ(omp_get_default_allocator(), omp_default_mem_alloc);
    omp_alloctrait_t pool[] = {{omp_atk_pool_size, 64 * 100}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t p = omp_init_allocator(omp_default_mem_space, 2, pool);
    CHECK(p != omp_null_allocator);
    omp_set_default_allocator(p);
    CHECK_EQ(omp_get_default_allocator(), p);
    void *x = omp_alloc(64 * 60, omp_null_allocator); /* the default: most of the pool */
    CHECK(x != NULL);
    CHECK(omp_alloc(64 * 60, omp_null_allocator) == NULL);
    omp_free(x, omp_null_allocator);
    omp_set_default_allocator(omp_default_mem_alloc);
    int failed = 0;
#pragma omp parallel num_threads(2) reduction(+ : failed)
    for (int r = 0; r < 2000; r++) {
        void *q = omp_alloc(64, p); /* at most 2 of 100 slots in use */
        if (!q)
            failed++;
        else
            omp_free(q, p);
    }
    CHECK_EQ(failed, 0);
    x = omp_alloc(64 * 60, p); /* every block went back to the pool */
    CHECK(x != NULL);
    omp_free(x, p);
    omp_destroy_allocator(p);
}

static void test_allocate_clause(void) {
    int sum = 0;
    int v = 0;
#pragma omp parallel num_threads(2) private(v) allocate(omp_default_mem_alloc : v) reduction(+ : sum)
    {
        v = omp_get_thread_num() + 1;
        sum += v;
    }
    CHECK(sum == 1 || sum == 3);
}

/* Zero bytes give no block; omp_realloc within one pool counts only the
 * growth, and with omp_null_allocator uses the block's allocator. LLVM's
 * libomp 14 takes the new block before it frees the old one, so that a
 * pool must hold both (which OpenMP allows), and for omp_null_allocator
 * allocates from def-allocator-var instead of the block's allocator
 * (OpenMP 5.1, 3.13.9, asks for the block's): the pool's part is not run
 * there. */
static void test_zero_and_realloc(void) {
    CHECK(omp_alloc(0, omp_default_mem_alloc) == NULL);
    CHECK(omp_aligned_calloc(64, 0, 8, omp_default_mem_alloc) == NULL);
    CHECK(omp_realloc(NULL, 0, omp_default_mem_alloc, omp_null_allocator) == NULL);
    if (omp_test_on_llvm_libomp())
        return;
    omp_alloctrait_t pool[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 2, pool);
    CHECK(a != omp_null_allocator);
    CHECK(omp_alloc(0, a) == NULL);
    int *p = omp_alloc(3000, a);
    CHECK(p != NULL);
    p[0] = 7;
    p = omp_realloc(p, 3500, a, a); /* 3000 -> 3500 of 4096: fits */
    CHECK(p != NULL && p[0] == 7);
    p = omp_realloc(p, 4000, omp_null_allocator, omp_null_allocator); /* a's again */
    CHECK(p != NULL && p[0] == 7);
    int *q = omp_alloc(100, a);
    CHECK(q == NULL); /* 4000 + 100 > 4096: the pool counted the last size only */
    CHECK(omp_realloc(p, 4097, a, a) == NULL);
    CHECK(p[0] == 7); /* left as it was */
    CHECK(omp_realloc(p, 0, omp_null_allocator, a) == NULL);
    q = omp_alloc(4000, a); /* everything went back */
    CHECK(q != NULL);
    omp_free(q, a);
    omp_destroy_allocator(a);
}

/* def-allocator-var is an ICV of the data environment: a region's members
 * inherit what the encountering task set. */
static void test_default_inherited(void) {
    omp_alloctrait_t al[] = {{omp_atk_alignment, 256}};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 1, al);
    CHECK(a != omp_null_allocator);
    omp_set_default_allocator(a);
    int wrong = 0, members = 0;
#pragma omp parallel num_threads(2) reduction(+ : wrong, members)
    {
        members++;
        if (omp_get_default_allocator() != a)
            wrong++;
        for (int r = 0; r < 20; r++) {
            void *v = omp_alloc(24, omp_null_allocator);
            if (!v || !aligned(v, 256))
                wrong++;
            omp_free(v, omp_null_allocator);
        }
#pragma omp task shared(wrong)
        {
            if (omp_get_default_allocator() != a) {
#pragma omp atomic
                wrong++;
            }
        }
    }
    CHECK_EQ(wrong, 0);
    CHECK_EQ(members, omp_get_max_threads() < 2 ? omp_get_max_threads() : 2);
    omp_set_default_allocator(omp_default_mem_alloc);
    omp_destroy_allocator(a);
}

/* OMP_ALLOCATOR's OpenMP 5.1 form (memspace:traits), when the run sets
 * OMP_TEST_ALLOCATOR_ALIGN to the alignment trait it gives (CMakeLists.txt,
 * omp.alloc.env51*) with pool_size=8192 and fallback=null_fb: the default
 * allocator is that allocator; otherwise it is omp_default_mem_alloc. */
static void test_env_allocator(void) {
    const char *al = getenv("OMP_TEST_ALLOCATOR_ALIGN");
    omp_allocator_handle_t d = omp_get_default_allocator();
    if (!al) {
        CHECK(d == omp_default_mem_alloc);
        return;
    }
    unsigned long align = strtoul(al, NULL, 10);
    CHECK((uintptr_t)d > 8); /* made from the environment, not predefined */
    char *p = omp_alloc(100, omp_null_allocator);
    CHECK(p != NULL && (uintptr_t)p % align == 0);
    char *q = omp_alloc(5000, omp_null_allocator);
    CHECK(q != NULL);
    CHECK(omp_alloc(5000, omp_null_allocator) == NULL); /* past the pool: null_fb */
    omp_free(q, omp_null_allocator);
    omp_free(p, omp_null_allocator);
}

int main(void) {
    test_env_allocator();
    for (int rep = 0; rep < 2; rep++) {
        test_zero_and_realloc();
        test_default_inherited();
        test_predefined();
        test_traits();
        test_default_and_threads();
        test_allocate_clause();
    }
    printf("omp alloc: ok\n");
    return 0;
}
