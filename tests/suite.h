/*
 * suite.h: the runner every Check suite ends with.  Header-only, since
 * each suite is built from one file.
 */
#ifndef SUITE_H
#define SUITE_H

#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

/*
 * Adds to s a TCase called name holding the tests that follow (a NULL-ended
 * list of START_TEST names), each run between setup and teardown (NULL:
 * none) and allowed timeout seconds (0: Check's default).  Returns the
 * TCase, for loop tests.
 */
static inline TCase *
suite_add_case(Suite *s, const char *name, SFun setup, SFun teardown,
    double timeout, ...)
{
	TCase		*tc = tcase_create(name);
	const TTest	*t;
	va_list		 ap;

	if (setup != NULL || teardown != NULL)
		tcase_add_checked_fixture(tc, setup, teardown);
	if (timeout > 0)
		tcase_set_timeout(tc, timeout);
	va_start(ap, timeout);
	while ((t = va_arg(ap, const TTest *)) != NULL)
		tcase_add_test(tc, t);
	va_end(ap);
	suite_add_tcase(s, tc);
	return tc;
}

/* Runs s, prints Check's summary line; the exit status for main(). */
static inline int
suite_run(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* SUITE_H */
