/* Host teams (teams outside target) and target teams run on the host:
 * league size and team numbers, distribute over the teams, a team's thread
 * limit on its parallel regions, the teams ICVs and their API. */
#include "check_omp.h"

enum { N = 1000, TEAMS = 4 };
static int team_of[N], threads_of[N];
static int entered[TEAMS + 1];

static void test_teams_distribute(void) {
    int league = 0;
    for (int i = 0; i < N; i++)
        team_of[i] = -1;
    for (int t = 0; t <= TEAMS; t++)
        entered[t] = 0;
#pragma omp teams num_teams(TEAMS) thread_limit(2)
    {
        int me = omp_get_team_num();
        if (me >= 0 && me < TEAMS)
            entered[me]++;
        else
            entered[TEAMS]++;
        if (me == 0)
            league = omp_get_num_teams();
#pragma omp distribute parallel for
        for (int i = 0; i < N; i++) {
            team_of[i] = omp_get_team_num();
            threads_of[i] = omp_get_num_threads();
        }
    }
    CHECK_EQ(league, TEAMS);
    for (int t = 0; t < TEAMS; t++)
        CHECK_EQ(entered[t], 1);
    CHECK_EQ(entered[TEAMS], 0);
    /* every iteration once, by a team; the teams take consecutive blocks */
    for (int i = 0; i < N; i++) {
        CHECK(team_of[i] >= 0 && team_of[i] < TEAMS);
        CHECK(i == 0 || team_of[i] >= team_of[i - 1]);
        CHECK(threads_of[i] >= 1 && threads_of[i] <= 2);
    }
    CHECK_EQ(team_of[0], 0);
    CHECK_EQ(team_of[N - 1], TEAMS - 1);
    CHECK_EQ(omp_get_num_teams(), 1); /* outside the league again */
    CHECK_EQ(omp_get_team_num(), 0);
}

static void test_target_teams(void) {
    int seen[3] = {0, 0, 0}, league = 0;
#pragma omp target teams num_teams(3) map(tofrom : seen, league)
    {
        int me = omp_get_team_num();
        if (me >= 0 && me < 3)
            seen[me]++;
        if (me == 0)
            league = omp_get_num_teams();
    }
    CHECK_EQ(league, 3);
    CHECK_EQ(seen[0] + seen[1] + seen[2], 3);
    CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
}

static void test_icvs(void) {
    omp_set_num_teams(3);
    CHECK_EQ(omp_get_max_teams(), 3);
    int league = 0;
#pragma omp teams
    {
        if (omp_get_team_num() == 0)
            league = omp_get_num_teams();
    }
    CHECK_EQ(league, 3);
    omp_set_teams_thread_limit(1);
    CHECK_EQ(omp_get_teams_thread_limit(), 1);
    int nthreads = 0, limit = 0;
#pragma omp teams num_teams(1)
    {
#pragma omp parallel num_threads(2)
        {
#pragma omp master
            {
                nthreads = omp_get_num_threads();
                limit = omp_get_thread_limit();
            }
        }
    }
    CHECK_EQ(nthreads, 1);
    /* LLVM's libomp 14 keeps the team to one thread but answers INT_MAX
     * there: it does not set the team's thread-limit-var. */
    if (!omp_test_on_llvm_libomp())
        CHECK_EQ(limit, 1);
}

int main(void) {
    for (int rep = 0; rep < 3; rep++) {
        test_teams_distribute();
        test_target_teams();
    }
    test_icvs(); /* last: it changes the teams ICVs */
    printf("omp teams: ok\n");
    return 0;
}
