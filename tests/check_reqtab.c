/*
 * check_reqtab.c: the table of a connection's requests by id, against a
 * plain array as the reference, through growth, deletions that shift
 * entries back, and ids reused over and over.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reqtab.h"
#include "request.h"
#include "tests/suite.h"

#define NIDS	65536

static struct evfcgi_req	*reqs[NIDS];	/* reqs[id]: the reference */
static int			 in[NIDS];

static void
setup(void)
{
	size_t	 i;

	for (i = 0; i < NIDS; i++) {
		/* The table reads a request's head alone (req_h()). */
		ck_assert_ptr_nonnull(reqs[i] = req_of(calloc(1,
		    sizeof(struct req_head))));
		req_h(reqs[i])->h_id = (uint16_t)i;
		in[i] = 0;
	}
}

static void
teardown(void)
{
	size_t	 i;

	for (i = 0; i < NIDS; i++)
		free(reqs[i]);
}

/* Every id is found exactly when the reference has it. */
static void
agree(const struct reqtab *t)
{
	size_t	 i, n = 0;

	for (i = 0; i < NIDS; i++) {
		ck_assert_ptr_eq(reqtab_find(t, (uint16_t)i),
		    in[i] ? reqs[i] : NULL);
		n += in[i];
	}
	ck_assert_uint_eq(t->rt_n, n);
	ck_assert(t->rt_cap == 0 || t->rt_n * 2 <= t->rt_cap);
}

START_TEST(empty_costs_nothing)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };

	ck_assert_ptr_null(reqtab_find(&t, 1));
	reqtab_del(&t, reqs[1]);
	ck_assert_uint_eq(t.rt_cap, 0);
	agree(&t);
	reqtab_free(&t);
}
END_TEST

/* One request in flight takes no table; a second makes one. */
START_TEST(one_request_no_table)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };

	ck_assert_int_eq(reqtab_add(&t, reqs[5]), 0);
	in[5] = 1;
	ck_assert_uint_eq(t.rt_cap, 0);
	agree(&t);
	ck_assert_int_eq(reqtab_add(&t, reqs[9]), 0);
	in[9] = 1;
	ck_assert_uint_gt(t.rt_cap, 0);
	agree(&t);
	reqtab_del(&t, reqs[5]);
	in[5] = 0;
	agree(&t);
	reqtab_free(&t);
}
END_TEST

START_TEST(every_id)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };
	size_t		 i;

	for (i = 1; i < NIDS; i++) {
		ck_assert_int_eq(reqtab_add(&t, reqs[i]), 0);
		in[i] = 1;
	}
	agree(&t);
	for (i = 1; i < NIDS; i += 2) {
		reqtab_del(&t, reqs[i]);
		in[i] = 0;
	}
	agree(&t);
	reqtab_free(&t);
}
END_TEST

/* Random adds and deletes, checked against the reference as they go. */
START_TEST(random_churn)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };
	unsigned	 seed = 12345;
	size_t		 step, id;

	for (step = 0; step < 200000; step++) {
		/* A small id range, so that clusters form and wrap. */
		id = (size_t)(rand_r(&seed) % (step < 100000 ? 64 : NIDS));
		if (in[id]) {
			reqtab_del(&t, reqs[id]);
			in[id] = 0;
		} else {
			ck_assert_int_eq(reqtab_add(&t, reqs[id]), 0);
			in[id] = 1;
		}
		if (step % 20000 == 0)
			agree(&t);
	}
	agree(&t);
	reqtab_free(&t);
}
END_TEST

START_TEST(delete_absent)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };

	ck_assert_int_eq(reqtab_add(&t, reqs[7]), 0);
	in[7] = 1;
	reqtab_del(&t, reqs[8]);
	reqtab_del(&t, reqs[7]);
	reqtab_del(&t, reqs[7]);
	in[7] = 0;
	agree(&t);
	reqtab_free(&t);
}
END_TEST

/* Processor seconds this process has used. */
static double
cpu_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A peer that knows the hash picks ids that share homes: here the 16384 ids
 * the multiplier once fixed in the code (2654435761, bits 8 and up) sent to
 * the first quarter of a 32768-slot table, one long cluster.  Adding and
 * finding them all took 0.83 s with that multiplier; with one drawn per
 * process they spread like any ids (about 0.001 s).
 */
START_TEST(chosen_ids)
{
	struct reqtab	 t = { NULL, 0, 0, NULL };
	size_t		 i, n = 0, bad = 0, cap = 32768;
	uint16_t	*ids;
	double		 t0, spent;

	ck_assert_ptr_nonnull(ids = calloc(NIDS, sizeof(*ids)));
	for (i = 1; i < NIDS && n < cap / 2; i++)
		if ((((uint32_t)i * 2654435761u >> 8) & (cap - 1)) < cap / 4)
			ids[n++] = (uint16_t)i;
	ck_assert_uint_eq(n, cap / 2);
	/* No ck_assert in the timed loops: each one writes to a pipe. */
	t0 = cpu_now();
	for (i = 0; i < n; i++) {
		bad += reqtab_add(&t, reqs[ids[i]]) != 0;
		in[ids[i]] = 1;
	}
	for (i = 0; i < n; i++)
		bad += reqtab_find(&t, ids[i]) != reqs[ids[i]];
	spent = cpu_now() - t0;
	ck_assert_uint_eq(bad, 0);
	agree(&t);
	reqtab_free(&t);
	free(ids);
	ck_assert_msg(spent < 0.05, "16384 chosen ids took %.4f s", spent);
}
END_TEST

static Suite *
reqtab_suite(void)
{
	Suite	*s = suite_create("reqtab");

	suite_add_case(s, "core", setup, teardown, 60, empty_costs_nothing,
	    one_request_no_table,
	    every_id, NULL);
	suite_add_case(s, "partial", setup, teardown, 60, random_churn,
	    NULL);
	suite_add_case(s, "malformed", setup, teardown, 60, delete_absent,
	    chosen_ids, NULL);
	return s;
}

int
main(void)
{
	return suite_run(reqtab_suite());
}
