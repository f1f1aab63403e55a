/* Machines that synthetic descriptions cannot express -- nodes of different
 * sizes, a NUMA distance matrix -- built with hwloc and written to a
 * temporary XML file, which herd loads like any HERD_TOPOLOGY. */
#ifndef HERD_TESTS_TOPO_XML_H
#define HERD_TESTS_TOPO_XML_H

#include <hwloc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void topo_xml__need(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "topo_xml: %s failed\n", what);
        exit(1);
    }
}

/* Write the synthetic machine desc, restricted to its PUs first_pu.. (so the
 * first package loses PUs), with an nnodes x nnodes NUMA latency matrix
 * (row-major) when matrix is not NULL. path gets the file's name; the
 * caller unlinks it. */
static inline void topo_xml_make(char *path, size_t len, const char *desc, int first_pu, int nnodes,
                                 const hwloc_uint64_t *matrix) {
    hwloc_topology_t hw;
    topo_xml__need(hwloc_topology_init(&hw) == 0 && hwloc_topology_set_synthetic(hw, desc) == 0 &&
                       hwloc_topology_load(hw) == 0,
                   desc);
    int npus = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    if (first_pu > 0) {
        hwloc_bitmap_t keep = hwloc_bitmap_alloc();
        hwloc_bitmap_set_range(keep, (unsigned)first_pu, npus - 1);
        topo_xml__need(hwloc_topology_restrict(hw, keep, 0) == 0, "hwloc_topology_restrict");
        hwloc_bitmap_free(keep);
    }
    if (matrix != NULL) {
        hwloc_obj_t nodes[16];
        hwloc_uint64_t values[16 * 16]; /* hwloc takes them non-const */
        topo_xml__need(nnodes <= 16 && hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE) == nnodes,
                       "the matrix's node count");
        for (int i = 0; i < nnodes; i++)
            nodes[i] = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
        memcpy(values, matrix, sizeof *values * (size_t)(nnodes * nnodes));
        hwloc_distances_add_handle_t h = hwloc_distances_add_create(
            hw, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY,
            0);
        topo_xml__need(h != NULL, "hwloc_distances_add_create");
        topo_xml__need(hwloc_distances_add_values(hw, h, (unsigned)nnodes, nodes, values, 0) == 0,
                       "hwloc_distances_add_values");
        topo_xml__need(hwloc_distances_add_commit(hw, h, 0) == 0, "hwloc_distances_add_commit");
    }
    snprintf(path, len, "/tmp/herd-test-topo-XXXXXX.xml");
    int fd = mkstemps(path, 4);
    topo_xml__need(fd >= 0, "mkstemps");
    close(fd);
    topo_xml__need(hwloc_topology_export_xml(hw, path, 0) == 0, "hwloc_topology_export_xml");
    hwloc_topology_destroy(hw);
}

#endif
