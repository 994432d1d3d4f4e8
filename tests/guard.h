/*
 * guard.h: a scratch buffer whose end touches an unmapped page, for the
 * parsers' Check suites.  Input copied to its end by at_guard() makes any
 * read past the input fault, even without sanitizers.  Header-only, since
 * each suite is built from one file; use guard_setup and guard_teardown
 * as the checked fixture of every TCase that calls at_guard().
 */
#ifndef GUARD_H
#define GUARD_H

#include <sys/mman.h>

#include <check.h>
#include <string.h>
#include <unistd.h>

static unsigned char	*guard_base;
static size_t		 guard_page;

/* Copies len bytes so that they end exactly at an unmapped page. */
static inline const void *
at_guard(const void *data, size_t len)
{
	unsigned char	*end = guard_base + guard_page * 4;

	ck_assert_uint_le(len, guard_page * 4);
	memcpy(end - len, data, len);
	return end - len;
}

static inline void
guard_setup(void)
{
	guard_page = (size_t)sysconf(_SC_PAGESIZE);
	guard_base = mmap(NULL, guard_page * 5, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(guard_base, MAP_FAILED);
	ck_assert_int_eq(mprotect(guard_base + guard_page * 4, guard_page,
	    PROT_NONE), 0);
}

static inline void
guard_teardown(void)
{
	munmap(guard_base, guard_page * 5);
}

#endif /* GUARD_H */
