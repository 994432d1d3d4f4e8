/*
 * access_log.h: one line per answered request, in the combined log format
 * with the time taken:
 *
 *   REMOTE_ADDR - REMOTE_USER [10/Oct/2000:13:55:36 +0000]
 *       "METHOD URI PROTOCOL" STATUS BYTES "REFERER" "USER_AGENT" MS
 *
 * (one line), where BYTES is the body bytes sent and MS the milliseconds
 * from BEGIN_REQUEST to END_REQUEST.  Lines are buffered and written once
 * per loop turn (or at once beyond 64 KiB), never blocking the loop for
 * long; a file that cannot keep up loses lines (counted and logged), not
 * memory.
 */
#ifndef ACCESS_LOG_H
#define ACCESS_LOG_H

#include <stddef.h>

struct event_base;
struct evfcgi_req;
struct access_log;

/*
 * Opens path for appending (created 0640) and a buffer flushed on base.
 * Returns the log, or NULL with a message in err (errlen bytes).
 */
struct access_log *access_log_open(struct event_base *base,
	    const char *path, char *err, size_t errlen);

/*
 * Writes what is buffered and opens the path again (after rotation).
 * Returns 0, or -1 with errno (the old file is kept then).
 */
int	access_log_reopen(struct access_log *al);

/* Adds r's line: r is answered (its status and bytes are known). */
void	access_log_request(struct access_log *al, struct evfcgi_req *r);

/* Writes what is buffered, closes the file and frees al. */
void	access_log_close(struct access_log *al);

#endif /* ACCESS_LOG_H */
