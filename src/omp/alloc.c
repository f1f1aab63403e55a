/* OpenMP memory allocators (omp_alloc and friends, the `allocate`
 * directive and clause through GOMP_alloc/GOMP_free): docs/design/
 * openmp.md, "Allocators".
 *
 * Every memory space is the host's memory (as the system libgomp without
 * memkind). An allocator is a predefined handle (1..8: default traits) or a
 * record made by omp_init_allocator, whose handle is its address. Traits
 * honoured: alignment, pool_size (bytes outstanding, each block counted
 * with its header, as libgomp and libomp count theirs, atomically; past it
 * the fallback applies), fallback and fb_data, pinned (pages of
 * the block's own, mmap'd and mlock'd; a failure applies the fallback). sync_hint, access and
 * partition are checked and have no effect on one host memory. A trait with a value it does not
 * take makes omp_init_allocator return omp_null_allocator, as the specification says.
 *
 * Each block has a header just before the pointer returned: where the
 * block starts, its size and its allocator (omp_free and omp_realloc need
 * them; the allocator argument of omp_free may be omp_null_allocator). */
#include "omp/omp.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

/* GCC 12's omp.h values */
enum { MS_DEFAULT = 0, MS_LAST = 4 };
enum { AL_NULL = 0, AL_DEFAULT = 1, AL_LAST_PREDEFINED = 8 };
enum {
    ATK_SYNC_HINT = 1,
    ATK_ALIGNMENT,
    ATK_ACCESS,
    ATK_POOL_SIZE,
    ATK_FALLBACK,
    ATK_FB_DATA,
    ATK_PINNED,
    ATK_PARTITION
};
#define ATV_DEFAULT ((uintptr_t)-1)
enum {
    ATV_FALSE = 0,
    ATV_TRUE = 1,
    ATV_CONTENDED = 3,
    ATV_UNCONTENDED,
    ATV_SERIALIZED,
    ATV_PRIVATE,
    ATV_ALL,
    ATV_THREAD,
    ATV_PTEAM,
    ATV_CGROUP,
    ATV_DEFAULT_MEM_FB,
    ATV_NULL_FB,
    ATV_ABORT_FB,
    ATV_ALLOCATOR_FB,
    ATV_ENVIRONMENT,
    ATV_NEAREST,
    ATV_BLOCKED,
    ATV_INTERLEAVED
};

typedef struct omp_alloctrait {
    int key;
    uintptr_t value;
} omp_alloctrait;

typedef struct alloc_rec {
    size_t alignment;
    size_t pool_size; /* 0: no pool */
    _Atomic size_t used;
    int fallback; /* ATV_*_FB */
    uintptr_t fb_data;
    int pinned;
} alloc_rec;

typedef struct block_hdr {
    void *base;
    size_t size;
    alloc_rec *a;
    size_t mapped; /* pinned: the length of the block's own mapping; 0: malloc'd */
} block_hdr;

/* What a block of `size` bytes counts against its allocator's pool: its
 * bytes and its header, as libgomp and libomp count theirs (libgomp's
 * header is as large; both also count the padding of an alignment above
 * 8, which herd does not, so herd never refuses a block they grant). Two
 * 1 MiB blocks do not fit a 2 MiB pool (LLVM's omp_alloc_hbw.c). */
#define POOL_CHARGE(size) ((size) + sizeof(block_hdr))

static alloc_rec predefined = {1, 0, 0, ATV_DEFAULT_MEM_FB, 0, 0};
/* def-allocator-var: an ICV of the data environment (icv.def_alloc, 0:
 * OMP_ALLOCATOR's), so a region's members and tasks inherit what their
 * encountering task set. */
static uintptr_t def_allocator(void) {
    uintptr_t h = herd__omp_task()->icv->def_alloc;
    return h ? h : (uintptr_t)herd__omp_g.def_allocator;
}

static alloc_rec *lookup(uintptr_t h) {
    if (h == AL_NULL) {
        h = def_allocator();
        if (h == AL_NULL)
            h = AL_DEFAULT;
    }
    return h <= AL_LAST_PREDEFINED ? &predefined : (alloc_rec *)h;
}

static void *alloc_with(uintptr_t handle, size_t align, size_t size, int depth);

/* The allocator could not serve: its fallback trait decides. */
static void *fall_back(alloc_rec *a, uintptr_t handle, size_t align, size_t size, int depth) {
    switch (a->fallback) {
    case ATV_NULL_FB:
        return NULL;
    case ATV_ABORT_FB:
        herd__omp_fatal("an OpenMP allocator (%#lx) could not allocate %zu bytes and its fallback "
                        "is abort_fb",
                        (unsigned long)handle, size);
    case ATV_ALLOCATOR_FB:
        if (depth < 16) /* a chain of fallbacks, not a cycle */
            return alloc_with(a->fb_data, align, size, depth + 1);
        return NULL;
    default: /* default_mem_fb: the default memory space's allocator */
        return a == &predefined ? NULL : alloc_with(AL_DEFAULT, align, size, depth + 1);
    }
}

static void *alloc_with(uintptr_t handle, size_t align, size_t size, int depth) {
    if (!size)
        return NULL; /* a block of no bytes is no block (as libgomp answers) */
    alloc_rec *a = lookup(handle);
    if (a->alignment > align)
        align = a->alignment;
    if (align < sizeof(block_hdr))
        align = sizeof(block_hdr); /* the header's own alignment, and malloc's */
    if (size > SIZE_MAX / 2 - align)
        return fall_back(a, handle, align, size, depth);
    if (a->pool_size) {
        /* ORDER: relaxed; only the count matters (no data is published). */
        size_t u = atomic_fetch_add_explicit(&a->used, POOL_CHARGE(size), memory_order_relaxed);
        if (u + POOL_CHARGE(size) > a->pool_size) {
            /* ORDER: as above */
            atomic_fetch_sub_explicit(&a->used, POOL_CHARGE(size), memory_order_relaxed);
            return fall_back(a, handle, align, size, depth);
        }
    }
    size_t total = size + align + sizeof(block_hdr), mapped = 0;
    void *base;
    if (a->pinned) { /* pages of its own: unlocking them never unpins a neighbour */
        mapped = total;
        base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
            base = NULL;
        } else if (mlock(base, mapped) != 0) {
            munmap(base, mapped);
            base = NULL;
        }
    } else {
        base = malloc(total);
    }
    if (!base) {
        if (a->pool_size) /* ORDER: relaxed, as above */
            atomic_fetch_sub_explicit(&a->used, POOL_CHARGE(size), memory_order_relaxed);
        return fall_back(a, handle, align, size, depth);
    }
    uintptr_t p = ((uintptr_t)base + sizeof(block_hdr) + align - 1) & ~(uintptr_t)(align - 1);
    block_hdr *h = (block_hdr *)p - 1;
    h->base = base;
    h->size = size;
    h->a = a;
    h->mapped = mapped;
    return (void *)p;
}

static int power_of_two(size_t v) {
    return v && !(v & (v - 1));
}

OMP_API void *omp_aligned_alloc(size_t align, size_t size, uintptr_t allocator) {
    if (!power_of_two(align))
        return NULL;
    return alloc_with(allocator, align, size, 0);
}

OMP_API void *omp_alloc(size_t size, uintptr_t allocator) {
    return alloc_with(allocator, 1, size, 0);
}

OMP_API void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t allocator) {
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = omp_aligned_alloc(align, n * size, allocator);
    if (p)
        memset(p, 0, n * size);
    return p;
}

OMP_API void *omp_calloc(size_t n, size_t size, uintptr_t allocator) {
    return omp_aligned_calloc(1, n, size, allocator);
}

OMP_API void omp_free(void *ptr, uintptr_t allocator) {
    (void)allocator; /* the block knows its own */
    if (!ptr)
        return;
    block_hdr *h = (block_hdr *)ptr - 1;
    alloc_rec *a = h->a;
    if (a->pool_size) /* ORDER: relaxed; the pool's count only (alloc_with) */
        atomic_fetch_sub_explicit(&a->used, POOL_CHARGE(h->size), memory_order_relaxed);
    if (h->mapped)
        munmap(h->base, h->mapped);
    else
        free(h->base);
}

/* allocator omp_null_allocator: the block's own (the specification's
 * rule). Within one pool only the growth counts: the old block's bytes are
 * given back before the new block is taken, and counted again if it cannot
 * be (the old block stays as it was), or before omp_free takes them off. */
OMP_API void *omp_realloc(void *ptr, size_t size, uintptr_t allocator, uintptr_t free_allocator) {
    if (!ptr)
        return omp_alloc(size, allocator);
    if (!size) {
        omp_free(ptr, free_allocator);
        return NULL;
    }
    block_hdr *h = (block_hdr *)ptr - 1;
    alloc_rec *old = h->a;
    size_t old_size = h->size;
    uintptr_t to = allocator ? allocator : (uintptr_t)old;
    int same_pool = old->pool_size && lookup(to) == old;
    /* ORDER: relaxed; the pool's count only (alloc_with). */
    if (same_pool)
        atomic_fetch_sub_explicit(&old->used, POOL_CHARGE(old_size), memory_order_relaxed);
    void *n = alloc_with(to, 1, size, 0);
    if (same_pool) /* ORDER: relaxed, as above */
        atomic_fetch_add_explicit(&old->used, POOL_CHARGE(old_size), memory_order_relaxed);
    if (!n)
        return NULL; /* the old block is left as it was */
    memcpy(n, ptr, old_size < size ? old_size : size);
    omp_free(ptr, free_allocator);
    return n;
}

OMP_API void *GOMP_alloc(size_t align, size_t size, uintptr_t allocator) {
    return omp_aligned_alloc(align, size, allocator);
}

OMP_API void GOMP_free(void *ptr, uintptr_t allocator) {
    omp_free(ptr, allocator);
}

/* A trait's value check; 1 when it is taken (and applied to a). */
static int apply_trait(alloc_rec *a, const omp_alloctrait *t) {
    uintptr_t v = t->value;
    int dflt = v == ATV_DEFAULT;
    switch (t->key) {
    case ATK_SYNC_HINT:
        return dflt || (v >= ATV_CONTENDED && v <= ATV_PRIVATE);
    case ATK_ALIGNMENT:
        if (dflt)
            return 1;
        a->alignment = (size_t)v;
        return power_of_two((size_t)v);
    case ATK_ACCESS:
        return dflt || (v >= ATV_ALL && v <= ATV_CGROUP);
    case ATK_POOL_SIZE:
        a->pool_size = dflt ? 0 : (size_t)v;
        return 1;
    case ATK_FALLBACK:
        if (dflt)
            return 1;
        a->fallback = (int)v;
        return v >= ATV_DEFAULT_MEM_FB && v <= ATV_ALLOCATOR_FB;
    case ATK_FB_DATA:
        a->fb_data = v;
        return 1;
    case ATK_PINNED:
        if (dflt || v == ATV_FALSE)
            return 1;
        a->pinned = 1;
        return v == ATV_TRUE;
    case ATK_PARTITION:
        return dflt || (v >= ATV_ENVIRONMENT && v <= ATV_INTERLEAVED);
    default:
        return 0;
    }
}

OMP_API uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits,
                                     const omp_alloctrait traits[]) {
    if (memspace > MS_LAST || ntraits < 0 || (ntraits && !traits))
        return AL_NULL;
    alloc_rec a = {1, 0, 0, ATV_DEFAULT_MEM_FB, 0, 0};
    for (int i = 0; i < ntraits; i++)
        if (!apply_trait(&a, &traits[i]))
            return AL_NULL;
    if (a.fallback == ATV_ALLOCATOR_FB && !a.fb_data)
        return AL_NULL; /* allocator_fb needs fb_data */
    alloc_rec *r = malloc(sizeof *r);
    if (!r)
        return AL_NULL;
    *r = a;
    return (uintptr_t)r;
}

/* OMP_ALLOCATOR's OpenMP 5.1 form, memspace[:trait=value[,trait=value...]]:
 * the allocator it names (made once, at start-up), 0 when s is not of that
 * form (icv.c then stops with the accepted forms). */
typedef struct name_val {
    const char *name;
    uintptr_t v;
} name_val;

static int lookup_name(const name_val *t, const char *s, size_t len, uintptr_t *v) {
    for (; t->name; t++)
        if (strlen(t->name) == len && !strncasecmp(s, t->name, len)) {
            *v = t->v;
            return 1;
        }
    return 0;
}

static int trait_of(const char *s, size_t len, omp_alloctrait *out) {
    static const name_val keys[] = {
        {"sync_hint", ATK_SYNC_HINT}, {"alignment", ATK_ALIGNMENT}, {"access", ATK_ACCESS},
        {"pool_size", ATK_POOL_SIZE}, {"fallback", ATK_FALLBACK},   {"fb_data", ATK_FB_DATA},
        {"pinned", ATK_PINNED},       {"partition", ATK_PARTITION}, {0, 0}};
    static const name_val words[] = {{"true", ATV_TRUE},
                                     {"false", ATV_FALSE},
                                     {"contended", ATV_CONTENDED},
                                     {"uncontended", ATV_UNCONTENDED},
                                     {"serialized", ATV_SERIALIZED},
                                     {"private", ATV_PRIVATE},
                                     {"all", ATV_ALL},
                                     {"thread", ATV_THREAD},
                                     {"pteam", ATV_PTEAM},
                                     {"cgroup", ATV_CGROUP},
                                     {"default_mem_fb", ATV_DEFAULT_MEM_FB},
                                     {"null_fb", ATV_NULL_FB},
                                     {"abort_fb", ATV_ABORT_FB},
                                     {"allocator_fb", ATV_ALLOCATOR_FB},
                                     {"environment", ATV_ENVIRONMENT},
                                     {"nearest", ATV_NEAREST},
                                     {"blocked", ATV_BLOCKED},
                                     {"interleaved", ATV_INTERLEAVED},
                                     {0, 0}};
    static const name_val allocators[] = {
        {"omp_default_mem_alloc", 1}, {"omp_large_cap_mem_alloc", 2}, {"omp_const_mem_alloc", 3},
        {"omp_high_bw_mem_alloc", 4}, {"omp_low_lat_mem_alloc", 5},   {"omp_cgroup_mem_alloc", 6},
        {"omp_pteam_mem_alloc", 7},   {"omp_thread_mem_alloc", 8},    {0, 0}};
    const char *eq = memchr(s, '=', len);
    uintptr_t key;
    if (!eq || !lookup_name(keys, s, (size_t)(eq - s), &key))
        return 0;
    const char *v = eq + 1;
    size_t vlen = len - (size_t)(v - s);
    out->key = (int)key;
    if (key == ATK_ALIGNMENT || key == ATK_POOL_SIZE) { /* a positive number */
        if (!vlen || vlen > 19)
            return 0;
        uintptr_t n = 0;
        for (size_t i = 0; i < vlen; i++) {
            if (v[i] < '0' || v[i] > '9')
                return 0;
            n = n * 10 + (uintptr_t)(v[i] - '0');
        }
        out->value = n;
        return n > 0;
    }
    if (key == ATK_FB_DATA)
        return lookup_name(allocators, v, vlen, &out->value);
    return lookup_name(words, v, vlen, &out->value);
}

uintptr_t herd__omp_allocator_from_env(const char *s) {
    static const name_val spaces[] = {{"omp_default_mem_space", 0}, {"omp_large_cap_mem_space", 1},
                                      {"omp_const_mem_space", 2},   {"omp_high_bw_mem_space", 3},
                                      {"omp_low_lat_mem_space", 4}, {0, 0}};
    const char *colon = strchr(s, ':');
    size_t nlen = colon ? (size_t)(colon - s) : strlen(s);
    uintptr_t space;
    if (!lookup_name(spaces, s, nlen, &space))
        return 0;
    omp_alloctrait traits[16];
    int n = 0;
    for (const char *p = colon ? colon + 1 : NULL; p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 16 || !trait_of(p, len, &traits[n++]))
            return 0;
        p = comma ? comma + 1 : NULL;
    }
    return omp_init_allocator(space, n, traits); /* 0 (omp_null_allocator): not valid */
}

OMP_API void omp_destroy_allocator(uintptr_t allocator) {
    if (allocator > AL_LAST_PREDEFINED)
        free((void *)allocator);
}

OMP_API void omp_set_default_allocator(uintptr_t allocator) {
    herd__omp_icv_change(herd__omp_task())->def_alloc = allocator;
}

OMP_API uintptr_t omp_get_default_allocator(void) {
    uintptr_t h = def_allocator();
    return h ? h : AL_DEFAULT;
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_aligned_alloc, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_alloc, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_aligned_calloc, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_calloc, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_free, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_realloc, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_init_allocator, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_destroy_allocator, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_set_default_allocator, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_get_default_allocator, "OMP_5.0.1");
