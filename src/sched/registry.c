/* The scheduler table: every scheduler exports one herd__sched_ops. */
#include "core/runtime.h"

#include <string.h>

extern const herd__sched_ops herd__sched_ws;

static const herd__sched_ops *const schedulers[] = {&herd__sched_ws};

const herd__sched_ops *herd__sched_find(const char *name) {
    /* `auto` chooses by topology and measurement; with one scheduler built,
     * the rule is simply: ws. */
    if (!name || !*name || strcmp(name, "auto") == 0)
        name = "ws";
    for (size_t i = 0; i < sizeof schedulers / sizeof schedulers[0]; i++)
        if (strcmp(schedulers[i]->name, name) == 0)
            return schedulers[i];
    return NULL;
}
