/* Long randomised run of the deque battery on every queue kind, and a
 * throughput comparison of the kinds.
 *
 * Phase 1 (compare): a few fixed workloads, each run REPS times with the
 * kinds interleaved; prints the median, lowest and highest throughput per
 * kind. Throughput counts operations that moved a value: pushes, successful
 * pops and successful steals (2 per value). These runs are in run_mix()'s
 * light mode (count, sum and FIFO order checked, no per-value counters), so
 * the numbers are dominated by the deques. No timing is asserted: a shared
 * 2-core CI box is not a benchmark machine.
 * Phase 2 (shake): random workloads (thieves, bursts, pop mix, random yields)
 * on alternating kinds, each fully checked by run_mix(), until ROUNDS rounds
 * or the time budget is spent. The whole test stops by itself within about
 * CHECK_STRESS_SECONDS: by default 60, or 20 in a sanitizer build, where the
 * shake is for the sanitizer's race and memory checks (which a few hundred
 * rounds exercise) and the unsanitized build's stage runs the long one.
 */
// herd-test-timeout: 300

#define DEQUE_BATTERY_NO_MAIN
#include "../unit/test_deque_battery.c"

#include "../common/sanitized.h"

#define REPS 3
#define ROUNDS 2000

typedef struct workload {
    const char *name;
    mix_params p;
} workload;

#define DEFAULT_SECONDS (CHECK_SANITIZED ? 20.0 : 60.0)

static double budget_s(void) {
    const char *e = getenv("CHECK_STRESS_SECONDS");
    if (!e)
        return DEFAULT_SECONDS;
    char *end = NULL;
    double s = strtod(e, &end);
    if (end == e || *end != '\0' || !(s >= 1 && s <= 86400)) {
        fprintf(stderr, "CHECK_STRESS_SECONDS=%s: expected seconds from 1 to 86400\n", e);
        exit(2);
    }
    return s;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void compare(const workload *w, size_t nw, double cap_s) {
    printf("throughput (Mops/s = pushes + pops + steals that moved a value; median [min..max] "
           "of %d)\n",
           REPS);
    for (size_t i = 0; i < nw; i++) {
        double rate[NKINDS][REPS];
        uint64_t stolen[NKINDS] = {0}, retry[NKINDS] = {0}, values[NKINDS] = {0};
        mix_params p = w[i].p;
        p.time_cap_s = cap_s;
        for (int rep = 0; rep < REPS; rep++) {
            for (size_t k = 0; k < NKINDS; k++) {
                /* Alternate the order so neither kind always runs first. */
                size_t kk = (rep & 1) ? NKINDS - 1 - k : k;
                mix_result r;
                p.seed = 1000 + (uint64_t)rep;
                if (run_mix(all_kinds[kk], &p, &r) != 0) {
                    failures++;
                    rate[kk][rep] = 0;
                    continue;
                }
                rate[kk][rep] = (double)(2 * r.produced) / r.elapsed_s / 1e6;
                stolen[kk] += r.steal_ok;
                retry[kk] += r.steal_retry;
                values[kk] += r.produced;
            }
        }
        for (size_t k = 0; k < NKINDS; k++) {
            qsort(rate[k], REPS, sizeof rate[k][0], cmp_double);
            printf("  %-12s %-12s %7.1f Mops/s [%6.1f..%6.1f]  stolen %5.1f%%  retries/steal "
                   "%.3f\n",
                   w[i].name, all_kinds[k]->name, rate[k][REPS / 2], rate[k][0], rate[k][REPS - 1],
                   values[k] ? 100.0 * (double)stolen[k] / (double)values[k] : 0,
                   stolen[k] ? (double)retry[k] / (double)stolen[k] : 0);
        }
    }
    fflush(stdout);
}

static void shake(double until, uint64_t seed) {
    uint64_t rng = seed, values = 0;
    int rounds = 0;
    static const unsigned yields[] = {0, 0, 1, 5};
    while (rounds < ROUNDS && now_s() < until) {
        const deque_ops *ops = all_kinds[rounds % NKINDS];
        double left = until - now_s();
        mix_params p = {
            .name = "random",
            .nthieves = 1 + (int)(rng_next(&rng) % 8),
            .nitems = 50000 + rng_next(&rng) % 500000,
            .burst_max = 1u << (rng_next(&rng) % 9),
            .pop_pct = (unsigned)(rng_next(&rng) % 101),
            .pop_max = 1 + (unsigned)(rng_next(&rng) % 64),
            .yield_pct = yields[rng_next(&rng) % 4],
            .stop_when_fed = false,
            .time_cap_s = left < 3 ? left : 3,
            .deadline_s = 30,
            .seed = rng_next(&rng),
        };
        mix_result r;
        if (run_mix(ops, &p, &r) != 0) {
            fprintf(stderr,
                    "  failed round %d: %s thieves=%d burst<=%u pop=%u%%x%u yield=%u%% "
                    "seed=%llu\n",
                    rounds, ops->name, p.nthieves, p.burst_max, p.pop_pct, p.pop_max, p.yield_pct,
                    (unsigned long long)p.seed);
            failures++;
        }
        values += r.produced;
        rounds++;
    }
    printf("shake: %d random rounds, %llu values, every one taken exactly once%s\n", rounds,
           (unsigned long long)values, failures ? " -- NOT (see above)" : "");
}

int main(void) {
    double t0 = now_s(), budget = budget_s();
    const workload w[] = {
        /* The owner alone: the cost of push + pop with no thief around. */
        {"owner_only",
         {.name = "owner_only",
          .nthieves = 0,
          .nitems = 8u << 20,
          .burst_max = 64,
          .pop_pct = 100,
          .pop_max = 64,
          .light = true,
          .deadline_s = 30}},
        /* Fork-join like: the owner pushes and pops, 3 thieves take the rest. */
        {"balanced",
         {.name = "balanced",
          .nthieves = 3,
          .nitems = 4u << 20,
          .burst_max = 16,
          .pop_pct = 50,
          .pop_max = 16,
          .light = true,
          .deadline_s = 30}},
        /* One producer feeding 7 thieves: every value is stolen. */
        {"steal_heavy",
         {.name = "steal_heavy",
          .nthieves = 7,
          .nitems = 2u << 20,
          .burst_max = 8,
          .pop_pct = 0,
          .pop_max = 1,
          .light = true,
          .deadline_s = 30}},
    };
    size_t nw = sizeof w / sizeof w[0];
    /* A third of the budget for the comparison, the rest for the shake. */
    double cap = budget / 3 / (double)(nw * REPS * NKINDS);
    compare(w, nw, cap);
    shake(t0 + budget, 0x5eed);
    printf("deque stress: %.1fs, %s\n", now_s() - t0, failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
