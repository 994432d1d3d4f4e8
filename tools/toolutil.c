/*
 * toolutil.c: option parsing, clocks and the open file limit shared by the
 * tools.  Nothing here prints or exits: every failure is returned, so each
 * tool keeps its own messages.  Addresses are src/engine/listen.c's business.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toolutil.h"

/*
 * parse_int: a whole decimal integer in [min, max] into *out.  Returns 0,
 * or -1 if s is not one (empty, leading space, junk after it, out of range);
 * *out is then left alone.
 */
int
parse_int(const char *s, long long min, long long max, long long *out)
{
	char		*end;
	long long	 v;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * parse_secs: a positive number of seconds no larger than max, fractions
 * allowed, into *out.  Returns 0, or -1 (and *out left alone) otherwise.
 */
int
parse_secs(const char *s, double max, double *out)
{
	char	*end;
	double	 v;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}

/* now_us: the monotonic clock in microseconds. */
int64_t
now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* secs_tv: s seconds (s >= 0) as a timeval, truncated to microseconds. */
struct timeval
secs_tv(double s)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)s;
	tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
	return tv;
}

/*
 * fd_budget: raises the soft RLIMIT_NOFILE to the hard one (65536 when
 * that is unlimited), since thousands of connections need thousands of
 * descriptors.  Returns how many descriptors are left for connections once
 * reserved are set aside: at least 1, and 1024 - reserved if the limit
 * cannot be read.
 */
long long
fd_budget(long long reserved)
{
	struct rlimit	rl;
	long long	n;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ?
			    65536 : rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		n = rl.rlim_cur == RLIM_INFINITY ?
		    65536 : (long long)rl.rlim_cur - reserved;
	} else
		n = 1024 - reserved;
	return n < 1 ? 1 : n;
}
