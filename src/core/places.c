/* The machine's places for the OpenMP layer's abstract OMP_PLACES names
 * (core/seam_omp.h): the topology model of the real machine (topo/), read
 * once per call. */
#include "core/runtime.h"

#include <string.h>
#include <strings.h>

int herd__machine_places(const char *name, cpu_set_t *out, int max, char *err, size_t errlen) {
    static const struct {
        const char *name;
        herd__level level;
    } kinds[] = {{"threads", HERD__LVL_PU},
                 {"cores", HERD__LVL_CORE},
                 {"sockets", HERD__LVL_PACKAGE},
                 {"ll_caches", HERD__LVL_L3},
                 {"numa_domains", HERD__LVL_NUMA}};
    herd__level level = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcasecmp(name, kinds[i].name))
            level = kinds[i].level;
    if (!level)
        return herd__topo_fail(err, errlen, -1, "no such kind of place: %s", name);
    herd__topo t;
    /* The real machine, whatever HERD_TOPOLOGY models: places name OS CPUs. */
    if (herd__topo_load(&t, NULL, err, errlen) != 0)
        return -1;
    int n = t.ndomains[level] < max ? t.ndomains[level] : max;
    for (int d = 0; d < n; d++)
        CPU_ZERO(&out[d]);
    /* The model holds the PUs of the process's cpuset only: a domain with
     * none of them is no place (dropped below). */
    for (int pu = 0; pu < t.npus; pu++) {
        int d = t.domain[level][pu];
        if (d < n && t.os_index[pu] >= 0 && t.os_index[pu] < CPU_SETSIZE)
            CPU_SET(t.os_index[pu], &out[d]);
    }
    int k = 0;
    for (int d = 0; d < n; d++)
        if (CPU_COUNT(&out[d]))
            out[k++] = out[d];
    herd__topo_free(&t);
    return k;
}
