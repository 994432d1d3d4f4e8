/*
 * suite.h: the runner every Check suite ends with.  Header-only, since
 * each suite is built from one file.
 */
#ifndef SUITE_H
#define SUITE_H

#include <check.h>
#include <stdlib.h>

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
