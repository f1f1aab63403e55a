/* src/dist/term.c -- voting-tree termination detection (paper 001 §2.4).
 *
 * The ranks form a binary tree (parent (r-1)/2, children 2r+1, 2r+2). In
 * each round every rank, once it is idle (its queue empty) and has the
 * votes of its children, sends up the AND of their votes and its own: yes
 * when it has not been stolen from since its previous vote. The root, idle
 * with every vote in, announces down the tree either "terminate" (all yes)
 * or "vote again". Steps T1-T5 and the proof are in docs/design/pool.md.
 *
 * A rank learns that it was stolen from without any message: thieves raise
 * its tail, and tail only grows, so "tail moved since my last vote" is
 * exactly "someone stole from me since my last vote" (T2).
 *
 * Busy ranks never vote, so a round cannot end while any rank works: no
 * rounds spin while there is work, and a round costs O(log N) messages in
 * depth once everyone is idle. Messages go over the pool's own duplicate
 * communicator, tagged, matched in order per pair (MPI's non-overtaking
 * rule), so rounds need no numbers in the messages.
 *
 * Rejected: a shared counter of outstanding tasks (one remote atomic per
 * task created and finished, on one rank: a hot spot), and Dijkstra's ring
 * token (O(N) rounds). */
#include "dist/pool_internal.h"

#include <stdio.h>

enum { TAG_VOTE = 7101, TAG_RESULT = 7102 };
enum { RESULT_CONTINUE = 1, RESULT_TERMINATE = 2 };

/* T1: a new round: listen for the children's votes. */
static void new_round(herd_pool *p) {
    pool_term *t = &p->term;
    t->round++;
    t->rounds++;
    t->votes_in = 0;
    t->all_yes = 1;
    for (int i = 0; i < 2; i++) {
        t->req[i] = MPI_REQUEST_NULL;
        if (t->child[i] >= 0)
            POOL_MPI(p, MPI_Irecv(&t->vote_buf[i], 1, MPI_INT64_T, t->child[i], TAG_VOTE, p->comm,
                                  &t->req[i]));
    }
    t->req[2] = MPI_REQUEST_NULL;
    t->state = TERM_COLLECTING;
}

void herd__pool_term_init(herd_pool *p) {
    pool_term *t = &p->term;
    int r = p->rank;
    t->parent = r == 0 ? -1 : (r - 1) / 2;
    t->nchild = 0;
    for (int i = 0; i < 2; i++) {
        int c = 2 * r + 1 + i;
        t->child[i] = c < p->size ? c : -1;
        t->nchild += c < p->size;
    }
    t->rounds = 0;
    t->round = 0;
    t->tail_at_vote = 0; /* the tail of a new window */
    for (int i = 0; i < 3; i++)
        t->req[i] = MPI_REQUEST_NULL;
    /* No round yet: herd_pool_process() opens one (T1). */
    t->state = TERM_DONE;
}

void herd__pool_term_start(herd_pool *p) {
    new_round(p);
}

/* Collect whichever children's votes have arrived. */
static void collect(herd_pool *p) {
    pool_term *t = &p->term;
    for (int i = 0; i < 2; i++) {
        if (t->req[i] == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        POOL_MPI(p, MPI_Test(&t->req[i], &done, MPI_STATUS_IGNORE));
        if (done) {
            t->votes_in++;
            t->all_yes &= t->vote_buf[i] != 0;
        }
    }
}

static void announce(herd_pool *p, int64_t result) {
    pool_term *t = &p->term;
    for (int i = 0; i < 2; i++)
        if (t->child[i] >= 0)
            POOL_MPI(p, MPI_Send(&result, 1, MPI_INT64_T, t->child[i], TAG_RESULT, p->comm));
}

/* T5: act on a round's result (root: our own decision). */
static int conclude(herd_pool *p, int64_t result) {
    announce(p, result);
    if (result == RESULT_TERMINATE) {
        p->term.state = TERM_DONE;
        /* Let the round after a terminated one start from the same place on
         * every rank at the next herd_pool_process(). */
        return 1;
    }
    new_round(p);
    return 0;
}

int herd__pool_term_idle(herd_pool *p) {
    pool_term *t = &p->term;
    if (t->state == TERM_DONE)
        return 1;
    if (t->state == TERM_COLLECTING) {
        collect(p);
        if (t->votes_in < t->nchild)
            return 0;
        /* T2: idle, and every child has voted: our vote. tail moved since
         * our last vote means a steal from us, which may have carried work
         * past ranks that already voted: vote no. Reset at every vote. */
        int64_t tail = herd__pool_read_tail(p);
        int clean = tail == t->tail_at_vote;
        t->tail_at_vote = tail;
        int64_t vote = t->all_yes && clean;
        if (t->parent < 0) /* T4: the root decides. */
            return conclude(p, vote ? RESULT_TERMINATE : RESULT_CONTINUE);
        /* T3: up the tree; then wait for the result. */
        POOL_MPI(p, MPI_Send(&vote, 1, MPI_INT64_T, t->parent, TAG_VOTE, p->comm));
        POOL_MPI(p, MPI_Irecv(&t->result_buf, 1, MPI_INT64_T, t->parent, TAG_RESULT, p->comm,
                              &t->req[2]));
        t->state = TERM_VOTED;
    }
    int done = 0;
    POOL_MPI(p, MPI_Test(&t->req[2], &done, MPI_STATUS_IGNORE));
    if (!done)
        return 0;
    return conclude(p, t->result_buf);
}

void herd__pool_term_poll(herd_pool *p) {
    pool_term *t = &p->term;
    /* Busy: only let MPI progress (RMA targets on some transports need it)
     * and take in children's votes; our own vote waits until we are idle. A
     * result cannot be "terminate" while we hold work (pool.md T proof), so
     * a "vote again" may be passed on now. */
    if (t->state == TERM_COLLECTING) {
        collect(p);
    } else if (t->state == TERM_VOTED) {
        int done = 0;
        POOL_MPI(p, MPI_Test(&t->req[2], &done, MPI_STATUS_IGNORE));
        if (done) {
            if (t->result_buf == RESULT_TERMINATE) {
                fprintf(stderr,
                        "herd pool: rank %d: termination announced while this rank holds work "
                        "(a bug in the pool)\n",
                        p->rank);
                MPI_Abort(p->comm, 3);
            }
            conclude(p, t->result_buf);
        }
    }
}
