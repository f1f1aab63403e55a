/* Which sanitizer this test is built with: CHECK_SANITIZED (ThreadSanitizer
 * or AddressSanitizer) and CHECK_TSAN, 1 or 0. Apart from check.h, so that
 * tests with assertions of their own (the deque battery) can size by it. */
#ifndef HERD_TESTS_SANITIZED_H
#define HERD_TESTS_SANITIZED_H

/* Built with a sanitizer? Some sizes shrink there. ThreadSanitizer keeps
 * about 2 MB of state per fiber (a TSan thread: its clocks and its trace),
 * and every suspended task holds a fiber, so under TSan a test keeps at
 * most about a thousand tasks suspended at once. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHECK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CHECK_SANITIZED 1
#endif
#endif
#ifndef CHECK_SANITIZED
#define CHECK_SANITIZED 0
#endif
#if defined(__SANITIZE_THREAD__)
#define CHECK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHECK_TSAN 1
#endif
#endif
#ifndef CHECK_TSAN
#define CHECK_TSAN 0
#endif

#endif
