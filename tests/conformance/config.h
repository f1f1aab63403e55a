/* The libgomp build's config.h, as far as the testsuite reads it
   (libgomp.c/affinity-1.c): what Debian's GCC 12 build of libgomp defines on Linux.
   scripts/conformance puts this folder on the include path. */
#define HAVE_PTHREAD_AFFINITY_NP 1
