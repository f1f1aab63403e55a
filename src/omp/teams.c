/* Host teams (docs/design/openmp.md, "Teams"): `teams` outside `target`
 * (GOMP_teams_reg) and the host fallback of `target teams` (GOMP_teams4).
 * The league's teams run one after another on the encountering thread, as
 * the system libgomp runs them; `distribute` is GCC's code over
 * omp_get_num_teams() and omp_get_team_num(), and a parallel region inside a
 * team gets at most the team's thread limit.
 *
 * The league lives in the record of the thread's initial task (the root of
 * every task of the thread's regions: league_*), where the queries find it
 * by walking up from the current task; a team's parallel regions and tasks
 * see it the same way. */
#include "omp/omp.h"

#include <stdbool.h>

omp_task *herd__omp_root(omp_task *t) {
    for (;;) {
        if (t->team)
            t = t->team->parent; /* the task that encountered its region */
        else if (t->parent)
            t = t->parent;
        else
            return t;
    }
}

static int limit_of(unsigned thread_limit) {
    if (!thread_limit)
        thread_limit = (unsigned)herd__omp_g.teams_thread_limit;
    return thread_limit && thread_limit < (unsigned)herd__omp_g.thread_limit ? (int)thread_limit
                                                                             : 0;
}

OMP_API void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                            unsigned thread_limit, unsigned flags) {
    (void)flags;
    OMP_SAVE();
    omp_task *root = herd__omp_root(omp__saved);
    int size = root->league_size, num = root->league_num, limit = root->league_limit;
    if (!num_teams)
        num_teams = herd__omp_g.nteams ? (unsigned)herd__omp_g.nteams : 1;
    root->league_size = (int)num_teams;
    root->league_limit = limit_of(thread_limit);
    for (unsigned k = 0; k < num_teams; k++) {
        root->league_num = (int)k;
        fn(data);
        OMP_RESTORE();
    }
    root->league_size = size;
    root->league_num = num;
    root->league_limit = limit;
}

/* target teams on the host: GCC's code runs the body while this returns
 * true (first: before the first team). */
OMP_API bool GOMP_teams4(unsigned num_teams_low, unsigned num_teams_high, unsigned thread_limit,
                         bool first) {
    (void)num_teams_high; /* the league has num_teams_low teams: any number in range will do */
    omp_task *root = herd__omp_root(herd__omp_task());
    if (first) {
        root->league_size = num_teams_low ? (int)num_teams_low : 1;
        root->league_num = 0;
        root->league_limit = limit_of(thread_limit);
        return true;
    }
    if (root->league_num + 1 < root->league_size) {
        root->league_num++;
        return true;
    }
    root->league_size = root->league_num = root->league_limit = 0;
    return false;
}

OMP_API int omp_get_num_teams(void) {
    int n = herd__omp_root(herd__omp_task())->league_size;
    return n ? n : 1;
}

OMP_API int omp_get_team_num(void) {
    return herd__omp_root(herd__omp_task())->league_num;
}

OMP_API int omp_get_thread_limit(void) {
    int l = herd__omp_root(herd__omp_task())->league_limit;
    return l ? l : herd__omp_g.thread_limit;
}

OMP_API void omp_set_num_teams(int n) {
    if (n > 0)
        herd__omp_g.nteams = n;
}

/* nteams-var and teams-thread-limit-var as set, 0 when unset (as the
 * system libgomp answers). */
OMP_API int omp_get_max_teams(void) {
    return herd__omp_g.nteams;
}

OMP_API void omp_set_teams_thread_limit(int n) {
    if (n >= 0)
        herd__omp_g.teams_thread_limit = n;
}

OMP_API int omp_get_teams_thread_limit(void) {
    return herd__omp_g.teams_thread_limit;
}

OMP_API int omp_get_num_teams_(void) {
    return omp_get_num_teams();
}
OMP_API int omp_get_team_num_(void) {
    return omp_get_team_num();
}
OMP_API int omp_get_max_teams_(void) {
    return omp_get_max_teams();
}
OMP_API int omp_get_teams_thread_limit_(void) {
    return omp_get_teams_thread_limit();
}
OMP_API void omp_set_num_teams_(const int *n) {
    omp_set_num_teams(*n);
}
OMP_API void omp_set_num_teams_8_(const long *n) {
    omp_set_num_teams((int)*n);
}
OMP_API void omp_set_teams_thread_limit_(const int *n) {
    omp_set_teams_thread_limit(*n);
}
OMP_API void omp_set_teams_thread_limit_8_(const long *n) {
    omp_set_teams_thread_limit((int)*n);
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_get_num_teams, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_team_num, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_thread_limit, "OMP_3.0");
OMP_LLVM_ALIAS(omp_set_num_teams, "OMP_5.1");
OMP_LLVM_ALIAS(omp_get_max_teams, "OMP_5.1");
OMP_LLVM_ALIAS(omp_set_teams_thread_limit, "OMP_5.1");
OMP_LLVM_ALIAS(omp_get_teams_thread_limit, "OMP_5.1");

/* The Fortran bindings above under LLVM's version too: libomp's take their
 * arguments as gfortran's do (by reference, character lengths after the
 * others), and flang calls them where a program names a routine without
 * omp_lib's interface (GCC's stack.f90). */
OMP_LLVM_ALIAS(omp_get_max_teams_, "OMP_5.1");
OMP_LLVM_ALIAS(omp_get_num_teams_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_team_num_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_teams_thread_limit_, "OMP_5.1");
OMP_LLVM_ALIAS(omp_set_num_teams_, "OMP_5.1");
OMP_LLVM_ALIAS(omp_set_teams_thread_limit_, "OMP_5.1");
