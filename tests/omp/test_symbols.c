/* Symbols and versions of the libgomp ABI beyond what gcc -fopenmp emits
 * today: the OMP_1.0 locks (binaries linked before GCC 4.4: the simple lock
 * is the same, the nest lock an 8-byte {owner, count} owned by a thread),
 * the default OMP_3.0 locks, and routines found by name and version
 * (dlvsym), as a program built against the system libgomp finds them. */
#include "check_omp.h"

#include <pthread.h>

typedef void (*lock_fn)(void *);
typedef int (*test_fn)(void *);

static void *sym(const char *name, const char *version) {
    void *p = dlvsym(RTLD_DEFAULT, name, version);
    if (!p)
        fprintf(stderr, "missing: %s@%s\n", name, version);
    CHECK(p != NULL);
    return p;
}

static long old_nest[1]; /* the OMP_1.0 omp_nest_lock_t: 8 bytes */
static test_fn old_test_nest;

static void *other_thread(void *arg) {
    (void)arg;
    return (void *)(long)old_test_nest(old_nest); /* held by main: 0 */
}

static void test_old_locks(void) {
    lock_fn init = sym("omp_init_lock", "OMP_1.0"), set = sym("omp_set_lock", "OMP_1.0"),
            unset = sym("omp_unset_lock", "OMP_1.0"), destroy = sym("omp_destroy_lock", "OMP_1.0");
    test_fn test = sym("omp_test_lock", "OMP_1.0");
    int lock;
    init(&lock);
    set(&lock);
    CHECK_EQ(test(&lock), 0);
    unset(&lock);
    CHECK_EQ(test(&lock), 1);
    unset(&lock);
    destroy(&lock);

    lock_fn ninit = sym("omp_init_nest_lock", "OMP_1.0"),
            nset = sym("omp_set_nest_lock", "OMP_1.0"),
            nunset = sym("omp_unset_nest_lock", "OMP_1.0"),
            ndestroy = sym("omp_destroy_nest_lock", "OMP_1.0");
    old_test_nest = sym("omp_test_nest_lock", "OMP_1.0");
    ninit(old_nest);
    nset(old_nest);
    CHECK_EQ(old_test_nest(old_nest), 2); /* the owning thread nests */
    pthread_t th;
    void *r;
    CHECK_EQ(pthread_create(&th, NULL, other_thread, NULL), 0);
    CHECK_EQ(pthread_join(th, &r), 0);
    CHECK_EQ((long)r, 0);
    nunset(old_nest);
    nunset(old_nest);
    CHECK_EQ(pthread_create(&th, NULL, other_thread, NULL), 0); /* free now: it takes it */
    CHECK_EQ(pthread_join(th, &r), 0);
    CHECK_EQ((long)r, 1);
    ndestroy(old_nest);

    /* the Fortran ones of OMP_1.0 hold the old locks themselves */
    lock_fn finit = sym("omp_init_lock_", "OMP_1.0"), fset = sym("omp_set_lock_", "OMP_1.0"),
            funset = sym("omp_unset_lock_", "OMP_1.0");
    test_fn ftest = sym("omp_test_lock_", "OMP_1.0");
    int flock;
    finit(&flock);
    fset(&flock);
    CHECK_EQ(ftest(&flock), 0);
    funset(&flock);
    long fnest;
    lock_fn fninit = sym("omp_init_nest_lock_", "OMP_1.0"),
            fnset = sym("omp_set_nest_lock_", "OMP_1.0");
    test_fn fntest = sym("omp_test_nest_lock_", "OMP_1.0");
    fninit(&fnest);
    fnset(&fnest);
    CHECK_EQ(fntest(&fnest), 2);
}

static void test_default_versions(void) {
    static const char *const locks[] = {
        "omp_init_lock",       "omp_destroy_lock",   "omp_set_lock",          "omp_unset_lock",
        "omp_test_lock",       "omp_init_nest_lock", "omp_destroy_nest_lock", "omp_set_nest_lock",
        "omp_unset_nest_lock", "omp_test_nest_lock"};
    char f[64];
    for (unsigned i = 0; i < sizeof locks / sizeof *locks; i++) {
        CHECK(sym(locks[i], "OMP_3.0") == dlsym(RTLD_DEFAULT, locks[i]));
        snprintf(f, sizeof f, "%s_", locks[i]);
        CHECK(sym(f, "OMP_3.0") == dlsym(RTLD_DEFAULT, f));
    }
    omp_nest_lock_t n; /* the current nest lock: owned by a task */
    omp_init_nest_lock(&n);
    omp_set_nest_lock(&n);
    CHECK_EQ(omp_test_nest_lock(&n), 2);
    omp_unset_nest_lock(&n);
    omp_unset_nest_lock(&n);
    omp_destroy_nest_lock(&n);
}

static void test_routines(void) {
    int (*limit_)(void) = sym("omp_get_thread_limit_", "OMP_3.0");
    CHECK_EQ(limit_(), omp_get_thread_limit());
    int (*procs)(int) = sym("omp_get_place_num_procs", "OMP_4.5");
    int places = omp_get_num_places();
    CHECK(places >= 0);
    if (places == 0)
        CHECK_EQ(procs(0), 0);
    int (*places_)(void) = sym("omp_get_num_places_", "OMP_4.5");
    CHECK_EQ(places_(), places);
    int (*dev_)(void) = sym("omp_get_default_device_", "OMP_4.0");
    CHECK_EQ(dev_(), omp_get_default_device());
    int (*devnum_)(void) = sym("omp_get_device_num_", "OMP_5.0.2");
    CHECK_EQ(devnum_(), omp_get_device_num());
    int (*anc8_)(const long *) = sym("omp_get_ancestor_thread_num_8_", "OMP_3.0");
    long zero = 0;
    CHECK_EQ(anc8_(&zero), 0);
    (void)sym("GOMP_error", "GOMP_5.1");
    (void)sym("GOMP_warning", "GOMP_5.1");
}

int main(void) {
    test_old_locks();
    test_default_versions();
    test_routines();
    puts("symbols: ok");
    return 0;
}
