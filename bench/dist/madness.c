/* bench/dist/madness.c -- MADNESS-style adaptive projection on the MPI
 * task pool (paper 001 §2.5.1): a task is a box of [0,1]^3; it integrates
 * f, a sum of Gaussians, with the 2-point Gauss-Legendre rule on itself
 * and on its 8 children; when the two agree to tol the box is a leaf (it
 * keeps the children's sum), else its 8 children become tasks. Verified:
 * the integral against the exact one (products of erf) within the sum of
 * the leaves' coarse/fine differences (the finer rule's error is about a
 * fifteenth of that difference), and the number of boxes against the
 * sequential twin (also alone: --seq).
 * usage: mpirun -np N bench_pool_madness [--gaussians 16] [--tol 1e-7] [--max-level 12] [--seq] */
#include "pool_bench.h"

#include <math.h>
#include <mpi.h>
#include <string.h>

typedef struct box {
    int32_t level, x, y, z; /* the box [x, x+1] * 2^-level, ... */
} box;

#define MAXG 256
static int ngauss = 16, max_level = 12, BOX;
static double tol = 1e-7;
static double gc[MAXG][3], gs[MAXG], ga[MAXG];
static double integral, errbound;
static uint64_t boxes;

static double f(const double *r) {
    double v = 0;
    for (int g = 0; g < ngauss; g++) {
        double dx = r[0] - gc[g][0], dy = r[1] - gc[g][1], dz = r[2] - gc[g][2];
        v += ga[g] * exp(-(dx * dx + dy * dy + dz * dz) / (gs[g] * gs[g]));
    }
    return v;
}

/* 2-point Gauss-Legendre in each dimension over the box. */
static double quad(int level, double x, double y, double z) {
    double h = ldexp(1.0, -level), o = 0.5 - 0.5 / sqrt(3.0), sum = 0;
    for (int i = 0; i < 8; i++) {
        double r[3] = {(x + ((i & 1) ? 1 - o : o)) * h, (y + ((i & 2) ? 1 - o : o)) * h,
                       (z + ((i & 4) ? 1 - o : o)) * h};
        sum += f(r);
    }
    return sum * h * h * h / 8;
}

/* 1: refine b; *fine receives the children's sum. A leaf adds its
 * coarse/fine difference to errbound. */
static int refine(const box *b, double *fine) {
    double coarse = quad(b->level, b->x, b->y, b->z);
    *fine = 0;
    for (int c = 0; c < 8; c++)
        *fine += quad(b->level + 1, 2 * b->x + (c & 1), 2 * b->y + ((c >> 1) & 1),
                      2 * b->z + ((c >> 2) & 1));
    int split = b->level < max_level && fabs(*fine - coarse) > tol;
    if (!split) errbound += fabs(*fine - coarse);
    return split;
}

static void project(herd_pool *p, void *arg, size_t size) {
    box b;
    memcpy(&b, arg, sizeof b);
    boxes++;
    double fine;
    if (!refine(&b, &fine)) {
        integral += fine;
        return;
    }
    for (int c = 0; c < 8; c++) {
        box *k = herd_pool_task_alloc(p, BOX, sizeof *k);
        if (!k) MPI_Abort(MPI_COMM_WORLD, 1);
        *k = (box){b.level + 1, 2 * b.x + (c & 1), 2 * b.y + ((c >> 1) & 1),
                   2 * b.z + ((c >> 2) & 1)};
        herd_pool_task_commit(p);
    }
}

static void seq(const box *b) {
    boxes++;
    double fine;
    if (!refine(b, &fine)) {
        integral += fine;
        return;
    }
    for (int c = 0; c < 8; c++) {
        box k = {b->level + 1, 2 * b->x + (c & 1), 2 * b->y + ((c >> 1) & 1),
                 2 * b->z + ((c >> 2) & 1)};
        seq(&k);
    }
}

static double exact(void) {
    double s = 0;
    for (int g = 0; g < ngauss; g++) {
        double v = ga[g];
        for (int d = 0; d < 3; d++)
            v *= gs[g] * sqrt(M_PI) / 2 * (erf((1 - gc[g][d]) / gs[g]) + erf(gc[g][d] / gs[g]));
        s += v;
    }
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int sequential = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gaussians") && i + 1 < argc) ngauss = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tol") && i + 1 < argc) tol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-level") && i + 1 < argc) max_level = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seq")) sequential = 1;
        else {
            fprintf(stderr, "usage: bench_pool_madness [--gaussians G] [--tol T] "
                            "[--max-level L] [--seq]\n");
            return 2;
        }
    }
    if (ngauss < 1 || ngauss > MAXG || !(tol > 0) || max_level < 1 || max_level > 20) {
        fprintf(stderr, "bench_pool_madness: --gaussians 1..%d, --tol > 0, --max-level 1..20\n",
                MAXG);
        return 2;
    }
    /* A fixed pseudo-random "soft body": narrow Gaussians inside the cube. */
    uint64_t s = 12345;
    for (int g = 0; g < ngauss; g++) {
        for (int d = 0; d < 3; d++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            gc[g][d] = 0.2 + 0.6 * (double)(s >> 11) / 9007199254740992.0;
        }
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        gs[g] = 0.02 + 0.06 * (double)(s >> 11) / 9007199254740992.0;
        ga[g] = 1.0;
    }
    double want = exact();
    box root = {0, 0, 0, 0};
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (sequential) {
        double t0 = MPI_Wtime();
        seq(&root);
        double err = fabs(integral - want);
        if (rank == 0)
            printf("kernel=madness-seq gaussians=%d tol=%g boxes=%llu integral=%.12g exact=%.12g "
                   "error=%.3g seconds=%.4f verified=%s\n", ngauss, tol,
                   (unsigned long long)boxes, integral, want, err, MPI_Wtime() - t0,
                   err <= errbound ? "yes" : "NO");
        MPI_Finalize();
        return err <= errbound ? 0 : 1;
    }
    herd_pool *p = pool_bench_create();
    herd_pool_register(p, "madness-box", project, &BOX);
    if (rank == 0) herd_pool_add(p, BOX, &root, sizeof root);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    herd_pool_process(p);
    double secs = MPI_Wtime() - t0;
    double tot_i = 0, tot_e = 0;
    uint64_t tot_b = 0;
    MPI_Allreduce(&integral, &tot_i, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&errbound, &tot_e, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&boxes, &tot_b, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* The twin's box count: the tree depends only on f, tol and max_level. */
    boxes = 0;
    integral = 0;
    if (rank == 0) seq(&root);
    uint64_t want_b = boxes;
    MPI_Bcast(&want_b, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    double err = fabs(tot_i - want);
    int ok = err <= tot_e && tot_b == want_b;
    char fields[192];
    snprintf(fields, sizeof fields, "kernel=madness gaussians=%d tol=%g boxes=%llu twin_boxes=%llu "
             "integral=%.12g exact=%.12g error=%.3g bound=%.3g", ngauss, tol,
             (unsigned long long)tot_b, (unsigned long long)want_b, tot_i, want, err, tot_e);
    pool_bench_report(p, fields, secs, ok);
    herd_pool_destroy(p);
    MPI_Finalize();
    return ok ? 0 : 1;
}
