// herd.hpp -- the C++17 layer over herd's C runtime (include/herd/herd.h).
//
// Header-only: it adds no symbol to libherd and links through the same CMake
// target (herd::herd, herd::herd_static) and pkg-config file (herd.pc) as C
// code. Everything here calls the public C API; the one exception is
// detail::current_task(), which reads the calling task's identity from the
// inline-path layout of herd/herd_fast.h exactly as herd.h's own inline
// herd_spawn()/herd_wait() do (it ships with, and changes with, the library).
//
// Model, as in herd.h: a herd::runtime starts the workers; runtime::run()
// runs a callable as the root task; inside tasks, task_group, spawn/future,
// parallel_invoke and the loops create more tasks. A task that waits (a
// group, a future, a mutex, a condition, a barrier, a full/empty word) is
// suspended and its worker runs other tasks meanwhile.
//
// Callables travel in herd's argument block (HERD_ARG_MAX = 256 bytes) when
// they are trivially copyable, fit beside an 8-byte header and need at most
// 16-byte alignment: no allocation. Anything else (large captures,
// std::string or std::unique_ptr captures, move-only callables) is moved
// into one heap block that the task frees when it has run.
//
// Exceptions never cross the C runtime: every task body catches what its
// callable throws and stores it; the waiting side (task_group::wait,
// future::get, the loops, runtime::run) rethrows the first one. Errors of the
// C calls themselves (a call outside any task, a malformed argument) throw
// herd::error, which carries the HERD_E* code.
#ifndef HERD_HPP
#define HERD_HPP

#include <herd/herd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#if __cplusplus < 201703L
#error "herd.hpp needs C++17 (-std=c++17 or later)"
#endif

namespace herd {

/// Thrown when a call into the C runtime fails: code() is the HERD_E* value
/// (see herd.h), what() names the C++ operation and herd_strerror()'s sentence.
class error : public std::runtime_error {
  public:
    /// An error for `code` raised by the operation named `op`.
    error(int code, const char *op)
        : std::runtime_error(std::string(op) + ": " + herd_strerror(code)), code_(code) {}
    /// The HERD_E* code (negative).
    int code() const noexcept { return code_; }

  private:
    int code_;
};

namespace detail {

inline void check(int rc, const char *op) {
    if (rc != 0)
        throw error(rc, op);
}

// The calling task's identity (its frame, which lives on its own stack and
// stays put while it runs, even when it resumes on another worker), or
// nullptr outside tasks. Reads herd_fast.h's layout like herd_spawn() does.
inline const void *current_task() noexcept {
    return herd__tls ? herd__tls->frame : nullptr;
}

// C++ keeps the exceptions being thrown and handled per thread (Itanium
// C++ ABI 2.4.3: __cxa_eh_globals, a stack of caught exceptions and a count
// of uncaught ones), but a task that suspends may resume on another worker
// thread, and other tasks run on its thread meanwhile. So every call here
// that may suspend parks the caller's exception state for its duration:
// the thread is left with none in flight (a worker's own state between
// tasks) and the task takes its state to wherever it resumes. This makes
// waiting legal during unwinding (a task_group destructor) and inside catch
// handlers, for code that suspends through herd.hpp; the C calls do not park.
#if defined(__GLIBCXX__)
struct eh_state {
    void *caught;          // __cxa_exception *caughtExceptions
    unsigned int uncaught; // uncaughtExceptions
};
// This thread's state, found once per thread. Read as a value (a %fs-relative
// load, initial-exec like herd__tls) after every possible suspension, never
// kept as an address across one.
inline thread_local eh_state *eh_this_thread __attribute__((tls_model("initial-exec"))) = nullptr;
inline eh_state *eh_of_this_thread() noexcept {
    eh_state *e = eh_this_thread;
    if (__builtin_expect(e != nullptr, 1))
        return e;
    // Through a volatile pointer: the function is declared const.
    static auto *volatile get = &abi::__cxa_get_globals;
    e = reinterpret_cast<eh_state *>(get());
    eh_this_thread = e;
    return e;
}
class eh_parked {
  public:
    eh_parked() noexcept {
        eh_state *e = eh_of_this_thread();
        if (__builtin_expect(e->caught == nullptr && e->uncaught == 0, 1))
            return; // nothing in flight: nothing to carry (the common case)
        saved_ = *e;
        *e = eh_state{nullptr, 0};
        parked_ = true;
    }
    ~eh_parked() {
        if (parked_)
            *eh_of_this_thread() = saved_; // maybe another thread's
    }
    eh_parked(const eh_parked &) = delete;
    eh_parked &operator=(const eh_parked &) = delete;

  private:
    eh_state saved_;
    bool parked_ = false;
};
#else
struct eh_parked { // other C++ runtimes: nothing parked (docs/guide/cpp.md)
    eh_parked() noexcept {}
};
#endif

// The first exception thrown by a set of tasks. Many tasks may capture at
// once; exactly one wins and writes `first`. The reader (rethrow) runs after
// a wait for all of those tasks returned, and herd's joins order each task's
// writes before the wait's return (herd.h: waiting waits for completion).
class first_exception {
  public:
    // Called from inside a catch block.
    void capture() noexcept {
        // ORDER: relaxed; only decides the one writer of `first`. The reader
        // is ordered after the writer by the join of the task that wrote it.
        if (!set_.exchange(true, std::memory_order_relaxed))
            first_ = std::current_exception();
    }
    bool failed() const noexcept { return set_.load(std::memory_order_relaxed); }
    // After the tasks were waited for: the first exception, kept.
    std::exception_ptr peek() const noexcept { return first_; }
    // After the tasks were waited for: throw the first exception, once.
    void rethrow() {
        if (!set_.load(std::memory_order_relaxed))
            return;
        std::exception_ptr e = std::move(first_);
        first_ = nullptr;
        set_.store(false, std::memory_order_relaxed);
        std::rethrow_exception(e);
    }

  private:
    std::atomic<bool> set_{false};
    std::exception_ptr first_;
};

// Whether a callable of type F travels by value in the argument block,
// after a header of `header` bytes.
template <class F, std::size_t header>
inline constexpr bool fits_inline = std::is_trivially_copyable_v<F> &&
                                    sizeof(F) + header + alignof(F) <= HERD_ARG_MAX &&
                                    alignof(F) <= 16;

template <class F> struct inline_packet {
    first_exception *ex;
    F f;
};
template <class F> struct boxed_packet {
    first_exception *ex;
    F *f;
};

template <class F> void run_inline(void *p) {
    auto *k = static_cast<inline_packet<F> *>(p);
    try {
        std::invoke(k->f);
    } catch (...) {
        k->ex->capture();
    }
}

template <class F> void run_boxed(void *p) {
    auto *k = static_cast<boxed_packet<F> *>(p);
    std::unique_ptr<F> own(k->f);
    try {
        std::invoke(*own);
    } catch (...) {
        k->ex->capture();
    }
}

// Queue `f` through spawn(fn, arg, size) (herd_spawn or herd_group_spawn);
// exceptions it throws go to *ex. When the worker's queue is full
// (HERD_ENOMEM) the task runs here and now instead: that is still a correct
// order for a task of a group, and nothing is lost. Other errors throw.
template <class Fn, class Spawn>
void spawn_callable(first_exception *ex, Fn &&fn, Spawn &&spawn, const char *op) {
    using F = std::decay_t<Fn>;
    static_assert(std::is_invocable_v<F &>, "a task must be callable with no arguments");
    if constexpr (fits_inline<F, sizeof(void *)>) {
        inline_packet<F> k{ex, std::forward<Fn>(fn)};
        int rc = spawn(&run_inline<F>, &k, sizeof k);
        if (rc == HERD_ENOMEM)
            run_inline<F>(&k);
        else
            check(rc, op);
    } else {
        boxed_packet<F> k{ex, new F(std::forward<Fn>(fn))};
        int rc = spawn(&run_boxed<F>, &k, sizeof k);
        if (rc == HERD_ENOMEM) {
            run_boxed<F>(&k);
        } else if (rc != 0) {
            delete k.f;
            throw error(rc, op);
        }
    }
}

// The result of a callable: a value, or nothing for void.
template <class T> class result_slot {
  public:
    result_slot() noexcept {}
    ~result_slot() { reset(); }
    result_slot(const result_slot &) = delete;
    result_slot &operator=(const result_slot &) = delete;
    template <class F> void fill(F &f) {
        ::new (static_cast<void *>(&u_.v)) T(std::invoke(f));
        has_ = true;
    }
    T &get() noexcept { return u_.v; }
    T take() { return std::move(u_.v); }
    void reset() noexcept {
        if (has_)
            u_.v.~T();
        has_ = false;
    }

  private:
    union u {
        u() {}
        ~u() {}
        T v;
    } u_;
    bool has_ = false;
};
template <> class result_slot<void> {
  public:
    template <class F> void fill(F &f) { std::invoke(f); }
    void get() noexcept {}
    void take() noexcept {}
};

} // namespace detail

// ------------------------------------------------------------------ runtime

/// Start-up settings, one field per field of herd_config (herd.h). An empty
/// string or a zero takes the value from the matching HERD_* environment
/// variable, and failing that the built-in default (docs/reference/environment.md).
struct config {
    int workers = 0;            ///< HERD_WORKERS: number of workers
    std::string sched;          ///< HERD_SCHED: auto, ws, ws-nearest, numa, ...
    std::string bind;           ///< HERD_BIND: none, compact, scatter, ...
    std::string topology;       ///< HERD_TOPOLOGY: hwloc synthetic string or XML path
    std::string shepherd;       ///< HERD_SHEPHERD: pu, core, l2, l3, numa, package, machine
    std::size_t stack_size = 0; ///< HERD_STACK: bytes per task stack
    std::string idle;           ///< HERD_IDLE: spin, sleep, adaptive
    std::string stats;          ///< HERD_STATS: "1" prints a table at stop; a path writes JSON
    int stack_guard = 0;        ///< HERD_STACK_GUARD: 1 detects overflow, -1 off
    std::string spawn;          ///< HERD_SPAWN: help-first, work-first
    std::string steal;          ///< HERD_STEAL: one, half, chunk:N
    std::string trace;          ///< HERD_TRACE: path of a timeline written at stop
};

/// The started runtime, RAII: the constructor calls herd_start(), the
/// destructor herd_stop(). One per process at a time; construct and destroy
/// it outside herd tasks. Not copyable or movable.
class runtime {
  public:
    /// Start with every setting from the environment (herd_start(NULL)).
    /// Throws herd::error (HERD_EINVAL for a malformed HERD_* value, whose
    /// message herd prints to stderr; HERD_ESTATE when already started).
    runtime() { detail::check(herd_start(nullptr), "herd::runtime"); }
    /// Start with `cfg`; empty fields come from the environment.
    explicit runtime(const config &cfg) {
        herd_config c{};
        c.workers = cfg.workers;
        c.sched = str(cfg.sched);
        c.bind = str(cfg.bind);
        c.topology = str(cfg.topology);
        c.shepherd = str(cfg.shepherd);
        c.stack_size = cfg.stack_size;
        c.idle = str(cfg.idle);
        c.stats = str(cfg.stats);
        c.stack_guard = cfg.stack_guard;
        c.spawn = str(cfg.spawn);
        c.steal = str(cfg.steal);
        c.trace = str(cfg.trace);
        detail::check(herd_start(&c), "herd::runtime");
    }
    /// Start with a C configuration (NULL fields from the environment).
    explicit runtime(const herd_config &cfg) { detail::check(herd_start(&cfg), "herd::runtime"); }
    runtime(const runtime &) = delete;
    runtime &operator=(const runtime &) = delete;
    /// Stops the runtime unless stop() already did; errors are ignored here
    /// (call stop() to see them).
    ~runtime() {
        if (!stopped_)
            herd_stop();
    }
    /// Stop now (herd_stop()); throws herd::error (e.g. HERD_ESYS when the
    /// HERD_STATS or HERD_TRACE file could not be written; stopped anyway).
    void stop() {
        if (stopped_)
            return;
        stopped_ = true;
        detail::check(herd_stop(), "herd::runtime::stop");
    }
    /// Number of workers.
    int workers() const noexcept { return herd_num_workers(); }

    /// Run f() as a root task (herd_run) and return its result once it and
    /// all its descendants have finished; an exception it throws is rethrown
    /// here. Call from outside herd tasks (many threads may call at once).
    template <class F> std::invoke_result_t<F &> run(F &&f) {
        using R = std::invoke_result_t<F &>;
        detail::result_slot<R> res;
        std::exception_ptr exc;
        root_packet<std::remove_reference_t<F>, R> k{&f, &res, &exc};
        detail::check(herd_run(&root_body<std::remove_reference_t<F>, R>, &k, sizeof k),
                      "herd::runtime::run");
        if (exc)
            std::rethrow_exception(exc);
        return res.take();
    }

  private:
    static const char *str(const std::string &s) { return s.empty() ? nullptr : s.c_str(); }
    template <class F, class R> struct root_packet {
        F *f;
        detail::result_slot<R> *res;
        std::exception_ptr *exc;
    };
    template <class F, class R> static void root_body(void *p) {
        auto *k = static_cast<root_packet<F, R> *>(p);
        try {
            k->res->fill(*k->f);
        } catch (...) {
            *k->exc = std::current_exception();
        }
    }
    bool stopped_ = false;
};

/// Number of workers of the started runtime, 0 when not started.
inline int num_workers() noexcept {
    return herd_num_workers();
}
/// Index of the worker running the caller, or -1 outside the runtime.
inline int worker_id() noexcept {
    return herd_worker_id();
}

namespace this_task {
/// Let other ready tasks run (herd_yield). Inside a task.
inline void yield() {
    detail::eh_parked parked;
    detail::check(herd_yield(), "herd::this_task::yield");
}
} // namespace this_task

// --------------------------------------------------------------- task_group

/// A set of tasks that can be waited for together (like tbb::task_group).
///
/// run(f) queues f() as a task; wait() suspends the calling task (not its
/// worker) until every task run in the group, and everything they spawned,
/// has finished, then rethrows the first exception one of them threw (the
/// others are dropped; the remaining tasks still run). The group can be
/// reused after wait().
///
/// Contracts:
/// - run() and wait() are called from inside herd tasks.
/// - The task that creates the group is its owner. The owner's run() queues
///   f as its own child (herd_spawn, the inline fast path); run() from any
///   other task (a task of the group adding more, say) queues into a
///   herd_group. wait() is called by the owner, and because it waits for the
///   owner's children it also waits for any other child the owner has
///   spawned (other groups' tasks, herd_spawn children): it never waits for
///   less than the group. A run() from another task must happen before the
///   owner's wait() (for instance by being inside a task of the group).
///   A group created outside any task has no owner: every run() queues into
///   the herd_group and any one task may wait().
/// - The destructor waits when tasks are outstanding (it must then run
///   inside a herd task); an exception they threw is then lost, since a
///   destructor cannot throw: call wait() to see it.
class task_group {
  public:
    /// An empty group owned by the calling task (no owner outside tasks).
    task_group() noexcept : owner_(detail::current_task()) {
        if (!owner_)
            init_group(); // every run() will use it
    }
    task_group(const task_group &) = delete;
    task_group &operator=(const task_group &) = delete;
    /// Waits for outstanding tasks; see the class comment.
    ~task_group() {
        if (spawned_ || foreign_.load(std::memory_order_relaxed))
            wait_all();
    }

    /// Queue f() (any callable taking no arguments; it is moved or copied
    /// into the task) as a task of the group. Throws herd::error outside
    /// tasks. If the worker's queue is full, f() runs at once in the caller.
    template <class F> void run(F &&f) {
        const void *me = detail::current_task();
        if (__builtin_expect(me && me == owner_, 1)) {
            spawned_ = true;
            detail::eh_parked parked; // a work-first spawn suspends the caller
            detail::spawn_callable(
                &ex_, std::forward<F>(f),
                // herd_spawn, but the packet copied with memcpy: the compiler
                // built it with moves as wide as it chose, which a copy in
                // herd_spawn's 4-byte pieces would only lengthen (herd_fast.h).
                [](herd_fn fn, const void *a, std::size_t n) {
                    return herd__spawn_fast_copy(fn, a, n, 0);
                },
                "herd::task_group::run");
            return;
        }
        if (!me)
            throw error(HERD_ENOTASK, "herd::task_group::run");
        init_group();
        detail::eh_parked parked;
        detail::spawn_callable(
            &ex_, std::forward<F>(f),
            [this](herd_fn fn, const void *a, std::size_t n) {
                return herd_group_spawn(&group_, fn, a, n);
            },
            "herd::task_group::run");
        // ORDER: relaxed; the owner reads it after a wait that orders this
        // task (or its ancestor in the group) before it (class contract).
        // Set only once a task is queued: a failed run() leaves nothing to wait for.
        foreign_.store(true, std::memory_order_relaxed);
    }

    /// Wait for every task of the group (see the class comment), then
    /// rethrow the first exception one of them threw.
    void wait() {
        wait_all();
        ex_.rethrow();
    }

  private:
    // The herd_group is prepared on first use only: the owner's children
    // (the common case) never need it, and herd_group_init is a call. Many
    // tasks may run() into the group at once; one prepares it, the others
    // wait the few stores that takes (no suspension happens meanwhile).
    void init_group() noexcept {
        // ORDER: acquire; pairs with the release store of 2 below: the
        // group's initialised fields are visible once 2 is seen.
        if (group_ready_.load(std::memory_order_acquire) == 2)
            return;
        int expect = 0;
        // ORDER: relaxed; only elects the initialiser (the release below publishes).
        if (group_ready_.compare_exchange_strong(expect, 1, std::memory_order_relaxed)) {
            herd_group_init(&group_);
            // ORDER: release; pairs with the acquire loads here and above.
            group_ready_.store(2, std::memory_order_release);
            return;
        }
        // ORDER: acquire; as above.
        while (group_ready_.load(std::memory_order_acquire) != 2) {
        }
    }

    void wait_all() {
        const void *me = detail::current_task();
        if (owner_ && me != owner_)
            throw error(HERD_EINVAL, me ? "herd::task_group::wait from a task other than the "
                                          "group's owner (the task that created it)"
                                        : "herd::task_group::wait outside herd tasks");
        detail::eh_parked parked;
        if (spawned_) {
            // Children first: they may run() more tasks into the herd_group.
            detail::check(herd_wait(), "herd::task_group::wait");
            spawned_ = false;
        }
        if (foreign_.load(std::memory_order_relaxed)) {
            detail::check(herd_group_wait(&group_), "herd::task_group::wait");
            foreign_.store(false, std::memory_order_relaxed);
        }
    }

    herd_group group_;                // prepared by init_group()
    std::atomic<int> group_ready_{0}; // 0: not prepared, 1: being prepared, 2: ready
    const void *owner_;
    bool spawned_ = false; // owner only: it queued children since the last wait
    std::atomic<bool> foreign_{false};
    detail::first_exception ex_;
};

/// Run every callable as a task and return when all have finished; the
/// first runs in the caller, the others are queued (copied or moved, like
/// task_group::run). Rethrows the first exception. Inside a task.
template <class F, class... Fs> void parallel_invoke(F &&f, Fs &&...fs) {
    task_group g;
    (g.run(std::forward<Fs>(fs)), ...);
    std::exception_ptr mine;
    try {
        std::invoke(f);
    } catch (...) {
        mine = std::current_exception(); // wait outside the handler
    }
    if (!mine) {
        g.wait();
        return;
    }
    try {
        g.wait(); // the others must finish before we unwind past them
    } catch (...) {
    }
    std::rethrow_exception(mine);
}

// ----------------------------------------------------------------- futures

/// The result of a callable run as a task by herd::spawn(). get() suspends
/// the calling task (not its worker) until the task has finished, then
/// returns its value or rethrows its exception; get() may be called many
/// times.
///
/// A future is neither copyable nor movable: the task writes its result
/// into the future itself, so it must stay where it is (herd::spawn returns
/// it by C++17 guaranteed copy elision: `auto f = herd::spawn(...)`; to keep
/// many, construct them in place, e.g. std::deque<herd::future<T>>::
/// emplace_back(callable) or std::list). The destructor waits for the task
/// if get()/wait() has not (inside a task); an exception is then lost.
/// Futures are waited precisely: get() waits for that task only.
template <class T> class future {
  public:
    /// Spawn f() as a task whose result this future holds. Inside a task;
    /// throws herd::error otherwise.
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, future>>>
    explicit future(F &&f) {
        static_assert(std::is_same_v<std::invoke_result_t<std::decay_t<F> &>, T>,
                      "herd::future<T>: the callable must return T");
        herd_group_init(&group_);
        detail::spawn_callable(
            &ex_, [this, g = std::forward<F>(f)]() mutable { value_.fill(g); },
            [this](herd_fn fn, const void *a, std::size_t n) {
                return herd_group_spawn(&group_, fn, a, n);
            },
            "herd::spawn");
    }
    future(const future &) = delete;
    future &operator=(const future &) = delete;
    /// Waits for the task unless wait()/get() did (an exception is then lost).
    ~future() {
        if (!done_) {
            detail::eh_parked parked;
            herd_group_wait(&group_);
        }
    }

    /// Wait for the task; does not throw its exception (get() does).
    void wait() {
        if (!done_) {
            detail::eh_parked parked;
            detail::check(herd_group_wait(&group_), "herd::future::wait");
            done_ = true;
        }
    }
    /// Wait, then return the value (a reference to it, valid while the
    /// future lives) or rethrow the task's exception.
    std::add_lvalue_reference_t<T> get() {
        wait();
        if (ex_.failed())
            std::rethrow_exception(ex_.peek());
        return value_.get();
    }

  private:
    herd_group group_;
    bool done_ = false;
    detail::result_slot<T> value_;
    detail::first_exception ex_;
};

/// Run f() as a task; returns the future of its result (see herd::future).
template <class F> future<std::invoke_result_t<std::decay_t<F> &>> spawn(F &&f) {
    return future<std::invoke_result_t<std::decay_t<F> &>>(std::forward<F>(f));
}

// ------------------------------------------------------------------- loops

/// How a loop's iterations become tasks (herd_loop_kind in herd.h).
enum class loop_kind : int {
    each = HERD_LOOP_EACH,          ///< one task per iteration (grain ignored)
    split = HERD_LOOP_SPLIT,        ///< halve recursively down to `grain` iterations (default)
    chunks = HERD_LOOP_CHUNKS,      ///< one task per worker taking `grain` at a time
    shepherds = HERD_LOOP_SHEPHERDS ///< even split over shepherds, each piece split there
};

/// A loop's flavour and grain (iterations per task at least; 0 picks
/// max(1, n / (8 * workers))).
struct loop_options {
    loop_kind kind = loop_kind::split; ///< how iterations become tasks
    std::int64_t grain = 0;            ///< 0: automatic
};

/// A half-open range [begin, end) of integers or random-access iterators,
/// with a grain: what parallel_for(range, f) cuts and hands to f.
template <class I> class range {
  public:
    /// [b, e) with `grain` iterations per task at least (0: automatic).
    range(I b, I e, std::int64_t grain = 0) : b_(b), e_(e), grain_(grain) {}
    I begin() const { return b_; }                         ///< first element
    I end() const { return e_; }                           ///< one past the last
    std::int64_t grain() const noexcept { return grain_; } ///< the grain it was made with
    std::int64_t size() const { return static_cast<std::int64_t>(e_ - b_); } ///< end - begin
    bool empty() const { return !(b_ < e_); }                                ///< no element

  private:
    I b_, e_;
    std::int64_t grain_;
};

namespace detail {

inline std::int64_t auto_grain(std::int64_t n, std::int64_t grain) {
    if (grain > 0)
        return grain;
    int w = herd_num_workers();
    std::int64_t g = n / (8 * (w > 0 ? w : 1));
    return g > 0 ? g : 1;
}

template <class I> I at(I base, std::int64_t i) {
    if constexpr (std::is_integral_v<I>)
        return static_cast<I>(base + static_cast<I>(i));
    else
        return base + static_cast<typename std::iterator_traits<I>::difference_type>(i);
}

template <class I, class F> struct loop_ctx {
    I base;
    F *f;
    std::int64_t grain;
    first_exception ex;
};

// f(i) for every i, or f(range) per range: the body herd_loop runs.
template <class I, class F, bool ranged> void loop_body(std::int64_t b, std::int64_t e, void *p) {
    auto *c = static_cast<loop_ctx<I, F> *>(p);
    if (c->ex.failed())
        return; // an iteration threw: skip what has not started
    try {
        if constexpr (ranged) {
            (*c->f)(range<I>(at(c->base, b), at(c->base, e), c->grain));
        } else {
            for (std::int64_t i = b; i < e; i++)
                (*c->f)(at(c->base, i));
        }
    } catch (...) {
        c->ex.capture();
    }
}

template <class I, class F, bool ranged>
void run_loop(I base, std::int64_t n, F &f, std::int64_t grain, loop_kind kind) {
    if (n <= 0)
        return;
    loop_ctx<I, F> c{base, &f, auto_grain(n, grain), {}};
    {
        eh_parked parked;
        check(herd_loop(0, n, c.grain, static_cast<herd_loop_kind>(kind), &loop_body<I, F, ranged>,
                        &c),
              "herd::parallel_for");
    }
    c.ex.rethrow();
}

template <class B, class E> using index_t = std::common_type_t<B, E>;

// One reduction partial: empty until its first range, then a T. Its bytes
// start as a copy of an empty slot (herd_loop_reduce copies `identity`).
template <class T> struct alignas(alignof(T) > 8 ? alignof(T) : 8) partial {
    alignas(T) unsigned char buf[sizeof(T)];
    bool has;
    T &v() { return *std::launder(reinterpret_cast<T *>(buf)); }
};

template <class I, class T, class Map, class Combine> struct reduce_ctx {
    I base;
    const T *identity;
    Map *map;
    Combine *combine;
    std::int64_t grain;
    first_exception ex;
};

template <class I, class T, class Map, class Combine>
void reduce_body(std::int64_t b, std::int64_t e, void *p, void *part) {
    auto *c = static_cast<reduce_ctx<I, T, Map, Combine> *>(p);
    auto *s = static_cast<partial<T> *>(part);
    if (c->ex.failed())
        return;
    try {
        if (!s->has) {
            ::new (static_cast<void *>(s->buf)) T(*c->identity);
            s->has = true;
        }
        T &acc = s->v();
        if constexpr (std::is_invocable_v<Map &, range<I>, T &&>) {
            acc = std::invoke(*c->map, range<I>(at(c->base, b), at(c->base, e), c->grain),
                              std::move(acc));
        } else {
            for (std::int64_t i = b; i < e; i++)
                acc =
                    std::invoke(*c->combine, std::move(acc), std::invoke(*c->map, at(c->base, i)));
        }
    } catch (...) {
        c->ex.capture();
    }
}

template <class I, class T, class Map, class Combine>
void reduce_combine(void *into, const void *from, void *p) {
    auto *c = static_cast<reduce_ctx<I, T, Map, Combine> *>(p);
    auto *d = static_cast<partial<T> *>(into);
    auto *s = static_cast<partial<T> *>(const_cast<void *>(from));
    if (!s->has)
        return;
    if (!d->has) {
        ::new (static_cast<void *>(d->buf)) T(std::move(s->v()));
        d->has = true;
    } else if (!c->ex.failed()) {
        try {
            d->v() = std::invoke(*c->combine, std::move(d->v()), std::move(s->v()));
        } catch (...) {
            c->ex.capture();
        }
    }
    s->v().~T();
    s->has = false;
}

} // namespace detail

/// f(i) for every i in [begin, end) (integers or random-access iterators),
/// as tasks cut by opt.kind down to opt.grain iterations. Returns when all
/// have run; rethrows the first exception (iterations not yet started are
/// then skipped). Inside a task; nests.
template <class B, class E, class F,
          class = std::enable_if_t<std::is_invocable_v<F &, detail::index_t<B, E>>>>
void parallel_for(B begin, E end, F &&f, loop_options opt = {}) {
    using I = detail::index_t<B, E>;
    I b = begin, e = end;
    detail::run_loop<I, std::remove_reference_t<F>, false>(b, static_cast<std::int64_t>(e - b), f,
                                                           opt.grain, opt.kind);
}

/// As above with an explicit grain (iterations per task at least) and kind.
template <class B, class E, class G, class F, class = std::enable_if_t<std::is_integral_v<G>>>
void parallel_for(B begin, E end, G grain, F &&f, loop_kind kind = loop_kind::split) {
    parallel_for(begin, end, std::forward<F>(f), loop_options{kind, std::int64_t(grain)});
}

/// f(sub) for sub-ranges that partition r (each a herd::range<I> of at
/// least r.grain() elements, except where r is smaller): one call per task,
/// so f can keep per-range state.
template <class I, class F>
void parallel_for(const range<I> &r, F &&f, loop_kind kind = loop_kind::split) {
    detail::run_loop<I, std::remove_reference_t<F>, true>(r.begin(), r.size(), f, r.grain(), kind);
}

/// Reduce [begin, end): the result is combine(...combine(identity, map(i))...)
/// over every i, in some association (combine must be associative, and
/// identity its neutral element). map is either per element, map(i) -> T,
/// or per range, map(herd::range<I>, T init) -> T (init accumulated with the
/// range's elements; the fast form for arithmetic). T needs at most 16-byte
/// alignment and about 240 bytes (wrap bigger state in a pointer type).
/// Rethrows the first exception. Inside a task.
template <class B, class E, class T, class Map, class Combine>
T parallel_reduce(B begin, E end, T identity, Map &&map, Combine &&combine, loop_options opt = {}) {
    using I = detail::index_t<B, E>;
    using M = std::remove_reference_t<Map>;
    using C = std::remove_reference_t<Combine>;
    using P = detail::partial<T>;
    static_assert(sizeof(P) <= HERD_ARG_MAX && alignof(T) <= 16,
                  "parallel_reduce: T must fit herd's argument block (HERD_ARG_MAX)");
    I b = begin, e = end;
    std::int64_t n = static_cast<std::int64_t>(e - b);
    if (n <= 0)
        return identity;
    detail::reduce_ctx<I, T, M, C> c{b, &identity, &map, &combine, detail::auto_grain(n, opt.grain),
                                     {}};
    P empty, total;
    std::memset(static_cast<void *>(&empty), 0, sizeof empty);
    int rc;
    {
        detail::eh_parked parked;
        rc = herd_loop_reduce(0, n, c.grain, static_cast<herd_loop_kind>(opt.kind),
                              &detail::reduce_body<I, T, M, C>, &detail::reduce_combine<I, T, M, C>,
                              &c, &empty, &total, sizeof total);
    }
    if (rc != 0) {
        if (total.has)
            total.v().~T();
        throw error(rc, "herd::parallel_reduce");
    }
    if (c.ex.failed()) {
        if (total.has)
            total.v().~T();
        c.ex.rethrow();
    }
    if (!total.has)
        return identity;
    T out = std::move(total.v());
    total.v().~T();
    return out;
}

// ---------------------------------------------------------- synchronisation
// All of these suspend only the calling task, never its worker, and are
// used from inside herd tasks (herd::error with HERD_ENOTASK otherwise).

/// A task mutex (herd_mutex: FIFO wake-up, no hand-off; not recursive). Satisfies
/// Lockable: std::lock_guard, std::unique_lock, std::scoped_lock work.
class mutex {
  public:
    /// An unlocked mutex.
    mutex() noexcept { herd_mutex_init(&m_); }
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;
    /// Acquire, suspending the task while another holds it.
    void lock() {
        detail::eh_parked parked;
        detail::check(herd_mutex_lock(&m_), "herd::mutex::lock");
    }
    /// Acquire if free; false when held.
    bool try_lock() noexcept { return herd_mutex_trylock(&m_) == 0; }
    /// Release; wakes the oldest waiter, which takes it unless a running
    /// task took it first (then it waits again, first in line).
    void unlock() { detail::check(herd_mutex_unlock(&m_), "herd::mutex::unlock"); }
    /// The C object.
    herd_mutex *native_handle() noexcept { return &m_; }

  private:
    herd_mutex m_;
};

/// A task condition variable (herd_cond) for std::unique_lock<herd::mutex>.
class condition_variable {
  public:
    /// A condition variable without waiters.
    condition_variable() noexcept { herd_cond_init(&c_); }
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;
    /// Atomically release lk's mutex and suspend until notified; the mutex
    /// is held again on return. lk must own its mutex.
    void wait(std::unique_lock<mutex> &lk) {
        if (!lk.owns_lock())
            throw error(HERD_EINVAL, "herd::condition_variable::wait: the lock is not held");
        detail::eh_parked parked;
        detail::check(herd_cond_wait(&c_, lk.mutex()->native_handle()),
                      "herd::condition_variable::wait");
    }
    /// Wait until pred() is true (checked with the mutex held).
    template <class Pred> void wait(std::unique_lock<mutex> &lk, Pred pred) {
        while (!pred())
            wait(lk);
    }
    /// Wake the oldest waiter, if any.
    void notify_one() { detail::check(herd_cond_signal(&c_), "herd::condition_variable"); }
    /// Wake every waiter.
    void notify_all() { detail::check(herd_cond_broadcast(&c_), "herd::condition_variable"); }
    /// The C object.
    herd_cond *native_handle() noexcept { return &c_; }

  private:
    herd_cond c_;
};

/// A reusable barrier for `count` tasks (herd_barrier; more tasks than
/// workers is fine).
class barrier {
  public:
    /// Throws herd::error (HERD_EINVAL for count < 1, HERD_ENOMEM).
    explicit barrier(std::int64_t count) {
        detail::check(herd_barrier_init(&b_, count), "herd::barrier");
    }
    barrier(const barrier &) = delete;
    barrier &operator=(const barrier &) = delete;
    /// Frees the barrier (no task may be waiting on it).
    ~barrier() { herd_barrier_destroy(&b_); }
    /// Wait until `count` tasks have arrived; true in exactly one task per
    /// phase (the serial one), false in the others.
    bool arrive_and_wait() {
        int rc;
        {
            detail::eh_parked parked;
            rc = herd_barrier_wait(&b_);
        }
        if (rc < 0)
            throw error(rc, "herd::barrier::arrive_and_wait");
        return rc == 1;
    }
    /// The C object.
    herd_barrier *native_handle() noexcept { return &b_; }

  private:
    herd_barrier b_;
};

/// A 64-bit word with a full/empty bit (Qthreads semantics, herd_feb_* in
/// herd.h). It starts full with value 0 (or the given value). As a lock,
/// full means free: lock() waits until full and empties it (herd_feb_lock),
/// unlock() fills it, try_lock() empties it only if full; so it satisfies
/// Lockable and works with std::lock_guard, std::unique_lock and
/// std::scoped_lock. Destroy it full, or inside a task (the destructor then
/// fills it, so herd keeps no record of it).
class full_empty {
  public:
    /// A full word holding `value`.
    explicit full_empty(std::uint64_t value = 0) noexcept : w_(value) {}
    full_empty(const full_empty &) = delete;
    full_empty &operator=(const full_empty &) = delete;
    /// Fills the word if it is empty (see the class comment).
    ~full_empty() {
        if (herd_feb_status(&w_) == 0)
            herd_feb_fill(&w_);
    }
    /// Wait until full, return the value; leaves it full.
    std::uint64_t read_ff() {
        std::uint64_t v;
        detail::eh_parked parked;
        detail::check(herd_feb_readFF(&w_, &v), "herd::full_empty::read_ff");
        return v;
    }
    /// Wait until full, return the value and mark it empty.
    std::uint64_t read_fe() {
        std::uint64_t v;
        detail::eh_parked parked;
        detail::check(herd_feb_readFE(&w_, &v), "herd::full_empty::read_fe");
        return v;
    }
    /// Wait until empty, write v and mark it full.
    void write_ef(std::uint64_t v) {
        detail::eh_parked parked;
        detail::check(herd_feb_writeEF(&w_, v), "herd::full_empty::write_ef");
    }
    /// Write v and mark it full, whatever its state; never blocks.
    void write_f(std::uint64_t v) {
        detail::check(herd_feb_writeF(&w_, v), "herd::full_empty::write_f");
    }
    /// Mark it full (the value unchanged); never blocks.
    void fill() { detail::check(herd_feb_fill(&w_), "herd::full_empty::fill"); }
    /// Mark it empty; never blocks.
    void empty() { detail::check(herd_feb_empty(&w_), "herd::full_empty::empty"); }
    /// Whether it is full (a snapshot; anywhere).
    bool is_full() const noexcept { return herd_feb_status(&w_) == 1; }
    /// Lockable: wait until full, mark it empty (herd_feb_lock: a waiter
    /// is woken, not served, so std::lock over several words makes progress).
    void lock() {
        detail::eh_parked parked;
        detail::check(herd_feb_lock(&w_), "herd::full_empty::lock");
    }
    /// Lockable: mark it empty if it is full; false otherwise. Never blocks.
    bool try_lock() {
        std::uint64_t v;
        int rc = herd_feb_tryreadFE(&w_, &v);
        if (rc == HERD_EBUSY)
            return false;
        detail::check(rc, "herd::full_empty::try_lock");
        return true;
    }
    /// Lockable: mark it full.
    void unlock() { fill(); }
    /// The word itself, for the herd_feb_* functions.
    std::uint64_t *native_handle() noexcept { return &w_; }

  private:
    alignas(8) std::uint64_t w_;
};

} // namespace herd

#endif // HERD_HPP
