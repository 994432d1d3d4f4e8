/*
 * toolutil.h: what the load and fetch tools in tools/ all need around their
 * protocol code: option values, the monotonic clock, the descriptor budget
 * and name resolution.  Messages and exit statuses stay with each tool.
 */
#ifndef TOOLUTIL_H
#define TOOLUTIL_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stdint.h>

int		 parse_int(const char *, long long, long long, long long *);
int		 parse_secs(const char *, double, double *);
int64_t		 now_us(void);
struct timeval	 secs_tv(double);
long long	 fd_budget(long long);
int		 resolve_v4_first(const char *, const char *, int,
		    struct sockaddr_storage *, socklen_t *, const char **);

#endif /* TOOLUTIL_H */
