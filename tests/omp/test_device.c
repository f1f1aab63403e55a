/* The device memory routines with the host as the only device, and
 * omp_pause_resource (paused or not, regions run after it). */
#include "check_omp.h"

int main(void) {
    int host = omp_get_initial_device();
    CHECK_EQ(omp_get_num_devices(), 0);
    int *d = omp_target_alloc(100 * sizeof(int), host);
    CHECK(d != NULL);
    int src[100];
    for (int i = 0; i < 100; i++)
        src[i] = i;
    CHECK_EQ(omp_target_memcpy(d, src, 50 * sizeof(int), 10 * sizeof(int), 0, host, host), 0);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(d[10 + i], i);
    CHECK(omp_target_is_present(src, host));
    CHECK(omp_target_alloc(16, host + 5) == NULL); /* no such device */
    CHECK(omp_target_memcpy(d, src, 4, 0, 0, host + 5, host) != 0);
    omp_target_free(d, host);
    /* a 3x4 block from a 6x8 matrix into a 4x5 one, at (1,1) */
    int a[6][8], b[4][5];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++)
            a[i][j] = 10 * i + j;
    memset(b, 0, sizeof b);
    size_t vol[2] = {3, 4}, doff[2] = {1, 1}, soff[2] = {2, 3}, ddim[2] = {4, 5}, sdim[2] = {6, 8};
    CHECK(omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, host, host) >= 2);
    CHECK_EQ(omp_target_memcpy_rect(b, a, sizeof(int), 2, vol, doff, soff, ddim, sdim, host, host),
             0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) {
            int in = i >= 1 && i < 4 && j >= 1 && j < 5;
            CHECK_EQ(b[i][j], in ? a[i - 1 + 2][j - 1 + 3] : 0);
        }
    (void)omp_pause_resource_all(omp_pause_soft);
    int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
    n++;
    CHECK(n >= 1 && n <= 2);
    printf("omp device: ok\n");
    return 0;
}
