/* The heap hooks: preloaded (LD_PRELOAD) into a heap child, they define the
 * allocator's entry points, forward each call to glibc's own allocator
 * (__libc_malloc and friends), and report every block to the callbacks the
 * measured program attaches (regress_measure::heap). Interposing the
 * symbols sees every allocation of the process through one mechanism: the
 * program's own code (Rust, aws-lc, s2n-tls), the system OpenSSL (which
 * calls malloc through its PLT), and glibc itself.
 *
 * Only the thread that attached is reported on, and never re-entrantly. The
 * callbacks never allocate. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *block);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *block, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

typedef void (*alloc_fn)(void *block, size_t size);
typedef void (*free_fn)(void *block);
typedef void (*realloc_fn)(void *old_block, void *new_block, size_t size);

static alloc_fn on_alloc;
static free_fn on_free;
static realloc_fn on_realloc;
static pthread_t watched;
static __thread int busy;

/* Makes the calling thread the watched one; returns 1. */
int regress_heap_attach(alloc_fn alloc, free_fn release, realloc_fn moved) {
    watched = pthread_self();
    on_free = release;
    on_realloc = moved;
    __atomic_store_n(&on_alloc, alloc, __ATOMIC_RELEASE);
    return 1;
}

static int reporting(void) {
    return __atomic_load_n(&on_alloc, __ATOMIC_ACQUIRE) != NULL && !busy &&
           pthread_equal(pthread_self(), watched);
}

static void *allocated(void *block, size_t size) {
    if (block != NULL && reporting()) {
        busy = 1;
        on_alloc(block, size);
        busy = 0;
    }
    return block;
}

void *malloc(size_t size) { return allocated(__libc_malloc(size), size); }

void free(void *block) {
    if (block != NULL && reporting()) {
        busy = 1;
        on_free(block);
        busy = 0;
    }
    __libc_free(block);
}

void *calloc(size_t count, size_t size) {
    void *block = __libc_calloc(count, size);
    /* __libc_calloc failed on overflow, so the product fits. */
    return allocated(block, count * size);
}

void *realloc(void *old_block, size_t size) {
    if (old_block == NULL) {
        return malloc(size);
    }
    if (size == 0) {
        free(old_block);
        return NULL;
    }
    void *new_block = __libc_realloc(old_block, size);
    if (new_block != NULL && reporting()) {
        busy = 1;
        on_realloc(old_block, new_block, size);
        busy = 0;
    }
    return new_block;
}

void *reallocarray(void *old_block, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old_block, total);
}

void *memalign(size_t alignment, size_t size) {
    return allocated(__libc_memalign(alignment, size), size);
}

void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) {
        return EINVAL;
    }
    void *block = memalign(alignment, size);
    if (block == NULL) {
        return ENOMEM;
    }
    *result = block;
    return 0;
}

void *valloc(size_t size) { return memalign((size_t)sysconf(_SC_PAGESIZE), size); }

void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return memalign(page, (size + page - 1) / page * page);
}
