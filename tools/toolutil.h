/*
 * toolutil.h: what the load and fetch tools in tools/ all need around their
 * protocol code: option values, the monotonic clock and the descriptor
 * budget.  Messages and exit statuses stay with each tool; addresses are
 * parsed and resolved by src/engine/listen.h.
 */
#ifndef TOOLUTIL_H
#define TOOLUTIL_H

#include <sys/types.h>
#include <sys/time.h>

#include <getopt.h>
#include <limits.h>
#include <stdint.h>

/* The slow reader's limits, the same in http_get and fcgi_load. */
#define SLOW_RCVBUF_MAX		(INT_MAX / 2)	/* --rcvbuf, bytes */
#define SLOW_READ_SIZE_MAX	(16 * 1024 * 1024) /* --read-size, bytes */
#define SLOW_PAUSE_MAX_MS	3600000		/* --pause */

/*
 * The slow reader's long options, the tail of both tools' getopt_long()
 * tables (the terminator included); each tool says which short option
 * --rcvbuf, --read-size and --pause stand for.
 */
#define SLOW_READER_LONGOPTS(rcvbuf, read_size, pause)			\
	{ "rcvbuf",	required_argument,	NULL, (rcvbuf) },	\
	{ "read-size",	required_argument,	NULL, (read_size) },	\
	{ "pause",	required_argument,	NULL, (pause) },	\
	{ "time-limit",	required_argument,	NULL, 't' },		\
	{ "output",	required_argument,	NULL, 'o' },		\
	{ "quiet",	no_argument,		NULL, 'q' },		\
	{ "help",	no_argument,		NULL, 'h' },		\
	{ NULL,		0,			NULL, 0 }

int		 parse_int(const char *, long long, long long, long long *);
int		 parse_secs(const char *, double, double *);
int64_t		 now_us(void);
struct timeval	 secs_tv(double);
long long	 fd_budget(long long);

#endif /* TOOLUTIL_H */
