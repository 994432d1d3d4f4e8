/*
 * toolutil.h: what the load and fetch tools in tools/ all need around their
 * protocol code: option values, the monotonic clock and the descriptor
 * budget.  Messages and exit statuses stay with each tool; addresses are
 * parsed and resolved by src/listen.h.
 */
#ifndef TOOLUTIL_H
#define TOOLUTIL_H

#include <sys/types.h>
#include <sys/time.h>

#include <stdint.h>

int		 parse_int(const char *, long long, long long, long long *);
int		 parse_secs(const char *, double, double *);
int64_t		 now_us(void);
struct timeval	 secs_tv(double);
long long	 fd_budget(long long);

#endif /* TOOLUTIL_H */
