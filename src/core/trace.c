/* Timeline tracing (HERD_TRACE=path): per-worker event buffers while the
 * runtime runs, one Chrome trace-event JSON file at herd_stop(). The design
 * note is docs/design/trace.md.
 *
 * What is recorded, per worker: a span for each task the scheduler loop
 * runs (from the start of the run, or from a resume, until the task
 * finishes or suspends), a span for each stretch of idleness (from the
 * first failed search until work is found, sleeps included), and an
 * instant for each steal (victim, tasks taken). Children that a parent's
 * wait runs as plain calls (J0, the inline path of herd/herd_fast.h) are
 * inside their parent's span and get none of their own: that path does not
 * know tracing exists, so it costs nothing there.
 *
 * Recording is owner-only and lock-free. A worker appends to its own
 * buffer from its own kernel thread; the buffer is a list of fixed chunks,
 * so the event of the open task span stays where it is while later chunks
 * are added, and the total is capped (HERD__TRACE_CAP), beyond which events
 * are counted, not kept. Nothing is formatted while the program runs: an
 * event is 32 bytes of timestamps and a function pointer, and names are
 * looked up (dladdr) once per function when the file is written.
 *
 * Rejected: one shared buffer with an atomic cursor (an RMW per event on a
 * contended line, and events interleaved across workers); writing the file
 * as the run goes (I/O on the workers, or a writer thread that must
 * synchronise with them); realloc'd arrays (the open span's event would
 * move under its pointer); B/E event pairs (twice the events, and a
 * suspended task's B and E would land on different workers' tracks). */
#include "core/trace.h"

#include "core/config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Events come in chunks of 2 MiB (smaller under a lowered cap); the cap is
 * a whole number of chunks. */
#define CHUNK_EVENTS ((size_t)1 << 16)
#define MAX_CHUNKS (HERD__TRACE_CAP / CHUNK_EVENTS)
_Static_assert(HERD__TRACE_CAP % CHUNK_EVENTS == 0, "the cap is a whole number of chunks");

/* A span's duration while it is still open. */
#define OPEN UINT64_MAX

enum event_type {
    EV_TASK = 1, /* span; fn, span (HERD__TRACE_RUN/RESUME), task_kind, how */
    EV_IDLE,     /* span */
    EV_STEAL,    /* instant; victim, taken, resumed */
};

typedef struct event {
    uint64_t ts;  /* herd__now_ns() */
    uint64_t dur; /* ns; spans only */
    union {
        herd_fn fn;
        struct {
            int32_t victim, taken;
        } steal;
    } u;
    uint8_t type;
    uint8_t span;      /* EV_TASK: herd__trace_span */
    uint8_t task_kind; /* EV_TASK: herd__task_kind of a run, 0 for a resume */
    uint8_t how;       /* EV_TASK: herd__trace_end; EV_STEAL: 1 when a suspended task */
} event;
_Static_assert(sizeof(event) == 32, "an event is 32 bytes");

/* One worker's events. Owner: that worker's kernel thread, until herd_stop()
 * has joined it; then the stopping thread. */
struct herd__trace_buf {
    event *pos, *end; /* free room in the newest chunk */
    event *open;      /* the task span under way, or NULL (none, or dropped) */
    event *chunk[MAX_CHUNKS];
    size_t nchunks;
    size_t max_chunks, chunk_events; /* the cap: max_chunks * chunk_events */
    uint64_t dropped;                /* events not kept: cap reached, or no memory */
    int nomem;                       /* a chunk could not be allocated */
};

/* ------------------------------------------------------------- recording */

/* Room for one more event, or NULL (counted as dropped). */
static event *append(herd__trace_buf *t) {
    if (__builtin_expect(t->pos != t->end, 1))
        return t->pos++;
    if (t->nchunks == t->max_chunks || t->nomem) {
        t->dropped++;
        return NULL;
    }
    event *c = malloc(t->chunk_events * sizeof *c);
    if (!c) {
        t->nomem = 1;
        t->dropped++;
        return NULL;
    }
    t->chunk[t->nchunks++] = c;
    t->pos = c + 1;
    t->end = c + t->chunk_events;
    return c;
}

/* Owner only: the hooks pass the worker the caller runs on. */
void herd__trace_task_begin_slow(herd__worker *w, herd_fn fn, int span, int task_kind) {
    HERD_ASSERT_OWNER(w);
    herd__trace_buf *t = w->trace;
    HERD_ASSERT(t->open == NULL); /* spans of one worker never nest */
    event *e = append(t);
    t->open = e;
    if (!e)
        return;
    e->ts = herd__now_ns();
    e->dur = OPEN;
    e->u.fn = fn;
    e->type = EV_TASK;
    e->span = (uint8_t)span;
    e->task_kind = (uint8_t)task_kind;
    e->how = 0;
}

/* The span is named by the innermost task on u: the one that blocked. */
void herd__trace_resume_slow(herd__worker *w, const herd__ult *u) {
    herd__trace_task_begin_slow(w, u->frame ? u->frame->fn : NULL, HERD__TRACE_RESUME, 0);
}

void herd__trace_task_end_slow(herd__worker *w, int how) {
    HERD_ASSERT_OWNER(w);
    herd__trace_buf *t = w->trace;
    event *e = t->open;
    if (!e)
        return; /* its start was dropped */
    uint64_t now = herd__now_ns();
    e->dur = now - e->ts;
    e->how = (uint8_t)how;
    t->open = NULL;
}

void herd__trace_steal_slow(herd__worker *w, const herd__work *got) {
    HERD_ASSERT_OWNER(w);
    event *e = append(w->trace);
    if (!e)
        return;
    e->ts = herd__now_ns();
    e->dur = 0;
    e->u.steal.victim = got->victim;
    e->u.steal.taken = (int32_t)got->ntasks;
    e->type = EV_STEAL;
    e->span = 0;
    e->task_kind = 0;
    e->how = got->ult != NULL;
}

void herd__trace_idle_slow(herd__worker *w, uint64_t since_ns, uint64_t until_ns) {
    HERD_ASSERT_OWNER(w);
    event *e = append(w->trace);
    if (!e)
        return;
    e->ts = since_ns;
    e->dur = until_ns > since_ns ? until_ns - since_ns : 0;
    e->u.fn = NULL;
    e->type = EV_IDLE;
    e->span = 0;
    e->task_kind = 0;
    e->how = 0;
}

/* ------------------------------------------------------------- lifecycle */

size_t herd__trace_cap = HERD__TRACE_CAP;

int herd__trace_open(herd__rt *rt) {
    if (!rt->set.trace_path[0])
        return 0;
    size_t cap = herd__trace_cap;
    if (cap == 0 || cap > HERD__TRACE_CAP)
        cap = HERD__TRACE_CAP;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__trace_buf *t = calloc(1, sizeof *t);
        if (!t)
            return HERD_ENOMEM; /* rt_free() frees what was allocated */
        t->chunk_events = cap < CHUNK_EVENTS ? cap : CHUNK_EVENTS;
        t->max_chunks = cap / t->chunk_events;
        rt->workers[i].trace = t;
    }
    return 0;
}

void herd__trace_free(herd__rt *rt) {
    if (!rt->workers)
        return;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__trace_buf *t = rt->workers[i].trace;
        if (!t)
            continue;
        for (size_t c = 0; c < t->nchunks; c++)
            free(t->chunk[c]);
        free(t);
        rt->workers[i].trace = NULL;
    }
}

/* ------------------------------------------------------------ task names */

/* Function pointer -> its name as a JSON string literal, filled as the
 * events are written: a program has few distinct task functions, and
 * dladdr() is far too slow to call once per event. Open addressing,
 * doubled when half full. */
typedef struct name_table {
    void **key;
    char **lit;
    size_t cap, n;
} name_table;

static size_t hash_ptr(void *p, size_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

/* Which loaded object holds address p: its file and its load bias (what
 * is added to the file's addresses). The main program's name is empty in
 * the loader's list; /proc/self/exe is its file whatever the working
 * directory has become. */
typedef struct object_of {
    uintptr_t p;
    uintptr_t bias;
    char path[1024];
    int found;
} object_of;

static int find_object(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    object_of *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || o->p < lo || o->p - lo >= ph->p_memsz)
            continue;
        o->bias = info->dlpi_addr;
        snprintf(o->path, sizeof o->path, "%s",
                 info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
        o->found = 1;
        return 1;
    }
    return 0;
}

/* The function symbol at file address `addr` in the ELF64 file at path,
 * from its full symbol table (.symtab), which lists static functions too;
 * 0 when the file has no such table (stripped) or no function there.
 * Every offset is checked against the file: it may be anything. */
static int symtab_lookup(const char *path, uint64_t addr, char *buf, size_t len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    const unsigned char *m = map;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    int found = 0;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 != 0 || eh->e_shoff > size ||
        eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr))
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(m + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset % 8 != 0 || sh[i].sh_offset > size ||
            sh[i].sh_size > size - sh[i].sh_offset || str->sh_offset > size ||
            str->sh_size > size - str->sh_offset)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(m + sh[i].sh_offset);
        const char *names = (const char *)(m + str->sh_offset);
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        for (size_t k = 0; k < n; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_value != addr ||
                sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= str->sh_size)
                continue;
            size_t room = str->sh_size - sym[k].st_name;
            size_t l = strnlen(names + sym[k].st_name, room);
            if (l == 0 || l == room)
                continue;
            snprintf(buf, len, "%.*s", (int)l, names + sym[k].st_name);
            found = 1;
            break;
        }
    }
out:
    munmap(map, size);
    return found;
}

/* The name of fn, as readable as the symbol tables allow: its dynamic
 * symbol (exported functions, or any non-static function of a program
 * linked with -rdynamic); else its name in the binary's full symbol table
 * (static functions, unless the binary is stripped); else "file+0xoffset"
 * (addr2line -f -e FILE OFFSET names it from debug information). */
static void describe_fn(void *p, char *buf, size_t len) {
    Dl_info info;
    object_of o = {.p = (uintptr_t)p};
    if (!p) {
        snprintf(buf, len, "(no function)");
        return;
    }
    if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p) {
        snprintf(buf, len, "%s", info.dli_sname);
        return;
    }
    dl_iterate_phdr(find_object, &o);
    if (!o.found) {
        snprintf(buf, len, "%p", p);
        return;
    }
    if (symtab_lookup(o.path, (uint64_t)(o.p - o.bias), buf, len))
        return;
    const char *file = o.path;
    if (strcmp(file, "/proc/self/exe") == 0)
        file = program_invocation_short_name;
    const char *base = strrchr(file, '/');
    snprintf(buf, len, "%.200s+%#lx", base ? base + 1 : file, (unsigned long)(o.p - o.bias));
}

/* name as a JSON literal, in memory (the table keeps it). */
static char *json_literal(const char *name) {
    char *s = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&s, &n);
    if (!m)
        return NULL;
    herd__json_string(m, name);
    if (fclose(m) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static int names_grow(name_table *t) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    void **key = calloc(cap, sizeof *key);
    char **lit = calloc(cap, sizeof *lit);
    if (!key || !lit) {
        free(key);
        free(lit);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->lit[i])
            continue;
        size_t j = hash_ptr(t->key[i], cap);
        while (lit[j])
            j = (j + 1) & (cap - 1);
        key[j] = t->key[i];
        lit[j] = t->lit[i];
    }
    free(t->key);
    free(t->lit);
    t->key = key;
    t->lit = lit;
    t->cap = cap;
    return 0;
}

/* fn's name as a JSON literal; a fixed stand-in when memory runs out. */
static const char *name_of(name_table *t, herd_fn fn) {
    void *p = *(void **)&fn;
    if (t->cap) {
        for (size_t i = hash_ptr(p, t->cap); t->lit[i]; i = (i + 1) & (t->cap - 1))
            if (t->key[i] == p)
                return t->lit[i];
    }
    if (2 * (t->n + 1) > t->cap && names_grow(t) != 0)
        return "\"(task)\"";
    char name[1024];
    describe_fn(p, name, sizeof name);
    char *lit = json_literal(name);
    if (!lit)
        return "\"(task)\"";
    size_t i = hash_ptr(p, t->cap);
    while (t->lit[i])
        i = (i + 1) & (t->cap - 1);
    t->key[i] = p;
    t->lit[i] = lit;
    t->n++;
    return lit;
}

static void names_free(name_table *t) {
    for (size_t i = 0; i < t->cap; i++)
        free(t->lit[i]);
    free(t->key);
    free(t->lit);
}

/* ---------------------------------------------------------------- writing */

/* Trace-event timestamps are microseconds; ours are whole nanoseconds,
 * printed exactly (three decimals) rather than through a double. */
static void put_us(FILE *f, uint64_t ns) {
    fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

typedef struct writer {
    FILE *f;
    herd__rt *rt;
    long pid;
    name_table names;
    uint64_t stop_ns; /* closes a span left open (none should be) */
} writer;

static const char *task_kind_name(int kind) {
    switch (kind) {
    case HERD__KIND_TASK:
        return "child";
    case HERD__KIND_GROUP:
        return "group";
    case HERD__KIND_ROOT:
        return "herd_run";
    case HERD__KIND_FORK:
        return "fork";
    case HERD__KIND_INJECTED:
        return "injected";
    }
    return "?";
}

static void write_event(writer *wr, int tid, const event *e) {
    FILE *f = wr->f;
    uint64_t start = wr->rt->start_ns;
    uint64_t ts = e->ts > start ? e->ts - start : 0;
    fprintf(f, ",\n{\"ph\":\"%s\",\"pid\":%ld,\"tid\":%d,\"ts\":", e->type == EV_STEAL ? "i" : "X",
            wr->pid, tid);
    put_us(f, ts);
    if (e->type != EV_STEAL) {
        uint64_t dur = e->dur;
        if (dur == OPEN)
            dur = wr->stop_ns > e->ts ? wr->stop_ns - e->ts : 0;
        fputs(",\"dur\":", f);
        put_us(f, dur);
    }
    switch (e->type) {
    case EV_TASK:
        fputs(",\"name\":", f);
        fputs(name_of(&wr->names, e->u.fn), f);
        if (e->span == HERD__TRACE_RUN)
            fprintf(f, ",\"cat\":\"run\",\"args\":{\"task\":\"%s\",", task_kind_name(e->task_kind));
        else
            fputs(",\"cat\":\"resume\",\"args\":{", f);
        fprintf(f, "\"end\":\"%s\"}}",
                e->how == HERD__TRACE_FINISHED    ? "finished"
                : e->how == HERD__TRACE_SUSPENDED ? "suspended"
                                                  : "stop");
        break;
    case EV_IDLE:
        fputs(",\"name\":\"idle\",\"cat\":\"idle\"}", f);
        break;
    case EV_STEAL:
        fprintf(f,
                ",\"s\":\"t\",\"name\":\"steal\",\"cat\":\"steal\",\"args\":{\"victim\":%" PRId32
                ",\"taken\":%" PRId32 ",\"what\":\"%s\"}}",
                e->u.steal.victim, e->u.steal.taken, e->how ? "suspended task" : "task");
        break;
    }
}

/* Perfetto needs a name per thread track; tid is the worker's index + 1
 * (older Perfetto UIs merge the tracks of tid 0 and tid 1). */
static void write_metadata(writer *wr) {
    herd__rt *rt = wr->rt;
    FILE *f = wr->f;
    fprintf(f, "{\"ph\":\"M\",\"pid\":%ld,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
            wr->pid);
    char pname[300];
    snprintf(pname, sizeof pname, "herd: %s", program_invocation_short_name);
    herd__json_string(f, pname);
    fputs("}}", f);
    int pinned = rt->set.bind != HERD__BIND_NONE && !rt->topo.synthetic;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *w = &rt->workers[i];
        fprintf(f,
                ",\n{\"ph\":\"M\",\"pid\":%ld,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
                "{\"name\":\"worker %d",
                wr->pid, i + 1, i);
        if (pinned)
            fprintf(f, " (PU %d)\"}}", w->pu);
        else
            fputs(" (not pinned)\"}}", f);
        fprintf(f,
                ",\n{\"ph\":\"M\",\"pid\":%ld,\"tid\":%d,\"name\":\"thread_sort_index\","
                "\"args\":{\"sort_index\":%d}}",
                wr->pid, i + 1, i);
    }
}

/* Events kept per worker at most (the same for every worker). */
static size_t cap_of(const herd__rt *rt) {
    const herd__trace_buf *t = rt->workers[0].trace;
    return t->max_chunks * t->chunk_events;
}

/* The run's facts, in the object's otherData (shown by Perfetto's "info"
 * page, and read by tools): how many events were kept and dropped. */
static void write_other(writer *wr, uint64_t kept, uint64_t dropped) {
    herd__rt *rt = wr->rt;
    FILE *f = wr->f;
    fprintf(f,
            "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"herd_version\":\"%d.%d.%d\","
            "\"workers\":%d,\"clock\":\"CLOCK_MONOTONIC, ts from herd_start\","
            "\"tid\":\"worker index + 1\",\"cap_per_worker\":%zu,\"events\":%" PRIu64
            ",\"events_dropped\":%" PRIu64 ",\"dropped_per_worker\":[",
            HERD_VERSION_MAJOR, HERD_VERSION_MINOR, HERD_VERSION_PATCH, rt->nworkers, cap_of(rt),
            kept, dropped);
    for (int i = 0; i < rt->nworkers; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", rt->workers[i].trace->dropped);
    fputs("]}}\n", f);
}

static int cannot_write(const char *path, int err) {
    fprintf(stderr, "herd: HERD_TRACE=%s: cannot write: %s\n", path, strerror(err));
    return HERD_ESYS;
}

int herd__trace_write(herd__rt *rt) {
    if (!rt->set.trace_path[0] || !rt->workers || !rt->workers[0].trace)
        return 0;
    const char *path = rt->set.trace_path;
    writer wr = {.rt = rt, .pid = (long)getpid(), .stop_ns = herd__now_ns()};
    wr.f = fopen(path, "w");
    if (!wr.f)
        return cannot_write(path, errno);
    setvbuf(wr.f, NULL, _IOFBF, 1 << 20);
    errno = 0;
    fputs("{\"traceEvents\":[\n", wr.f);
    write_metadata(&wr);
    uint64_t kept = 0, dropped = 0;
    int nomem = 0;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__trace_buf *t = rt->workers[i].trace;
        if (t->nchunks)
            kept +=
                (t->nchunks - 1) * t->chunk_events + (size_t)(t->pos - t->chunk[t->nchunks - 1]);
        dropped += t->dropped;
        nomem |= t->nomem;
    }
    /* Worker by worker, in the order recorded (an idle span is recorded when
     * it ends, after the steal that ended it): the format asks for no order,
     * and viewers sort. A write error stops the loop while errno still says
     * why. */
    for (int i = 0; i < rt->nworkers && !ferror(wr.f); i++) {
        herd__trace_buf *t = rt->workers[i].trace;
        for (size_t c = 0; c < t->nchunks && !ferror(wr.f); c++) {
            const event *e = t->chunk[c];
            const event *end = c + 1 < t->nchunks ? e + t->chunk_events : t->pos;
            for (; e < end; e++)
                write_event(&wr, i + 1, e);
        }
    }
    write_other(&wr, kept, dropped);
    names_free(&wr.names);
    /* A full disk shows only when the buffer is flushed, so check the flush
     * and the close, not just the open (as the HERD_STATS writer does). */
    int err = 0;
    if (fflush(wr.f) != 0 || ferror(wr.f))
        err = errno ? errno : EIO;
    if (fclose(wr.f) != 0 && !err)
        err = errno ? errno : EIO;
    if (err)
        return cannot_write(path, err);
    if (dropped)
        fprintf(stderr,
                "herd: HERD_TRACE=%s: %" PRIu64 " events dropped (%s of %zu events per "
                "worker); the trace is incomplete\n",
                path, dropped, nomem ? "memory ran out before the cap" : "a worker reached the cap",
                cap_of(rt));
    return 0;
}
