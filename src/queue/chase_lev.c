/* Chase-Lev work-stealing deque with the C11 orderings of Le et al. (PPoPP
 * 2013). Protocol, ordering argument and proof sketch: docs/design/chase-lev.md
 * (steps C1..C5 below refer to it).
 *
 * Design notes.
 * - Positions are signed 64-bit. The paper's figure uses size_t, where the
 *   owner's `bottom - 1` on a never-used deque wraps to SIZE_MAX and reads as
 *   "non-empty"; signed positions make t > b mean empty without a special case
 *   and cannot overflow in practice (2^63 pushes).
 * - The paper loads the array pointer in steal with memory_order_consume.
 *   Every compiler we build with implements consume as acquire, and C++ has
 *   deprecated it, so we write acquire: same machine code, a clear contract.
 * - Growth only doubles, and a retired array is kept until herd__cl_fini():
 *   a thief may have loaded the old pointer just before the owner replaced
 *   it, and we have no way to learn when the last such thief is done (no
 *   epochs, no hazard pointers). The retired arrays sum to less than the
 *   current one (1/2 + 1/4 + ...), so keeping them at most doubles the memory.
 * - Rejected: a release store of `bottom` in push instead of the paper's
 *   release fence plus relaxed store. The fence also covers the owner's later
 *   relaxed stores of `bottom` in pop (C3), so a thief that reads a bottom
 *   written by pop still synchronises with the push that filled its slot. A
 *   release store would need the owner's later stores to be in its release
 *   sequence: C11 says they are, C++20 (P0982) dropped that rule, and the
 *   fence does not depend on it.
 *
 * ThreadSanitizer does not model atomic_thread_fence (gcc warns with -Wtsan):
 * it would see no happens-before from a push to the thief that takes its
 * element, and report the caller's payload as a race. Under TSan we therefore
 * build the sequentially consistent form of the same algorithm (Chase and
 * Lev's original): the fenced loads and stores of `top` and `bottom` become
 * seq_cst, and every store of `bottom` becomes at least release. That form is
 * correct on its own, and TSan understands it. The switch is CL_FENCES below.
 */
#include "queue/chase_lev.h"

#include <assert.h>
#include <stdlib.h>

#if defined(__SANITIZE_THREAD__) || defined(HERD_TSAN)
#define CL_FENCES 0
#define CL_ORD(paper, tsan) (tsan)
#else
#define CL_FENCES 1
#define CL_ORD(paper, tsan) (paper)
#endif

#define relaxed memory_order_relaxed
#define acquire memory_order_acquire
#define release memory_order_release
#define seq_cst memory_order_seq_cst

/* Debug builds: owner-only operations must come from one thread, the one
 * that made the first owner call after herd__cl_init(). */
#ifndef NDEBUG
static void assert_owner(herd__cl *q) {
    if (!q->owner_bound) {
        q->owner = pthread_self();
        q->owner_bound = 1;
    }
    assert(pthread_equal(q->owner, pthread_self()) && "herd__cl: owner-only operation");
}
#else
#define assert_owner(q) ((void)0)
#endif

static herd__cl_array *array_new(int64_t capacity) {
    herd__cl_array *a = malloc(sizeof *a + (size_t)capacity * sizeof(a->slot[0]));
    if (!a)
        return NULL;
    a->retired_next = NULL;
    a->mask = capacity - 1;
    for (int64_t i = 0; i < capacity; i++)
        atomic_init(&a->slot[i], NULL);
    return a;
}

int herd__cl_init(herd__cl *q, unsigned initial_log2_capacity) {
    if (initial_log2_capacity < 1)
        initial_log2_capacity = 1;
    if (initial_log2_capacity > 30)
        initial_log2_capacity = 30;
    herd__cl_array *a = array_new((int64_t)1 << initial_log2_capacity);
    if (!a)
        return HERD_ENOMEM;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    atomic_init(&q->array, a);
    q->retired = NULL;
    q->owner_bound = 0;
    return 0;
}

/* C5: nothing is freed before this point; see the design notes above. */
void herd__cl_fini(herd__cl *q) {
    /* ORDER: relaxed; the caller guarantees no other thread uses q (thieves
     * joined), and the join is the synchronisation. */
    free(atomic_load_explicit(&q->array, relaxed));
    atomic_store_explicit(&q->array, NULL, relaxed);
    while (q->retired) {
        herd__cl_array *next = q->retired->retired_next;
        free(q->retired);
        q->retired = next;
    }
}

/* C2, owner only (C2.1-C2.3 in the doc): replace the full array a by one twice as big holding the
 * live positions [t, b), and retire a. Returns the new array, or NULL. */
static herd__cl_array *grow(herd__cl *q, herd__cl_array *a, int64_t t, int64_t b) {
    int64_t cap = a->mask + 1;
    if (cap > ((int64_t)1 << 40))
        return NULL;
    herd__cl_array *n = array_new(2 * cap);
    if (!n)
        return NULL;
    for (int64_t i = t; i < b; i++) {
        /* ORDER: relaxed both; only the owner writes slots, and the release
         * store of `array` below publishes these copies. */
        void *x = atomic_load_explicit(&a->slot[i & a->mask], relaxed);
        atomic_store_explicit(&n->slot[i & n->mask], x, relaxed);
    }
    a->retired_next = q->retired;
    q->retired = a;
    /* ORDER: release; pairs with the acquire load of `array` in
     * herd__cl_steal() (C4), so a thief that sees the new array also sees
     * its mask and the copied elements. A thief that still sees the old array
     * reads it safely: it stays allocated (retired) and the owner never
     * writes it again, so it still holds every position below b. */
    atomic_store_explicit(&q->array, n, release);
    return n;
}

/* C1 */
int herd__cl_push(herd__cl *q, void *x) {
    assert_owner(q);
    /* C1.1. ORDER: relaxed; only the owner writes `bottom`. */
    int64_t b = atomic_load_explicit(&q->bottom, relaxed);
    /* ORDER: acquire; pairs with the seq_cst (hence release) CAS of `top` in
     * herd__cl_steal() (C4). `top` only ever changes by CAS, so this load
     * synchronises with every CAS up to the value read: the winning thief's
     * read of a slot happens before we reuse it for position + capacity. */
    int64_t t = atomic_load_explicit(&q->top, acquire);
    /* ORDER: relaxed; only the owner writes `array`. */
    herd__cl_array *a = atomic_load_explicit(&q->array, relaxed);
    if (b - t > a->mask) { /* C1.2: full (t may be stale: then we grow early) */
        a = grow(q, a, t, b);
        if (!a)
            return HERD_ENOMEM;
    }
    /* C1.3. ORDER: relaxed; published by the fence (or release store) below. */
    atomic_store_explicit(&a->slot[b & a->mask], x, relaxed);
#if CL_FENCES
    /* C1.4. ORDER: release fence; pairs with the acquire load of `bottom` in
     * herd__cl_steal() (C4). A thief that reads this bottom, or any later
     * one the owner stores (pop's stores included), sees the element in its
     * slot and everything the caller wrote before the push. */
    atomic_thread_fence(release);
    atomic_store_explicit(&q->bottom, b + 1, relaxed);
#else
    /* ORDER: release (TSan form); pairs with the acquire load of `bottom` in
     * herd__cl_steal(), as the fence above does. */
    atomic_store_explicit(&q->bottom, b + 1, release);
#endif
    return 0;
}

/* C3 */
bool herd__cl_pop(herd__cl *q, void **out) {
    assert_owner(q);
    /* ORDER: relaxed; only the owner writes `bottom` and `array`. */
    int64_t b = atomic_load_explicit(&q->bottom, relaxed) - 1;
    herd__cl_array *a = atomic_load_explicit(&q->array, relaxed);
    /* C3.1: claim position b before looking at top (seq_cst in the TSan form). */
    atomic_store_explicit(&q->bottom, b, CL_ORD(relaxed, seq_cst));
#if CL_FENCES
    /* ORDER: seq_cst fence; pairs with the seq_cst fence in herd__cl_steal()
     * (C4). Store-load (Dekker) ordering: if our fence comes first in the
     * seq_cst order, a thief's load of `bottom` after its fence sees b (or a
     * later value); if the thief's comes first, our load of `top` sees at
     * least the t that thief read. Without it both could take position b. */
    atomic_thread_fence(seq_cst);
#endif
    /* ORDER: relaxed; ordered after the store of `bottom` by the fence
     * above (seq_cst in the TSan form, pairing with steal's seq_cst loads). */
    int64_t t = atomic_load_explicit(&q->top, CL_ORD(relaxed, seq_cst));
    if (t > b) {
        /* C3.2: empty. Restore bottom to t (= b + 1). */
        /* ORDER: relaxed; no element is published (release in the TSan form,
         * so TSan sees the push's publication carried by every bottom). */
        atomic_store_explicit(&q->bottom, b + 1, CL_ORD(relaxed, release));
        return false;
    }
    /* ORDER: relaxed; the owner wrote this slot itself. */
    void *x = atomic_load_explicit(&a->slot[b & a->mask], relaxed);
    if (t == b) {
        /* C3.3: the last element; thieves may race for it. Whoever moves
         * top from t to t + 1 owns it. */
        /* ORDER: seq_cst CAS; pairs with the seq_cst CAS of `top` in
         * herd__cl_steal() (C4): exactly one of the competing CASes from t
         * succeeds. Failure is relaxed: we then simply report empty. */
        bool won = atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, seq_cst, relaxed);
        /* ORDER: relaxed; the deque is empty at b + 1 either way (release
         * in the TSan form, as above). */
        atomic_store_explicit(&q->bottom, b + 1, CL_ORD(relaxed, release));
        if (!won)
            return false;
    }
    /* C3.4: t < b: no thief can reach position b (see the proof sketch). */
    *out = x;
    return true;
}

/* C4 */
herd__steal_result herd__cl_steal(herd__cl *q, void **out) {
    /* C4.1. ORDER: acquire; pairs with the seq_cst CAS of `top` (by a thief or the
     * owner) that wrote t. It makes that CAS happen before our fence, hence
     * precede it in the seq_cst order: an owner whose fence in herd__cl_pop()
     * comes after ours then reads top >= t, and cannot take position t
     * without a CAS while we take it too (doc, "the last element"). */
    int64_t t = atomic_load_explicit(&q->top, CL_ORD(acquire, seq_cst));
#if CL_FENCES
    /* ORDER: seq_cst fence; pairs with the seq_cst fence in herd__cl_pop()
     * (C3): either our load of `bottom` sees the owner's decremented bottom,
     * or the owner's load of `top` sees at least our t (see C4.1). */
    atomic_thread_fence(seq_cst);
#endif
    /* ORDER: acquire; pairs with the release fence (TSan form: release
     * store) in herd__cl_push() (C1): if b > t we see the element at t. */
    int64_t b = atomic_load_explicit(&q->bottom, CL_ORD(acquire, seq_cst));
    if (t >= b) /* C4.2 */
        return HERD__STEAL_EMPTY;
    /* C4.3. ORDER: acquire (the paper's consume); pairs with the release store of
     * `array` in grow() (C2): we see the mask and the copied slots. */
    herd__cl_array *a = atomic_load_explicit(&q->array, acquire);
    /* ORDER: relaxed; made visible by the acquire of `bottom` or `array`.
     * The value may be stale only if top already moved past t, and then the
     * CAS below fails and we drop it. */
    void *x = atomic_load_explicit(&a->slot[t & a->mask], relaxed);
    /* C4.4. ORDER: seq_cst CAS; pairs with the seq_cst CAS in herd__cl_pop() and
     * other thieves' CASes (one winner per t), and its release half with the
     * acquire load of `top` in herd__cl_push() (slot reuse). */
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, seq_cst, relaxed))
        return HERD__STEAL_RETRY;
    *out = x;
    return HERD__STEAL_OK;
}

int64_t herd__cl_size_estimate(herd__cl *q) {
    /* ORDER: relaxed both; an estimate only. */
    int64_t b = atomic_load_explicit(&q->bottom, relaxed);
    int64_t t = atomic_load_explicit(&q->top, relaxed);
    return b > t ? b - t : 0;
}
