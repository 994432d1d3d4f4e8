/*
 * status.h: evfcgid's /status route (status.c): the server's counters and
 * limits, as JSON or in the Prometheus text format.
 */
#ifndef STATUS_H
#define STATUS_H

#include <stdint.h>

#include "evfcgi.h"

/*
 * Registers /status on srv; max_size is the demo routes' --max-size, which
 * it reports among the limits.  Returns 0, or -1 when out of memory.
 */
int	status_register(struct evfcgi_server *srv, uint64_t max_size);

#endif /* STATUS_H */
