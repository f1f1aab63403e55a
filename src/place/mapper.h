/* The mapper: which PU a worker pins itself to when several herd programs
 * share the machine (paper 003). Each worker chooses for itself when it
 * starts, under the registry lock (registry.h):
 *   static  worker i on PU i of the process's PUs (modulo their number);
 *   bll     basic lowest load: the PU with the fewest herd workers pinned
 *           machine-wide (ties: the first in tree order);
 *   xll     extended lowest load, Algorithm 1 of paper 003: the PU whose
 *           user time in /proc/stat grew least since the last look, plus
 *           its pinned count.
 * PUs are the process's PUs (the topology model, in tree order); the
 * registry knows them by OS index. docs/design/registry.md, section M. */
#ifndef HERD_PLACE_MAPPER_H
#define HERD_PLACE_MAPPER_H

#include "place/registry.h"

#include <stdint.h>
#include <stdio.h>

typedef enum herd__map_policy {
    HERD__MAP_STATIC = 1,
    HERD__MAP_BLL,
    HERD__MAP_XLL,
} herd__map_policy;

const char *herd__map_policy_name(herd__map_policy p);

/* Pins the calling thread to PU pu (tree order), Algorithm 1 step 13.
 * Returns 0, or an error code with a sentence in err. */
typedef int (*herd__pin_fn)(void *ctx, int pu, char *err, size_t errlen);

/* Choose a PU for worker `worker` of this process among the npus PUs whose
 * OS indexes are os_index[], pin the caller there with pin(ctx, pu) (may be
 * NULL: nothing is pinned), and record the holder; all under the registry
 * lock. *pu_out gets the PU (tree-order index). Returns 0, HERD_EINVAL (a PU
 * outside the registry, a load source without the PU), HERD_ENOMEM (every
 * holder entry taken), HERD_ESYS, or pin's error; err says why. */
int herd__map_choose(herd__reg *r, herd__map_policy p, int npus, const int *os_index, int worker,
                     herd__pin_fn pin, void *ctx, int *pu_out, char *err, size_t errlen);

/* What nworkers workers starting now would choose, without recording them
 * (for `herd topo`). XLL's loads are read as a start would, but the record
 * keeps its last look. Returns as herd__map_choose. */
int herd__map_preview(herd__reg *r, herd__map_policy p, int npus, const int *os_index, int nworkers,
                      int *pu_out, char *err, size_t errlen);

/* Return this process's PUs: drop its holder entries. Returns 0 or HERD_ESYS. */
int herd__map_release(herd__reg *r, char *err, size_t errlen);

/* HERD_WORKERS=auto: the number of free PUs by XLL's view, at least 1. A PU
 * is free when no herd worker is pinned to it and its user time grew by at
 * most half of a HERD__MAP_AUTO_WINDOW_MS sampling window (it was busy at
 * most half of that time). Sleeps for the window. Returns 0 or an error. */
#define HERD__MAP_AUTO_WINDOW_MS 100
int herd__map_auto_workers(herd__reg *r, int npus, const int *os_index, int *n_out, char *err,
                           size_t errlen);

/* Machine-wide occupancy for `herd topo`: each process and its PUs, and per
 * PU of this process the pinned count and what XLL would compute now. */
void herd__map_print(herd__reg *r, int npus, const int *os_index, FILE *out);

/* ------------------------------------------------------------- loads */

/* Fill user[os] (os < n) with the user time of CPU os in USER_HZ ticks, -1
 * where the source has no such CPU. Returns 0 or an error with err. */
typedef int (*herd__stat_reader)(void *ctx, int64_t *user, int n, char *err, size_t errlen);

/* Read the loads: /proc/stat, or the test reader (place/testing.h). */
int herd__map_read_loads(int64_t *user, int n, char *err, size_t errlen);
/* Parse the text of a /proc/stat file into user[] as above. Returns the
 * number of cpuN lines found. */
int herd__map_parse_stat(const char *text, int64_t *user, int n);

#endif
