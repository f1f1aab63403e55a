/* Tasks queued outside the split deques (sched/sched.h): a malloc'd copy
 * of a slot's header and its argument bytes, on a herd__tq. */
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

herd__qtask *herd__qtask_new(herd_fn fn, void *parent, uint16_t kind, const void *arg,
                             size_t size) {
    herd__qtask *t = malloc(offsetof(herd__qtask, arg) + size);
    if (!t)
        return NULL;
    t->fn = fn;
    t->parent = parent;
    t->kind = kind;
    t->size = (uint16_t)size;
    t->from = -1;
    if (size)
        memcpy(t->arg, arg, size);
    return t;
}

int herd__qtask_pop(herd__tq *q, int from_front, herd__work *out) {
    herd__qtask *t = herd__tq_pop(q, from_front);
    if (!t)
        return 0;
    herd__qtask_take(t, out);
    return 1;
}

int herd__qtask_push(herd__tq *q, herd_fn fn, void *parent, uint16_t kind, const void *arg,
                     size_t size) {
    herd__qtask *t = herd__qtask_new(fn, parent, kind, arg, size);
    if (!t)
        return HERD_ENOMEM;
    if (herd__tq_push(q, t, 0) != 0) {
        free(t);
        return HERD_ENOMEM;
    }
    return 0;
}

static void qtask_move(herd__qtask *t, herd__taskcopy *out) {
    memcpy(out, t, offsetof(herd__qtask, arg) + t->size);
    free(t);
}

void herd__qtask_take(herd__qtask *t, herd__work *out) {
    out->ult = NULL;
    qtask_move(t, &out->task);
}

static int child_of(const void *item, const void *join) {
    return ((const herd__qtask *)item)->parent == join;
}

int herd__qtask_pop_child(herd__tq *q, const void *join, herd__taskcopy *out) {
    herd__qtask *t = herd__tq_pop_back_if(q, child_of, join);
    if (!t)
        return 0;
    qtask_move(t, out);
    return 1;
}
