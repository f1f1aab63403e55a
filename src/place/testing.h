/* Mapper internals that tests reach into (tests/unit/test_mapper.c). Not
 * installed, not exported: a program cannot feed herd a fake /proc/stat. */
#ifndef HERD_PLACE_TESTING_H
#define HERD_PLACE_TESTING_H

#include "place/mapper.h"

/* Read loads from reader(ctx, ...) instead of /proc/stat; NULL restores
 * /proc/stat. Process-wide; set it before any worker starts (a fork()ed
 * child inherits it). */
void herd__map_testing_reader(herd__stat_reader reader, void *ctx);

#endif
